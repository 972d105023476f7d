"""A batch longer than a segment goes on into new segments, all or nothing through the commit mark
on its last frame only (security issue, item 11: a 1 M-line batch made one 156 MB segment and took
9× its input in memory). Each reader (the writer's recovery, verify, the packed reader) counts an
entry as committed when a commit mark follows it, in its segment or a later one."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from ledger import LogReader, segments, store
from ledger.errors import DiskError, SequenceError
from ledger.layout import SEGMENTS
from ledger.recorder import record, validate_lines
from ledger.verify import verify
from schemas.codec import ContractError
from tests.ledger_support import event_line, game_lines, snapshot

SEGMENT = 4096


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ledger"
    store.init(path, segment_bytes=SEGMENT)
    record(path, game_lines(2, 5))
    return path


def _segment_files(root: Path) -> list[Path]:
    return [path for _, path in segments.list_segments(root / SEGMENTS)]


def _marks(root: Path) -> list[tuple[int, bool]]:
    """(entry, commit mark) of every frame, segment by segment."""
    return [(i, commit) for _, path in segments.list_segments(root / SEGMENTS)
            for i, _, _, commit in segments.iter_frames(path.read_bytes(), int(path.stem))]


def test_a_long_batch_fills_segments_and_commits_once(root: Path) -> None:
    before = len(_marks(root))
    result = record(root, game_lines(2, 150, start=5))
    assert result.appended == 300
    files = _segment_files(root)
    assert len(files) >= 5 and all(p.stat().st_size <= SEGMENT for p in files)
    batch = _marks(root)[before:]
    assert [commit for _, commit in batch] == [False] * 299 + [True]  # one commit mark, on the batch's last frame
    report = verify(root)
    assert report.ok and report.size == 310 and not report.notes, report.error
    assert len(LogReader(root).packed()) == 310
    with store.Ledger.open(root) as led:  # the index places entries in every segment
        assert led.recovered is None and led.next_seq("g1") == 155
        assert json.loads(led.read_stream_entry("g1", 154))["seq"] == 154
        record_more = led.append(validate_lines([event_line("g0", 155), event_line("g1", 155)], 65536))
    assert record_more.appended == 2 and verify(root).ok


def test_a_refusal_on_the_last_line_leaves_every_file_as_it_was(root: Path) -> None:
    before = snapshot(root)
    lines = game_lines(2, 150, start=5) + [b'{"kind": "game.move_time", "stream": "g0"}']
    with pytest.raises(ContractError):
        record(root, lines)
    assert snapshot(root) == before
    with pytest.raises(SequenceError):
        record(root, game_lines(2, 150, start=5) + [event_line("g0", 999)])
    assert snapshot(root) == before


class _DiesAtWrite(segments.FileOps):
    """Writes reach the disk until the n-th, which dies half-way (the machine stops)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self.left -= 1
        if self.left == 0:
            super().write(fd, data[: len(data) // 2])
            raise KeyboardInterrupt  # nothing of the writer runs after this
        return super().write(fd, data)


@pytest.mark.parametrize("dies_at", [2, 5, 9])
def test_a_crash_inside_a_spanning_batch_loses_all_of_it(root: Path, dies_at: int) -> None:
    """Segments written whole before the crash hold frames without a commit mark: verify notes
    the unacknowledged tail, the next writer drops it in every segment, and the log is as before."""
    before = snapshot(root)
    led = store.Ledger.open(root, _DiesAtWrite(dies_at))
    with pytest.raises(KeyboardInterrupt):
        led.append(validate_lines(game_lines(2, 450, start=5), 65536))
    led.close()
    assert len(_segment_files(root)) > 1
    report = verify(root)
    assert report.ok and report.size == 10, report.error
    assert any("unacknowledged tail" in note for note in report.notes)
    assert len(LogReader(root).packed()) == 10
    with store.Ledger.open(root) as led:
        assert led.recovered is not None and "dropped an unacknowledged tail" in led.recovered
        assert led.size == 10
    assert snapshot(root) == before
    assert record(root, game_lines(2, 150, start=5)).appended == 300 and verify(root).ok


def test_a_failed_write_cuts_every_segment_back(root: Path) -> None:
    class Full(segments.FileOps):
        left = 6

        def write(self, fd: int, data: bytes | memoryview) -> int:
            self.left -= 1
            if self.left == 0:
                raise OSError(28, "No space left on device")
            return super().write(fd, data)

    before = snapshot(root)
    with store.Ledger.open(root, Full()) as led, pytest.raises(DiskError):
        led.append(validate_lines(game_lines(2, 450, start=5), 65536))
    assert snapshot(root) == before


def test_memory_stays_bounded_by_a_piece(tmp_path: Path) -> None:
    """Recording 60,000 events holds no line, event or frame beyond the piece in hand: what stays
    is 32-byte leaf hashes and the index's 16 bytes an entry (1.5× these short lines; 9× before)."""
    path = tmp_path / "ledger"
    store.init(path)
    data = b"\n".join(game_lines(6, 10_000)) + b"\n"
    tracemalloc.start()
    try:
        record(path, io.BytesIO(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(data), f"peak {peak} bytes for {len(data)} bytes of input"
    assert verify(path).ok


def test_a_batch_cut_back_from_a_fresh_segment_leaves_a_sound_log(root: Path) -> None:
    """A batch that began a new segment (the current one full) and died there leaves that segment
    empty after recovery; the checkpoint the next writer signs records where the last entry ends:
    in the segment before."""
    ops = _DiesAtWrite(10**6)
    led = store.Ledger.open(root, ops)
    seq = 5
    while _segment_files(root)[-1].stat().st_size < SEGMENT - 100:
        led.append(validate_lines([event_line("g0", seq)], 65536))
        seq += 1
    size = led.size
    assert led.checkpoint_size < size  # acknowledged, not yet signed: the reopening writer signs them
    ops.left = 1
    with pytest.raises(KeyboardInterrupt):
        led.append(validate_lines([event_line("g0", s) for s in range(seq, seq + 50)], 65536))
    led.close()
    with store.Ledger.open(root) as led:
        assert led.size == led.checkpoint_size == size and led.recovered is not None
        assert _segment_files(root)[-1].stat().st_size == 0
    report = verify(root)
    assert report.ok and report.size == size, report.error
    assert record(root, [event_line("g0", s) for s in range(seq, seq + 50)]).appended == 50
    assert verify(root).ok
