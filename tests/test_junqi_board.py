"""The board graph of junqi.md §3: the invariants of §3.6, the railway lines of §3.4 and the move
vectors of §6.6."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from replay.junqi import ENGINE
from replay.junqi.board import CAMP, CENTRE, HQ, INDEX, IS_HQ, KIND, N_POINTS, NAMES, XY, board, rail_component
from replay.junqi.moves import destinations, legal_moves
from replay.junqi.perft import parse_position
from replay.junqi.pieces import ENGINEER, is_movable, kind_of
from tests.junqi_support import start

DATA = Path(__file__).parent / "data" / "junqi"
VECTORS = json.loads((DATA / "move_vectors.json").read_text(encoding="utf-8"))["vectors"]


def test_graph_has_129_points_of_the_right_types_section_3_1() -> None:
    """§3.1: 129 points = 92 arm posts + 20 camps + 8 HQ + 9 九宫 points."""
    assert len(NAMES) == N_POINTS == 129
    kinds = Counter(KIND)
    assert kinds == {"post": 92, CAMP: 20, HQ: 8, CENTRE: 9}
    assert len(set(XY)) == 129


def test_graph_has_288_edges_196_road_92_rail_section_3_6() -> None:
    """§3.6: 288 undirected edges, 196 road and 92 rail, no edge both."""
    b = board()
    assert len(b.road_edges) == 196
    assert len(b.rail_edges) == 92
    assert not b.road_edges & b.rail_edges


def test_73_rail_points_in_one_component_section_3_6() -> None:
    """§3.6: 73 rail points, all connected by rail edges."""
    b = board()
    rail = [p for p in range(N_POINTS) if b.is_rail[p]]
    assert len(rail) == 73
    assert rail_component(b, INDEX["S11"]) == set(rail)


def test_static_move_pairs_5624_section_3_6() -> None:
    """§3.6: edge neighbours ∪ rail component, HQ origins removed: 5,624 pairs, 121 origins, max 76."""
    b = board()
    sizes = []
    for p in range(N_POINTS):
        if IS_HQ[p]:
            continue
        reach = set(b.neighbours[p]) | (rail_component(b, p) - {p} if b.is_rail[p] else set())
        sizes.append(len(reach))
    assert (sum(sizes), len(sizes), max(sizes)) == (5624, 121, 76)


def test_degrees_section_3_6() -> None:
    """§3.6: camp 8, HQ 3, 九宫 points 4, front corner S11 5."""
    b = board()
    for p in range(N_POINTS):
        expected = {CAMP: 8, HQ: 3, CENTRE: 4}.get(KIND[p])
        if expected is not None:
            assert len(b.neighbours[p]) == expected, NAMES[p]
    assert len(b.neighbours[INDEX["S11"]]) == 5


def test_rotation_and_mirror_are_automorphisms_section_2_4() -> None:
    """§2.4: (X,Y)→(16−Y,X) and X→16−X map rail to rail and road to road."""
    b = board()
    at = {xy: p for p, xy in enumerate(XY)}
    for transform in (lambda x, y: (16 - y, x), lambda x, y: (16 - x, y)):
        image = {p: at[transform(*XY[p])] for p in range(N_POINTS)}
        for edges in (b.rail_edges, b.road_edges):
            assert {tuple(sorted((image[a], image[c]))) for a, c in edges} == set(edges)
        assert all(KIND[image[p]] == KIND[p] for p in range(N_POINTS))


def test_18_railway_lines_cover_every_rail_edge_section_3_4() -> None:
    """§3.4: 18 lines; every rail edge lies on at least one; consecutive points are rail-adjacent."""
    b = board()
    assert len(b.lines) == 18
    on_lines = {tuple(sorted(pair)) for line in b.lines for pair in zip(line, line[1:])}
    assert on_lines == set(b.rail_edges)


def test_arc_bypasses_the_centre_corner_section_3_3() -> None:
    """§3.3: S11–W15 is a direct rail edge; a piece on CSW does not block it."""
    b = board()
    assert (INDEX["S11"], INDEX["W15"]) in b.rail_edges
    assert () in b.between[(INDEX["S11"], INDEX["W15"])]


def test_arc_model_through_centre_corner_param() -> None:
    """§12 `arc_model = through_centre_corner`: the curve runs via CSW, no direct arc edge."""
    b = board(True, "through_centre_corner")
    assert (INDEX["S11"], INDEX["W15"]) not in b.rail_edges
    assert b.between[(INDEX["S11"], INDEX["W15"])] == ((INDEX["CSW"],),)


def test_no_arcs_param() -> None:
    """§12 `arcs_present = false`: 88 rail edges, 14 lines."""
    b = board(False)
    assert (len(b.rail_edges), len(b.lines)) == (88, 14)


def _alone(piece: str, at: str, others: str = ""):  # type: ignore[no-untyped-def]
    return parse_position(f"turn S\nS {at}={piece} S62=军旗 {others}")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_move_vectors_section_6_6(vector: dict) -> None:  # type: ignore[type-arg]
    """§6.6 vectors T1–T7: destinations of one piece on an otherwise empty board."""
    state = _alone(vector["piece"], vector["at"], vector.get("others", ""))
    origin = INDEX[vector["at"]]
    b = board()
    if vector.get("frozen"):
        assert sorted(NAMES[q] for q in b.neighbours[origin]) == vector["neighbours"]
        assert not [m for m in legal_moves(state, 0) if m.frm == origin]
        return
    reach = sorted(NAMES[q] for q in destinations(state.board, b, origin))
    if "expect" in vector:
        assert reach == vector["expect"]
    elif "expect_contains" in vector:
        assert set(vector["expect_contains"]) <= set(reach)
    else:
        assert len(reach) == vector["expect_count"]
        rail = {NAMES[p] for p in range(N_POINTS) if b.is_rail[p]} - {vector["at"]}
        assert set(reach) == rail | set(vector["expect_extra"])


_S_LINES = (  # junqi.md §3.4 lines 1, 5, 9, 13, 15 as printed; the others follow by rotation
    "S11 S12 S13 S14 S15",
    "S51 S52 S53 S54 S55",
    "N55 N45 N35 N25 N15 CNW CW CSW S11 S21 S31 S41 S51",
    "N13 CN CC CS S13",
    "S51 S41 S31 S21 S11 W15 W25 W35 W45 W55",
)
_ROTATE = {"S": "W", "W": "N", "N": "E", "E": "S", "CSW": "CNW", "CNW": "CNE", "CNE": "CSE", "CSE": "CSW",
           "CS": "CW", "CW": "CN", "CN": "CE", "CE": "CS", "CC": "CC"}


def _rotate(name: str) -> str:
    return _ROTATE[name] if name.startswith("C") else _ROTATE[name[0]] + name[1:]


def _printed_lines() -> set[tuple[str, ...]]:
    """Returns the 18 lines of §3.4, each once (as read in either direction)."""
    lines: set[tuple[str, ...]] = set()
    for spec in _S_LINES:
        line = tuple(spec.split())
        for _ in range(4):
            if line[::-1] not in lines:
                lines.add(line)
            line = tuple(_rotate(n) for n in line)
    return lines


def test_the_18_lines_are_those_printed_in_section_3_4() -> None:
    """§3.4: the engine's railway lines are exactly the 18 printed lines."""
    printed = _printed_lines()
    ours = {tuple(NAMES[p] for p in line) for line in board().lines}
    assert len(printed) == 18
    assert {min(x, x[::-1]) for x in ours} == {min(x, x[::-1]) for x in printed}


def test_non_engineer_runs_match_a_naive_line_walk_section_6_3() -> None:
    """§6.2–§6.3: in bot positions, a non-engineer's destinations equal a naive walk along the
    printed lines (stop at the first occupied point, which is reachable) plus its neighbours."""
    seed = 8
    print(f"line walk seed={seed}")
    lines = [[INDEX[n] for n in line] for line in _printed_lines()]
    b = board()
    events = ENGINE.bot_game(start(), random.Random(seed))
    for step in list(ENGINE.replay(events))[4::25]:
        cells = step.state.board
        for p, v in enumerate(cells):
            if not v or not is_movable(kind_of(v)) or kind_of(v) == ENGINEER:
                continue
            naive = set(b.neighbours[p])
            for line in lines:
                if p in line:
                    i = line.index(p)
                    for ray in (line[i + 1:], line[:i][::-1]):
                        for q in ray:
                            naive.add(q)
                            if cells[q]:
                                break
            assert destinations(cells, b, p) == naive, NAMES[p]
