"""The Merkle tree's hashes stored as C2SP tlog-tiles (https://c2sp.org/tlog-tiles).

A tile at level L, index N holds the hashes of the tree's nodes at height 8·L with indexes
256·N … 256·N + 255: level 0 holds the leaf hashes, level 1 the roots of the full level-0 tiles,
and so on. A full tile is the file `tile/<L>/<N>`; the first W hashes of a tile not yet full are
`tile/<L>/<N>.p/<W>`, written at every checkpoint so that any signed size can be served. N is
written in groups of three digits, all but the last prefixed by `x` (1234067 → `x001/x234/067`).

Any node of the tree, any inclusion or consistency proof and the right edge of the tree at a
signed size come from O(log n) tiles, so nothing is re-hashed to open, extend or prove.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ledger.entries import TILE_HEIGHT, WIDTH, leaf_hashes_of
from ledger.errors import LedgerCorrupt
from ledger.fastscan import extend
from ledger.merkle import CompactRange, node_hash, split_point
from ledger.segments import make_dirs

HASH = 32
TILES = "tile"


def index_path(n: int) -> str:
    """Returns the C2SP path element of a tile index: 1234067 → `x001/x234/067`."""
    digits = f"{n:03d}"
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return "/".join([*("x" + g for g in groups[:-1]), groups[-1]])


def tile_path(root: Path, level: int, n: int, width: int = WIDTH) -> Path:
    """Returns where tile (level, n) of the given width is stored under a ledger or export root."""
    base = f"{TILES}/{level}/{index_path(n)}"
    return root / (base if width == WIDTH else f"{base}.p/{width}")


def entries_path(root: Path, n: int, width: int = WIDTH) -> Path:
    """Returns where entry bundle n (of the given width) is stored under an export root."""
    base = f"{TILES}/entries/{index_path(n)}"
    return root / (base if width == WIDTH else f"{base}.p/{width}")


def perfect_root(hashes: bytes | memoryview) -> bytes:
    """Returns the root of a perfect subtree over a power-of-two run of 32-byte hashes."""
    if len(hashes) == HASH:
        return bytes(hashes)
    tree = CompactRange()
    extend(tree, hashes)
    return tree.root()


def level_count(size: int, level: int) -> int:
    """Returns how many hashes the tree of `size` leaves has at tile level `level`."""
    return size >> (TILE_HEIGHT * level)


class TileReader:
    """Reads hashes out of stored tiles for a tree of a given size, caching the tiles it reads.

    `read` is the one file access, so tests can count the bytes a proof or an open costs.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[tuple[int, int], bytes] = {}
        self.bytes_read = 0

    def tile(self, level: int, n: int, width: int) -> bytes:
        """Returns the first `width` hashes of tile (level, n), from the full tile or a wide enough partial one.

        :raises LedgerCorrupt: when no stored tile holds them.
        """
        held = self._cache.get((level, n))
        if held is None or len(held) < width * HASH:
            held = self._load(level, n, width)
            self._cache[(level, n)] = held
        return held[:width * HASH]

    def stored_prefix(self, level: int, n: int) -> bytes:
        """Returns the most hashes stored for tile (level, n): the full tile, else the widest partial, else none."""
        data = self._read(tile_path(self.root, level, n))
        if data is None:
            widths = partial_widths(self.root, level, n)
            data = self._read(tile_path(self.root, level, n, widths[-1])) if widths else None
        return (data or b"")[:len(data or b"") - len(data or b"") % HASH]

    def _load(self, level: int, n: int, width: int) -> bytes:
        # A full tile cut short by a crash (written in place, beyond the durable head) gives way to the partial tiles.
        data = self._read(tile_path(self.root, level, n))
        if (data is None or len(data) < width * HASH) and width < WIDTH:
            data = self._read(tile_path(self.root, level, n, width))  # a signed size's own partial: no listing
        if data is None or len(data) < width * HASH:
            data = next((d for w in partial_widths(self.root, level, n) if w >= width
                         and (d := self._read(tile_path(self.root, level, n, w))) is not None), None)
        if (data is None or len(data) < width * HASH) and width < WIDTH:
            data = self._compute(level, n, width)
        if data is None or len(data) < width * HASH or len(data) % HASH:
            raise LedgerCorrupt(None, f"哈希瓦片 {level}/{index_path(n)}（{width} 个哈希）缺失或过短 / "
                                f"tile {level}/{index_path(n)} with {width} hashes is missing or short")
        return data

    def _compute(self, level: int, n: int, width: int) -> bytes:
        """Returns a partial tile not stored yet (a live service writes them only at its full
        checkpoints): the widest stored one, completed from the entries' leaf hashes (level 0) or
        the roots of the full tiles of the level below, which are written as they fill.

        :raises LedgerCorrupt: when a full tile below or an entry is missing.
        """
        have = self.stored_prefix(level, n)[:width * HASH]
        first, count = n * WIDTH + len(have) // HASH, width - len(have) // HASH
        if level == 0:
            return have + leaf_hashes_of(self.root, first, count)
        return have + b"".join(perfect_root(self.tile(level - 1, j, WIDTH)) for j in range(first, first + count))

    def _read(self, path: Path) -> bytes | None:
        try:
            if not path.is_file() or path.is_symlink():
                return None
            data = path.read_bytes()
        except OSError:
            return None
        self.bytes_read += len(data)
        return data

    def hashes(self, level: int, first: int, count: int) -> bytes:
        """Returns `count` consecutive hashes of a tile level from index `first` (within one tile)."""
        n, offset = divmod(first, WIDTH)
        return self.tile(level, n, offset + count)[offset * HASH:]

    def node(self, height: int, index: int) -> bytes:
        """Returns the hash of the perfect subtree of `height` whose leftmost leaf is index · 2^height."""
        level, rest = divmod(height, TILE_HEIGHT)
        return perfect_root(self.hashes(level, index << rest, 1 << rest))

    def subtree(self, lo: int, hi: int) -> bytes:
        """Returns MTH(D[lo:hi]) of RFC 6962, for the ranges the proofs ask for."""
        n = hi - lo
        if n & (n - 1) == 0 and lo % n == 0:
            return self.node(n.bit_length() - 1, lo // n)
        k = split_point(n)
        return node_hash(self.subtree(lo, lo + k), self.subtree(lo + k, hi))

    def edge(self, size: int) -> CompactRange:
        """Returns the compact range (the right edge) of the tree of `size` leaves."""
        level = 0
        while level_count(size, level):  # each level's partial tile of this size first: stored by that name
            if width := level_count(size, level) % WIDTH:
                self.tile(level, level_count(size, level) // WIDTH, width)
            level += 1
        tree = CompactRange()
        start = 0
        for height in range(size.bit_length() - 1, -1, -1):
            if size >> height & 1:
                tree._stack.append(self.node(height, start >> height))
                start += 1 << height
        tree.size = size
        return tree


def partial_widths(root: Path, level: int, n: int) -> list[int]:
    """Returns the widths of the partial tiles stored for tile (level, n), smallest first."""
    try:
        names = os.listdir(f"{tile_path(root, level, n)}.p")
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(name) for name in names if name.isdigit() and 0 < int(name) < WIDTH)


class _TileLevels:
    """Each tile level's hashes not yet in a full tile, and how many full tiles each level has."""

    def __init__(self, size: int, partial: list[bytes]) -> None:
        self._held = [bytearray(p) for p in partial]
        self._full = [level_count(size, level) // WIDTH for level in range(len(partial))]

    def _fill(self, hashes: bytes | bytearray | memoryview) -> Iterator[tuple[int, int, bytes]]:
        """Adds leaf hashes and yields (level, index, hashes) of every tile they fill, at every level."""
        level = 0
        while hashes:
            if level == len(self._held):
                self._held.append(bytearray())
                self._full.append(0)
            held = self._held[level]
            held += hashes
            roots = bytearray()
            while len(held) >= WIDTH * HASH:
                tile = bytes(held[:WIDTH * HASH])
                del held[:WIDTH * HASH]
                self._full[level] += 1
                yield level, self._full[level] - 1, tile
                roots += perfect_root(tile)
            hashes, level = roots, level + 1


def tiles_of(leaves: bytes | memoryview) -> Iterator[tuple[int, int, int, bytes]]:
    """Yields (level, index, width, hashes) of every tile of the tree of these leaf hashes, full tiles
    then the partial ones, computed from the leaves (never read from the stored tiles)."""
    levels = _TileLevels(0, [])
    for level, n, tile in levels._fill(leaves):
        yield level, n, WIDTH, tile
    for level, held in enumerate(levels._held):
        if held:
            yield level, levels._full[level], len(held) // HASH, bytes(held)


class TileWriter(_TileLevels):
    """Keeps the tiles not yet full in memory as leaves are appended, writes each tile when it
    fills, and the partial tiles of the current size when asked (at a checkpoint).

    Files are written to a temporary name and renamed; nothing here syncs: `dirty` lists the full
    tiles the caller must make durable before it signs a checkpoint that covers them, `partials`
    each level's newest partial tile, not yet synced. A partial tile need not be durable when a
    note covers it: it is derived from the entries, and after a crash the writer rewrites those
    left short or empty (`repair_partials`). Only the partial tiles of the size the index head
    records must be durable (the writer resumes from them), so the caller syncs `partials` with
    the head; the earlier partial tiles of the tiles not yet full are never synced.
    """

    def __init__(self, root: Path, size: int, partial: list[bytes]) -> None:
        super().__init__(size, partial)
        self.root = root
        self.size = size
        self.dirty: set[Path] = set()
        self.partials: dict[int, Path] = {}  # level -> its newest partial tile, not yet synced
        self.filled: list[tuple[int, int]] = []  # tiles filled since the caller last cleared this
        self._made: set[Path] = set()
        self.new_dirs: list[Path] = []  # directories created since the caller last cleared this
        self._written: dict[int, tuple[int, int]] = {}  # level -> (tile, bytes) of the partial last written

    @classmethod
    def resume(cls, root: Path, reader: TileReader, size: int) -> TileWriter:
        """Returns a writer that goes on from the stored tiles of a tree of `size` leaves."""
        partial, level = [], 0
        while level_count(size, level):
            count = level_count(size, level)
            width = count % WIDTH
            partial.append(reader.hashes(level, count - width, width) if width else b"")
            level += 1
        writer = cls(root, size, partial)
        writer._written = {level: (writer._full[level], len(held)) for level, held in enumerate(writer._held) if held}
        return writer

    def append(self, leaves: bytes | memoryview) -> None:
        """Adds a run of 32-byte leaf hashes, writing every tile they fill."""
        for level, n, tile in self._fill(leaves):
            self._write(tile_path(self.root, level, n), tile)
            self.dirty.add(tile_path(self.root, level, n))
            self.filled.append((level, n))
        self.size += len(leaves) // HASH

    def write_partials(self) -> None:
        """Writes the partial tile of every level that changed since the last call, for the current size."""
        for level, held in enumerate(self._held):
            if held and self._written.get(level) != (self._full[level], len(held)):
                path = tile_path(self.root, level, self._full[level], len(held) // HASH)
                self._write(path, bytes(held))
                self.partials[level] = path
                self._written[level] = (self._full[level], len(held))

    def drop_filled(self) -> None:
        """Removes the partial tiles of the tiles filled since the last call (see `drop_partials`),
        and forgets those still waiting to be synced."""
        self.drop(self.take_filled())

    def take_filled(self) -> list[tuple[int, int]]:
        """Returns the tiles filled since the last call (or `drop_filled`), to `drop` later."""
        filled, self.filled = self.filled, []
        return filled

    def drop(self, filled: list[tuple[int, int]]) -> None:
        """Removes the partial tiles of the given filled tiles, and forgets those still waiting to be synced."""
        if not filled:
            return
        dropped = {f"{tile_path(self.root, level, n)}.p" for level, n in filled}
        drop_partials(self.root, filled)
        self.partials = {level: p for level, p in self.partials.items() if str(p.parent) not in dropped}
        self.new_dirs[:] = [d for d in self.new_dirs if str(d) not in dropped]

    def repair_partials(self) -> list[Path]:
        """Rewrites the partial tiles of the tiles not yet full that a crash left short or empty
        (written at a checkpoint, never synced), from the hashes held. A partial tile holding the
        wrong hashes is left for `verify` to name: no crash writes those. Returns the tiles rewritten."""
        repaired = []
        for level, held in enumerate(self._held):
            n = self._full[level]
            for width in partial_widths(self.root, level, n):
                if width * HASH > len(held):
                    continue
                path = tile_path(self.root, level, n, width)
                try:
                    short = path.stat().st_size < width * HASH
                except OSError:
                    continue
                if short and not path.is_symlink():
                    self._write(path, bytes(held[:width * HASH]))
                    repaired.append(path)
        return repaired

    def _write(self, path: Path, data: bytes) -> None:
        """Writes a tile to a temporary name and renames it: a writer catching up after a crash
        rewrites tiles a checkpoint may already cover, which must never be seen half written."""
        if path.parent not in self._made:
            self.new_dirs += make_dirs(path.parent)
            self._made.add(path.parent)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o640)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)


def drop_partials(root: Path, filled: list[tuple[int, int]]) -> None:
    """Removes the partial tiles of tiles now stored full (clients then read the full tile)."""
    for level, n in filled:
        directory = Path(f"{tile_path(root, level, n)}.p")
        for name in _names(directory):
            (directory / name).unlink(missing_ok=True)
        try:
            directory.rmdir()
        except OSError:
            pass


def _names(directory: Path) -> Iterator[str]:
    try:
        yield from os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return


class TileAudit(_TileLevels):
    """Checks the stored tiles against the leaf hashes as verification recomputes them from the
    entries: every full tile, and every partial tile stored beside a tile not yet full, must hold
    exactly the hashes of its entries; tiles the newest checkpoint covers must be there.

    A partial tile may be missing, short or empty after a crash (the live service syncs only those
    of the size the index head records, `durable`), and the next writer rewrites it from the
    entries: those are noted in `rebuilt`, not refused, but for the signed size's own when the head
    covers it. One that holds other hashes than its entries' is named wherever it lies."""

    def __init__(self, root: Path, signed: int, skip: bool = False, durable: int | None = None) -> None:
        super().__init__(0, [])
        self.root = root
        self.signed = signed
        self.skip = skip
        self.durable = signed if durable is None else min(durable, signed)
        self.rebuilt: list[str] = []  # partial tiles beyond the durable part a crash left missing or short

    def feed(self, leaves: bytes | memoryview) -> str | None:
        """Adds a run of leaf hashes in log order; returns what is wrong, if anything."""
        if self.skip:
            return None
        for level, n, tile in self._fill(leaves):
            problem = self._compare_full(level, n, tile, required=(n + 1) * WIDTH << (TILE_HEIGHT * level) <= self.signed)
            if problem:
                return problem
        return None

    def finish(self) -> str | None:
        """Checks the partial tiles of the tiles not full; returns what is wrong, if anything."""
        for level, held in enumerate(self._held):
            if held:
                width = level_count(self.signed, level) - self._full[level] * WIDTH
                required = 0 < width <= len(held) // HASH
                if required and not self._durable(level, self._full[level], width):
                    required = False
                    path = tile_path(self.root, level, self._full[level], width)
                    if not path.is_file() and not tile_path(self.root, level, self._full[level]).is_file():
                        self.rebuilt.append(str(path.relative_to(self.root)))
                problem = self._compare(level, self._full[level], bytes(held), required, width if required else None)
                if problem:
                    return problem
        return None

    def _compare_full(self, level: int, n: int, tile: bytes, required: bool) -> str | None:
        """Checks a full tile (the common case, so without a Path per tile); partial tiles of a
        full tile are dropped at the next checkpoint and no longer served."""
        path = os.path.join(self.root, TILES, str(level), index_path(n))
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return f"tile {level}/{index_path(n)} is missing, though a checkpoint covers it" if required else None
        except OSError as exc:
            return f"tile {level}/{index_path(n)}: {exc.strerror or exc}"
        if data != tile:
            return self._compare(level, n, tile, required)
        return None

    def _compare(self, level: int, n: int, hashes: bytes, required: bool, intact: int | None = None) -> str | None:
        """Checks the stored tiles of (level, n) against their hashes; a partial tile left short by
        a crash is noted, not named, but for the one of width `intact` (synced: the signed size's)."""
        name = f"tile {level}/{index_path(n)}"
        full = tile_path(self.root, level, n)
        stored = [(full, WIDTH)] if full.exists() else []
        stored += [(tile_path(self.root, level, n, w), w) for w in partial_widths(self.root, level, n)]
        if required and not stored:
            return f"{name} is missing, though a checkpoint covers it"
        for path, width in stored:
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            if data is not None and len(data) < width * HASH and width < WIDTH and width != intact:
                self.rebuilt.append(str(path.relative_to(self.root)))  # a crash's: not synced, rewritten by the next writer
                continue
            if data is None or len(data) != width * HASH:
                return f"{path.relative_to(self.root)} is not {width} hashes"
            if data != hashes[:width * HASH]:
                first = next(i for i in range(width) if data[HASH * i:HASH * i + HASH] != hashes[HASH * i:HASH * i + HASH])
                node = n * WIDTH + first
                return f"{path.relative_to(self.root)}: hash {first} differs from its entries' (node {node} at height {TILE_HEIGHT * level})"
        return None

    def _durable(self, level: int, n: int, width: int) -> bool:
        """Tells whether partial tile (level, n) of `width` was synced: written at a size the head covers."""
        return (n * WIDTH + width) << (TILE_HEIGHT * level) <= self.durable
