"""The one way matchledger reads a kept table (an Arrow dataset over the IPC files a projection is
kept or spilled in, perhaps followed by rows an extension holds in memory): a file and a batch at a
time, in the caller's thread. Arrow's own dataset scans read ahead without bound and run on its
thread pools; a scan left suspended part way there held the threads a later one waited for, for
ever (a CI run hung so, issue 32.2). DuckDB scans a dataset registered with it through that scan,
by the dataset's own `scanner`: it is given one that reads at most a batch ahead (`paced`).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs

TABLE_BATCH_ROWS = 1 << 16
"""Rows per batch at most of a table in memory read through `batches`: no step holds a copy of it whole."""


def batches(table: pa.Table | ds.Dataset, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """Yields a table's columns (all by default) a batch at a time: a kept or spilled one's a file
    and a batch at a time, as they were written (a dataset's own scan of the 3.1 M-entry event's
    `steps` peaked at 676 MB, against 143 MB so: issue 32.1); rows held in memory (a table, an
    extension's tail) in this thread, `TABLE_BATCH_ROWS` at most at a time."""
    columns = table.schema.names if columns is None else columns
    if isinstance(table, pa.Table):
        yield from table.select(columns).to_batches(max_chunksize=TABLE_BATCH_ROWS)
    elif isinstance(table, ds.UnionDataset):
        for child in table.children:
            yield from batches(child, columns)
    elif isinstance(table, ds.FileSystemDataset) and isinstance(table.format, ds.IpcFileFormat):
        wanted = pa.schema([table.schema.field(c) for c in columns])
        for path in table.files:
            batches_of = _all_of if set(columns) == set(table.schema.names) else _some_of
            for batch in batches_of(table.filesystem, path, columns):
                yield batch if batch.schema == wanted else batch.cast(wanted)
    else:  # in memory: scanned in this thread (use_threads=False), no read-ahead to leave behind
        yield from table.to_batches(columns=columns, use_threads=False)


def read(table: pa.Table | ds.Dataset, columns: list[str] | None = None) -> pa.Table:
    """Returns a table, or a kept one read whole (some columns only, if given) through `batches`."""
    if isinstance(table, pa.Table):
        return table if columns is None else table.select(columns)
    schema = table.schema if columns is None else pa.schema([table.schema.field(c) for c in columns])
    return pa.Table.from_batches(list(batches(table, columns)), schema)


def take(table: pa.Table | ds.Dataset, indices: pa.Array, columns: list[str]) -> pa.Table:
    """Returns some rows (sorted indices) of a table's columns; a kept one's read a batch at a time,
    each batch's rows taken before the next is read."""
    if isinstance(table, pa.Table):
        return table.select(columns).take(indices)
    schema, taken, start = pa.schema([table.schema.field(c) for c in columns]), [], 0
    indices = indices.cast(pa.int64())
    sorted_ = array("q", indices.to_pylist())  # each batch's share found by bisection, not by a pass over them all
    for batch in batches(table, columns):
        end = start + batch.num_rows
        a, b = bisect.bisect_left(sorted_, start), bisect.bisect_left(sorted_, end)
        if a < b:
            taken.append(batch.take(pc.subtract(indices.slice(a, b - a), start)))
        start = end
    return pa.Table.from_batches(taken, schema)


PACED = {"batch_readahead": 1, "fragment_readahead": 1}
"""How far DuckDB's scans of a kept table read ahead: a batch, of one file. With Arrow's defaults (16
batches and 4 files ahead) each scan of a 22 M-entry season's `steps` held hundreds of MB ahead of
DuckDB (issue 32). One batch ahead, on Arrow's threads as before, keeps DuckDB's two threads fed:
none ahead, read in the scanning thread, held as little and was slower (bench/README, stop 48)."""


class _PacedFiles(ds.FileSystemDataset):
    """A kept table's files whose `scanner` (DuckDB's way in, with its columns and filter) reads ahead `PACED`."""

    def scanner(self, **options: object) -> ds.Scanner:  # type: ignore[override]
        return super().scanner(**{**options, **PACED})


class _PacedUnion(ds.UnionDataset):
    """A kept table's files followed by rows an extension holds, whose `scanner` reads ahead `PACED`."""

    def scanner(self, **options: object) -> ds.Scanner:  # type: ignore[override]
        return super().scanner(**{**options, **PACED})


def paced(table: pa.Table | ds.Dataset) -> pa.Table | ds.Dataset:
    """Returns a table as DuckDB is given it: a kept one as a dataset over the same files and rows
    that DuckDB's scans read ahead `PACED` only, columns and filters still pushed down to the
    files; a table in memory as it is."""
    if isinstance(table, ds.FileSystemDataset):
        return _PacedFiles(list(table.get_fragments()), table.schema, table.format, table.filesystem)
    if isinstance(table, ds.UnionDataset):
        return _PacedUnion(table.schema, [paced(child) for child in table.children])
    return table


def rows_where(table: pa.Table | ds.Dataset, key: str, values: Iterable[str], columns: list[str] | None = None) -> pa.Table:
    """Returns the rows of a table, or of a kept one read a batch at a time (never whole), whose `key`
    is among `values`, in their order: some columns, if given, beside `key`. The one filter by a key
    (a game's stream, a board) of the tables an extension or an incremental audit reads a few rows of:
    a season's 100,000 games are not made Python objects for the few a new entry touches (issue 32)."""
    columns = table.schema.names if columns is None else [*columns, *([key] if key not in columns else [])]
    schema = pa.schema([table.schema.field(c) for c in columns], metadata=table.schema.metadata)  # a built table's types
    return pa.Table.from_batches(matching(table, key, values, columns), schema=schema)


def rows_without(table: pa.Table, key: str, values: Iterable[str]) -> pa.Table:
    """Returns a table without its rows whose `key` is among `values`: the table itself, not copied,
    when it has none (a new game's streams, the usual extension's)."""
    mask = among(table[key], pa.array(sorted(set(values)), pa.string()))
    return table.filter(pc.invert(mask)) if pc.any(mask).as_py() else table


def matching(table: pa.Table | ds.Dataset, key: str, values: Iterable[str], columns: list[str] | None = None,
             keep: bool = True) -> Iterator[pa.RecordBatch]:
    """Yields a table's batches (`batches`) with only their rows whose `key` is among `values`, or
    with `keep` false only the others; a batch left without rows is not yielded. Each would hold its
    file's dictionaries, and a table of them, combined, unified them all: the touched games'
    database of a 22 M-entry season's `--since` grew by 640 MB so, for 238 rows (issue 32)."""
    wanted = pa.array(sorted(set(values)), pa.string())
    for batch in batches(table, columns):
        mask = among(batch.column(key), wanted)
        kept = batch.filter(mask if keep else pc.invert(mask))
        if kept.num_rows:
            yield kept


def among(column: pa.Array | pa.ChunkedArray, values: pa.Array) -> pa.BooleanArray:
    """Returns which rows of a string column (dictionary-coded or not) hold one of some values (no: null)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if isinstance(column, pa.DictionaryArray):
        mask = pc.take(pc.is_in(column.dictionary, value_set=values), column.indices)
    else:
        mask = pc.is_in(column, value_set=values)
    return pc.fill_null(mask, False)


def count_rows(table: pa.Table | ds.Dataset) -> int:
    """Returns how many rows a table has; a kept one's are counted from its files' batches' headers."""
    if isinstance(table, pa.Table):
        return table.num_rows
    if isinstance(table, ds.UnionDataset):
        return sum(map(count_rows, table.children))
    if isinstance(table, ds.FileSystemDataset) and isinstance(table.format, ds.IpcFileFormat):
        rows = 0
        for path in table.files:
            with table.filesystem.open_input_file(path) as file:
                rows += pa.ipc.open_file(file).count_rows()
        return rows
    return sum(b.num_rows for b in batches(table, []))


def _all_of(filesystem: pa.fs.FileSystem, path: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """A file's batches, every column: each read whole, one at a time."""
    with filesystem.open_input_file(path) as file:
        reader = pa.ipc.open_file(file)
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i).select(columns)


def _some_of(filesystem: pa.fs.FileSystem, path: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """A file's batches, some columns: only those columns read, decoded and copied out. A column of a
    batch read from an uncompressed file is a slice of the batch's one buffer: kept, it would hold
    every column (`events`' kind alone held its bodies: 250 MB more at a full audit's peak). Read, not
    mapped: a mapped file's pages count in the process's memory as they are read (the bodies of the
    4.4 M season's events, 550 MB at its full audit's peak, issue 32)."""
    with filesystem.open_input_file(path) as file:
        schema = pa.ipc.open_file(file).schema
        options = pa.ipc.IpcReadOptions(included_fields=sorted(schema.get_field_index(c) for c in columns))
        reader = pa.ipc.open_file(file, options=options)
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i).select(columns)
            yield pa.RecordBatch.from_arrays([pa.concat_arrays([column]) for column in batch.columns], schema=batch.schema)
