"""Move-generator counts of checkers.md §14.1 (perft: distinct (from, to) endpoints summed over
alternating turns), from tests/data/checkers/perft.txt, and the board tables of §1."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.checkers import ENGINE
from replay.checkers.board import CAMP, COORDS, HOLES, INDEX, ROWCOL, ZONES, ids, parse_hole, rowcol
from replay.checkers.moves import MoveRules
from replay.checkers.perft import MoveListError, perft_counts
from replay.checkers.state import setup
from schemas.checkers import CheckersProfile

DATA = Path(__file__).parent / "data" / "checkers"


def _cases() -> list[tuple[str, dict[str, str], list[int]]]:
    """Reads perft.txt: `name | key=value ; … | d1 d2 …` per line."""
    out = []
    for line in (DATA / "perft.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, spec, counts = (part.strip() for part in line.split("|"))
        fields = dict(item.strip().split("=", 1) for item in spec.split(";") if item.strip())
        out.append((name, fields, [int(c) for c in counts.split()]))
    return out


def _holes(text: str) -> list[int]:
    pairs = [c.split(",") for c in text.split()]
    return [INDEX[(int(q), int(r))] for q, r in pairs]


@pytest.mark.parametrize(("name", "fields", "counts"), _cases(), ids=[c[0] for c in _cases()])
def test_perft_counts_of_section_14_1(name: str, fields: dict[str, str], counts: list[int]) -> None:
    """§14.1: each position's counts per depth, under the profile the table names."""
    profile = CheckersProfile(goal_lock=fields.get("goal_lock", "off"))  # type: ignore[arg-type]
    if "moves" in fields or "north" not in fields:
        assert ENGINE.perft(len(counts), fields.get("moves"), profile) == counts
        return
    state = setup(profile, _holes(fields["north"]), _holes(fields.get("south", "")), to_move=int(fields.get("to_move", "0")))
    assert perft_counts(state.pieces, state.to_move, len(counts), MoveRules.of(profile)) == counts


def test_board_has_121_holes_in_canonical_order() -> None:
    """§1.1–1.2: 121 holes sorted by row then q; row sizes 1,2,3,4,13,12,11,10,9,10,11,12,13,4,3,2,1."""
    assert HOLES == 121
    sizes = [sum(1 for _, r in COORDS if r == row) for row in range(-8, 9)]
    assert sizes == [1, 2, 3, 4, 13, 12, 11, 10, 9, 10, 11, 12, 13, 4, 3, 2, 1]
    assert COORDS[0] == (4, -8) and COORDS[120] == (-4, 8) and COORDS[60] == (0, 0)


def test_camps_match_the_canonical_ids_of_section_1_3() -> None:
    """§1.3: the six triangles' canonical ids (equal to OpenSpiel's kTriangleCells)."""
    assert ids(CAMP["N"]) == list(range(10)) and ids(CAMP["S"]) == list(range(111, 121))
    assert ids(CAMP["NE"]) == [19, 20, 21, 22, 32, 33, 34, 44, 45, 55]
    assert ids(CAMP["SE"]) == [74, 84, 85, 95, 96, 97, 107, 108, 109, 110]
    assert ids(CAMP["SW"]) == [65, 75, 76, 86, 87, 88, 98, 99, 100, 101]
    assert ids(CAMP["NW"]) == [10, 11, 12, 13, 23, 24, 25, 35, 36, 46]
    assert ZONES.count("C") == 61


@pytest.mark.parametrize(("hole", "text"), [(0, "1-1"), (60, "9-5"), (120, "17-1"), (22, "5-13"), (98, "13-1")])
def test_row_col_notation(hole: int, text: str) -> None:
    """§1.1: `row-col`, row = r + 9, col counted from the row's left end."""
    assert rowcol(hole) == text and parse_hole(text) == hole and parse_hole(str(hole)) == hole
    assert len(ROWCOL) == 121


def test_perft_rejects_an_illegal_move_list() -> None:
    """§14.1 tools: a move list with an unreachable move names it."""
    with pytest.raises(MoveListError, match=r"move 2 115>60 is not legal for seat 1"):
        ENGINE.perft(1, "3>14,115>60")
    with pytest.raises(MoveListError, match=r"move 1 '3-14': write from>to"):
        ENGINE.perft(1, "3-14")
