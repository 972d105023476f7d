"""The log's read side over HTTP, as C2SP tlog-tiles clients fetch it: tile paths parsed, hash
tiles and entry bundles read for any signed size.

Hash tiles are files of the ledger (`ledger/tiles.py`). Entry bundles are not stored (the
segments hold the entries): they are cut from the segments on request, read by index through
`ledger/entries.py`'s `EntryReader`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ledger.entries import EntryReader
from ledger.errors import LedgerCorrupt
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


def entry_bundle(reader: EntryReader, n: int, width: int) -> bytes:
    """Returns entry bundle n of that width: each entry as a big-endian uint16 length and its bytes.

    :raises LedgerCorrupt: when an entry is too long for a bundle or cannot be read.
    """
    parts = []
    for i, data in enumerate(reader.read(n * WIDTH, width), n * WIDTH):
        if len(data) > ENTRY_LIMIT:
            raise LedgerCorrupt(i, f"条目有 {len(data)} 字节，条目包最多容纳 {ENTRY_LIMIT} 字节 / "
                                f"the entry is {len(data)} bytes; an entry bundle holds at most {ENTRY_LIMIT}")
        parts += [len(data).to_bytes(2, "big"), data]
    return b"".join(parts)
