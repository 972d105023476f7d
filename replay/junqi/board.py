"""The 129-point board of junqi.md §2–§3: points, road and rail edges, camps, HQs, the 九宫, the
four arcs and the 18 railway lines, with the route tables the rules read.

Points are indexed 0..128: seat s's arm point (r, c) is `30*s + 5*(r-1) + (c-1)` (c counted from
the owner's left), the 九宫 follows at 120..128. Seats are 0 = S, 1 = W, 2 = N, 3 = E.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from typing import Final

SEAT_LETTERS: Final = "SWNE"
CENTRE_NAMES: Final = ("CNW", "CN", "CNE", "CW", "CC", "CE", "CSW", "CS", "CSE")
N_POINTS: Final = 129
CAMP_CELLS: Final = ((2, 2), (2, 4), (3, 3), (4, 2), (4, 4))
HQ_CELLS: Final = ((6, 2), (6, 4))

POST: Final = "post"
CAMP: Final = "camp"
HQ: Final = "hq"
CENTRE: Final = "centre"


def arm_point(seat: int, r: int, c: int) -> int:
    """Returns the index of seat's arm point at row r (1 = front), column c (1 = owner's left)."""
    return 30 * seat + 5 * (r - 1) + (c - 1)


def centre_point(name: str) -> int:
    """Returns the index of a 九宫 point by its compass name (`CC`, `CNW` …)."""
    return 120 + CENTRE_NAMES.index(name)


def _point_names() -> tuple[str, ...]:
    arms = [f"{SEAT_LETTERS[s]}{r}{c}" for s in range(4) for r in range(1, 7) for c in range(1, 6)]
    return tuple(arms) + CENTRE_NAMES


NAMES: Final[tuple[str, ...]] = _point_names()
INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(NAMES)}


def owner_of(point: int) -> int | None:
    """Returns the seat whose arm holds the point, or None for the 九宫."""
    return point // 30 if point < 120 else None


def row_col(point: int) -> tuple[int, int]:
    """Returns the arm-local (row, column) of an arm point."""
    local = point % 30
    return local // 5 + 1, local % 5 + 1


def _kind(point: int) -> str:
    if point >= 120:
        return CENTRE
    cell = row_col(point)
    return CAMP if cell in CAMP_CELLS else HQ if cell in HQ_CELLS else POST


KIND: Final[tuple[str, ...]] = tuple(_kind(p) for p in range(N_POINTS))
IS_CAMP: Final[tuple[bool, ...]] = tuple(k == CAMP for k in KIND)
IS_HQ: Final[tuple[bool, ...]] = tuple(k == HQ for k in KIND)


def _xy(point: int) -> tuple[int, int]:
    """Returns the point on the global 17×17 grid of §2.4 (X west→east, Y north→south)."""
    if point >= 120:
        i = point - 120
        return 6 + 2 * (i % 3), 6 + 2 * (i // 3)
    seat = point // 30
    r, c = row_col(point)
    return ((5 + c, 10 + r), (6 - r, 5 + c), (11 - c, 6 - r), (10 + r, 11 - c))[seat]


XY: Final[tuple[tuple[int, int], ...]] = tuple(_xy(p) for p in range(N_POINTS))


def _arm_edges(seat: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Returns the 16 rail and 49 road edges inside one arm (§3.2)."""
    p = functools.partial(arm_point, seat)
    rail = [(p(r, c), p(r, c + 1)) for r in (1, 5) for c in range(1, 5)]
    rail += [(p(r, c), p(r + 1, c)) for c in (1, 5) for r in range(1, 5)]
    road = [(p(r, c), p(r, c + 1)) for r in (2, 3, 4, 6) for c in range(1, 5)]
    road += [(p(r, c), p(r + 1, c)) for c in (2, 3, 4) for r in range(1, 6)]
    road += [(p(5, c), p(6, c)) for c in (1, 5)]
    diagonals = set()
    for r, c in CAMP_CELLS:
        for dr in (-1, 1):
            for dc in (-1, 1):
                diagonals.add(tuple(sorted((p(r, c), p(r + dr, c + dc)))))
    road += sorted(diagonals)  # type: ignore[arg-type]
    return rail, road


_CENTRE_GRID = (
    "CNW-CN", "CN-CNE", "CW-CC", "CC-CE", "CSW-CS", "CS-CSE",
    "CNW-CW", "CW-CSW", "CN-CC", "CC-CS", "CNE-CE", "CE-CSE",
)
# Front columns 1, 3, 5 of each arm meet the 九宫 (§3.3); listed from S, the rest by rotation.
_FRONT_LINKS = (
    "S11-CSW", "S13-CS", "S15-CSE", "W11-CNW", "W13-CW", "W15-CSW",
    "N11-CNE", "N13-CN", "N15-CNW", "E11-CSE", "E13-CE", "E15-CNE",
)
_LONG_LINES = (
    "N55 N45 N35 N25 N15 CNW CW CSW S11 S21 S31 S41 S51",
    "N51 N41 N31 N21 N11 CNE CE CSE S15 S25 S35 S45 S55",
    "W51 W41 W31 W21 W11 CNW CN CNE E15 E25 E35 E45 E55",
    "W55 W45 W35 W25 W15 CSW CS CSE E11 E21 E31 E41 E51",
    "N13 CN CC CS S13",
    "W13 CW CC CE E13",
)
# The 九宫 corner an arc passes by: between seat s's front-left corner and its left neighbour's.
_ARC_CORNER = ("CSW", "CNW", "CNE", "CSE")


def _pairs(specs: tuple[str, ...]) -> list[tuple[int, int]]:
    return [(INDEX[a], INDEX[b]) for a, b in (s.split("-") for s in specs)]


def _arc(seat: int) -> tuple[int, int]:
    """Returns the arc from seat's front-left corner to its left neighbour's front-right corner."""
    return arm_point(seat, 1, 1), arm_point((seat + 1) % 4, 1, 5)


def _curve_line(seat: int, through_corner: bool) -> tuple[int, ...]:
    """Returns the curved railway line of §3.4 (lines 15–18) that leaves seat's arm by its arc."""
    left = (seat + 1) % 4
    own = [arm_point(seat, r, 1) for r in range(5, 0, -1)]
    other = [arm_point(left, r, 5) for r in range(1, 6)]
    corner = [centre_point(_ARC_CORNER[seat])] if through_corner else []
    return tuple(own + corner + other)


@dataclass(frozen=True)
class Board:
    """The typed graph under one reading of the arcs: adjacency, rail adjacency, the railway lines
    and, per ordered pair of rail points, the points a non-engineer passes between them."""

    rail_edges: frozenset[tuple[int, int]]
    road_edges: frozenset[tuple[int, int]]
    neighbours: tuple[tuple[int, ...], ...]
    rail_neighbours: tuple[tuple[int, ...], ...]
    is_rail: tuple[bool, ...]
    lines: tuple[tuple[int, ...], ...]
    rays: tuple[tuple[tuple[int, ...], ...], ...]
    between: dict[tuple[int, int], tuple[tuple[int, ...], ...]]


def _rays(lines: tuple[tuple[int, ...], ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Returns, per point, every distinct direction along a line starting next to it."""
    rays: list[set[tuple[int, ...]]] = [set() for _ in range(N_POINTS)]
    for line in lines:
        for i, p in enumerate(line):
            if i + 1 < len(line):
                rays[p].add(line[i + 1:])
            if i > 0:
                rays[p].add(line[:i][::-1])
    return tuple(tuple(sorted(r)) for r in rays)


def _between(rays: tuple[tuple[tuple[int, ...], ...], ...]) -> dict[tuple[int, int], tuple[tuple[int, ...], ...]]:
    """Returns, per ordered pair on a common line, each set of points strictly between them."""
    table: dict[tuple[int, int], set[tuple[int, ...]]] = {}
    for origin, directions in enumerate(rays):
        for ray in directions:
            for k, target in enumerate(ray):
                table.setdefault((origin, target), set()).add(ray[:k])
    return {pair: tuple(sorted(v)) for pair, v in table.items()}


@functools.cache
def board(arcs_present: bool = True, arc_model: str = "diagonal_bypass", arcs_for_non_engineers: bool = True) -> Board:
    """Returns the board graph for the profile's arc settings (junqi.md §3.3, §3.4, §12)."""
    rail: list[tuple[int, int]] = []
    road: list[tuple[int, int]] = []
    for seat in range(4):
        arm_rail, arm_road = _arm_edges(seat)
        rail += arm_rail
        road += arm_road
    rail += _pairs(_CENTRE_GRID) + _pairs(_FRONT_LINKS)
    direct_arcs = arcs_present and arc_model == "diagonal_bypass"
    if direct_arcs:
        rail += [_arc(s) for s in range(4)]
    lines = [tuple(arm_point(s, r, c) for c in range(1, 6)) for r in (1, 5) for s in range(4)]
    lines += [tuple(INDEX[n] for n in spec.split()) for spec in _LONG_LINES]
    if arcs_present and arcs_for_non_engineers:
        lines += [_curve_line(s, not direct_arcs) for s in range(4)]
    rail_set = frozenset(tuple(sorted(e)) for e in rail)
    road_set = frozenset(tuple(sorted(e)) for e in road)
    neighbours: list[set[int]] = [set() for _ in range(N_POINTS)]
    rail_nb: list[set[int]] = [set() for _ in range(N_POINTS)]
    for a, b in rail_set | road_set:
        neighbours[a].add(b)
        neighbours[b].add(a)
    for a, b in rail_set:
        rail_nb[a].add(b)
        rail_nb[b].add(a)
    rays = _rays(tuple(lines))
    return Board(
        rail_edges=rail_set,  # type: ignore[arg-type]
        road_edges=road_set,  # type: ignore[arg-type]
        neighbours=tuple(tuple(sorted(n)) for n in neighbours),
        rail_neighbours=tuple(tuple(sorted(n)) for n in rail_nb),
        is_rail=tuple(bool(n) for n in rail_nb),
        lines=tuple(lines),
        rays=rays,
        between=_between(rays),
    )


def rail_component(b: Board, start: int) -> set[int]:
    """Returns every rail point connected to `start` by rail edges on an empty board."""
    seen = {start}
    queue = deque([start])
    while queue:
        p = queue.popleft()
        for q in b.rail_neighbours[p]:
            if q not in seen:
                seen.add(q)
                queue.append(q)
    return seen


@functools.cache
def distances() -> tuple[tuple[int, ...], ...]:
    """Returns the road-step distance between every two points of the standard board (for the bot)."""
    b = board()
    table = []
    for start in range(N_POINTS):
        dist = [99] * N_POINTS
        dist[start] = 0
        queue = deque([start])
        while queue:
            p = queue.popleft()
            for q in b.neighbours[p]:
                if dist[q] == 99:
                    dist[q] = dist[p] + 1
                    queue.append(q)
        table.append(tuple(dist))
    return tuple(table)
