"""布阵 validation (junqi.md §5, 第六条): a legal layout passes, each of L01–L08 broken once gives
exactly that code; layouts are the chance part of the game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.junqi import ENGINE
from replay.protocol import CHANCE, IllegalActionError
from schemas.envelope import Event
from tests.junqi_support import SEATS, STANDARD, codes, grid_pieces, layout, layout_action, start

DATA = Path(__file__).parent / "data" / "junqi"
CASES = json.loads((DATA / "layouts.json").read_text(encoding="utf-8"))["cases"]


def _broken(case: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    pieces = dict(grid_pieces(0, STANDARD))
    pairs = list(pieces.items())
    if "drop" in case:
        pairs = [(p, k) for p, k in pairs if p != case["drop"]]
    if "set" in case:
        at, piece = case["set"]
        pairs = [(p, piece if p == at else k) for p, k in pairs]
    if "move" in case:
        src, dst = case["move"]
        pairs = [(dst if p == src else p, k) for p, k in pairs]
    if "swap" in case:
        a, b = case["swap"]
        pairs = [(b if p == a else a if p == b else p, k) for p, k in pairs]
    return pairs


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_layout_rules_L01_to_L08(case: dict) -> None:  # type: ignore[type-arg]
    """§5: each broken rule gives exactly its code, with the article of 第六条 / 第四条."""
    begin = start()
    events: list[Event] = [begin]
    if "colours" in case:
        for letter, colour in case["colours"].items():
            seat = SEATS.index(letter)
            events.append(layout(begin.stream, len(events), seat, grid_pieces(seat, STANDARD), colour))
    else:
        events.append(layout(begin.stream, 1, 0, _broken(case)))
    found = codes(events)
    assert found == ([f"junqi.{case['code']}"] if case["code"] else [])


def test_illegal_layout_stops_the_replay_by_default() -> None:
    """§12 `illegal_layout_policy = flag_and_stop`: one finding, then nothing more is judged."""
    begin = start()
    bad = [(p, "地雷" if p == "S31" else k) for p, k in grid_pieces(0, STANDARD)]
    events = [begin, layout(begin.stream, 1, 0, bad)] + [layout(begin.stream, s + 1, s) for s in range(1, 4)]
    steps = list(ENGINE.replay(events))
    assert [f.code for s in steps for f in s.findings] == ["junqi.L01", "junqi.L06"]
    assert steps[-1].state.halted == "junqi.L01"
    assert ENGINE.is_terminal(steps[-1].state)


def test_layouts_are_chance_until_all_four_are_in() -> None:
    """§11: `current_player` is CHANCE until the fourth layout, then the first seat moves."""
    begin = start(first=2)
    state = ENGINE.new_initial_state(begin)
    for seat in (3, 0, 1, 2):
        assert ENGINE.current_player(state) == CHANCE
        assert ENGINE.legal_actions(state) == []
        state = ENGINE.apply_action(state, layout_action(seat))
    assert ENGINE.current_player(state) == 2


def test_apply_action_rejects_an_illegal_layout_with_its_code() -> None:
    """§5 L07 through the engine API: `IllegalActionError` carries the code and the article."""
    state = ENGINE.new_initial_state(start())
    bomb_front = _broken({"swap": ["S32", "S11"]})
    with pytest.raises(IllegalActionError) as info:
        ENGINE.apply_action(state, layout_action(0, bomb_front))
    assert (info.value.code, info.value.article) == ("junqi.L07", "第六条")
