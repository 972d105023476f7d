"""Issue 32.1, memory that does not follow the season, for the projection's build (`audit`, and
`standings` the first time): the log read whole is released range by range as the first pass writes
its rows of `events`, `events` and `steps` are left in files on disk for DuckDB to scan, and nothing
the build keeps in memory grows with the log's entries. Forced here onto a small log: ranges of 64
entries, two forked workers, so that every range is released and games reach across ranges."""

from __future__ import annotations

import ctypes
import shutil
from array import array
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import audit.query.projection as projection_module
from audit.query.kept_read import count_rows, read
from audit.query.projection import Projection, project
from audit.query.session import open_session
from audit.query.standings import standings
from ledger import LedgerError, LogReader
from ledger.reader import StoredEntries

SEED = 20261205
RANGE = 64


@pytest.fixture(scope="module")
def season(cup_and_deals: Callable[[str, int, int], Path]) -> Path:
    return cup_and_deals("build-memory", SEED, 3)


@pytest.fixture
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projection_module, "RANGE_ENTRIES", RANGE)  # more than 4 ranges: the workers are forked


def _tables(projection: Projection) -> dict[str, pa.Table]:
    return {name: read(table).combine_chunks().unify_dictionaries()
            for name, table in projection.sources().items()}


def _in_memory(projection: Projection) -> int:
    """The bytes of every buffer the projection's tables hold in memory (mapped or the log's own included)."""
    return sum(table.nbytes for table in projection.sources().values() if isinstance(table, pa.Table))


def test_the_build_releases_the_log_and_keeps_entries_tables_on_disk(season: Path, small_ranges: None) -> None:
    """Issue 32.1: the build held the whole log (730 MB of the 3.1 M-entry event), `steps` and
    `events` in memory at once (2.0 GB peak for `standings`, 1.8 GB for `audit`). Now every range of
    the log is released once written, `events` and `steps` are files on disk, and what the tables
    hold in memory is a small part of the log, whatever its length."""
    log = LogReader(season).packed()
    assert len(log) > 4 * RANGE
    released: list[tuple[int, bool]] = []
    original = StoredEntries.release

    def noted(self: StoredEntries, stop: int, shared: bool = False) -> None:
        released.append((stop, shared))
        original(self, stop, shared)

    StoredEntries.release = noted  # type: ignore[method-assign]
    try:
        projection = project(log, workers=2)
    finally:
        StoredEntries.release = original  # type: ignore[method-assign]
    ranges = [stop for stop, shared in released if shared]  # each range as written, the workers reading on
    assert ranges == sorted(ranges) and len(ranges) == -(-len(log) // RANGE) and released[-1] == (len(log), False)
    assert log.released[0] == len(log)
    held = projection.sources()
    assert isinstance(held["events"], ds.Dataset) and isinstance(held["steps"], ds.Dataset)
    assert count_rows(held["events"]) == len(log) and "body" in held["events"].schema.names
    assert _in_memory(projection) < log.ends[-1] // 4


def test_a_released_entry_is_refused_not_read_as_zeros(season: Path) -> None:
    """Issue 32.1, the threat of releasing: the pages given back read as zeros. A reader asking for
    an entry below the point released is refused with an error, never handed zero bytes as evidence."""
    log = LogReader(season).packed()
    first = log.json_array(array("q", [0, 1]))
    log.release(len(log) // 2)
    with pytest.raises(LedgerError, match="released"):
        log.json_array(array("q", [0]))
    assert log.json_array(array("q", [len(log) - 1])).startswith(b"[{")
    assert first.startswith(b"[{")


def _resident_kb(log: StoredEntries) -> int:
    """The resident kB of this process's mapping of a log's scratch file (`/proc/self/smaps`)."""
    at = ctypes.addressof(ctypes.c_char.from_buffer(log.data.obj))  # type: ignore[union-attr]
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        first = line.split(" ", 1)[0]
        if "-" in first and all(c in "0123456789abcdef-" for c in first):
            low, high = (int(x, 16) for x in first.split("-"))
            inside = low <= at < high
            if inside:
                assert "matchledger-log-" in line, line  # a file's mapping, not anonymous memory
        elif inside and line.startswith("Rss:"):
            return int(line.split()[1])
    raise AssertionError("the log's mapping is not in /proc/self/smaps")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps (Linux)")
def test_the_log_read_is_in_a_scratch_file_not_held_by_the_reader(season: Path) -> None:
    """Issue 32.1: the log read lies in a scratch file's mapping; once read, its pages are let go (a
    segment's at a time), a pass touches what it reads, and letting go of what it read keeps the bytes."""
    log = LogReader(season).packed()
    whole = log.json_array(array("q", range(len(log))))
    assert _resident_kb(LogReader(season).packed()) <= 64  # as `packed` leaves it (the kernel maps up to 16 pages around a fault)
    assert len(whole) > 64 * 1024 and _resident_kb(log) * 1024 >= log.ends[-1] // 2  # read: resident
    log.let_go(0, len(log))
    assert _resident_kb(log) <= 64  # let go: at most the pages at its ends and those mapped around them
    assert log.json_array(array("q", range(len(log)))) == whole  # read again from the file, the same bytes


def test_a_full_temp_directory_is_an_error_naming_it(season: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 32.1, the scratch file's threat: no room left where the log is read to. The reader says
    so, naming the directory and TMPDIR, instead of dying of a SIGBUS on a page it could not write."""
    import errno
    import os

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)

    def full(fd: int, data: object, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(OSError, match="TMPDIR") as info:
        LogReader(season).packed()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # the scratch file had no name to leave behind


def test_the_streamed_build_is_the_build_in_one_process(season: Path, small_ranges: None) -> None:
    """Issue 32.1: written range by range, released as it goes, with the games that reach across
    ranges replayed from the workers' copy, the projection is row for row the one built in one
    process (no worker, nothing released) — `events.body` included."""
    forked = project(LogReader(season).packed(), workers=2)
    alone = project(LogReader(season).packed(), workers=1)
    assert forked.findings == alone.findings and forked.places == alone.places
    assert _tables(forked) == _tables(alone)


def test_standings_first_and_kept_agree_after_a_streamed_build(season: Path, tmp_path: Path, small_ranges: None) -> None:
    """Issue 32.1: the first `standings` builds with the streamed build and keeps it (its held
    entries taken from the build, the log being released); the kept projection gives the same rows."""
    root = tmp_path / "ledger"
    shutil.copytree(season, root)
    shutil.rmtree(root / "derived", ignore_errors=True)
    plain = open_session(root)
    tournament = plain.projection.tournaments[0]["tournament"]
    expected = standings(plain, tournament).rows
    built = open_session(root, kept=True, body=False)
    assert built.origin.startswith("built") and "not kept" not in built.origin
    assert standings(built, tournament).rows == expected
    reused = open_session(root, kept=True, body=False)
    assert reused.origin == "reused"
    assert standings(reused, tournament).rows == expected
