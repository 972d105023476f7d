"""The layout of a Parquet export for a data lake: every table Hive-partitioned by tournament and
round (`<table>/tournament=…/round=…/part-00000.parquet`), files of at most FILE_ROWS rows in row
groups of at most GROUP_ROWS rows, and the partition columns kept inside each file too.

A partition per game would give a 10,000-game event 10,000 files of a few hundred rows per table,
one task each for Spark or Trino; the first format (by game type and tournament) gave a season's
table one unbounded file per tournament. A round holds thousands of games: its partition is a few
files of bounded size, and a query of one round reads that round's files only.

The partition columns are text in the path and in the file alike (the round number, or `none` for a
row outside any tournament or round: Hive's own null directory is typed inconsistently by readers), so
an engine reading the files without partition discovery sees the same values and types as one that
discovers them."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import reduce
from typing import Any, BinaryIO, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ledger.outputs import OutputDirectory

PARTITIONS = ("tournament", "round")
NONE = "none"
"""The partition value of a row outside any tournament (or round)."""
FILE_ROWS = 1 << 20
"""Rows per file at most: a partition beyond it is split in files of equal size."""
GROUP_ROWS = 1 << 17
"""Rows per row group at most: the unit an engine reads in one task."""
TIMESTAMP = pa.timestamp("ms", tz="UTC")
_HIVE_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}
"""The characters Hive (and so Trino's partition sync) escapes as %XX in a partition value."""


@dataclass(frozen=True)
class Limits:
    """The bounds of the files an export writes (small ones let a test see a split)."""

    file_rows: int = FILE_ROWS
    group_rows: int = GROUP_ROWS


LAKE = Limits()
"""The bounds of an export."""


@dataclass(frozen=True)
class Places:
    """Where each stream sits: its tournament and round as partition values (`none` when it has none)."""

    streams: pa.Array
    tournaments: pa.Array
    rounds: pa.Array

    @classmethod
    def of(cls, games: pa.Table, tournaments: pa.Table) -> Places:
        """Returns the places of every game stream (from the games table) and tournament stream."""
        stream_ids = tournaments.column("tournament").combine_chunks()
        return cls(streams=pa.concat_arrays([games.column("stream").combine_chunks(), stream_ids]),
                   tournaments=pa.concat_arrays([_text(games.column("tournament")), _text(stream_ids)]),
                   rounds=pa.concat_arrays([_text(games.column("round")), _nones(len(stream_ids))]))

    def lookup(self, streams: pa.ChunkedArray, values: pa.Array) -> pa.Array:
        """Returns, for each stream, its value in `values` (`none` for a stream of no known place)."""
        at = pc.index_in(streams.cast(pa.string()), value_set=self.streams)
        return pc.fill_null(pc.take(values, at), NONE)


def partitioned(table: pa.Table, places: Places) -> pa.Table:
    """Returns the table with its partition columns, as text, last: its own `tournament` and `round`
    where it has them, else its stream's, else `none`."""
    for column, values in zip(PARTITIONS, (places.tournaments, places.rounds)):
        if column in table.column_names:
            value = _text(table.column(column))
            table = table.drop_columns([column])
        elif "stream" in table.column_names:
            value = places.lookup(table.column("stream"), values)
        else:
            value = _nones(len(table))
        table = table.append_column(pa.field(column, pa.string(), nullable=False), value)
    return table


def with_timestamps(table: pa.Table) -> pa.Table:
    """Adds beside each integer timestamp (`ts`, `*_ts`, ms since the epoch) the same instant as
    TIMESTAMP(ms, UTC), `at`, `*_at`, and types a timestamp a view computed (DuckDB's is in µs,
    without a zone) the same way."""
    for at, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            table = table.set_column(at, pa.field(field.name, TIMESTAMP), table.column(at).cast(TIMESTAMP))
    for name in list(table.column_names):
        if (name == "ts" or name.endswith("_ts")) and pa.types.is_integer(table.schema.field(name).type):
            stamped = name[:-2] + "at" if name != "ts" else "at"
            at = table.schema.get_field_index(name) + 1
            table = table.add_column(at, pa.field(stamped, TIMESTAMP), table.column(name).cast(pa.int64()).cast(TIMESTAMP))
    return table


class Written(NamedTuple):
    """A file an export wrote: its path in the output, the SHA-256 of its bytes as they were written,
    and its Parquet footer as the writer made it (nothing is read back)."""

    path: str
    sha256: str
    metadata: pq.FileMetaData


def write_partitions(table: pa.Table, out: OutputDirectory, name: str, limits: Limits) -> list[Written]:
    """Writes a partitioned table under `name/` of an output (rows of one partition kept in their
    order) and returns its files; a table without rows gets one empty file, with its full schema,
    under the `none` partition."""
    return write_batches(table.schema, table.to_batches(), out, name, limits)


def write_batches(schema: pa.Schema, batches: Iterable[pa.RecordBatch], out: OutputDirectory, name: str, limits: Limits) -> list[Written]:
    """Writes a partitioned table given batch by batch (`write_partitions`), holding one partition at
    a time (issue 32.1): each batch's rows go to their partition's spool file on disk as they come,
    then each partition is read back from its file, put in log order and written."""
    with tempfile.TemporaryDirectory(prefix="matchledger-export-") as spool:
        counts: dict[tuple[str, ...], int] = {}
        for batch in batches:
            for key, rows in _partitions(pa.Table.from_batches([batch], schema)):
                with open(os.path.join(spool, str(counts.setdefault(key, len(counts)))), "ab") as f, pa.ipc.new_stream(f, schema) as w:
                    w.write_table(rows)
            del batch, rows
            pa.default_memory_pool().release_unused()  # each batch's memory back as it goes: the allocator would keep it
        pa.default_memory_pool().release_unused()  # what the batches were made and split in, back before a partition is read
        if not counts:
            return [_write(schema.empty_table(), out, f"{_partition_dir(name, (NONE, NONE))}/part-00000.parquet", limits)]
        files = []
        for key in sorted(counts):
            rows = _spooled(os.path.join(spool, str(counts[key])), schema)
            order = _log_order(rows)
            for n, (low, count) in enumerate(_bounds(len(rows), limits.file_rows)):
                files.append(_write(rows, out, f"{_partition_dir(name, key)}/part-{n:05d}.parquet", limits, order, low, count))
            del rows, order
            pa.default_memory_pool().release_unused()  # a partition's memory back before the next one
        return files


def _spooled(path: str, schema: pa.Schema) -> pa.Table:
    """Reads a partition's spool file: the streams written to it one after another, mapped, not copied."""
    source = pa.memory_map(path)
    batches: list[pa.RecordBatch] = []
    while source.tell() < source.size():
        batches += pa.ipc.open_stream(source).read_all().to_batches()
    return pa.Table.from_batches(batches, schema)


def _log_order(rows: pa.Table) -> pa.Array | None:
    """Returns the order that puts a partition's rows in log order (`_order_by`: the replay's workers
    may give `steps` out of order, DuckDB's threads a built table's rows in any), rows of one key in
    the order they came; None when they are in it already."""
    by = _order_by(rows.column_names)
    if not by or len(rows) < 2:
        return None
    order = pc.sort_indices(rows, [(column, "ascending") for column in by])
    return None if _is_run(order) and order[0].as_py() == 0 else order


_ORDER_BY = (("entry",), ("stream", "seq"), ("stream", "seat"), ("stream",))
"""A table's order in the lake: by log entry where it has one, else by the game's stream and the
event or seat: the same rows make the same files, whatever order a run built them in."""


def _order_by(columns: list[str]) -> list[str]:
    return next((list(by) for by in _ORDER_BY if set(by) <= set(columns)), [])


def _partitions(table: pa.Table) -> Iterator[tuple[tuple[str, ...], pa.Table]]:
    """Yields each partition's key and rows in log order (`_log_order`): one stable sort, then one partition at a time (a
    filter per partition would read the whole table once per round of a season). Rounds are played one
    after another, so a round's rows are often one run of the table: a slice, not a copy."""
    by = [*PARTITIONS, *_order_by(table.column_names)]
    keys = table.select(by)
    order = pc.sort_indices(keys, [(p, "ascending") for p in by])
    ordered = keys.take(order)
    changed = reduce(pc.or_, (pc.not_equal(ordered.column(p)[1:], ordered.column(p)[:-1]) for p in PARTITIONS))
    starts = [0, *(i + 1 for i in pc.indices_nonzero(changed.combine_chunks()).to_pylist()), len(table)]
    for low, high in zip(starts, starts[1:]):
        indices = order[low:high]
        rows = table.slice(indices[0].as_py(), len(indices)) if _is_run(indices) else table.take(indices)
        yield tuple(ordered.column(p)[low].as_py() for p in PARTITIONS), rows


def _is_run(indices: pa.Array) -> bool:
    """Tells whether row indices are consecutive and increasing (a slice of the table)."""
    if indices[len(indices) - 1].as_py() - indices[0].as_py() != len(indices) - 1:
        return False
    return len(indices) == 1 or pc.all(pc.greater(indices[1:], indices[:-1])).as_py()


def _bounds(rows: int, most: int) -> Iterator[tuple[int, int]]:
    """Yields the first row and the rows of each file a partition of `rows` rows is written in: as few
    files of at most `most` rows as it takes, of equal size (no small last file)."""
    files = -(-rows // most)
    size, longer = divmod(rows, files)
    low = 0
    for n in range(files):
        yield low, size + (n < longer)
        low += size + (n < longer)


def _write(rows: pa.Table, out: OutputDirectory, path: str, limits: Limits, order: pa.Array | None = None, low: int = 0,
           count: int | None = None) -> Written:
    """Writes `count` rows from `low` (all by default) in `order` (as they are by default) as one file,
    each row group taken and made one contiguous piece as it is written: the partition is not copied
    whole, and the bytes do not depend on how the rows happened to be chunked."""
    footer: list[pq.FileMetaData] = []
    count = len(rows) - low if count is None else count
    with out.open(path) as f:
        hashing = _Hashing(f)
        with pq.ParquetWriter(hashing, rows.schema, metadata_collector=footer) as writer:
            for at in range(low, low + max(count, 1), limits.group_rows):
                size = min(limits.group_rows, low + count - at)
                group = rows.slice(at, size) if order is None else rows.take(order.slice(at, size))
                writer.write_table(group.combine_chunks(), row_group_size=limits.group_rows)
    return Written(path, hashing.digest.hexdigest(), footer[0])


class _Hashing:
    """A file being written that hashes its bytes on the way (the export's manifest needs their
    SHA-256; reading each file back had doubled the export's reading, issue 32.1)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.digest, self.closed = f, hashlib.sha256(), False

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self.f.write(data)

    def tell(self) -> int:
        return self.f.tell()

    def flush(self) -> None:
        self.f.flush()

    def writable(self) -> bool:
        return True

    def close(self) -> None:  # the output directory closes (and syncs) the file itself
        self.closed = True


def _partition_dir(name: str, key: tuple[Any, ...]) -> str:
    return "/".join([name, *(f"{column}={hive_escape(value)}" for column, value in zip(PARTITIONS, key))])


def hive_escape(value: str) -> str:
    """Returns a partition value as Hive writes it in a path: its special characters as %XX."""
    return "".join(f"%{ord(c):02X}" if c in _HIVE_ESCAPED else c for c in value)


def _text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Returns a column as partition values: text, `none` for NULL."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return pc.fill_null(values.cast(pa.string()), NONE)


def _nones(rows: int) -> pa.Array:
    return pa.nulls(rows, pa.string()).fill_null(NONE)
