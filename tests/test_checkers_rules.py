"""The competition rules of checkers.md §5–§10 as data: the worked examples of §5.5 under each
margin model, the equaliser search, the implausibly-fast warning, the repetition draw, the
leave-camp deadlines, the timeout allowances, the waiting rule, cards and the wall warning."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from replay.checkers import ENGINE, fold
from replay.checkers.board import BIT, COORDS, HOME
from replay.checkers.rules import settle_by_search
from schemas.checkers import CheckersProfile, Moved
from schemas.common import Disconnected, DrawAnswered, DrawOffered, PenaltyCard, Resigned, RoundClosed, Ruling
from schemas.envelope import Event
from tests.checkers_support import STREAM, T0, claim, codes, final, position, run, scripted, start

# §5.5 unit-test position: F (seat 0, first) = S camp minus (−1,5) plus (0,4);
# G (seat 1) = N camp minus (1,−5) plus (0,−4). Axial q,r pairs.
S_CAMP = ["-4,5", "-3,5", "-2,5", "-1,5", "-4,6", "-3,6", "-2,6", "-4,7", "-3,7", "-4,8"]
N_CAMP = ["4,-8", "3,-7", "4,-7", "2,-6", "3,-6", "4,-6", "1,-5", "2,-5", "3,-5", "4,-5"]
F_PIECES = [h for h in S_CAMP if h != "-1,5"] + ["0,4"]
G_PIECES = [h for h in N_CAMP if h != "1,-5"] + ["0,-4"]
F_ARRIVES, G_ARRIVES = "0,4>-1,5", "0,-4>1,-5"
G_DAWDLES, G_BACK = "0,-4>-1,-3", "-1,-3>0,-4"


@pytest.mark.parametrize(
    ("model", "to_move", "turns", "expected"),
    [
        # timeline (default): G gets one equalising turn after F arrives.
        ("timeline", 0, [F_ARRIVES, G_ARRIVES], ("MARGIN_DRAW", ())),
        ("timeline", 0, [F_ARRIVES, G_DAWDLES], ("ALL_HOME", (0,))),
        ("timeline", 0, [F_ARRIVES, "T"], ("ALL_HOME", (0,))),
        ("timeline", 1, [G_ARRIVES], ("ALL_HOME", (1,))),
        # own_moves: G may take two more turns; arriving on the first is `own_moves_equal_result`.
        ("own_moves", 0, [F_ARRIVES, G_ARRIVES], ("ALL_HOME", (1,))),
        ("own_moves", 0, [F_ARRIVES, G_DAWDLES, G_BACK], ("ALL_HOME", (0,))),
        ("own_moves", 0, [F_ARRIVES, G_DAWDLES, "-1,-3>0,-4"], ("ALL_HOME", (0,))),
        # symmetric: whoever arrives first, the other gets its equalising turn.
        ("symmetric", 1, [G_ARRIVES, F_ARRIVES], ("MARGIN_DRAW", ())),
        ("symmetric", 1, [G_ARRIVES, "0,4>1,3"], ("ALL_HOME", (1,))),
    ],
    ids=["timeline-draw", "timeline-f-wins", "timeline-g-times-out", "timeline-g-first",
         "own-moves-equal", "own-moves-late", "own-moves-f-wins", "symmetric-draw", "symmetric-g-wins"],
)
def test_margin_worked_examples_of_section_5_5(model: str, to_move: int, turns: list[str], expected: tuple[str, tuple[int, ...]]) -> None:
    """第三条 / §5.2, §5.5: F arrives on its 41st turn; G's 41st turn decides (timeline), etc."""
    state = position(CheckersProfile(margin_model=model), F_PIECES, G_PIECES, to_move,  # type: ignore[arg-type]
                     turns=(40, 40) if to_move == 0 else (41, 40))
    state, _ = run(state, turns)
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winners) == expected


def test_own_moves_second_arrival_on_the_next_turn_is_a_draw() -> None:
    """§5.2 own_moves: G arriving on its turn n+1 draws; `own_moves_equal_result=draw` on turn n."""
    profile = CheckersProfile(margin_model="own_moves")
    state, _ = run(position(profile, F_PIECES, G_PIECES, 0, turns=(40, 40)), [F_ARRIVES, G_DAWDLES, "-1,-3>0,-4"])
    assert state.outcome is not None and state.outcome.termination == "ALL_HOME"
    far = [h for h in G_PIECES if h != "0,-4"] + ["0,-3"]
    state, _ = run(position(profile, F_PIECES, far, 0, turns=(40, 40)), [F_ARRIVES, "0,-3>0,-4", G_ARRIVES])
    assert state.outcome is not None and (state.outcome.termination, state.outcome.winners) == ("MARGIN_DRAW", ())
    equal = CheckersProfile(margin_model="own_moves", own_moves_equal_result="draw")
    state, _ = run(position(equal, F_PIECES, G_PIECES, 0, turns=(40, 40)), [F_ARRIVES, G_ARRIVES])
    assert state.outcome is not None and state.outcome.termination == "MARGIN_DRAW"


@pytest.mark.parametrize(
    ("g_pieces", "expected"),
    [(G_PIECES, ("MARGIN_DRAW", ())), ([h for h in G_PIECES if h != "0,-4"] + ["0,-2"], ("ALL_HOME", (0,)))],
    ids=["g-could-arrive", "g-could-not"],
)
def test_log_ending_at_f_arrival_is_settled_by_search(g_pieces: list[str], expected: tuple[str, tuple[int, ...]]) -> None:
    """§5.2 / §5.5 third example: the log ends at F's arrival; G's legal moves are searched."""
    state, _ = run(position(CheckersProfile(), F_PIECES, g_pieces, 0, turns=(40, 40)), [F_ARRIVES])
    assert state.outcome is None
    settled = settle_by_search(state)
    assert settled.outcome is not None and (settled.outcome.termination, settled.outcome.winners) == expected


@pytest.mark.parametrize(("turns_before", "warned"), [(13, True), (14, False), (30, False)], ids=["turn-14", "turn-15", "turn-31"])
def test_implausibly_fast_arrival_before_the_15th_own_turn(turns_before: int, warned: bool) -> None:
    """§5.5 sanity bound (Bell 2009: 30 moves is the shortest game): W_IMPLAUSIBLY_FAST."""
    state = position(CheckersProfile(), F_PIECES, G_PIECES, 0, turns=(turns_before, turns_before))
    _, found = run(state, [F_ARRIVES])
    assert found == (["W_IMPLAUSIBLY_FAST"] if warned else [])


# §7 example: G takes its last piece out of camp on ply 70 (position P); F and G then shuffle,
# and P recurs after plies 74 and 78. F = seat 0 (first), G = seat 1; axial q,r pairs.
F_MID = ["0,0", "1,0", "2,0", "-1,1", "0,1", "1,1", "-2,2", "-1,2", "0,2", "1,2"]
G_MID = ["0,-2", "1,-2", "2,-2", "-1,-1", "0,-1", "1,-1", "3,-3", "2,-3", "1,-3", "-4,5"]
LAST_OUT = "-4,5>-4,4"
SHUFFLE = ["0,2>0,3", "1,-3>1,-4", "0,3>0,2", "1,-4>1,-3"]


@pytest.mark.parametrize(
    ("settings", "turns", "expected", "at_ply"),
    [
        ({}, [LAST_OUT, *SHUFFLE * 2], "REPETITION", 78),
        ({}, [LAST_OUT, *SHUFFLE, *SHUFFLE[:3]], None, 77),
        ({"repetition_count": 4}, [LAST_OUT, *SHUFFLE * 3], "REPETITION", 82),
        ({"repetition_trigger": "always", "repetition_count": 2}, ["1,-3>1,-4", *SHUFFLE[:1], "1,-4>1,-3", *SHUFFLE[2:3], "1,-3>1,-4"],
         "REPETITION", 74),
    ],
    ids=["third-occurrence-at-ply-78", "not-before", "count-4", "trigger-always"],
)
def test_repetition_draw_after_both_sides_left_camp(settings: dict[str, object], turns: list[str], expected: str | None, at_ply: int) -> None:
    """第三条 / §7: after both camps are empty (双方棋子全部出营), the third occurrence of a position draws."""
    state = position(CheckersProfile(**settings), F_MID, G_MID, 1, turns=(35, 34))  # type: ignore[arg-type]
    state, _ = run(state, turns)
    assert (state.outcome.termination if state.outcome else None) == expected
    assert state.ply == at_ply


def test_repetition_is_not_counted_while_a_piece_is_at_home() -> None:
    """§7 `repetition_trigger = both_fully_evacuated`: shuffling with a piece still at home goes on."""
    state = position(CheckersProfile(), F_MID, G_MID, 1, turns=(35, 34))
    state, _ = run(state, ["1,-3>1,-4", "0,2>0,3", "1,-4>1,-3", "0,3>0,2"] * 4)
    assert state.outcome is None and state.evacuated_at == 0 and state.history == ()


def _capped_game(caps: tuple[int, int], plies: int, **settings: Any) -> list[Event]:
    """Plays a game in which each seat takes at most caps[seat] pieces out of its home camp (the
    deepest first), then moves one outside piece back and forth."""
    begin = start(**settings)
    state = ENGINE.new_initial_state(begin)
    events: list[Event] = [begin]
    previous: dict[int, tuple[int, int]] = {}
    while state.outcome is None and state.ply < plies:
        seat = state.to_move
        home = HOME[seat]
        moves = [m for m in ENGINE.legal_actions(state) if isinstance(m, tuple)]
        out = 10 - (state.pieces[seat] & home).bit_count()
        outside = [m for m in moves if not home & BIT[m[0]] and not home & BIT[m[1]]]
        if out < caps[seat]:
            leaving = [m for m in moves if home & BIT[m[0]] and not home & BIT[m[1]]]
            forward = [m for m in moves if _depth(seat, m[1]) < _depth(seat, m[0])]
            rising = [m for m in forward if home & BIT[m[0]]]
            choice = min(leaving or rising or forward or moves, key=lambda m: (-_depth(seat, m[0]), _depth(seat, m[1]), m))
        else:
            back = (previous[seat][1], previous[seat][0]) if seat in previous else None
            choice = back if back in moves else min(outside or moves)
            previous[seat] = choice
        events.append(ENGINE.to_event(state, choice, stream=STREAM, seq=len(events), ts=events[-1].ts + 2000))
        state = ENGINE.apply_action(state, choice)
    return events


def _depth(seat: int, hole: int) -> int:
    """Returns how deep a hole lies in the seat's home camp (its distance from the camp's mouth)."""
    r = COORDS[hole][1]
    return -r if seat == 0 else r


@pytest.mark.parametrize(
    ("caps", "settings", "ply", "termination", "winners"),
    [
        ((4, 10), {}, 39, "LEAVE_CAMP", (1,)),
        ((7, 10), {}, 49, "LEAVE_CAMP", (1,)),
        ((9, 10), {}, 59, "LEAVE_CAMP", (1,)),
        ((10, 4), {}, 40, "LEAVE_CAMP", (0,)),
        ((10, 7), {}, 50, "LEAVE_CAMP", (0,)),
        ((10, 9), {}, 60, "LEAVE_CAMP", (0,)),
        ((10, 10), {"repetition_trigger": "after_round_30"}, 60, None, None),
        ((5, 8), {}, 49, "LEAVE_CAMP", (1,)),
        ((4, 4), {"leave_camp_check_time": "end_of_round"}, 40, "LEAVE_CAMP", ()),
        ((4, 10), {"leave_camp_check_time": "end_of_round"}, 40, "LEAVE_CAMP", (1,)),
    ],
    ids=["f-turn-20", "f-turn-25", "f-turn-30", "g-turn-20", "g-turn-25", "g-turn-30", "both-meet",
         "f-8-short-at-25", "both-fail-same-round", "end-of-round"],
)
def test_leave_camp_deadlines(caps: tuple[int, int], settings: dict[str, object], ply: int, termination: str | None,
                              winners: tuple[int, ...] | None) -> None:
    """第五条 / §9: 5, 8 and 10 pieces out of camp by own turns 20, 25 and 30, else a loss at that ply."""
    steps = list(ENGINE.replay(claim_end(_capped_game(caps, 60, **settings))))
    state = final(steps)
    assert state.ply == ply
    assert (state.outcome.termination if state.outcome else None) == termination
    if winners is not None:
        assert state.outcome is not None and state.outcome.winners == winners
    assert [c for c in codes(steps) if c != "checkers.E01"] == []


def test_leave_camp_penalty_flag_only_warns() -> None:
    """§9 `leave_camp_penalty = flag`: W_LEAVE_CAMP at the check, and play goes on."""
    steps = list(ENGINE.replay(_capped_game((4, 10), 45, leave_camp_penalty="flag")))
    assert codes(steps) == ["checkers.C01"]
    assert [s.event.seq for s in steps if s.findings] == [39]
    assert final(steps).outcome is None


def claim_end(events: list[Event]) -> list[Event]:
    """Returns the events with the derived result claimed, so that only rule findings remain."""
    state = final(list(ENGINE.replay(events)))
    if state.outcome is None:
        return events
    return claim(events, state.outcome.termination, list(state.outcome.winners), list(state.outcome.points))


@pytest.mark.parametrize(("stage", "allowance"), [("swiss", 4), ("qf", 6), ("sf", 6), ("final", 8), ("third", 8)])
def test_timeout_allowance_by_stage(stage: str, allowance: int) -> None:
    """第四条 / §6: 4 timeouts per game in the early rounds, 6 in quarter- and semi-finals, 8 in the
    final and third-place match; the next one is a timing breach, a yellow card (第十六条(3))."""
    within = list(ENGINE.replay(scripted(start(stage=stage), ["T", "P"] * allowance)))
    assert final(within).outcome is None and final(within).timeouts == (allowance, 0)
    assert codes(within) == []
    over = list(ENGINE.replay(scripted(start(stage=stage), ["T", "P"] * allowance + ["T"])))
    state = final(over)
    assert state.outcome is not None and (state.outcome.termination, state.outcome.winners) == ("TIMEOUTS", (1,))
    assert state.ply == 2 * allowance + 1


def test_timeout_overflow_only_flagged_without_the_auto_card() -> None:
    """§8 `auto_cards`: without `timeout_overflow` the fifth timeout is reported, not carded."""
    steps = list(ENGINE.replay(scripted(start(auto_cards=("unjustified_pass", "dissolve")), ["T", "P"] * 5)))
    assert codes(steps) == ["checkers.T03"] and final(steps).outcome is None


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (["T", "P", "3>14"], []),
        (["T", "115>102", "3>14", "102>115"], []),
        (["T", "115>102", "3>14", "116>105"], ["checkers.T04"]),
        (["T", "115>102", "3>14", "P"], ["checkers.T04"]),
    ],
    ids=["waits", "moves-and-takes-back", "does-not-take-back", "passes-instead-of-taking-back"],
)
def test_waiting_for_a_timed_out_opponent(turns: list[str], expected: list[str]) -> None:
    """第四条 / §6.1: within the allowance the player waits for a timed-out opponent, or moves back
    the way it came (未等需原路退回)."""
    assert codes(list(ENGINE.replay(scripted(start(), turns)))) == expected


def test_waiting_excused_by_a_leave_camp_deadline() -> None:
    """第四条: 如因等对方妨碍己方出营，可不等而出营 — a move out of camp just before turn 20 is excused."""
    profile = CheckersProfile(leave_camp_checks=((20, 1), (25, 8), (30, 10)))
    state = position(profile, N_CAMP, S_CAMP, 0, turns=(18, 18))
    state, found = run(state, ["T", "-4,5>-4,4", "3,-5>3,-4", "-3,5>-3,4"])
    assert found == [] and state.undo is None and state.outcome is None
    state, found = run(position(profile, N_CAMP, S_CAMP, 0, turns=(10, 10)), ["T", "-4,5>-4,4", "3,-5>3,-4", "-3,5>-3,4"])
    assert found == ["W_NO_WAIT"], "far from a deadline the same move had to be taken back"


@pytest.mark.parametrize(
    ("turns", "termination", "winners"),
    [(["P"], "UNJUSTIFIED_SKIP", (1,)), (["3>14", "P"], "UNJUSTIFIED_SKIP", (0,))],
    ids=["first-mover", "second-mover"],
)
def test_skip_without_cause_is_a_yellow_card(turns: list[str], termination: str, winners: tuple[int, ...]) -> None:
    """第十六条(2): pressing 略过 without cause (a legal move existed) loses the game."""
    state = final(list(ENGINE.replay(scripted(start(), turns))))
    assert state.outcome is not None and (state.outcome.termination, state.outcome.winners) == (termination, winners)


@pytest.mark.parametrize(("card", "termination"), [("yellow", "YELLOW_CARD"), ("red", "RED_CARD")])
def test_referee_cards_end_the_game(card: str, termination: str) -> None:
    """第十六条, 第十七条: a yellow card loses the game; a red card disqualifies (and so loses it)."""
    events = scripted(start(), ["3>14", "115>102"])
    events.append(PenaltyCard(stream=STREAM, seq=len(events), ts=events[-1].ts + 5, seat=1, card=card, reason="wall"))  # type: ignore[arg-type]
    steps = list(ENGINE.replay(claim(events, termination, [0], [1, 0])))
    outcome = final(steps).outcome
    assert outcome is not None and outcome.termination == termination
    assert codes(steps) == []


def test_disconnect_is_reported_and_a_dissolved_table_is_a_yellow_card() -> None:
    """第十六条(1): a table that ends while a seat is disconnected was dissolved: that seat loses."""
    events = scripted(start(), ["3>14", "115>102"])
    events.append(Disconnected(stream=STREAM, seq=len(events), ts=events[-1].ts + 5, seat=0))
    steps = list(ENGINE.replay(claim(events, "DISSOLVED", [1], [0, 1])))
    assert codes(steps) == ["checkers.P02"]
    outcome = final(steps).outcome
    assert outcome is not None and outcome.termination == "DISSOLVED"


def test_slow_move_and_clock_disagreement_are_reported() -> None:
    """第四条 / §6: a move over 20 s + tolerance is W_SLOW_MOVE; a clock time far from the
    timestamp gap is W_MOVE_TIME; with `derive_timeouts_from_timestamps` the slow move counts."""
    events = scripted(start(), ["3>14"], gap_ms=25_000)
    assert codes(list(ENGINE.replay(events))) == ["checkers.T01"]
    skewed = [*events[:2], msgspec.structs.replace(events[2], ms=9_000)]
    assert codes(list(ENGINE.replay(skewed))) == ["checkers.T01", "checkers.T02"]
    derived = scripted(start(derive_timeouts_from_timestamps=True), ["3>14"], gap_ms=25_000)
    assert final(list(ENGINE.replay(derived))).timeouts == (1, 0)


# §10: seat 0 holds a double layer in front of the one empty hole (1,−5) of seat 1's target camp
# (its own home camp), shuffling a piece in the middle of the board, out of both camps' reach;
# seat 1 walks its last piece along the gate.
WALL = ["0,-4", "1,-4", "-1,-3", "1,-3"] + S_CAMP[:5] + ["0,0"]
VICTIM = [h for h in N_CAMP if h != "1,-5"] + ["3,-3"]
X_SHUFFLE = ["0,0>1,0", "1,0>0,0"]
Y_WALK = ["3,-3>4,-3", "4,-3>4,-4", "4,-4>3,-4", "3,-4>2,-3", "2,-3>3,-3"]


def test_possible_wall_is_flagged_after_three_cycles() -> None:
    """第六条 / §10: after both left camp, a formation held for more than 3 cycles while the
    victim cannot enter its camp raises W_POSSIBLE_WALL once (the engine flags; a referee rules)."""
    state = position(CheckersProfile(), WALL, VICTIM, 0, turns=(40, 40))
    turns = [t for pair in zip(X_SHUFFLE * 3, Y_WALK) for t in pair]
    state, found = run(state, turns)
    assert found == ["W_POSSIBLE_WALL"]
    assert state.outcome is None and state.walled == (True, False)


def test_no_wall_when_the_formation_moves() -> None:
    """§10: a blocker that changes its formation every turn is not flagged."""
    state = position(CheckersProfile(), WALL, VICTIM, 0, turns=(40, 40))
    moving = ["1,-3>2,-4", "2,-4>1,-3"]
    state, found = run(state, [t for pair in zip(moving * 3, Y_WALK) for t in pair])
    assert found == []


def _with(events: list[Event], *extra: Event) -> list[Event]:
    """Appends events, numbering them after the last one and stamping them a second later."""
    out = list(events)
    for e in extra:
        out.append(msgspec.structs.replace(e, seq=len(out), ts=out[-1].ts + 1000))
    return out


def _ev(cls: type, seat: int | None = None, **fields: object) -> Event:
    return cls(stream=STREAM, seq=0, ts=T0, seat=seat, **fields)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("settings", "extra", "termination", "found"),
    [
        ({}, [(DrawOffered, 0, {}), (DrawAnswered, 1, {"accept": True})], None, ["checkers.E03"]),
        ({"agreed_draw": True}, [(DrawOffered, 0, {}), (DrawAnswered, 1, {"accept": True})], "DRAW_AGREED", []),
        ({"agreed_draw": True}, [(DrawOffered, 0, {}), (DrawAnswered, 1, {"accept": False})], None, []),
        ({}, [(Resigned, 1, {})], "RESIGNED", []),
        ({"resign_allowed": False}, [(Resigned, 1, {})], None, ["checkers.E06"]),
        ({}, [(Ruling, None, {"corrects": 2, "text": "wall", "termination": "RULING", "winners": [1]})], "RULING", []),
        ({}, [(Resigned, 1, {}), (Moved, 0, {"from_": 4, "to": 15})], "RESIGNED", ["checkers.E05"]),
        ({}, [(RoundClosed, None, {"round": 1})], None, ["checkers.X04"]),
    ],
    ids=["draw-not-in-the-sheet", "draw-agreed", "draw-declined", "resigned", "resign-ignored", "ruling",
         "after-end", "foreign-event"],
)
def test_other_game_events(settings: dict[str, Any], extra: list[tuple[type, int | None, dict[str, object]]],
                           termination: str | None, found: list[str]) -> None:
    """第三条 and §5.3, §8: draws only as the sheet allows, resignation, referee rulings, events
    after the end (W_AFTER_END) and events of another game in the stream."""
    events = _with(scripted(start(**settings), ["3>14", "115>102"]), *(_ev(cls, seat, **f) for cls, seat, f in extra))
    steps = list(ENGINE.replay(events))
    outcome = final(steps).outcome
    assert (outcome.termination if outcome else None) == termination
    assert codes(steps) == found


def test_repetition_claimed_by_a_draw_offer() -> None:
    """§7 `repetition_auto = false`: the third occurrence draws only when a player claims it."""
    profile = CheckersProfile(repetition_auto=False)
    state, _ = run(position(profile, F_MID, G_MID, 1, turns=(35, 34)), [LAST_OUT, *SHUFFLE * 2])
    assert state.outcome is None and state.history.count(state.history[-1]) == 3
    offer = DrawOffered(stream=STREAM, seq=0, ts=T0, seat=state.to_move)
    claimed = fold._on_draw_offered(state, offer, fold.Clock(T0), {"seat": offer.seat, "action": None})
    assert claimed.outcome is not None and claimed.outcome.termination == "REPETITION"


def test_envelope_anomalies() -> None:
    """DESIGN schemas/: dense sequence numbers (E_SEQ) and timestamps that never go back (W_CLOCK)."""
    events = scripted(start(), ["3>14", "115>102"])
    gap = [*events[:3], msgspec.structs.replace(events[3], seq=9), *events[4:]]
    assert codes(list(ENGINE.replay(gap))) == ["checkers.X02", "checkers.X02"]
    back = [*events[:3], msgspec.structs.replace(events[3], ts=T0 - 5), *events[4:]]
    assert "checkers.T05" in codes(list(ENGINE.replay(back)))
