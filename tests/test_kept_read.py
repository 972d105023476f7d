"""One way to read a kept table (audit/query/kept_read.py): it returns the rows written, and it
never waits on Arrow's thread pools. A `Dataset.to_table()` over a kept
table's files and an extension's rows in memory, with the I/O pool at the core count, waited for
ever (a CI run hung so in `tests/test_audit_since.py`; on this machine within 35 reads)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from audit.query.kept_read import batches, count_rows, matching, read, rows_where, rows_without, take

READS = 300
"""Reads in the child process: the Arrow scan it replaces hung within 35 on a 2-core machine."""


def _kept(tmp: Path, parts: int = 4, rows: int = 50_000) -> ds.Dataset:
    """A table kept in zstd IPC files of several batches each, then rows held in memory (an extension's tail)."""
    return _kept_and_rows(tmp, parts, rows)[0]


def _kept_and_rows(tmp: Path, parts: int = 4, rows: int = 50_000) -> tuple[ds.Dataset, pa.Table]:
    """The kept table and its rows as written."""
    paths, written = [], []
    for k in range(parts):
        table = pa.table({"stream": pa.array([f"g{k}-{i % 37}" for i in range(rows)]).dictionary_encode(),
                          "entry": pa.array(range(k * rows, (k + 1) * rows), pa.int64())})
        path = tmp / f"part{k}.arrow"
        with pa.ipc.new_file(path, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
            writer.write_table(table, max_chunksize=1 << 13)
        paths.append(str(path))
        written.append(table)
    files = ds.dataset(paths, format="ipc")
    tail = pa.table({"stream": pa.array(["new"]).dictionary_encode(), "entry": pa.array([parts * rows], pa.int64())})
    return ds.dataset([files, ds.dataset(tail.cast(files.schema))]), pa.concat_tables([*written, tail]).unify_dictionaries()


def test_reads_what_arrow_reads(tmp_path: Path) -> None:
    kept, whole = _kept_and_rows(tmp_path)  # not Arrow's scan to compare with: it may hang (see below)
    assert read(kept).cast(whole.schema).to_pylist() == whole.to_pylist()
    assert read(kept, ["entry"])["entry"].to_pylist() == whole["entry"].to_pylist()
    assert count_rows(kept) == whole.num_rows == sum(b.num_rows for b in batches(kept, ["stream"]))
    wanted = pa.array([0, 8191, 8192, 50_000, 199_999, 200_000], pa.int64())
    assert take(kept, wanted, ["entry"])["entry"].to_pylist() == wanted.to_pylist()
    assert pc.all(pc.equal(take(kept, wanted, ["stream", "entry"])["entry"], wanted)).as_py()


def test_the_filter_by_a_key_splits_a_kept_table_and_one_in_memory_alike(tmp_path: Path) -> None:
    """`matching` is the one filter by a key: its rows and its others' partition a table, kept or
    in memory, in order; `rows_without` leaves a table with none of the keys as it is (not copied)."""
    kept, whole = _kept_and_rows(tmp_path, parts=2, rows=20_000)
    keys = ["g0-3", "g1-36", "new", "absent"]
    for table in (kept, whole):
        inside = pa.Table.from_batches(matching(table, "stream", keys), read(kept).schema if table is kept else whole.schema)
        outside = pa.Table.from_batches(matching(table, "stream", keys, keep=False), inside.schema)
        assert set(pc.unique(inside["stream"].cast(pa.string())).to_pylist()) == set(keys) - {"absent"}
        assert not set(outside["stream"].cast(pa.string()).to_pylist()) & set(keys)
        assert sorted([*inside["entry"].to_pylist(), *outside["entry"].to_pylist()]) == whole["entry"].to_pylist()
        assert rows_where(table, "stream", keys, ["entry"])["entry"].to_pylist() == inside["entry"].to_pylist()
        assert all(b.num_rows for b in matching(table, "stream", keys)), "a batch without rows holds its file's dictionaries"
    assert rows_without(whole, "stream", ["absent"]) is whole
    assert rows_without(whole, "stream", keys)["entry"].to_pylist() == outside["entry"].to_pylist()


def test_reads_with_two_io_threads_never_wait_for_ever(tmp_path: Path) -> None:
    """The projection sets Arrow's I/O pool to the core count (memory, issue 32.1): reading a kept
    table READS times in a child process with two I/O threads ends (a hang fails on the timeout)."""
    _kept(tmp_path)
    script = textwrap.dedent(f"""
        import sys
        import pyarrow as pa
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from tests.test_kept_read import _kept
        from audit.query.kept_read import read
        from pathlib import Path
        pa.set_io_thread_count(2)
        kept = _kept(Path({str(tmp_path)!r}))
        for _ in range({READS}):
            read(kept)
        print("read", {READS})
    """)
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a kept table {READS} times with two I/O threads did not end in 300 s: a scan waits on Arrow's pools")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"read {READS}"
