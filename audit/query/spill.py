"""Spill files: a table too large to hold, written to the temp directory a batch at a time and read
back as an Arrow dataset (the projection's `events` and `steps`, the database's per-stream tables)."""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

SPILL_ROWS = 1 << 14
"""Rows per record batch of a spilled table: what a scan of it holds at a time."""


class Spill:
    """An Arrow IPC file in the temp directory written a batch at a time; once closed, `file` is the path that reads it and the open
    file: it has no name left where /proc gives its descriptor's, and is gone with the last reader."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.file: tuple[str, Any] = ("", None)

    def __enter__(self) -> Spill:
        fd, self._path = tempfile.mkstemp(prefix="matchledger-", suffix=".arrow")
        os.close(fd)
        self._sink = pa.OSFile(self._path, "wb")
        self._writer = pa.ipc.new_file(self._sink, self.schema, options=_SPILL_IPC)
        return self

    def write(self, table: pa.Table) -> None:
        self._writer.write_table(table, max_chunksize=SPILL_ROWS)

    def write_batches(self, batches: Iterable[pa.RecordBatch]) -> None:
        """Writes batches as they come, each one's memory given back once written (a season's table
        copied a batch at a time never grows the process)."""
        for batch in batches:
            self.write(pa.Table.from_batches([batch], self.schema))
            pa.default_memory_pool().release_unused()

    def __exit__(self, kind: object, *exc: object) -> None:
        try:
            self._writer.close()
            self._sink.close()
            if kind is None:
                reader = open(self._path, "rb")
                proc = f"/proc/self/fd/{reader.fileno()}"
                if os.path.exists(proc):
                    self.file = (proc, reader)
                else:
                    self.file = (self._path, reader)
                    weakref.finalize(reader, os.unlink, self._path)
                    return
        finally:
            if self.file[0] != self._path:
                os.unlink(self._path)


_SPILL_IPC = pa.ipc.IpcWriteOptions()
"""No dictionary deltas: every batch of a spilled table has its columns' one dictionary."""
