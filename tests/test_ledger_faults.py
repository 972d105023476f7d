"""Disk faults through a test double of the writer's system calls: unsynced writes are lost, the
last write is torn, ENOSPC strikes mid-batch. No acknowledged event is lost; errors are clear."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ledger import store
from ledger.errors import DiskError, LedgerCorrupt
from ledger.recorder import validate_lines
from ledger.segments import FileOps
from ledger.verify import verify
from tests.ledger_support import game_lines


class CrashingOps(FileOps):
    """Writes go to a page cache that only `sync` makes durable; `crash` throws the cache away.
    `torn` makes the next write put only part of its bytes on disk before the power fails."""

    def __init__(self) -> None:
        self.cache: dict[int, list[bytes]] = {}
        self.torn_after: int | None = None
        self.enospc_after: int | None = None

    def write(self, fd: int, data: bytes | memoryview) -> int:
        data = bytes(data)
        if self.enospc_after is not None:
            os.write(fd, data[: self.enospc_after])  # part of the batch reaches the disk, then it is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if self.torn_after is not None:
            os.write(fd, data[: self.torn_after])
            raise _PowerLoss()
        self.cache.setdefault(fd, []).append(data)
        return len(data)

    def sync(self, fd: int) -> None:
        for chunk in self.cache.pop(fd, []):
            os.write(fd, chunk)
        os.fdatasync(fd)

    def crash(self) -> None:
        self.cache.clear()


class _PowerLoss(BaseException):
    """The machine stops mid-write; nothing after this runs."""


class LostSyncOps(CrashingOps):
    """The machine dies before the sync reaches the disk."""

    def sync(self, fd: int) -> None:
        self.crash()
        raise _PowerLoss()


def _batch(stream_start: int, n: int = 10) -> list:
    return validate_lines(game_lines(2, n, start=stream_start), 65536)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ledger"
    store.init(path)
    with store.Ledger.open(path) as led:
        led.append(_batch(0))
        led.checkpoint()
    return path


def _reopen_and_check(root: Path, expected_size: int) -> None:
    with store.Ledger.open(root) as led:
        assert led.size == expected_size
        assert led.next_seq("g0") == led.next_seq("g1") == expected_size // 2
    report = verify(root)
    assert report.ok and report.size == expected_size, report.error


def test_unsynced_writes_are_lost_but_nothing_acknowledged_is(root: Path) -> None:
    ops = LostSyncOps()
    led = store.Ledger.open(root, ops)
    with pytest.raises(_PowerLoss):
        led.append(_batch(10))
    led.close()
    _reopen_and_check(root, 20)


@pytest.mark.parametrize("cut", [1, 15, 100, 333])
def test_torn_last_write_is_dropped_on_reopen(root: Path, cut: int) -> None:
    led = store.Ledger.open(root, CrashingOps())
    led.append(_batch(10))  # acknowledged, not yet checkpointed
    led._ops.torn_after = cut  # type: ignore[attr-defined]
    with pytest.raises(_PowerLoss):
        led.append(_batch(20))
    led.close()
    with store.Ledger.open(root) as reopened:
        assert reopened.recovered is not None and "dropped an unacknowledged tail" in reopened.recovered
    _reopen_and_check(root, 40)


def test_enospc_mid_batch_acknowledges_nothing_and_the_ledger_goes_on(root: Path) -> None:
    ops = CrashingOps()
    with store.Ledger.open(root, ops) as led:
        ops.enospc_after = 200
        with pytest.raises(DiskError, match=r"^batch of 20 events not appended \(No space left on device\); nothing was acknowledged$"):
            led.append(_batch(10))
        assert led.size == 20
        ops.enospc_after = None
        assert led.append(_batch(10)).appended == 20
        led.checkpoint()
    _reopen_and_check(root, 40)


def _unsealed_batches(root: Path) -> list[tuple[int, int]]:
    """Appends two batches that no checkpoint covers; returns the (start, end) bytes of every frame."""
    from ledger.segments import iter_frames, list_segments

    with store.Ledger.open(root) as led:
        led.append(_batch(10, 3))
        led.append(_batch(13, 3))
    data = list_segments(root / "segments")[0][1].read_bytes()
    return [(off, off + p.nbytes + 20) for _, off, p, _ in iter_frames(data, 0)]


def _flip(root: Path, position: int) -> None:
    from ledger.segments import list_segments

    path = list_segments(root / "segments")[0][1]
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


def test_damage_followed_by_acknowledged_entries_is_refused_not_truncated(root: Path) -> None:
    """Only a torn tail is dropped: a damaged frame with acknowledged entries after it is evidence."""
    frames = _unsealed_batches(root)
    _flip(root, frames[21][0] + 18)  # a payload byte of the first unsealed batch
    with pytest.raises(LedgerCorrupt, match=r"^entry 21: 帧已损坏，且其后还有已确认的条目.* / CRC mismatch.*acknowledged entries follow it"):
        store.Ledger.open(root)
    report = verify(root)
    assert not report.ok and report.index == 21


def test_damaged_last_frame_is_a_torn_tail(root: Path) -> None:
    frames = _unsealed_batches(root)
    _flip(root, frames[-1][0] + 18)
    assert verify(root).ok
    with store.Ledger.open(root) as led:
        assert led.size == 26 and led.recovered is not None
