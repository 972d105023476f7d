"""The writer's stream index stays bounded whatever the log's size (issue 33 point 2): a stream's
records on disk are counted from the file's size and read by seq, one at a time; only records not
yet flushed are held, and only a bounded number of clean indexes stays open."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import ledger.store as store
from ledger import Ledger, Pending, init, verify
from ledger.errors import LedgerCorrupt, SequenceError
from ledger.index import RECORD, iter_records, load_stream, stream_path, truncate_from
from ledger.sources import BATCHES_STREAM
from schemas import decode, encode
from schemas.log import BatchReceived
from tests.ledger_support import event_line

BATCHES = 40_000
"""Records of `log.batches` made below: 640 KB of index, which the old writer loaded whole at open."""


def _record(seq: int) -> BatchReceived:
    return BatchReceived(stream=BATCHES_STREAM, seq=seq, ts=1_000 + seq, source="venue", signature="sig", digest=f"{seq:064x}",
                         entries=[(seq, 1)], streams=["t/g"], canonical=True)


def _pending(record: BatchReceived) -> Pending:
    return Pending(0, record, encode(record), own=True)


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger whose `log.batches` holds BATCHES records, with a full checkpoint (the index on disk)."""
    root = tmp_path_factory.mktemp("bounded") / "ledger"
    init(root)
    with Ledger.open(root) as led:
        for lo in range(0, BATCHES, 2_000):
            led.append([_pending(_record(s)) for s in range(lo, min(BATCHES, lo + 2_000))], checkpoint=False)
        led.checkpoint()
    return root


def _move(stream: str, seq: int) -> Pending:
    event = decode(event_line(stream, seq))
    return Pending(0, event, encode(event))


def _held(led: Ledger) -> int:
    """Returns how many records the writer holds in memory, over every open index."""
    return sum(len(i.new_entries) + len(i.new_offsets) for i in (*led._streams.values(), *led._dirty.values()))


def test_opening_a_long_log_batches_holds_none_of_its_records(batches: Path) -> None:
    """Issue 33.2 (memory grows with every batch ever received): the writer learns `log.batches`'
    length from its index file's size and reads the one record a question needs; opening and
    answering for an old seq keeps no record in memory and allocates far less than the index."""
    def open_and_ask() -> int:
        with Ledger.open(batches) as led:
            assert led.next_seq(BATCHES_STREAM) == BATCHES
            assert led.entry_of(BATCHES_STREAM, 7) == 7 and led.entry_of(BATCHES_STREAM, BATCHES - 1) == BATCHES - 1
            assert decode(led.read_stream_entry(BATCHES_STREAM, 12_345)) == _record(12_345)
            seqs = [63, 64, 0, 127, 128, 12_345, BATCHES - 65, BATCHES - 64, BATCHES - 1]  # across the blocks read
            assert [led.entry_of(BATCHES_STREAM, s) for s in seqs] == seqs
            assert _held(led) == 0
            return tracemalloc.get_traced_memory()[1]

    open_and_ask()  # (once untraced: lazy imports and first-use caches are not the index's)
    tracemalloc.start()
    try:
        peak = open_and_ask()
    finally:
        tracemalloc.stop()
    assert peak < BATCHES * RECORD.size // 2, f"opening allocated {peak} bytes at its peak; the index is {BATCHES * RECORD.size}"


def test_resends_and_conflicts_are_judged_for_stored_and_unflushed_seqs(batches: Path, tmp_path: Path) -> None:
    """The append rules (an identical re-send is acknowledged once, a different event at a used seq
    is a conflict) still hold with the index on disk: an old seq is read with one `pread`, a seq
    appended since the last flush from memory; what is held is what was appended since that flush."""
    import shutil

    root = tmp_path / "ledger"
    shutil.copytree(batches, root)
    with Ledger.open(root) as led:
        old, new = _record(3), _record(BATCHES)
        result = led.append([_pending(new)], checkpoint=False)
        assert result.appended == 1 and _held(led) == 2  # the new record: its entry and its offset
        for record in (old, new):
            again = led.append([_pending(record)], checkpoint=False)
            assert (again.appended, again.duplicates) == (0, 1), f"seq {record.seq}: an identical re-send is acknowledged"
            changed = BatchReceived(**{**{f: getattr(record, f) for f in record.__struct_fields__}, "ts": record.ts + 1})
            with pytest.raises(SequenceError, match="conflict"):
                led.append([_pending(changed)], checkpoint=False)
        assert led.entry_of(BATCHES_STREAM, 3) == 3 and led.entry_of(BATCHES_STREAM, BATCHES) == BATCHES
        led.checkpoint()
        assert _held(led) == 0, "a full checkpoint flushes the records: none stays in memory"
        assert led.append([_pending(new)], checkpoint=False).duplicates == 1, "once flushed, it is read from disk"
    assert verify(root).ok


def test_the_open_indexes_are_bounded_and_a_dirty_one_stays_until_flushed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33.2 (the store's dict of indexes never evicted): beyond OPEN_INDEXES the least
    recently used clean index is let go and opened again from its file when next used, with the
    same answers; an index with records not on disk is never let go before they are written."""
    monkeypatch.setattr(store, "OPEN_INDEXES", 4)
    root = tmp_path / "ledger"
    init(root)
    streams = [f"g{n}" for n in range(12)]
    with Ledger.open(root) as led:
        led.append([_move(s, seq) for seq in range(3) for s in streams])
        assert len(led._dirty) == 12 and not led._streams, "unflushed records are all held"
        led.checkpoint()
        assert not led._dirty and len(led._streams) == 4, "flushed, only the most recent clean indexes stay open"
        for s in streams:
            assert led.next_seq(s) == 3 and led.entry_of(s, 2) == 24 + streams.index(s)
        assert len(led._streams) == 4
        led.append([_move(s, 3) for s in streams], checkpoint=False)
        assert len(led._dirty) == 12, "dirty indexes stay open beyond the bound"
        led.checkpoint()
        assert [led.next_seq(s) for s in streams] == [4] * 12
    assert verify(root).ok


def test_a_crash_after_the_index_was_written_but_not_its_head_is_recovered(batches: Path, tmp_path: Path) -> None:
    """Crash recovery and the torn-record rule: records written beyond the index head (a background
    index job that had not synced nor moved the head) and part of one more (a crash during the
    write) are not trusted: the torn one is not counted at open, recovery cuts the file back to the
    head (`truncate_from`, a binary search over the file) and re-adds the records from the log."""
    import shutil

    root, crashed = tmp_path / "ledger", tmp_path / "crashed"
    shutil.copytree(batches, root)
    with Ledger.open(root) as led:
        led.append([_pending(_record(s)) for s in range(BATCHES, BATCHES + 5)], checkpoint=False)
        led.checkpoint(index=False)
        led.start_index()  # the records are written; the job that syncs them and moves the head never runs
        shutil.copytree(root, crashed)
    (crashed / "lock").unlink(missing_ok=True)
    path = stream_path(crashed, BATCHES_STREAM)
    header = load_stream(crashed, BATCHES_STREAM).header
    assert path.stat().st_size == header + (BATCHES + 5) * RECORD.size
    with open(path, "ab") as f:
        f.write(b"\x01" * 7)
    index = load_stream(crashed, BATCHES_STREAM)
    assert len(index) == BATCHES + 5 and index.entry(-1) == BATCHES + 4, "a torn record is not counted"
    with Ledger.open(crashed) as led:
        assert led.next_seq(BATCHES_STREAM) == BATCHES + 5 and led.entry_of(BATCHES_STREAM, BATCHES + 2) == BATCHES + 2
    assert path.stat().st_size == header + (BATCHES + 5) * RECORD.size, "the torn bytes are gone"
    assert [e for e, _ in iter_records(load_stream(crashed, BATCHES_STREAM), BATCHES + 3)] == [BATCHES + 3, BATCHES + 4]
    assert verify(crashed).ok


@pytest.mark.parametrize("kept", [0, 1, 4], ids=["empty", "one-byte", "part-of-the-name"])
def test_a_crash_between_an_index_files_creation_and_its_header_is_recovered(tmp_path: Path, kept: int) -> None:
    """Crash recovery: a new stream's index file is created, then written; a SIGKILL between the
    two (seen by tests/test_ledger_crash.py in CI) leaves the file empty or with part of its
    header. That file is an empty index, recovery re-adds the stream's records from the log; a
    file whose first bytes name another stream is still refused."""
    import shutil

    root, crashed = tmp_path / "ledger", tmp_path / "crashed"
    init(root)
    with Ledger.open(root) as led:
        led.append([_move("t1/g1", seq) for seq in range(3)], checkpoint=False)
        led.checkpoint(index=False)  # the entries are signed; the stream's index file is not yet made
        shutil.copytree(root, crashed)
    (crashed / "lock").unlink(missing_ok=True)
    path = stream_path(crashed, "t1/g1")
    assert not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_header_of("t1/g1")[:kept])
    with Ledger.open(crashed) as led:
        assert led.next_seq("t1/g1") == 3 and led.entry_of("t1/g1", 2) == 2
        led.checkpoint()
    assert path.stat().st_size == load_stream(crashed, "t1/g1").header + 3 * RECORD.size
    assert verify(crashed).ok
    path.write_bytes(b"\x02x")
    with pytest.raises(LedgerCorrupt, match="does not belong to stream 't1/g1'"):
        load_stream(crashed, "t1/g1")


def _header_of(stream: str) -> bytes:
    from ledger.index import NAME_LEN

    return NAME_LEN.pack(len(stream.encode())) + stream.encode()


def test_truncate_from_cuts_stored_and_unflushed_records(tmp_path: Path) -> None:
    """Recovery's cut (`truncate_from`) drops the records of entries from a given one, whether
    they are on disk or only in memory, and keeps the file's records whole."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_move("g", seq) for seq in range(6)])
        led.checkpoint()  # the six records on disk
        index = led._stream("g")
        index.append(6, 0)  # (made up: only the cut is under test)
        truncate_from(index, 7)
        assert (len(index), index.stored) == (7, 6)
        assert index.entry(5) == 5  # (a block of records read and kept)
        truncate_from(index, 4)
        assert (len(index), index.stored, list(index.new_entries)) == (4, 4, [])
        assert index.entry(3) == 3
        with pytest.raises(IndexError):
            index.entry(4)
        assert stream_path(root, "g").stat().st_size == index.header + 4 * RECORD.size
        truncate_from(index, 0)
        assert len(index) == 0 and not stream_path(root, "g").exists()


def test_the_reader_finds_each_streams_last_signed_entry_without_reading_the_index_whole(batches: Path, tmp_path: Path) -> None:
    """The whole-log reader learns where each stream ends from the index by a binary search per
    stream (not by reading `log.batches`' 640 KB whole); its answers are the index files' own."""
    import shutil

    from ledger import LogReader
    from ledger.index import list_stream_files, read_stream_file

    root = tmp_path / "ledger"
    shutil.copytree(batches, root)
    with Ledger.open(root) as led:
        led.append([_move(f"g{n}", seq) for seq in range(3) for n in range(4)])
        led.checkpoint()
        size = led.size
    for cut in (size, BATCHES + 5, BATCHES, 1):
        want = {}
        for path in list_stream_files(root):
            stream, pairs = read_stream_file(path)
            below = [e for e in pairs[0::2] if e < cut]
            if below:
                want[stream] = below[-1]
        assert LogReader(root)._last_entries(cut) == want
