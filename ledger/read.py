"""Reads a ledger's entries back as events: the whole log in batches, or one stream through the index."""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterator
from pathlib import Path

from ledger.frames import read_entries, signed_size, stream_entries
from ledger.index import read_head
from ledger.notes import Verifier
from schemas import decode_stored, decode_stored_array
from schemas.envelope import Event

BATCH = 4096


def read_events(root: Path, verifier: Verifier | None = None) -> Iterator[Event]:
    """Yields every signed entry of a ledger (up to the newest signed checkpoint), decoded, in log
    order (a batch per decoder call)."""
    log = read_entries(root, verifier)
    for start in range(0, len(log), BATCH):
        data = log.json_array(array("q", range(start, min(start + BATCH, len(log)))))
        # Decoding makes thousands of containers and no cycle: the cyclic collector's passes over
        # them would find nothing, so it waits until the batch is decoded.
        enabled = gc.isenabled()
        gc.disable()
        try:
            events = decode_stored_array(data)
        finally:
            if enabled:
                gc.enable()
        yield from events


def read_stream_events(root: Path, stream: str, verifier: Verifier | None = None) -> list[Event]:
    """Returns one stream's signed events (up to the newest signed checkpoint), read through the
    index: only that stream's entries are read (the whole log for a ledger whose index no writer
    has built yet)."""
    if read_head(root) is None:
        return [e for e in read_events(root, verifier) if e.stream == stream]
    return decode_stored([data for _, data in stream_entries(root, stream, signed_size(root, verifier))])
