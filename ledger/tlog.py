"""The log's read side over HTTP, as C2SP tlog-tiles clients fetch it: tile paths parsed, hash
tiles and entry bundles read for any signed size, and entries read by index.

Hash tiles are files of the ledger (`ledger/tiles.py`). Entry bundles are not stored (the
segments hold the entries): they are cut from the segments on request. Reading an entry by index
(`EntryReader`) scans its segment once and keeps where every 256th entry starts, so later reads
start there: it is speed code behind the one reader (`ledger.reader.LogReader.entries`), used
directly only by the writer, which reads entries it has committed and not signed yet.
"""

from __future__ import annotations

import bisect
import re
import threading
from pathlib import Path

from ledger.errors import LedgerCorrupt
from ledger.layout import SEGMENTS
from ledger.merkle import leaf_hash
from ledger.segments import OVERHEAD, FrameError, iter_frames, list_segments
from ledger.tiles import WIDTH, TileReader

ENTRY_LIMIT = 0xFFFF
"""An entry bundle prefixes each entry with a big-endian uint16 length (c2sp.org/tlog-tiles)."""
_TILE = re.compile(r"^(?P<level>entries|[0-9]{1,2})/(?P<index>(?:x[0-9]{3}/)*[0-9]{3})(?:\.p/(?P<width>[0-9]{1,3}))?$")


class TilePathError(ValueError):
    """A path under /tile/ that names no tile."""


def parse_tile_path(path: str) -> tuple[int | None, int, int]:
    """Reads `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]` into (level, or None for an entry bundle, index, width).

    :raises TilePathError: when the path is not a tile path of tlog-tiles.
    """
    match = _TILE.match(path)
    width = int(match.group("width")) if match and match.group("width") else WIDTH
    if match is None or not 1 <= width <= WIDTH or (match.group("width") or "1")[0] == "0":
        raise TilePathError(f"not a tile path: {path!r} (expected <level>/<N>[.p/<width>] or entries/<N>[.p/<width>])")
    level = None if match.group("level") == "entries" else int(match.group("level"))
    return level, int(match.group("index").replace("x", "").replace("/", "")), width


def covered(level: int | None, n: int, width: int, size: int) -> bool:
    """Tells whether a tile of that width exists in the tree of `size` leaves (full tiles always, a
    partial one only as the right edge of exactly that size)."""
    count = size >> (8 * (level or 0))
    return (n + 1) * WIDTH <= count if width == WIDTH else n * WIDTH + width <= count


def hash_tile(root: Path, level: int, n: int, width: int) -> bytes:
    """Returns the first `width` hashes of a hash tile: stored, or for a partial tile not written yet
    (a live service writes them at its full checkpoints), computed from the full tiles below it and
    the entries (`TileReader`).

    :raises LedgerCorrupt: when neither the stored tiles nor the entries give them.
    """
    return TileReader(root).tile(level, n, width)


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
        from ledger.commitments import UNKNOWN, open_history  # (commitments reads what this module serves)

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
            raise LedgerCorrupt(first, "no segment holds this entry")
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
            raise LedgerCorrupt(first, f"{path.name} does not hold this entry")
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


def entry_bundle(reader: EntryReader, n: int, width: int) -> bytes:
    """Returns entry bundle n of that width: each entry as a big-endian uint16 length and its bytes.

    :raises LedgerCorrupt: when an entry is too long for a bundle or cannot be read.
    """
    parts = []
    for i, data in enumerate(reader.read(n * WIDTH, width), n * WIDTH):
        if len(data) > ENTRY_LIMIT:
            raise LedgerCorrupt(i, f"the entry is {len(data)} bytes; an entry bundle holds at most {ENTRY_LIMIT}")
        parts += [len(data).to_bytes(2, "big"), data]
    return b"".join(parts)
