"""Combat (junqi.md §4.2, 第八条), one case per row and parameter, played as real moves; 亮旗 (§10)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from replay.junqi import ENGINE
from replay.junqi.board import INDEX
from replay.junqi.perft import parse_position
from replay.junqi.pieces import KIND_NAMES, kind_of, seat_of
from replay.junqi.state import JunqiState, Move
from schemas.junqi import JunqiProfile

DATA = Path(__file__).parent / "data" / "junqi"
CASES = json.loads((DATA / "combat.json").read_text(encoding="utf-8"))["cases"]


def _duel(attacker: str, defender: str, profile: dict) -> JunqiState:  # type: ignore[type-arg]
    """S's attacker on S13 faces W's defender on CS; every seat keeps a flag and N/E a movable piece."""
    w_flag = "" if defender == "军旗" else " W62=军旗 W51=工兵"
    text = (f"turn S\nS S13={attacker} S62=军旗 S51=工兵\nW CS={defender}{w_flag}\n"
            "N N62=军旗 N51=工兵\nE E62=军旗 E51=工兵\n")
    return parse_position(text, msgspec.convert({"game": "junqi", **profile}, JunqiProfile))


@pytest.mark.parametrize("case", CASES, ids=[f"row{c['row']}-{c['name']}" for c in CASES])
def test_combat_rows_section_4_2(case: dict) -> None:  # type: ignore[type-arg]
    """§4.2 row by row: who stays on the point, who is removed, and whether the flag's owner is out."""
    state = _duel(case["attacker"], case["defender"], case.get("profile", {}))
    after = ENGINE.apply_action(state, Move(INDEX["S13"], INDEX["CS"]))
    on_cs = after.board[INDEX["CS"]]
    assert after.board[INDEX["S13"]] == 0
    expected = {"win": (0, case["attacker"]), "lose": (1, case["defender"]), "both": None}[case["result"]]
    if expected is None:
        assert on_cs == 0
    else:
        assert (seat_of(on_cs), KIND_NAMES[kind_of(on_cs)]) == expected
    assert after.alive[1] is not bool(case.get("flag_captured"))
    event = ENGINE.to_event(state, Move(INDEX["S13"], INDEX["CS"]), stream="g", seq=5, ts=1)
    assert event.result == case["result"]  # type: ignore[attr-defined]


def test_flag_capture_removes_all_pieces_of_that_seat_section_7_3() -> None:
    """§7.3, 第八条: a captured flag takes every remaining piece of its seat off; the partner plays on."""
    state = parse_position("turn S\nS S13=工兵 S62=军旗\nW CS=军旗 W51=司令 W52=炸弹\nN N62=军旗 N51=工兵\nE E62=军旗 E51=工兵\n")
    after = ENGINE.apply_action(state, Move(INDEX["S13"], INDEX["CS"]))
    assert not any(v and seat_of(v) == 1 for v in after.board)
    assert after.alive == (True, False, True, True)
    assert after.outcome is None
    assert after.to_move == 2  # W is skipped (§7.2)
    assert not after.revealed[1]  # a 司令 leaving with its seat is no 司令阵亡 (§7.3)


@pytest.mark.parametrize(("attacker", "defender", "revealed"), [
    ("司令", "炸弹", (True, False, False, False)),
    ("司令", "司令", (True, True, False, False)),
    ("炸弹", "司令", (False, True, False, False)),
    ("司令", "地雷", (True, False, False, False)),
    ("司令", "军长", (False, False, False, False)),
])
def test_marshal_death_reveals_the_flag_section_10(attacker: str, defender: str, revealed: tuple) -> None:  # type: ignore[type-arg]
    """§10 亮旗: a 司令 removed in combat makes its seat's flag public; both when two 司令 trade."""
    state = _duel(attacker, defender, {})
    after = ENGINE.apply_action(state, Move(INDEX["S13"], INDEX["CS"]))
    assert after.revealed == revealed
