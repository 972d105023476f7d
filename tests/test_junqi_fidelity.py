"""Rule fidelity (issue 13, items 8 and 15–19): hand-built logs and positions, each test named after
the rule section it pins (junqi.md and the rule book's 第X条)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

import schemas
from replay.fold import fold_game
from replay.junqi import ENGINE
from replay.junqi.fold import Audit, fold_event
from replay.junqi.perft import parse_position
from replay.junqi.state import JunqiState
from replay.protocol import Finding, Step
from replay.run import EveryStep
from schemas.common import DrawAnswered, DrawOffered, GameEnded, MoveTimeUsed, Resigned, Ruling, Skipped, TimedOut
from schemas.envelope import Event
from schemas.junqi import FlagRevealed, Moved
from tests.audit_rows import HandBuilt, profile_json
from tests.junqi_support import T0, codes, profile, scripted

STREAM = "cup-r1-t1-g1"


def _findings(events: list[Event]) -> list[Finding]:
    return [f for step in ENGINE.replay(events) for f in step.findings]


def _steps(events: list[Event]) -> list[Step]:
    return list(ENGINE.replay(events))


def _then(events: list[Event], kind: type[Event], **fields: Any) -> list[Event]:
    """Returns the events with one more of `kind` appended at the next seq."""
    seq = len(events)
    return events + [kind(stream=events[0].stream, seq=seq, ts=T0 + 10_000 + 1000 * seq, **fields)]


def _fold(state: JunqiState, events: list[Event]) -> tuple[JunqiState, list[dict[str, Any]], list[Finding]]:
    """Folds hand-built events over a position; returns the last state, each event's facts, the findings."""
    audit = Audit(stream=STREAM, last_ts=T0)
    facts = []
    for event in events:
        state, fact = fold_event(state, event, audit)
        facts.append(fact)
    return state, facts, audit.findings


def _move(seq: int, seat: int, frm: str, to: str) -> Moved:
    return Moved(stream=STREAM, seq=seq, ts=T0 + seq, seat=seat, from_=frm, to=to)


# -- item 15: no passing by choice (§6.1(5), §7.5, 第七条) ----------------------------------------------

def test_s6_1_no_voluntary_pass() -> None:
    """§6.1(5), 第七条: a skip of the seat to move, which has legal moves and did not time out, is
    M12 and meets `illegal_move_policy` (flag_and_stop: nothing after it is judged)."""
    events = scripted(["skip"])
    (finding,) = _findings(events)
    assert (finding.seq, finding.code, finding.article) == (5, "junqi.M12", "第七条")
    assert finding.message == ("座位0无故放弃行棋：有 41 种合法走法且未超时 "
                               "seat 0 passed by choice: it has 41 legal moves and did not time out (no passing by choice)")
    assert _steps(events)[-1].state.halted == "junqi.M12"


def test_s7_5_skip_recording_a_timeout_is_no_second_pass() -> None:
    """§7.5: a timeout forfeits the turn; the software's skip of the same seat records it and passes nothing more."""
    steps = _steps(scripted(["timeout", "skip:S", "W12>W22"]))
    assert [f for s in steps for f in s.findings] == []
    assert steps[6].facts["skip"] == "timeout"
    assert (steps[5].state.to_move, steps[6].state.to_move, steps[7].state.to_move) == (1, 1, 2)


def test_s7_5_timeout_then_skip_of_the_next_seat_is_a_pass_by_choice() -> None:
    """§7.5, 第七条: a timeout passes one turn; a skip of the next seat, which did not time out, is M12."""
    assert codes(scripted(["timeout", "skip"])) == ["junqi.M12"]


def test_s7_5_pass_by_choice_under_flag_and_skip_passes_the_turn() -> None:
    """§12 `illegal_move_policy = flag_and_skip`: the pass is flagged and the turn goes on."""
    steps = _steps(scripted(["skip", "W12>W22"], illegal_move_policy="flag_and_skip"))
    assert [f.code for s in steps for f in s.findings] == ["junqi.M12"]
    assert steps[-1].state.to_move == 2 and steps[-1].state.halted is None


def test_s7_2_skip_of_an_eliminated_seat_is_a_record() -> None:
    """§7.2: the turn passes an eliminated seat by; the software's skip of it is accepted and changes nothing."""
    steps = _steps(scripted(["resign:W", "skip:W", "S12>S22"]))
    assert [f for s in steps for f in s.findings] == []
    assert steps[6].facts["skip"] == "eliminated" and steps[6].state == steps[5].state


def test_s7_3_skip_of_a_stuck_seat_under_skip_turn() -> None:
    """§7.3 `no_move_rule = skip_turn`: the turn passes a seat with no legal move by; its skip is a record."""
    state = parse_position("turn S\nS S62=军旗 S11=工兵\nW W62=军旗 W65=地雷\nN N62=军旗 N11=工兵\nE E62=军旗 E11=工兵\n",
                           profile(no_move_rule="skip_turn"))
    skip = Skipped(stream=STREAM, seq=1, ts=T0 + 1, seat=1)
    after, facts, found = _fold(state, [skip])
    assert (found, facts[0]["skip"], after) == ([], "no_legal_move", state)


def test_s7_5_skip_allowed_by_a_ruling() -> None:
    """§7.5: a referee's ruling naming a seat and no result allows that seat's next skip, once."""
    events = _then(scripted([]), Ruling, seat=0, corrects=4, text="S's device failed: skip the turn")
    events = _then(_then(events, Skipped, seat=0), Moved, seat=1, from_="W12", to="W22")
    steps = _steps(_then(events, Skipped, seat=2))
    assert [(f.seq, f.code) for s in steps for f in s.findings] == [(8, "junqi.M12")]
    assert steps[6].facts["skip"] == "ruling" and steps[6].state.to_move == 1


# -- item 8: a seat outside the game (第二条: four players) ---------------------------------------------

@pytest.mark.parametrize(("kind", "fields"), [
    (Resigned, {}), (TimedOut, {}), (Skipped, {}), (DrawOffered, {}), (DrawAnswered, {"accept": False}),
    (MoveTimeUsed, {"ms": 900}), (Moved, {"from_": "S12", "to": "S22"}),
])
def test_s2_event_naming_a_seat_outside_the_game_is_ignored(kind: type[Event], fields: dict[str, Any]) -> None:
    """第二条 (four players, seats 0–3): an event naming seat 4 or more is E04 and otherwise ignored."""
    events = scripted(["S12>S22", "offer:W"])
    steps = _steps(_then(events, kind, seat=4, **fields))
    (finding,) = steps[-1].findings
    assert (finding.code, finding.article) == ("junqi.E04", "第二条")
    tag = kind.__struct_config__.tag
    assert finding.message == (f"事件 {tag} 指明座位4，本局座位为 0–3，此事件不计 "
                               f"{tag} names seat 4, not a seat of this game (0–3); the event is ignored")
    assert steps[-1].state == steps[-2].state


def test_s2_schema_refuses_a_seat_outside_the_game() -> None:
    """第二条: the JSON contract itself refuses seat 4, so only the Python API can carry one."""
    line = b'{"kind":"game.resigned","stream":"g","seq":1,"ts":1,"seat":4,"v":1}'
    with pytest.raises(msgspec.ValidationError, match="seat"):
        schemas.decode(line)


# -- item 16: 亮旗 when the 司令 dies in the step that eliminates its owner (§10, §7.3) --------------

# W's 炸弹 takes N's 司令 along the arc W11–N15; N is left with its 军旗 and a 地雷, so on its turn,
# in the same step, it has no legal move and is eliminated (the bot game of `simulate junqi --games
# 40 --seed 3`, game 36, seq 237, reduced to its point).
MARSHAL_BOMBED = "turn W\nS S64=军旗 S55=工兵\nW W64=军旗 W11=炸弹 W55=工兵\nN N64=军旗 N65=地雷 N15=司令\nE E64=军旗 E55=工兵\n"


def _bombed(point: str | None, **settings: Any) -> tuple[list[dict[str, Any]], list[Finding]]:
    events: list[Event] = [_move(1, 1, "W11", "N15")]
    if point is not None:
        events.append(FlagRevealed(stream=STREAM, seq=2, ts=T0 + 2, owner=2, point=point))  # type: ignore[arg-type]
    events.append(_move(len(events) + 1, 3, "E55", "E54"))
    _, facts, found = _fold(parse_position(MARSHAL_BOMBED, profile(**settings)), events)
    return facts, found


def test_s10_reveal_accepted_when_the_marshal_dies_in_an_eliminating_step() -> None:
    """§10, §7.3: the 司令 died in combat, so the flag is revealed, though its owner leaves the board in the same step."""
    facts, found = _bombed("N64")
    assert facts[0]["eliminated"] is None and facts[0]["to_move"] == 3  # N is eliminated as its turn begins
    assert found == []


def test_s10_reveal_on_the_wrong_point_after_an_eliminating_step() -> None:
    """§10: the reveal is checked against where the flag stood before the step removed it."""
    _, found = _bombed("N62")
    assert [(f.code, f.message) for f in found] == [("junqi.M11", "亮旗显示座位2的军旗在 N62，实际在 "
                                                                  "N64 the flag shown for seat 2 is on N62, it stood on N64")]


@pytest.mark.parametrize(("setting", "expected"), [("optional", []), ("required", ["junqi.M11"])])
def test_s10_reveal_after_elimination_setting(setting: str, expected: list[str]) -> None:
    """§12 `reveal_after_elimination`: whether a reveal that is not sent is a finding once its owner is out."""
    _, found = _bombed(None, reveal_after_elimination=setting)
    assert [f.code for f in found] == expected


# -- item 17: positions the rules have already decided (§8.1–§8.3) ---------------------------------

@pytest.mark.parametrize(("text", "termination", "winners"), [
    ("turn S\nS S62=军旗 S12=司令\nN N62=军旗 N12=工兵\n", "NO_LEGAL_MOVE", (0, 2)),
    ("turn W\nW W62=军旗 W12=司令\n", "NO_LEGAL_MOVE", (1, 3)),
    ("turn S\nquiet 50\nS S62=军旗 S12=司令\nW W62=军旗 W12=司令\n", "QUIET_LIMIT", ()),
])
def test_s8_1_decided_position_counts_zero(tmp_path: Path, text: str, termination: str, winners: tuple[int, ...]) -> None:
    """§8.1–§8.2: an alliance with no pieces has lost and quiet 50 is a draw, so perft counts nothing."""
    path = tmp_path / "decided.txt"
    path.write_text(text, encoding="utf-8")
    assert ENGINE.perft(2, str(path)) == [0, 0]
    outcome = parse_position(text).outcome
    assert outcome is not None and (outcome.termination, outcome.winners) == (termination, winners)


def test_s8_2_quiet_below_the_limit_still_plays() -> None:
    """§8.2: quiet 49 is not yet a draw."""
    assert parse_position("turn S\nquiet 49\nS S62=军旗 S12=司令\nW W62=军旗 W12=司令\n").outcome is None


# -- item 18: forfeit_points (§9, 第十条) ----------------------------------------------------------

@pytest.mark.parametrize(("script", "settings", "points"), [
    (["resign:S", "resign:N"], {"forfeit_points": 0}, (0.0, 5.0, 0.0, 5.0)),
    (["resign:S", "resign:N"], {}, (1.0, 5.0, 1.0, 5.0)),
    (["resign:W"], {"forfeit_points": 0, "resign_effect": "alliance_loses"}, (5.0, 0.0, 5.0, 1.0)),
    (["resign:W", "S12>S22", "resign:E"], {"forfeit_points": -1}, (5.0, -1.0, 5.0, -1.0)),
])
def test_s9_forfeit_points_score_a_resigned_loser(script: list[str], settings: dict[str, Any],
                                                  points: tuple[float, ...]) -> None:
    """§9 `forfeit_points`: a losing seat that resigned scores them instead of the loss points."""
    outcome = _steps(scripted(script, **settings))[-1].state.outcome
    assert outcome is not None and outcome.points == points


def test_s9_forfeit_points_do_not_touch_the_winning_alliance() -> None:
    """第十条: a seat that resigned but whose partner won scores the win, like its partner."""
    # N resigns; S takes W's flag; E, with nothing that moves, is out as its turn begins.
    state = parse_position("turn S\nS S62=军旗 W52=司令\nW W62=军旗 W12=工兵\nN N62=军旗 N12=工兵\nE E62=军旗 E65=地雷\n",
                           profile(forfeit_points=0))
    after, _, found = _fold(state, [Resigned(stream=STREAM, seq=1, ts=T0 + 1, seat=2), _move(2, 0, "W52", "W62")])
    assert found == [] and after.outcome is not None
    assert (after.outcome.termination, after.outcome.points) == ("NO_LEGAL_MOVE", (5.0, 1.0, 5.0, 1.0))


@pytest.mark.parametrize(("engine_points", "flagged"), [([0, 5, 0, 5], []), ([1, 5, 1, 5], [0, 2])])
def test_s9_forfeit_points_in_the_sql_derivation(engine_points: list[int], flagged: list[int]) -> None:
    """§9, tournament.md §1: points.sql scores a resigned loser with `forfeit_points` as the engine does."""
    b = HandBuilt()
    b.game("g", "junqi", profile_json(profile(forfeit_points=0)), "RESIGNED", [1, 3],
           [(f"p{s}", float(p)) for s, p in enumerate(engine_points)])
    b.step("g", 5, "game.resigned", seat=0, resigned=0)
    b.step("g", 6, "game.resigned", seat=2, resigned=2)
    assert [int(re.search(r" seat (\d+) ", f[3]).group(1)) for f in b.run("points")] == flagged  # type: ignore[union-attr]


# -- item 19: the articles and messages of three findings ------------------------------------------

@pytest.mark.parametrize(("moves", "article", "reason"), [
    (["S12>S22", "W12>W22", "N12>N22", "E12>E22", "S22>S42"], "第四条 三", "a piece in a 行营 moves one step at a time"),
    (["S23>CS"], "第四条 六", "not adjacent and not both on the railway (off the railway a piece moves one step)"),
    (["S31>CSW"], "第四条 五", "S11, S21 blocks the railway"),
])
def test_s6_2_no_route_cites_the_one_step_rule(moves: list[str], article: str, reason: str) -> None:
    """第四条 三 (a camp's piece moves one step), 六 (a road move is one step), 五 (the railway)."""
    finding = _findings(scripted(moves))[-1]
    frm, to = moves[-1].split(">")
    assert (finding.code, finding.article) == ("junqi.M10", article)
    assert finding.message.endswith(f"no route from {frm} to {to}: {reason}")


@pytest.mark.parametrize(("script", "why"), [
    (["offer:S", "decline:W"], "座位1在第 6 号事件拒绝了提和 draw by agreement claimed, but seat 1 declined the offer at #6"),
    (["offer:S", "accept:W"], "座位2、座位3尚未同意（已同意：座位0、座位1） draw by agreement claimed, but seats 2 and 3 have not "
                              "accepted the offer (accepted: seats 0 and 1)"),
    ([], "没有人提和 draw by agreement claimed, but no draw was offered"),
])
def test_s8_4_draw_claim_names_the_missing_agreement(script: list[str], why: str) -> None:
    """第九条 和局 1: a claimed draw by agreement without all four says what was missing."""
    events = _then(scripted(script), GameEnded, termination="DRAW_AGREED", winners=[], points=[3, 3, 3, 3])
    (finding,) = _findings(events)
    assert (finding.code, finding.message) == ("junqi.E03", f"申报议和，但{why}")


def test_s4_2_bomb_taking_the_flag_is_removed_on_the_flag_point() -> None:
    """§4.2 row 1–2: the 炸弹 meets the 军旗 on its point and both are removed there."""
    state = parse_position("turn S\nS S62=军旗 W52=炸弹 S12=司令\nW W62=军旗 W12=工兵\nN N62=军旗 N12=工兵\nE E62=军旗 E12=工兵\n")
    _, facts, found = _fold(state, [_move(1, 0, "W52", "W62")])
    assert found == [] and facts[0]["removed_pieces"] == "军旗@W62 炸弹@W62"


def test_s7_5_a_ruling_set_aside_allows_no_skip() -> None:
    """§7.5 with 第十四条: the same ruling, set aside by the reader of the log (unsigned, say), allows
    nothing: the skip after it is M12, and the ruling's step names why it did not count."""
    events = _then(scripted([]), Ruling, seat=0, corrects=4, text="S's device failed: skip the turn")
    events = _then(events, Skipped, seat=0)
    steps = fold_game(events, EveryStep(), rulings=lambda ruling: "unsigned")
    assert [(f.seq, f.code) for s in steps for f in s.findings] == [(6, "junqi.M12")]
    assert steps[5].facts["set_aside"] == "unsigned" and steps[5].facts["ruling"] == "authorised_skip"
    assert steps[5].event == events[5] and steps[5].state == steps[4].state
