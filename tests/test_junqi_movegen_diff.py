"""Differential test of move generation (junqi.md §3, §6; 第四条 三–六): the engine's legal moves
against an independent generator written here from the rules text alone — the board rebuilt from
the coordinates of §2.4 and the edge lists of §3.2–§3.3, straight rail runs followed by their
tangents (arcs included, §3.3–§3.4), 工兵 turning anywhere on unobstructed rail (§6.4), camps that
protect (§4.3) and HQs that freeze (§6.5) — on seeded random positions and bot playouts.

More cases: MATCHLEDGER_DIFF_GAMES=N (random positions = 100 N, playouts = N); another seed:
MATCHLEDGER_DIFF_SEED=S. A disagreement prints the position file, the seat and the moves that differ.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from replay.junqi import ENGINE
from replay.junqi.board import INDEX
from replay.junqi.moves import can_move, legal_moves
from replay.junqi.perft import format_position
from replay.junqi.pieces import KIND_NAMES
from replay.junqi.state import JunqiState, initial_state, settings
from schemas.junqi import JunqiProfile
from tests.junqi_support import start

GAMES = int(os.environ.get("MATCHLEDGER_DIFF_GAMES", "3"))
SEED = int(os.environ.get("MATCHLEDGER_DIFF_SEED", "20261201"))

XY = tuple[int, int]
CAMPS = ((2, 2), (2, 4), (3, 3), (4, 2), (4, 4))  # 第四条 一: 二二、二四、三三、四二、四四
HQS = ((6, 2), (6, 4))  # 第四条 一: 六二、六四
CENTRE = {"CNW": (6, 6), "CN": (8, 6), "CNE": (10, 6), "CW": (6, 8), "CC": (8, 8), "CE": (10, 8),
          "CSW": (6, 10), "CS": (8, 10), "CSE": (10, 10)}


def _arm_xy(seat: str, r: int, c: int) -> XY:
    """§2.4: the global grid position of arm point (r, c)."""
    return {"S": (5 + c, 10 + r), "N": (11 - c, 6 - r), "W": (6 - r, 5 + c), "E": (10 + r, 11 - c)}[seat]


class Spec:
    """The board as the rules text describes it: point positions and types, rail and road edges
    (the four corner arcs only when `arcs`, §12 `arcs_present`)."""

    def __init__(self, arcs: bool = True) -> None:
        self.xy: dict[str, XY] = dict(CENTRE)
        self.camp: set[str] = set()
        self.hq: set[str] = set()
        self.rail: dict[str, set[str]] = {}
        self.road: dict[str, set[str]] = {}
        for seat in "SWNE":
            for r in range(1, 7):
                for c in range(1, 6):
                    self.xy[f"{seat}{r}{c}"] = _arm_xy(seat, r, c)
            self.camp |= {f"{seat}{r}{c}" for r, c in CAMPS}
            self.hq |= {f"{seat}{r}{c}" for r, c in HQS}
            self._arm_edges(seat)
        self._outer_rails(arcs)

    def _link(self, edges: dict[str, set[str]], a: str, b: str) -> None:
        edges.setdefault(a, set()).add(b)
        edges.setdefault(b, set()).add(a)

    def _arm_edges(self, s: str) -> None:
        """§3.2: rails on rows 1 and 5 and columns 1 and 5 (rows 1–5); roads elsewhere, 米 diagonals at camps."""
        for r in range(1, 7):
            for c in range(1, 6):
                here = f"{s}{r}{c}"
                if c < 5:
                    self._link(self.rail if r in (1, 5) else self.road, here, f"{s}{r}{c + 1}")
                if r < 6:
                    on_rail = c in (1, 5) and r < 5
                    self._link(self.rail if on_rail else self.road, here, f"{s}{r + 1}{c}")
                if (r, c) in CAMPS:
                    for dr in (-1, 1):
                        for dc in (-1, 1):
                            self._link(self.road, here, f"{s}{r + dr}{c + dc}")

    def _outer_rails(self, arcs: bool) -> None:
        """§3.3: the 九宫 grid, front columns 1, 3, 5 to the nearest 九宫 point, the four corner arcs."""
        at = {xy: name for name, xy in self.xy.items()}
        for a, (x, y) in CENTRE.items():
            for b in (at.get((x + 2, y)), at.get((x, y + 2))):
                if b in CENTRE:
                    self._link(self.rail, a, b)
        for seat in "SWNE":
            for c in (1, 3, 5):
                x, y = self.xy[f"{seat}1{c}"]
                for b in (at.get((x + 1, y)), at.get((x - 1, y)), at.get((x, y + 1)), at.get((x, y - 1))):
                    if b in CENTRE:
                        self._link(self.rail, f"{seat}1{c}", b)
        corners = [f"{seat}1{c}" for seat in "SWNE" for c in (1, 5)] if arcs else []
        for a in corners:
            for b in corners:
                (ax, ay), (bx, by) = self.xy[a], self.xy[b]
                if a[0] != b[0] and abs(ax - bx) == 1 and abs(ay - by) == 1:
                    self._link(self.rail, a, b)

    def is_arc(self, a: str, b: str) -> bool:
        """Tells whether a rail edge is a corner arc (its ends are diagonal neighbours on the grid)."""
        (ax, ay), (bx, by) = self.xy[a], self.xy[b]
        return ax != bx and ay != by

    def tangents(self, a: str, b: str) -> tuple[XY, XY]:
        """Returns the direction of travel leaving `a` and arriving at `b` along the rail edge a–b.
        An arc is a quarter circle about the empty corner cell between its ends (§3.3): its tangent
        at an end is the part of the chord square to the radius there."""
        (ax, ay), (bx, by) = self.xy[a], self.xy[b]
        dx, dy = (bx > ax) - (bx < ax), (by > ay) - (by < ay)
        if not self.is_arc(a, b):
            return (dx, dy), (dx, dy)
        centre = (ax, by) if (ax, by) not in self.xy.values() else (bx, ay)
        leave = (0, dy) if centre[1] == ay else (dx, 0)
        arrive = (0, dy) if centre[1] == by else (dx, 0)
        return leave, arrive


SPEC = Spec()
BOARDS = {True: SPEC, False: Spec(arcs=False)}


def _runs(spec: Spec, cells: dict[str, tuple[int, str]], frm: str, arcs: bool) -> set[str]:
    """§6.3: the points a non-engineer reaches along the railway: straight on, the way it arrived,
    until and including the first occupied point; through an arc only when `arcs` (§12
    `arc_straight_for_non_engineer`; one step along an arc is a plain step either way)."""
    reach: set[str] = set()
    todo: list[tuple[str, XY | None]] = [(frm, None)]
    seen: set[tuple[str, XY]] = set()
    while todo:
        here, heading = todo.pop()
        for there in spec.rail.get(here, ()):
            leave, arrive = spec.tangents(here, there)
            if heading is not None and leave != heading or (there, arrive) in seen:
                continue
            if not arcs and spec.is_arc(here, there):
                continue
            seen.add((there, arrive))
            reach.add(there)
            if there not in cells:
                todo.append((there, arrive))
    reach.discard(frm)
    return reach


def _engineer(spec: Spec, cells: dict[str, tuple[int, str]], frm: str) -> set[str]:
    """§6.4: the rail points a 工兵 reaches, turning anywhere, never through an occupied point."""
    reach, todo = {frm}, [frm]
    while todo:
        here = todo.pop()
        for there in spec.rail.get(here, ()):
            if there not in reach:
                reach.add(there)
                if there not in cells:
                    todo.append(there)
    reach.discard(frm)
    return reach


def spec_moves(cells: dict[str, tuple[int, str]], seat: int, profile: JunqiProfile) -> set[tuple[str, str]]:
    """Returns every legal (from, to) of `seat` by the rules text: movable pieces not frozen in an
    HQ (§6.1, §6.5), one step along any line, rail runs (§6.3, §6.4); no own or partner's piece on
    `to`, no attack on a piece a camp protects (§4.3)."""
    spec = BOARDS[profile.arcs_present]
    moves = set()
    for frm, (owner, piece) in cells.items():
        if owner != seat or piece in ("军旗", "地雷") or _frozen(frm, owner, profile):
            continue
        reach = spec.rail.get(frm, set()) | spec.road.get(frm, set())
        if frm in spec.rail:
            reach |= _engineer(spec, cells, frm) if piece == "工兵" else _runs(spec, cells, frm, profile.arc_straight_for_non_engineer)
        for to in reach:
            if to not in cells or (cells[to][0] - seat) % 2 == 1 and not _protected(to, cells[to][0], profile):
                moves.add((frm, to))
    return moves


def _frozen(point: str, owner: int, profile: JunqiProfile) -> bool:
    """§6.5: a piece in an HQ never moves (§12 `hq_freezes_any_piece = false`: only in its own HQ)."""
    return point in SPEC.hq and (profile.hq_freezes_any_piece or point[0] == "SWNE"[owner])


def _protected(point: str, owner: int, profile: JunqiProfile) -> bool:
    """§4.3: a piece in a camp cannot be attacked (§12 `camp_protects_any_occupant = false`: only in its own arm's camps)."""
    return point in SPEC.camp and (profile.camp_protects_any_occupant or point[0] == "SWNE"[owner])


def _cells(state: JunqiState) -> dict[str, tuple[int, str]]:
    """Reads the engine's board as point name → (seat, piece name) (the cell encoding of pieces.py)."""
    names = {i: n for n, i in INDEX.items()}
    return {names[p]: ((v - 1) % 4, KIND_NAMES[(v - 1) // 4]) for p, v in enumerate(state.board) if v}


def _random_positions(rng: random.Random, n: int, profile: JunqiProfile) -> Iterator[JunqiState]:
    """Yields positions with pieces of every seat scattered at a random density, 工兵 frequent."""
    base = initial_state(profile, 0)
    kinds = list(range(12)) + [3] * 6
    for _ in range(n):
        density = rng.uniform(0.03, 0.7)
        board = tuple(1 + rng.randrange(4) + 4 * rng.choice(kinds) if rng.random() < density else 0 for _ in range(129))
        yield msgspec.structs.replace(base, board=board, laid=(True,) * 4, to_move=rng.randrange(4))


def _playouts(rng: random.Random, n: int, settings: dict[str, Any]) -> Iterator[JunqiState]:
    """Yields every eighth position of seeded bot games."""
    for _ in range(n):
        steps = list(ENGINE.replay(ENGINE.bot_game(start(**settings), random.Random(rng.randrange(1 << 30)))))
        yield from (s.state for s in steps[5::8] if s.state.to_move >= 0)


def _disagreement(state: JunqiState, seat: int, engine: set[tuple[str, str]], spec: set[tuple[str, str]]) -> str:
    changed = {k: v for k, v in msgspec.structs.asdict(state.profile).items() if getattr(JunqiProfile(), k) != v}
    return (f"seed {SEED}, profile {changed}, seat {'SWNE'[seat]}: engine only {sorted(engine - spec)}, rules text only "
            f"{sorted(spec - engine)}; position:\n{format_position(state)}")


PROFILES = [
    {},
    {"arcs_present": False},
    {"arc_straight_for_non_engineer": False},
    {"camp_protects_any_occupant": False, "hq_freezes_any_piece": False},
]


@pytest.mark.parametrize("changed", PROFILES, ids=lambda c: ",".join(c) or "default")
def test_s6_move_generation_agrees_with_the_rules_text(changed: dict[str, bool]) -> None:
    """§3, §6 (and the §12 settings of the board and movement): in random positions and bot
    playouts, every seat's legal moves equal the independent generator's, and the quick
    no-legal-move test (§7.3) agrees with both."""
    print(f"move generation differential: seed={SEED} games={GAMES} profile={changed}")
    rng = random.Random(SEED)
    profile = msgspec.convert({"game": "junqi", **changed}, JunqiProfile)
    rules = settings(profile)
    checked = 0
    for state in itertools.chain(_random_positions(rng, 100 * GAMES, profile), _playouts(rng, GAMES, changed)):
        cells = _cells(state)
        for seat in range(4):
            engine = {(a, b) for a, b in (m.notation().split(">") for m in legal_moves(state, seat))}
            spec = spec_moves(cells, seat, profile)
            assert engine == spec, _disagreement(state, seat, engine, spec)
            assert can_move(state.board, rules, seat) == bool(spec), _disagreement(state, seat, engine, spec)
            checked += 1
    assert checked >= 400 * GAMES


def test_spec_board_matches_the_invariants_of_section_3_6() -> None:
    """§3.6: the board rebuilt here has 129 points, 196 road and 92 rail edges, 73 rail points."""
    road = {frozenset((a, b)) for a, bs in SPEC.road.items() for b in bs}
    rail = {frozenset((a, b)) for a, bs in SPEC.rail.items() for b in bs}
    assert (len(SPEC.xy), len(road), len(rail), len(SPEC.rail)) == (129, 196, 92, 73)
