"""Move checks of checkers.md §4 as data: steps, hop chains, witness paths, the profile's move
options, and the §4.7 classification of illegal moves; plus the pictures of a position."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.checkers import ENGINE
from replay.checkers.board import BIT, COORDS, INDEX, NEIGHBOUR_MASK
from replay.checkers.check import check_move
from replay.checkers.moves import check_path, hop_path, is_reachable, reach
from replay.checkers.perft import parse_moves
from replay.protocol import IllegalActionError, InvalidActionError
from schemas.checkers import CheckersProfile, Moved
from tests.checkers_support import claim, codes, final, position, run, scripted, start


def _h(text: str) -> int:
    q, r = text.split(",")
    return INDEX[(int(q), int(r))]


@pytest.mark.parametrize(
    ("settings", "north", "south", "move", "code", "notes"),
    [
        ({}, ["0,0"], ["1,0"], "0,0>2,0", None, []),
        ({}, ["0,0"], ["1,0", "3,0"], "0,0>2,0>4,0", None, []),
        ({}, ["0,0"], ["1,0", "3,0"], "0,0>4,0", None, []),
        ({}, ["0,0"], ["2,0"], "0,0>4,0", "E_LONG_HOP_ONLY", []),
        ({"hop_mode": "equidistant"}, ["0,0"], ["2,0"], "0,0>4,0", None, []),
        ({}, ["0,0"], [], "0,0>3,3", "E_UNREACHABLE", []),
        ({}, ["0,0"], ["1,0"], "1,0>2,0", "E_NO_OWN_PIECE", []),
        ({}, ["0,0"], ["1,0"], "0,0>1,0", "E_OCCUPIED", []),
        ({}, ["0,0"], ["1,0", "3,0"], "0,0>2,0>3,0>4,0", "E_BAD_PATH", []),
        ({}, ["0,0"], ["1,0", "3,0"], "0,0>1,1>4,0", "E_BAD_PATH", []),
        ({}, ["0,0"], ["1,0"], "0,0>2,0>0,0>2,0", None, ["W_PATH_REVISIT"]),
        ({"path_revisit_policy": "error"}, ["0,0"], ["1,0"], "0,0>2,0>0,0>2,0", "E_PATH_REVISIT", []),
        ({}, ["-1,5"], ["-2,5"], "-1,5>0,4", None, ["W_LEFT_TARGET"]),
        ({"goal_lock": "across_turns"}, ["-1,5"], ["-2,5"], "-1,5>0,4", "E_GOAL_LOCK", []),
        ({"side_triangles": "forbidden"}, ["-4,4"], [], "-4,4>-5,4", "E_SIDE_TRIANGLE", []),
        ({"side_triangles": "pass_through_only"}, ["-3,3"], ["-4,3", "-6,3"], "-3,3>-5,3>-7,3", "E_SIDE_TRIANGLE", []),
        ({"side_triangles": "pass_through_only"}, ["-3,3"], ["-4,3", "-4,2"], "-3,3>-5,3>-3,1", None, []),
        ({"side_triangles": "forbidden"}, ["-3,3"], ["-4,3", "-4,2"], "-3,3>-5,3>-3,1", "E_SIDE_TRIANGLE", []),
    ],
    ids=["hop", "chain-with-path", "chain-endpoint-only", "long-hop-off", "long-hop-on", "unreachable", "no-own-piece",
         "occupied", "path-mixes-step", "path-skips-landing", "revisit-warns", "revisit-error", "leaves-target-warns",
         "goal-lock", "side-forbidden", "side-end", "side-pass-through", "side-forbidden-chain"],
)
def test_move_check_and_classification(settings: dict[str, str], north: list[str], south: list[str], move: str,
                                       code: str | None, notes: list[str]) -> None:
    """§4.1–4.7: a move is checked by its witness path when given, else by its endpoint; an
    illegal one is classified by the first relaxed profile that accepts it."""
    state = position(CheckersProfile(**settings), north, south, 0, turns=(40, 40))  # type: ignore[arg-type]
    holes = [_h(x) for x in move.split(">")]
    path = tuple(holes) if len(holes) > 2 else None
    verdict = check_move(state, 0, holes[0], holes[-1], path)
    assert verdict.code == code, verdict.why
    if code is None:
        _, found = run(state, [move])
        assert [n.code for n in verdict.notes] + found == notes


M36 = ("3>14,115>102,4>15,116>105,0>16,114>92,6>28,117>106,7>29,120>104,16>41,104>81,28>51,113>93,9>27,92>71,"
       "29>50,105>40,14>39,111>89,15>38,89>77,41>60,77>67,5>16,81>62,8>49,40>29,38>82,106>81,39>77,93>72,51>69,"
       "118>116,50>89,116>76")


@pytest.mark.parametrize(("setting", "expected"), [("free", []), ("pass_through_only", ["checkers.M06"]),
                                                   ("forbidden", ["checkers.M06"])])
def test_m36_fixture_lands_in_a_side_triangle(setting: str, expected: list[str]) -> None:
    """§14.1: the M36 fixture replays clean by default; its ply 36 ends in the SW triangle."""
    turns = [f"{a}>{b}" for a, b in parse_moves(M36)]
    steps = list(ENGINE.replay(scripted(start(side_triangles=setting), turns)))
    assert codes(steps) == expected
    if expected:
        assert [s.facts["ply"] for s in steps if s.findings] == [35]
        outcome = final(steps).outcome
        assert outcome is not None and outcome.termination == "UNVERIFIED"


def test_flag_and_apply_applies_the_illegal_move() -> None:
    """§4.7 `on_illegal_move = flag_and_apply`: the move is reported and applied; replay goes on."""
    turns = [f"{a}>{b}" for a, b in parse_moves(M36)]
    steps = list(ENGINE.replay(scripted(start(side_triangles="forbidden", on_illegal_move="flag_and_apply"), turns)))
    assert codes(steps) == ["checkers.M06"]
    assert final(steps).outcome is None and final(steps).ply == 36


def test_unverified_game_keeps_the_claimed_result() -> None:
    """§4.7 `stop_unverified`: after an illegal move the rest is not checked, and the software's
    claimed result is kept for standings under the termination UNVERIFIED."""
    events = scripted(start(), ["3>14", "115>60", "4>15"])
    steps = list(ENGINE.replay(claim(events, "ALL_HOME", [1], [0, 1])))
    assert codes(steps) == ["checkers.M04"]
    outcome = final(steps).outcome
    assert outcome is not None and (outcome.termination, outcome.winners, outcome.points) == ("UNVERIFIED", (1,), (0.0, 1.0))


def test_apply_action_errors() -> None:
    """DESIGN replay/: malformed input (InvalidActionError) differs from an illegal move (IllegalActionError)."""
    state = ENGINE.new_initial_state(start())
    with pytest.raises(InvalidActionError, match=r"\(3, 200\) is not a move"):
        ENGINE.apply_action(state, (3, 200))
    with pytest.raises(IllegalActionError, match=r"checkers.M04 \(E_UNREACHABLE\): 3>60: 按本赛制设置.* hole 60 \(9-5\) cannot be reached"):
        ENGINE.apply_action(state, (3, 60))
    assert len(ENGINE.legal_actions(state)) == 14


INITIAL_TEXT = """ply 0: seat 0 (N) to move
                N
               N N
              N N N
             N N N N
    . . . . . . . . . . . . .
     . . . . . . . . . . . .
      . . . . . . . . . . .
       . . . . . . . . . .
        . . . . . . . . .
       . . . . . . . . . .
      . . . . . . . . . . .
     . . . . . . . . . . . .
    . . . . . . . . . . . . .
             S S S S
              S S S
               S S
                S"""


def test_text_diagram_of_the_initial_position() -> None:
    """§1.2: 17 rows of 1, 2, 3, 4, 13, … holes; seat 0's camp on top, seat 1's at the bottom."""
    assert ENGINE.render_text(ENGINE.new_initial_state(start())) == INITIAL_TEXT


def test_svg_draws_holes_pieces_and_the_hop_path() -> None:
    """The picture: 121 holes, 20 pieces, the last move's origin ring and its hop path."""
    events = scripted(start(), ["3>14", "115>102", "4>15", "116>105", "0>16"])
    state = final(list(ENGINE.replay(events)))
    assert len(state.last) >= 3, "0>16 is a hop chain"
    root = ET.fromstring(ENGINE.render_svg(state))
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(f"{ns}circle")
    assert len([c for c in circles if c.find(f"{ns}title") is not None]) == 121
    assert len(root.findall(f".//{ns}g[@class='cells']/{ns}use")) == 20
    assert len(root.findall(f".//{ns}polyline")) == 1
    assert root.find(f".//{ns}polyline").get("points").count(",") == len(state.last)  # type: ignore[union-attr]
    assert "seat 1 (S) to move" in ENGINE.render_svg(state, seat=0)


def test_svg_numbers_every_hole_and_has_a_legend() -> None:
    """§1.1: every hole carries its canonical number (the log's `119>116`), readable on a piece too;
    the legend maps colour, seat, camp letter and player."""
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(ENGINE.render_svg(ENGINE.new_initial_state(start()), players=["ann", "bo"]))
    numbers = [t.text for t in root.findall(f"{ns}text") if t.get("paint-order") == "stroke"]
    assert numbers == [str(i) for i in range(121)]
    rows = [r.find(f"{ns}text").text for r in root.findall(f"{ns}g[@class='legend-row']")]  # type: ignore[union-attr]
    assert rows == ["seat 0 · N 北 深红 · ann", "seat 1 · S 南 浅蓝 · bo"]  # colours in words (issue 31 point 7)


def test_refused_move_is_drawn_dashed() -> None:
    """An illegal move is drawn dashed from its hole to its target on the last legal position."""
    state = final(list(ENGINE.replay(scripted(start(), ["3>14"]))))
    frame = ENGINE.frame(state, Moved(stream="g", seq=3, ts=0, seat=0, from_=4, to=15))
    assert frame.marks[-1].kind == "illegal" and frame.marks[-1].path == (4, 15)
    assert frame.caption.endswith("refused 4>15 by seat 0")


@settings(max_examples=150, deadline=None)
@given(st.sets(st.integers(0, 120), min_size=1, max_size=40), st.data())
def test_every_reported_move_has_a_path_that_checks(holes: set[int], data: st.DataObject) -> None:
    """§1.1 and §4.3: a step goes to a neighbour and changes the parity class; a hop chain keeps
    it; every hop endpoint's path passes the witness check, and the endpoint check agrees."""
    frm = data.draw(st.sampled_from(sorted(holes)))
    occupied = sum(BIT[i] for i in holes)
    r = reach(0, frm, occupied)
    for to in r.steps:
        assert NEIGHBOUR_MASK[frm] & BIT[to] and _parity(to) != _parity(frm)
    for to in r.hops:
        path = r.path(frm, to)
        assert _parity(to) == _parity(frm)
        assert check_path(0, path, occupied).problem is None
        assert hop_path(frm, to, occupied) is not None
    assert {to for to in range(121) if is_reachable(0, frm, to, occupied)} == set(r.endpoints())


def _parity(i: int) -> tuple[int, int]:
    q, r = COORDS[i]
    return q % 2, r % 2
