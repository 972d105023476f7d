"""Replay of whole games (junqi.md §11): the shared engine contract, a golden playthrough, simulated
games that replay clean, and planted illegal events that each give exactly the expected finding."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

import schemas
from replay.junqi import ENGINE
from replay.junqi.board import NAMES
from replay.junqi.moves import geometry, is_protected, movable_origins
from replay.junqi.pieces import seat_of
from replay.junqi.state import JunqiState, is_enemy
from replay.junqi.summary import game_summary
from replay.protocol import StrictReplayError
from schemas.common import GameEnded, MoveTimeUsed, TimedOut
from schemas.envelope import Event
from schemas.junqi import FlagRevealed, Moved
from tests.engine_contract import check_engine
from tests.junqi_support import codes, scripted, start

DATA = Path(__file__).parent / "data" / "junqi"
GAMES = int(os.environ.get("MATCHLEDGER_GAMES", "200"))
GOLDEN_SEED = 7


def test_engine_contract_default_profile() -> None:
    """The shared contract (tests/engine_contract.py) under the default profile of §12."""
    check_engine(ENGINE, start(), seed=20261129)


def test_engine_contract_platform_profile() -> None:
    """The shared contract under a QQ-like profile: counterclockwise, N first, steps per round."""
    check_engine(ENGINE, start(first=2, turn_direction="counterclockwise", step_unit="round", quiet_limit=12,
                               max_timeouts=5, no_move_rule="skip_turn"), seed=4242)


def _transcript(events: list[Event]) -> str:
    lines = []
    for step in ENGINE.replay(events):
        facts = " ".join(f"{k}={v}" for k, v in step.facts.items())
        found = "".join(f" !{f.code}" for f in step.findings)
        lines.append(f"{step.event.seq} {step.event.kind} {facts}{found}")  # type: ignore[attr-defined]
    return "\n".join(lines) + "\n" + ENGINE.render_text(step.state)


def test_golden_playthrough(regen_golden: bool) -> None:
    """A fixed-seed bot game: its events and the replay's facts match the stored transcript
    (regenerate with MATCHLEDGER_REGEN_GOLDEN=1 after a deliberate rule change)."""
    events = ENGINE.bot_game(start(), random.Random(GOLDEN_SEED))
    encoded = b"".join(schemas.encode(e) + b"\n" for e in events)
    transcript = _transcript(events)
    event_file, facts_file = DATA / f"golden_seed{GOLDEN_SEED}.jsonl", DATA / f"golden_seed{GOLDEN_SEED}.txt"
    if regen_golden:
        event_file.write_bytes(encoded)
        facts_file.write_text(transcript, encoding="utf-8")
    assert encoded == event_file.read_bytes()
    assert transcript == facts_file.read_text(encoding="utf-8")
    stored = [schemas.decode(line) for line in event_file.read_bytes().splitlines()]
    assert _transcript(stored) == transcript


def test_simulated_games_replay_with_zero_findings() -> None:
    """MATCHLEDGER_GAMES bot games (default 200) replay without a finding and end as claimed."""
    seed = 1129
    print(f"simulated games seed={seed} games={GAMES}")
    rng = random.Random(seed)
    terminations: dict[str, int] = {}
    for _ in range(GAMES):
        events = ENGINE.bot_game(start(), random.Random(rng.getrandbits(64)))
        steps = list(ENGINE.replay(events, strict=True))
        assert ENGINE.outcome(steps[-1].state).termination == events[-1].termination  # type: ignore[attr-defined,union-attr]
        terminations[events[-1].termination] = terminations.get(events[-1].termination, 0) + 1  # type: ignore[attr-defined]
    print(terminations)
    assert "FLAG_CAPTURED" in terminations


def _renumber(events: list[Event]) -> list[Event]:
    return [replace(e, seq=i) for i, e in enumerate(events)]


def _bot(seed: int = 99, **profile: Any) -> list[Event]:
    return ENGINE.bot_game(start(**profile), random.Random(seed))


def _states(events: list[Event]) -> list[JunqiState]:
    return [step.state for step in ENGINE.replay(events)]


def _plant_move(events: list[Event], index: int, seat: int, frm: str, to: str) -> list[Event]:
    """Replaces the event at `index` (a move) by a planted move and drops everything after it."""
    planted = Moved(stream=events[0].stream, seq=index, ts=events[index].ts, seat=seat, from_=frm, to=to)
    return events[:index] + [planted]


@pytest.mark.parametrize(("rule", "moves", "expected"), [
    ("M10 第四条 五: a run through an occupied rail point", ["S31>CSW"], ["junqi.M10"]),
    ("M10 第四条 五: a non-engineer turning at a junction", ["S11>CS"], ["junqi.M10"]),
    ("M05 第八条: moving a mine", ["S53>S42"], ["junqi.M05"]),
    ("M02 第七条: moving out of turn", ["W:W12>W22"], ["junqi.M02"]),
    ("M06 第四条 四: moving out of an HQ", ["S64>S54"], ["junqi.M06"]),
    ("M04: no own piece on from", ["S22>S12"], ["junqi.M04"]),
    ("M07: to equals from", ["S12>S12"], ["junqi.M07"]),
    ("M08: onto an own piece", ["S12>S13"], ["junqi.M08"]),
    ("M08: onto the partner's piece", ["S12>S22", "W12>W22", "N13>S13"], ["junqi.M08"]),
    ("legal: an attack along the arc, straight runs through the 九宫",
     ["S12>S22", "W11>CNW", "N11>CNE", "E12>E22", "S11>W15", "CNW>CSW", "CNE>CSE"], []),
])
def test_planted_illegal_moves(rule: str, moves: list[str], expected: list[str]) -> None:
    """Each planted illegal move gives exactly its finding; `flag_and_stop` judges nothing after it."""
    events = scripted(moves)
    assert codes(events) == expected, rule


def _first_position(events: list[Event], wanted) -> tuple[int, JunqiState, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Returns the first state before a bot move where `wanted(state)` finds a (from, to) pair."""
    for i, state in enumerate(_states(events)[:-1]):
        if isinstance(events[i + 1], Moved) and state.to_move >= 0:
            pair = wanted(state)
            if pair is not None:
                return i + 1, state, pair
    raise AssertionError("no bot position fits")


def _camp_attack(state: JunqiState) -> tuple[int, int] | None:
    geo = geometry(state.profile)
    for frm in movable_origins(state, state.to_move):
        for to in geo.neighbours[frm]:
            target = state.board[to]
            if target and is_enemy(state.to_move, seat_of(target)) and is_protected(to, target, state.profile):
                return frm, to
    return None


def test_planted_attack_into_a_camp() -> None:
    """M09 第四条 三: attacking an enemy in a 行营, planted at the first bot position that allows it."""
    events = _bot(seed=5)
    index, state, (frm, to) = _first_position(events, _camp_attack)
    assert codes(_plant_move(events, index, state.to_move, NAMES[frm], NAMES[to])) == ["junqi.M09"]


def test_planted_move_by_an_eliminated_seat() -> None:
    """M03 第九条: a seat that is out moves."""
    events = _bot(seed=3)
    out = lambda s: (0, 0) if not all(s.alive) else None  # noqa: E731
    index, state, _ = _first_position(events, out)
    seat = state.alive.index(False)
    letter = "SWNE"[seat]
    assert codes(_plant_move(events, index, seat, f"{letter}12", f"{letter}22")) == ["junqi.M03"]


def test_planted_move_after_the_end() -> None:
    """M01 第九条: a move after the game ended; the claim still matches."""
    events = _bot()
    last = max(i for i, e in enumerate(events) if isinstance(e, Moved))
    extra = replace(events[last], seq=0)
    planted = _renumber(events[:-1] + [extra, events[-1]])
    assert codes(planted) == ["junqi.M01"]


def test_false_claimed_combat_result() -> None:
    """M11 第八条: the software states a wrong combat result; the replay goes on with the derived one."""
    events = _bot()
    i = next(i for i, e in enumerate(events) if isinstance(e, Moved) and e.result in ("win", "lose"))
    wrong = {"win": "lose", "lose": "win"}[events[i].result]  # type: ignore[attr-defined]
    planted = events[:i] + [replace(events[i], result=wrong)] + events[i + 1:]
    assert codes(planted) == ["junqi.M11"]


def test_false_claimed_mover() -> None:
    """M11 第八条: the software names the wrong moving piece."""
    events = _bot()
    i = next(i for i, e in enumerate(events) if isinstance(e, Moved))
    wrong = "司令" if events[i].piece != "司令" else "工兵"  # type: ignore[attr-defined]
    assert codes(events[:i] + [replace(events[i], piece=wrong)] + events[i + 1:]) == ["junqi.M11"]


def _with_reveal(seed: int = 0) -> tuple[list[Event], int]:
    for s in range(seed, seed + 200):
        events = _bot(seed=s)
        for i, e in enumerate(events):
            if isinstance(e, FlagRevealed):
                return events, i
    raise AssertionError("no bot game with a 亮旗")


def test_missing_flag_reveal() -> None:
    """M11 §10: a 司令 died in combat but the software did not show the flag (亮旗)."""
    events, i = _with_reveal()
    assert codes(_renumber(events[:i] + events[i + 1:])) == ["junqi.M11"]


def test_wrong_flag_reveal() -> None:
    """M11 §10: the software shows the flag on the wrong point."""
    events, i = _with_reveal()
    reveal = events[i]
    wrong = "S63" if reveal.point != "S63" else "S61"  # type: ignore[attr-defined]
    assert codes(events[:i] + [replace(reveal, point=wrong)] + events[i + 1:]) == ["junqi.M11"]


def test_false_termination_claim() -> None:
    """E02 第九条: the claimed termination differs from the derived one."""
    events = _bot()
    assert codes(events[:-1] + [replace(events[-1], termination="RESIGNED")]) == ["junqi.E02"]


def test_false_winner_claim() -> None:
    """E02 第九条: the claim names the wrong alliance; winners and points both differ."""
    events = _bot()
    claim = events[-1]
    assert isinstance(claim, GameEnded) and claim.winners
    flipped = replace(claim, winners=[(s + 1) % 4 for s in claim.winners], points=[6 - p for p in claim.points])
    assert codes(events[:-1] + [flipped]) == ["junqi.E02", "junqi.E02"]


def test_claimed_end_while_the_game_goes_on() -> None:
    """E02 第九条: the software claims an end the rules do not give."""
    events = scripted(["S12>S22"])
    claim = GameEnded(stream=events[0].stream, seq=len(events), ts=events[-1].ts + 1, termination="FLAG_CAPTURED",
                      winners=[0, 2], points=[5, 1, 5, 1])
    assert codes(events + [claim]) == ["junqi.E02"]


def test_draw_claimed_without_all_votes() -> None:
    """E03 第九条: a draw by agreement claimed after only one vote."""
    events = scripted(["S12>S22", "offer:W"])
    claim = GameEnded(stream=events[0].stream, seq=len(events), ts=events[-1].ts + 1, termination="DRAW_AGREED",
                      winners=[], points=[3, 3, 3, 3])
    assert codes(events + [claim]) == ["junqi.E03"]


def test_timestamp_going_back() -> None:
    """T01 §11: an event stamped before its predecessor."""
    events = _bot()
    i = next(i for i, e in enumerate(events) if isinstance(e, Moved) and i > 10)
    planted = events[:i] + [replace(events[i], ts=events[i - 1].ts - 1)] + events[i + 1:]
    assert codes(planted, errors_only=True) == ["junqi.T01"]  # T03 also warns: the clock no longer fits


def test_move_time_over_the_limit() -> None:
    """T02 §12 `move_time_limit_s`: a move that used more than the limit."""
    events = _bot(move_time_limit_s=20)
    assert codes(events) == []
    i = next(i for i, e in enumerate(events) if isinstance(e, MoveTimeUsed))
    planted = events[:i] + [replace(events[i], ms=20_001)] + events[i + 1:]
    # The claim now also disagrees with the clock, which T03 reports as a warning.
    assert codes(planted) == ["junqi.T02", "junqi.T03"]


def test_move_time_disagreeing_with_the_clock_is_a_warning() -> None:
    """T03 (tournament.md §3): a move-time claim off the timestamp gap by more than 1 s warns;
    strict replay does not stop at a warning."""
    events = _bot()
    i = next(i for i, e in enumerate(events) if isinstance(e, MoveTimeUsed))
    planted = events[:i] + [replace(events[i], ms=events[i].ms + 1_001)] + events[i + 1:]  # type: ignore[attr-defined]
    steps = list(ENGINE.replay(planted, strict=True))
    found = [f for s in steps for f in s.findings]
    assert [(f.code, f.severity) for f in found] == [("junqi.T03", "warning")]


def test_event_after_the_end() -> None:
    """E01 §11: a timeout recorded after the game ended."""
    events = _bot()
    late = TimedOut(stream=events[0].stream, seq=0, ts=events[-2].ts, seat=0)
    assert codes(_renumber(events[:-1] + [late, events[-1]])) == ["junqi.E01"]


def test_draw_offer_before_the_allowed_step() -> None:
    """E03 §8.4 `draw_min_step`: an offer before the allowed step is not an offer."""
    events = scripted(["S12>S22", "offer:W"], draw_min_step=20)
    assert codes(events) == ["junqi.E03"]


def test_strict_replay_raises_at_the_first_finding() -> None:
    """§11 strict mode: StrictReplayError carries the first finding."""
    events = scripted(["S31>CSW"])
    with pytest.raises(StrictReplayError) as info:
        list(ENGINE.replay(events, strict=True))
    assert info.value.finding.code == "junqi.M10"
    assert str(info.value) == ("error junqi.M10 (第四条 五, 竞技四国军棋竞赛规则): cup-r1-t1-g1 seq 5: 座位0走 S31>CSW 不合法："
                               "从 S31 到 CSW 无路可走：S11、S21 挡住了铁路 illegal move S31>CSW by seat 0: "
                               "no route from S31 to CSW: S11, S21 blocks the railway")


def test_illegal_move_policy_skip_and_award_loss() -> None:
    """§12 `illegal_move_policy`: flag_and_skip passes the offender's turn; flag_and_award_loss ends the game."""
    skipped = _states(scripted(["S31>CSW", "W12>W22"], illegal_move_policy="flag_and_skip"))
    assert skipped[-1].to_move == 2 and skipped[-1].halted is None
    lost = _states(scripted(["S31>CSW"], illegal_move_policy="flag_and_award_loss"))[-1].outcome
    assert lost is not None and (lost.termination, lost.winners) == ("ILLEGAL_MOVE", (1, 3))


def test_events_roundtrip_through_the_codec() -> None:
    """The junqi events encode and decode unchanged (the event contract of schemas/junqi.py)."""
    for event in _bot()[:12]:
        assert schemas.decode(schemas.encode(event)) == event
    bad = b'{"kind":"junqi.moved","stream":"g","seq":1,"ts":1,"seat":0,"from":"S71","to":"S61"}'
    with pytest.raises(msgspec.ValidationError):
        schemas.decode(bad)


def test_game_summary_section_9() -> None:
    """§9: the per-game record: result, points, reason, steps, quiet, eliminations, time per seat."""
    events = _bot()
    summary = game_summary(ENGINE.replay(events))
    claim = events[-1]
    assert isinstance(claim, GameEnded)
    assert (summary["termination"], summary["winners"]) == (claim.termination, sorted(claim.winners))
    assert summary["time_used_ms"] == [sum(e.ms for e in events if isinstance(e, MoveTimeUsed) and e.seat == s) for s in range(4)]
    assert sum(summary["moves"]) == summary["plies"] == sum(isinstance(e, Moved) for e in events)
    assert summary["findings"] == 0


KNOWN_CODES = {f"junqi.{c}" for c in (
    "L01 L02 L03 L04 L05 L06 L07 L08 M01 M02 M03 M04 M05 M06 M07 M08 M09 M10 M11 T01 T02 T03 E01 E02 E03".split())}


@pytest.mark.parametrize("policy", ["flag_and_stop", "flag_and_skip", "flag_and_award_loss"])
def test_random_garbage_never_raises_in_collect_mode(policy: str) -> None:
    """§11: well-formed events that break rules are evidence: replay reports them and never raises."""
    seed = 606
    print(f"garbage seed={seed} policy={policy}")
    rng = random.Random(seed)
    base = ENGINE.bot_game(start(illegal_move_policy=policy), random.Random(rng.getrandbits(32)))
    for _ in range(30):
        events = list(base)
        for _ in range(rng.randint(1, 6)):
            at = rng.randint(1, len(events) - 1)
            frm, to = rng.sample(NAMES, 2)
            events.insert(at, Moved(stream=base[0].stream, seq=0, ts=events[at - 1].ts, seat=rng.randint(0, 3),
                                    from_=frm, to=to, result=rng.choice(["move", "win", "lose", "both", None])))
        steps = list(ENGINE.replay(_renumber(events)))
        assert {f.code for s in steps for f in s.findings} <= KNOWN_CODES
