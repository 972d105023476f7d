"""Stored entries read by log index: the position cache behind the one reader
(`ledger.reader.LogReader.entries`), entry bundles (`ledger/tlog.py`) and the leaf hashes of a
partial tile not written yet (`ledger/tiles.py`); used directly only by the writer, which reads
entries it has committed and not signed yet.

`EntryReader` scans a segment once and keeps where every `WIDTH`th entry starts, so later reads start
there: it is speed code, below both the tiles and the tlog-tiles read side that serve what it reads.
"""

from __future__ import annotations

import bisect
import threading
from pathlib import Path

from ledger.commitments import UNKNOWN, open_history
from ledger.errors import LedgerCorrupt
from ledger.layout import SEGMENTS
from ledger.merkle import leaf_hash
from ledger.segments import OVERHEAD, FrameError, iter_frames, list_segments

TILE_HEIGHT = 8
WIDTH = 1 << TILE_HEIGHT
"""Hashes in a full tile and entries in a full entry bundle (c2sp.org/tlog-tiles): the reader keeps
the start of every WIDTH-th entry, where a bundle begins."""


def leaf_hashes_of(root: Path, first: int, count: int) -> bytes:
    """Returns the leaf hashes of entries first … first + count − 1, read from the segments.

    :raises LedgerCorrupt: when they cannot be read.
    """
    reader = EntryReader(root)
    reader.start_near(first)
    return b"".join(map(leaf_hash, reader.read(first, count)))


class EntryReader:
    """Reads stored entries by log index, for entry bundles and proofs; safe to share between threads."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._starts: dict[int, tuple[int, int]] = {}  # tile n → (segment's first index, offset of entry 256·n)
        self._hint: tuple[int, int, int] | None = None  # (entry, segment's first index, its offset), from `start_near`
        self._lock = threading.Lock()

    def start_near(self, first: int) -> None:
        """Notes where a checkpoint at or before entry `first` ends (`index/checkpoints`), so that
        reading `first` scans from there, not from its segment's start (a live service signs a
        checkpoint per commit, so that is a few entries before it)."""
        with open_history(self.root) as history:
            n = history.first_above(first) if history is not None else 0
            if history is None or not n:
                return
            size, segment, offset = history.position(n - 1)  # where entry `size` starts, unless its segment ends there
        if segment != UNKNOWN:
            self._hint = (size, segment, offset)

    def read(self, first: int, count: int) -> list[bytes]:
        """Returns the stored bytes of entries first … first + count − 1 (all committed and durable).

        :raises LedgerCorrupt: when they cannot be read.
        """
        found: list[bytes] = []
        while len(found) < count:
            found += self._read_segment(first + len(found), count - len(found))
        return found

    def _read_segment(self, first: int, count: int) -> list[bytes]:
        segments = list_segments(self.root / SEGMENTS)
        starts = [s for s, _ in segments]
        at = bisect.bisect_right(starts, first) - 1
        if at < 0:
            raise LedgerCorrupt(first, "没有段文件存放此条目 / no segment holds this entry")
        segment, path = segments[at]
        with self._lock:
            known = self._starts.get(first // WIDTH)
        index, offset = (first - first % WIDTH, known[1]) if known and known[0] == segment else (segment, 0)
        hint = self._hint
        if hint is not None and hint[1] == segment and index <= hint[0] <= first:
            index, offset = hint[0], hint[2]
        chunk = 1 << 18
        with path.open("rb") as f:
            while True:  # read as far as the entries wanted need: a segment can be 64 MB
                f.seek(offset)
                data = f.read(chunk)
                found = self._scan(data, index, offset, segment, first, count)
                if len(found) == count or len(data) < chunk:
                    break
                chunk *= 4
        if not found:
            raise LedgerCorrupt(first, f"{path.name} 中没有此条目 / {path.name} does not hold this entry")
        return found

    def _scan(self, data: bytes, index: int, offset: int, segment: int, first: int, count: int) -> list[bytes]:
        """Collects entries first … from segment bytes read at `offset` (entry `index` first), noting
        where each 256th entry starts, the one after the last frame read included (a reader following
        the log bundle by bundle then starts each read where the last ended, not at the segment's
        start); a frame cut off by the end of the bytes read ends the scan."""
        found: list[bytes] = []
        try:
            for entry, at, payload, _ in iter_frames(data, index):
                if (entry + 1) % WIDTH == 0:  # where the next frame would begin (a later segment's, if any, is not this one's)
                    with self._lock:
                        self._starts[(entry + 1) // WIDTH] = (segment, offset + at + OVERHEAD + len(payload))
                if entry >= first:
                    found.append(bytes(payload))
                    if len(found) == count:
                        break
        except FrameError:
            pass  # the end of the bytes read (or a torn tail past every durable entry)
        return found
