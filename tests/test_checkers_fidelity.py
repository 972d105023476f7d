"""Rule-fidelity regressions of checkers (issue 13, items 8–13), each named after its rule
section and built from a hand-written log or position: seats outside the game, a log that ends
without a result, the wall's formation, the take-back path, path-based classification and the
equaliser search."""

from __future__ import annotations

from array import array

import msgspec
import pytest

from replay.checkers import ENGINE
from replay.checkers.board import BIT, INDEX
from replay.checkers.check import check_move
from replay.checkers.moves import can_arrive_within
from replay.checkers.rules import play_move, play_pass, settle_by_search
from replay.checkers.state import CheckersState
from schemas.checkers import CheckersProfile, Moved
from schemas.common import Disconnected, DrawOffered, GameEnded, MoveTimeUsed, PenaltyCard, Resigned, Ruling, Skipped, TimedOut
from schemas.envelope import Event
from tests.checkers_support import STREAM, claim, codes, final, position, run, scripted, start
from tests.test_checkers_rules import F_ARRIVES, F_PIECES, S_CAMP, VICTIM, WALL, X_SHUFFLE, Y_WALK

OPENING = ["3>14", "115>102"]


def _append(events: list[Event], extra: Event) -> list[Event]:
    """Appends an event numbered after the last one and stamped a second later."""
    return [*events, msgspec.structs.replace(extra, seq=len(events), ts=events[-1].ts + 1000)]


def _ev(cls: type, seat: int | None, **fields: object) -> Event:
    return cls(stream=STREAM, seq=0, ts=0, seat=seat, **fields)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (_ev(PenaltyCard, 2, card="yellow", reason="wall"), "2"),
        (_ev(Resigned, 3), "3"),
        (_ev(Disconnected, 2), "2"),
        (_ev(TimedOut, 3), "3"),
        (_ev(Skipped, 2), "2"),
        (_ev(MoveTimeUsed, 3, ms=2000), "3"),
        (_ev(Moved, 2, from_=4, to=15), "2"),
        (_ev(DrawOffered, 2), "2"),
        (_ev(Ruling, None, corrects=2, text="wall", termination="RULING", winners=[2]), "2"),
        (_ev(Ruling, None, corrects=2, text="split", termination="RULING", points=[0, 0, 1]), "2"),
    ],
    ids=["penalty-seat-2", "resigned-seat-3", "disconnected-seat-2", "timeout-seat-3", "skip-seat-2", "move-time-seat-3",
         "move-seat-2", "draw-offer-seat-2",
         "ruling-winner-2", "ruling-points-for-3"],
)
def test_s1_4_event_naming_a_seat_outside_the_game_is_ignored(extra: Event, named: str) -> None:
    """§1.4 / 第十八条(1)b (两选手间对决): a game has seats 0 and 1; an event naming another seat
    is E_NO_SEAT and ignored, so it changes neither the result nor who is offline."""
    events = _append(scripted(start(), OPENING), extra)
    steps = list(ENGINE.replay(events))
    assert codes(steps) == ["checkers.X01"]
    finding = steps[-1].findings[0]
    assert finding.article == "第十八条"
    assert finding.message.startswith(f"事件 {extra.kind} 指明座位{named}，本局只有座位0和1，此事件不计 "
                                      f"{extra.kind} names seat {named}; the game has seats 0 and 1, so it is ignored")
    assert steps[-1].facts["ignored"] is True
    assert steps[-1].state == steps[-2].state
    assert final(steps).outcome is None and final(steps).offline == (False, False)


def test_s1_4_claim_naming_a_seat_outside_the_game_is_ignored() -> None:
    """§1.4: a `game.ended` claim with a winner 2 is refused (E_NO_SEAT), not compared or kept."""
    events = claim(scripted(start(), OPENING), "RESIGNED", [2], [0, 0])
    steps = list(ENGINE.replay(events))
    assert codes(steps) == ["checkers.X01"]
    assert final(steps).outcome is None


def test_s5_4a_log_ending_without_a_result_keeps_the_claim_unverified() -> None:
    """§5.4a / §4.7: a log that ends while the game goes on has an UNVERIFIED result; the declared
    result is kept for the standings (termination and points never NULL) and flagged E_NO_RESULT."""
    events = claim(scripted(start(), OPENING), "ABANDONED", [0], [1, 0])
    steps = list(ENGINE.replay(events))
    assert codes(steps) == ["checkers.E02"]
    finding = steps[-1].findings[0]
    assert (finding.article, finding.severity) == ("第三条", "error")
    assert finding.message == ("记录在第 2 手后结束而没有结果（轮到座位0走）；申报的「abandoned」、胜方座位0、得分 座位0 1、座位1 0 "
                               "作为未验证结果计入排名 "
                               "the log ends after ply 2 without a result (seat 0 to move); the claimed abandoned, "
                               "winners seat 0, points seat 0 1, seat 1 0 is kept for the standings as unverified")
    outcome = ENGINE.outcome(final(steps))
    assert outcome is not None and (outcome.termination, outcome.winners, outcome.points) == ("UNVERIFIED", (0,), (1.0, 0.0))
    assert steps[-1].facts["unverified"] is True and steps[-1].facts["derived"] is None


def test_s5_4a_unverified_game_reaches_the_games_and_seats_rows() -> None:
    """§4.7: the projection's games and seats rows of a log without a result carry the
    termination UNVERIFIED and the declared points, so no standings query drops the game."""
    from audit.query.projection import _GameRows
    from replay.run import replay_game

    events = claim(scripted(start(), OPENING), "ABANDONED", [], [0.5, 0.5])
    rows = _GameRows()
    rows.add(replay_game(events), array("q", range(len(events))))
    tables = rows.tables()
    assert [g["termination"] for g in tables["games"].to_pylist()] == ["UNVERIFIED"]
    assert [(s["seat"], s["points"]) for s in tables["seats"].to_pylist()] == [(0, 0.5), (1, 0.5)]
    assert [f["code"] for f in tables["findings"].to_pylist()] == ["checkers.E02"]


def test_s5_4a_a_decided_game_is_still_compared_with_its_claim() -> None:
    """§5.4a: a game the rules decide keeps the claim check (E_CLAIM), not the UNVERIFIED adoption."""
    events = _append(scripted(start(), OPENING), _ev(Resigned, 1))
    events = [*events, GameEnded(stream=STREAM, seq=len(events), ts=events[-1].ts + 1, termination="ABANDONED",
                                 winners=[0], points=[1, 0])]
    steps = list(ENGINE.replay(events))
    assert codes(steps) == ["checkers.E01"]
    outcome = final(steps).outcome
    assert outcome is not None and outcome.termination == "RESIGNED"


def _wall_turns(shuffle: list[str]) -> list[str]:
    """Alternates the blocker's shuffle with the victim's walk along the gate, three cycles."""
    return [t for pair in zip(shuffle * 3, Y_WALK) for t in pair]


def test_s10_wall_formation_counts_home_camp() -> None:
    """第六条 / §10: the formation is the blocker's pieces within distance 2 of the victim's target
    camp *or home camp*; a blocker shuffling a piece in the victim's home camp changes its
    formation every turn, so no W_POSSIBLE_WALL (the wall pieces alone stood still)."""
    in_home = WALL[:4] + S_CAMP[:6]
    state, found = run(position(CheckersProfile(), in_home, VICTIM, 0, turns=(40, 40)),
                       _wall_turns(["-3,6>-2,6", "-2,6>-3,6"]))
    assert found == [] and state.walled == (False, False)
    state, found = run(position(CheckersProfile(), WALL, VICTIM, 0, turns=(40, 40)), _wall_turns(X_SHUFFLE))
    assert found == ["W_POSSIBLE_WALL"], "the same wall with a shuffle out of both camps' reach is flagged"



# §6.1: seat 1 times out; seat 0 hops (0,0)→(2,−2) instead of waiting. Two chains lead there:
# A over (1,0) and (2,−1) via (2,0); B over (0,−1) and (1,−2) via (0,−2). Seat 1's spare pieces
# on (−3,5) and (3,0) move in between (the second onto (2,0), closing chain A).
OUT_A, OUT_B = "0,0>2,0>2,-2", "0,0>0,-2>2,-2"
BACK_A, BACK_B = "2,-2>2,0>0,0", "2,-2>0,-2>0,0"
HOPPERS = ["1,0", "2,-1", "0,-1", "1,-2", "-3,5", "3,0"]


def _turns(state: CheckersState, turns: list[tuple[str, bool]]) -> tuple[CheckersState, list[str]]:
    """Plays turns through the rule layer: `T` a timeout, else a move by its hop path, logged with
    that path when the flag says so and by its ends only when not."""
    messages: list[str] = []
    for text, shown in turns:
        if text == "T":
            turn = play_pass(state, timeout=True)
        else:
            holes = [_hole(h) for h in text.split(">")]
            witness = tuple(holes) if shown and len(holes) > 2 else None
            verdict = check_move(state, state.to_move, holes[0], holes[-1], witness)
            assert verdict.code is None, f"{text}: {verdict.code} {verdict.why}"
            turn = play_move(state, holes[0], holes[-1], verdict.path, shown=witness is not None)
        state = turn.state
        messages += [n.message for n in turn.notes]
    return state, messages


@pytest.mark.parametrize(
    ("out", "between", "back", "expected"),
    [
        ((OUT_A, True), "-3,5>-3,4", (BACK_A, True), []),
        ((OUT_A, True), "-3,5>-3,4", (BACK_B, True),
         ["座位0没有等待而走了 60>41，且沿 41>39>60 退回，不是原路（60>62>41） "
          "seat 0 moved 60>41 instead of waiting and took it back along 41>39>60, not the way it came (60>62>41)"]),
        ((OUT_A, True), "3,0>2,0", (BACK_B, False),
         ["座位0没有等待而走了 60>41，且沿 无法原路返回的连跳 退回，不是原路（60>62>41） "
          "seat 0 moved 60>41 instead of waiting and took it back along a chain that cannot retrace it, "
          "not the way it came (60>62>41)"]),
        ((OUT_A, False), "3,0>2,0", (BACK_B, True), []),
        ((OUT_A, False), "-3,5>-3,4", (BACK_A, False), []),
        ((OUT_A, True), "-3,5>-3,4", ("2,-2>1,-1", True),
         ["座位0没有等待而走了 60>41，且没有原路退回 seat 0 moved 60>41 instead of waiting and did not take it back"]),
    ],
    ids=["same-path", "other-path", "path-a-closed-back-by-ends", "out-by-ends-back-b", "both-by-ends", "no-take-back"],
)
def test_s6_1_take_back_follows_the_same_path(out: tuple[str, bool], between: str, back: tuple[str, bool],
                                              expected: list[str]) -> None:
    """第四条 / §6.1: a move made instead of waiting is taken back 原路退回, along the same path:
    along another one it is W_NO_WAIT. Where the log shows no path, the way back must be one the
    move could have come by (B after A was closed, by its ends, is accepted: the log cannot tell)."""
    state = position(CheckersProfile(), ["0,0", "-4,-4"], HOPPERS, 1, turns=(10, 10))
    state, messages = _turns(state, [("T", False), out, (between, False), back])
    assert messages == expected
    assert state.undo is None


def _move_code(settings: dict[str, str], north: list[str], south: list[str], move: str) -> str | None:
    """Returns the §4.7 code of seat 0's move, written `a>b` (ends only) or `a>b>c` (with its path)."""
    state = position(CheckersProfile(**settings), north, south, 0, turns=(40, 40))  # type: ignore[arg-type]
    holes = [_hole(h) for h in move.split(">")]
    path = tuple(holes) if len(holes) > 2 or move.endswith("!") else None
    return check_move(state, 0, holes[0], holes[-1], path).code


def _hole(text: str) -> int:
    """Returns the id of a hole written as axial `q,r` (a trailing `!` marks a logged path)."""
    q, r = text.rstrip("!").split(",")
    return INDEX[(int(q), int(r))]


# 19 = (5,−4), 21 = (7,−4), 20 = (6,−4) between them stays empty; the south pieces let a long-hop
# chain reach 21, so the endpoint alone is legal with `hop_mode = equidistant`.
LONG_ONLY = ["4,-3", "5,-2", "3,-1"]
# (−3,0) reaches (−3,4) by plain hops through the SW triangle, or by one long hop over (−3,2).
THROUGH_SW = ["-4,1", "-3,2", "-5,3", "-4,4", "-3,5"]


@pytest.mark.parametrize(
    ("settings", "south", "move", "code"),
    [
        ({}, LONG_ONLY, "5,-4>7,-4!", "E_UNREACHABLE"),
        ({}, LONG_ONLY, "5,-4>7,-4", "E_LONG_HOP_ONLY"),
        ({"side_triangles": "forbidden"}, THROUGH_SW, "-3,0>-3,4", "E_SIDE_TRIANGLE"),
        ({"side_triangles": "forbidden"}, THROUGH_SW, "-3,0>-5,2>-5,4>-3,4", "E_SIDE_TRIANGLE"),
        ({"side_triangles": "forbidden"}, THROUGH_SW, "-3,0>-3,4!", "E_LONG_HOP_ONLY"),
        ({"side_triangles": "forbidden", "goal_lock": "across_turns"}, THROUGH_SW, "-3,0>-3,4!", "E_LONG_HOP_ONLY"),
    ],
    ids=["empty-pivot-with-path", "long-hop-by-ends", "plain-through-triangle-by-ends", "plain-through-triangle-path",
         "long-hop-path", "long-hop-path-with-lock"],
)
def test_s4_7_classification_by_the_logged_path(settings: dict[str, str], south: list[str], move: str, code: str) -> None:
    """§4.7: a move with a logged path is classified by that path — a hop over the empty hole 20
    is illegal under every profile (E_UNREACHABLE) even where a long-hop chain reaches its end;
    without a path the endpoint decides, restrictions of plain moves (side triangles) before long
    hops, so a plain-hop move through a forbidden triangle is not labelled a long hop."""
    origin = move.split(">")[0]
    assert _move_code(settings, [origin], south, move) == code


# §5.2: G (seat 1) holds the north camp less hole 1, plus a piece on 17 = (3,−4): `4>1` then
# `17>4` (a hop over 8) completes it in two moves, the first by a piece already in the camp.
G_NEAR = [str(i) for i in range(10) if i != 1] + ["17"]


def test_s5_2_equaliser_search_moves_pieces_already_in_the_target() -> None:
    """第三条 / §5.2: the equaliser search tries every sequence up to its length, moves of pieces
    already in the target camp included: G arrives in two moves, not one."""
    pieces = sum(BIT[_idx(h)] for h in G_NEAR)
    f_pieces = sum(BIT[_idx(h)] for h in F_PIECES)
    assert can_arrive_within(1, pieces, f_pieces, 1) == 0
    assert can_arrive_within(1, pieces, f_pieces, 2) == 2


@pytest.mark.parametrize(("model", "expected"), [("own_moves", ("MARGIN_DRAW", ())), ("timeline", ("ALL_HOME", (0,)))])
def test_s5_2_log_ending_at_arrival_searches_two_own_moves(model: str, expected: tuple[str, tuple[int, ...]]) -> None:
    """§5.2 `own_moves`: the log ends at F's arrival; G could arrive on its turn n+1 (`4>1`,
    `17>4`), so the game is drawn; under `timeline` G has one turn and F wins."""
    state = position(CheckersProfile(margin_model=model), F_PIECES, G_NEAR, 0, turns=(40, 40))  # type: ignore[arg-type]
    state, _ = run(state, [F_ARRIVES])
    settled = settle_by_search(state)
    assert settled.outcome is not None and (settled.outcome.termination, settled.outcome.winners) == expected


def _idx(text: str) -> int:
    return _hole(text) if "," in text else int(text)


# §10 `wall_test`: the same wall, but the victim's last piece walks along row 10 in the middle of
# the board, far from its target's gate.
VICTIM_AWAY = [h for h in VICTIM if h != "3,-3"] + ["-3,2"]
AWAY_WALK = ["-3,2>-2,2", "-2,2>-1,2", "-1,2>0,2", "0,2>1,2", "1,2>2,2"]


@pytest.mark.parametrize(("test", "expected"), [("at_gate", []), ("stuck_only", ["W_POSSIBLE_WALL"] * 2)])
def test_s10_wall_test_setting(test: str, expected: list[str]) -> None:
    """第六条 / §10 `wall_test`: by default a wall is flagged only while the victim waits at the
    gate of its target camp; `stuck_only` takes the rules file's stuck test alone, which also
    holds while the victim's last piece is still on its way — and here for the victim's own held
    pieces against the blocker, who cannot complete its camp in one move either."""
    state = position(CheckersProfile(wall_test=test), WALL, VICTIM_AWAY, 0, turns=(40, 40))  # type: ignore[arg-type]
    _, found = run(state, [t for pair in zip(X_SHUFFLE * 3, AWAY_WALK) for t in pair])
    assert found == expected
