"""The 121-hole star board (checkers.md §1): axial coordinates, canonical ids 0–120, the row-col
notation, the six camps, and the neighbour and hop tables every move check reads.

Occupancy is a Python int used as a 121-bit set: bit `i` is hole `i`.
"""

from __future__ import annotations

from typing import Final

Coord = tuple[int, int]

DIRECTIONS: Final[tuple[Coord, ...]] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
"""E, NE, NW, W, SW, SE as (dq, dr) (§1.1)."""
DIRECTION_NAMES: Final[tuple[str, ...]] = ("E", "NE", "NW", "W", "SW", "SE")


def is_hole(q: int, r: int) -> bool:
    """Tells whether axial (q, r) is a hole: the union of the two 91-hole triangles (§1.1)."""
    s = -q - r
    return min(q, r, s) >= -4 or max(q, r, s) <= 4


COORDS: Final[tuple[Coord, ...]] = tuple(
    sorted(((q, r) for r in range(-8, 9) for q in range(-8, 9) if is_hole(q, r)), key=lambda c: (c[1], c[0]))
)
"""Canonical order: by row `r`, then `q` left to right (§1.1; OpenSpiel's and JumpStar's order)."""
INDEX: Final[dict[Coord, int]] = {c: i for i, c in enumerate(COORDS)}
HOLES: Final[int] = len(COORDS)
BIT: Final[tuple[int, ...]] = tuple(1 << i for i in range(HOLES))
ALL: Final[int] = (1 << HOLES) - 1


def zone_of(q: int, r: int) -> str:
    """Returns the zone of a hole: a camp N, NE, SE, S, SW, NW, or C for the central hexagon (§1.3)."""
    s = -q - r
    for name, inside in (("N", r <= -5), ("NE", q >= 5), ("SE", s <= -5), ("S", r >= 5), ("SW", q <= -5), ("NW", s >= 5)):
        if inside:
            return name
    return "C"


ZONES: Final[tuple[str, ...]] = tuple(zone_of(q, r) for q, r in COORDS)


def _mask(ids: object) -> int:
    out = 0
    for i in ids:  # type: ignore[attr-defined]
        out |= BIT[i]
    return out


CAMP: Final[dict[str, int]] = {z: _mask(i for i, zz in enumerate(ZONES) if zz == z) for z in ("N", "NE", "SE", "S", "SW", "NW")}
HOME: Final[tuple[int, int]] = (CAMP["N"], CAMP["S"])
"""Home camp (本营) of seat 0 (north) and seat 1 (south), tournament.md §1a."""
TARGET: Final[tuple[int, int]] = (CAMP["S"], CAMP["N"])
"""Target camp (目标营) of each seat: the opposite triangle (§1.4)."""
SIDE: Final[int] = CAMP["NE"] | CAMP["SE"] | CAMP["SW"] | CAMP["NW"]
"""The four side triangles (侧营), empty in the 1v1 game (§4.5)."""
CAMP_NAMES: Final[tuple[str, str]] = ("N", "S")

# Row layout for the row-col notation: row = r + 9, col counted from the row's left end.
_ROW_START: Final[dict[int, int]] = {}
for _i, (_q, _r) in enumerate(COORDS):
    _ROW_START.setdefault(_r, _q)
ROW_OF: Final[tuple[int, ...]] = tuple(r + 9 for _, r in COORDS)
COL_OF: Final[tuple[int, ...]] = tuple(q - _ROW_START[r] + 1 for q, r in COORDS)
ROWCOL: Final[dict[tuple[int, int], int]] = {(ROW_OF[i], COL_OF[i]): i for i in range(HOLES)}


def step_target(i: int, d: int, k: int = 1) -> int:
    """Returns the hole `k` units from hole `i` in direction `d`, or -1 off the board."""
    q, r = COORDS[i]
    dq, dr = DIRECTIONS[d]
    return INDEX.get((q + k * dq, r + k * dr), -1)


NEIGHBOURS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(n for d in range(6) if (n := step_target(i, d)) >= 0) for i in range(HOLES)
)
NEIGHBOUR_MASK: Final[tuple[int, ...]] = tuple(_mask(ns) for ns in NEIGHBOURS)
def _ray(i: int, d: int) -> tuple[int, ...]:
    """Returns the holes from `i` outwards in direction `d`, up to the board's edge."""
    out = []
    k = 1
    while (n := step_target(i, d, k)) >= 0:
        out.append(n)
        k += 1
    return tuple(out)


RAYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(tuple(_ray(i, d) for d in range(6)) for i in range(HOLES))

ADJACENT_HOPS: Final[tuple[tuple[tuple[int, int], ...], ...]] = tuple(
    tuple((ray[0], ray[1]) for ray in RAYS[i] if len(ray) >= 2) for i in range(HOLES)
)
"""ADJACENT_HOPS[i]: (jumped hole, landing hole) of every ordinary hop from `i` (§4.2)."""
HOP_BITS: Final[tuple[tuple[tuple[int, int, int], ...], ...]] = tuple(
    tuple((1 << over, land, 1 << land) for over, land in hops) for hops in ADJACENT_HOPS
)
"""ADJACENT_HOPS with the bits precomputed: (jumped bit, landing hole, landing bit)."""


def _long_hops(i: int) -> tuple[tuple[int, int, int], ...]:
    """Returns (pivot bit, must-be-empty mask, landing) of every equidistant hop from `i` (§4.4)."""
    out = []
    for ray in RAYS[i]:
        for k in range(len(ray) // 2):
            pivot, land = ray[k], ray[2 * k + 1]
            clear = _mask(ray[j] for j in range(2 * k + 2) if j != k)
            out.append((BIT[pivot], clear, land))
    return tuple(out)


LONG_HOPS: Final[tuple[tuple[tuple[int, int, int], ...], ...]] = tuple(_long_hops(i) for i in range(HOLES))
HOP_GEOMETRY: Final[dict[tuple[int, int], tuple[int, int, bool]]] = {
    (i, land): (pivot, clear, clear == BIT[land]) for i in range(HOLES) for pivot, clear, land in LONG_HOPS[i]
}
"""(from, landing) → (pivot bit, mask that must be empty, whether it is an ordinary adjacent hop)."""
HOP_BY_PAIR: Final[tuple[tuple[int, int, bool] | None, ...]] = tuple(HOP_GEOMETRY.get((i, j)) for i in range(HOLES) for j in range(HOLES))
"""HOP_GEOMETRY at index from * HOLES + landing (None: no hop), read by the witness-path check without
building a key per segment."""


def hex_distance(a: int, b: int) -> int:
    """Returns the number of steps between two holes on an open hex grid."""
    (q1, r1), (q2, r2) = COORDS[a], COORDS[b]
    dq, dr = q1 - q2, r1 - r2
    return max(abs(dq), abs(dr), abs(dq + dr))


def _near(camp: int) -> int:
    """Returns the holes of a camp and those within hex distance 2 of it."""
    members = ids(camp)
    return _mask(i for i in range(HOLES) if any(hex_distance(i, j) <= 2 for j in members))


def ids(mask: int) -> list[int]:
    """Returns the holes of a bit set in canonical order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def rowcol(i: int) -> str:
    """Returns the human notation `row-col` of a hole (§1.1), e.g. 0 → `1-1`, 60 → `9-5`."""
    return f"{ROW_OF[i]}-{COL_OF[i]}"


class NotationError(ValueError):
    """A hole is written in neither canonical nor row-col notation."""


def parse_hole(text: str) -> int:
    """Reads a hole written as a canonical id (`60`) or as `row-col` (`9-5`).

    :raises NotationError: when the text names no hole.
    """
    text = text.strip()
    if "-" in text:
        row, _, col = text.partition("-")
        if row.isdigit() and col.isdigit() and (int(row), int(col)) in ROWCOL:
            return ROWCOL[(int(row), int(col))]
    elif text.isdigit() and int(text) < HOLES:
        return int(text)
    raise NotationError(f"{text!r} is not a hole: write an id 0-120 or row-col such as 9-5")


NEAR_HOME: Final[tuple[int, int]] = (_near(HOME[0]), _near(HOME[1]))
"""Each seat's home camp and the holes within distance 2 of it: where a double-layer wall in
front of the opponent's target stands, and the opponent's gate (§10)."""
NEAR_CAMPS: Final[int] = NEAR_HOME[0] | NEAR_HOME[1]
"""Both camps and the holes within distance 2 of them: where a wall's formation is watched (§10:
the blocker's pieces near the victim's target camp or home camp)."""
