"""An export's entries checked against the signed tree: each entry's stored bytes (the `events`
table's `body`, one row per entry) hashed to its leaf, the leaves of each tile (256 entries) to
that tile's subtree root, and the tile roots to the root the export's checkpoint signs.

RFC 6962 splits a tree of more than 256 leaves at a multiple of 256, so the tree over the tile
roots (every tile full but the last) has the log's root. Tiles are independent: an engine hashes
them in parallel, one group per tile, and only the tile roots come back to be combined. The checks
name the first entry missing, repeated or out of the checkpoint's range, so a tampered or partial
export is refused with a reason, not only a different root."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ledger.fastscan import extend, leaf_hashes
from ledger.merkle import CompactRange, root_of
from ledger.tiles import WIDTH


class TreeMismatch(ValueError):
    """The export's entries do not make the signed tree."""


@dataclass(frozen=True)
class TileRoot:
    """The root of one tile's subtree, over its `count` entries from `tile * 256`."""

    tile: int
    count: int
    root: bytes


def tile_root(tile: int, entries: Sequence[int], bodies: Sequence[str | bytes]) -> TileRoot:
    """Returns the subtree root of one tile's entries (given in any order).

    :raises TreeMismatch: when an entry belongs to another tile, or one is missing or repeated.
    """
    first = tile * WIDTH
    order = sorted(range(len(entries)), key=entries.__getitem__)
    stray = [entries[at] for at in order if entries[at] // WIDTH != tile]
    if stray:
        raise TreeMismatch(f"entry {stray[0]} is filed in tile {tile}, which holds entries {first} to {first + WIDTH - 1}")
    for expected, at in enumerate(order, start=first):
        if entries[at] != expected:
            problem = "repeated" if entries[at] < expected else "missing"
            entry = entries[at] if problem == "repeated" else expected
            raise TreeMismatch(f"entry {entry} is {problem} in the export (tile {tile})")
    tree = CompactRange()
    extend(tree, leaf_hashes([_bytes(bodies[at]) for at in order]))
    return TileRoot(tile, len(order), tree.root())


def tree_root(tiles: Iterable[TileRoot], size: int) -> bytes:
    """Returns the root over the tile roots of a log of `size` entries.

    :raises TreeMismatch: when a tile is missing, beyond the size, or not full where it must be.
    """
    known = {t.tile: t for t in tiles}
    last = (size - 1) // WIDTH if size else -1
    beyond = [t for t in known if t > last]
    if beyond:
        raise TreeMismatch(f"the export holds entry {max(size, min(beyond) * WIDTH)} or later, beyond the checkpoint's {size} entries")
    roots = []
    for tile in range(last + 1):
        want = min(WIDTH, size - tile * WIDTH)
        found = known.get(tile)
        if found is not None and found.count > want:
            raise TreeMismatch(f"the export holds entry {size} or later, beyond the checkpoint's {size} entries")
        if found is None or found.count != want:
            entry = tile * WIDTH + (found.count if found else 0)
            raise TreeMismatch(f"entry {entry} is missing from the export (tile {tile} holds {found.count if found else 0} "
                               f"of its {want} entries)")
        roots.append(found.root)
    return root_of(roots)


def check_tree(tiles: Iterable[TileRoot], checkpoint: dict[str, Any]) -> None:
    """Checks the tile roots against the checkpoint's size and root (hex).

    :raises TreeMismatch: when they differ, or the entries are incomplete.
    """
    root = tree_root(tiles, checkpoint["size"])
    if root.hex() != checkpoint["root"]:
        raise TreeMismatch(f"the export's entries hash to {root.hex()}, not to the checkpoint's root {checkpoint['root']} "
                           f"at size {checkpoint['size']}: an entry's bytes were changed")


def tile_roots(events: pa.Table) -> list[TileRoot]:
    """Returns the tile roots of an `events` table (here, in one process; an engine does this per
    block of tiles on its executors). The table is sorted once and cut where the tile changes;
    each tile's rows are a slice of it, so only 256 bodies at a time become Python objects."""
    ordered = events.select(["entry", "body"]).sort_by("entry")
    if not ordered.num_rows:
        return []
    entries = ordered.column("entry").combine_chunks()
    if pc.min(entries).as_py() < 0:
        raise TreeMismatch(f"entry {pc.min(entries).as_py()} is not an entry of any log")
    tiles = pc.divide(entries, WIDTH)
    changes = pc.indices_nonzero(pc.not_equal(tiles[1:], tiles[:-1])).to_pylist()
    roots = []
    for low, high in zip([0, *(i + 1 for i in changes)], [*(i + 1 for i in changes), ordered.num_rows]):
        rows = ordered.slice(low, high - low)
        roots.append(tile_root(tiles[low].as_py(), rows.column("entry").to_pylist(), rows.column("body").to_pylist()))
    return roots


def _bytes(body: str | bytes) -> bytes:
    return body.encode() if isinstance(body, str) else body


BLOCK = 1 << 16
"""Entries an engine's task hashes together: whole tiles (a multiple of 256), few enough groups that
the per-group cost of a distributed engine does not dwarf the hashing."""
ROOTS = pa.schema([("tile", pa.int64()), ("count", pa.int64()), ("root", pa.binary()), ("problem", pa.string())])
"""The rows `roots_of_block` gives back (Spark's DDL: "tile long, count long, root binary, problem string")."""


def roots_of_block(table: pa.Table) -> pa.Table:
    """Returns the tile roots of one block's `entry` and `body` rows (an Arrow table, as a group-map
    of Spark or any dataframe engine hands it) as rows of ROOTS; a block that cannot make its tiles
    gives one row naming the problem, for the driver to report."""
    try:
        roots = tile_roots(table)
    except TreeMismatch as exc:
        first = pc.min(table.column("entry")).as_py() or 0
        return pa.table({"tile": [first // WIDTH], "count": [0], "root": [b""], "problem": [str(exc)]}, schema=ROOTS)
    return pa.table({"tile": [r.tile for r in roots], "count": [r.count for r in roots], "root": [r.root for r in roots],
                     "problem": [None] * len(roots)}, schema=ROOTS)


def roots_from_rows(rows: Iterable[Any]) -> list[TileRoot]:
    """Returns the tile roots from ROOTS rows (Spark's Row or any mapping).

    :raises TreeMismatch: the first problem a block reported, by tile.
    """
    rows = list(rows)
    problems = sorted((row["tile"], row["problem"]) for row in rows if row["problem"])
    if problems:
        raise TreeMismatch(problems[0][1])
    return [TileRoot(row["tile"], row["count"], bytes(row["root"])) for row in rows]
