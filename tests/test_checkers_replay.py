"""Replay of whole checkers games: the shared engine contract, a golden playthrough, simulated
games that replay clean, and planted illegal events that each give exactly the expected finding."""

from __future__ import annotations

import os
import random
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

import schemas
from replay.checkers import ENGINE
from replay.checkers.board import BIT, NEIGHBOUR_MASK, ids
from replay.protocol import Outcome, StrictReplayError
from schemas.checkers import Moved
from schemas.common import GameEnded
from schemas.envelope import Event
from tests.checkers_support import codes, final, resequenced, start
from tests.engine_contract import check_engine

DATA = Path(__file__).parent / "data" / "checkers"
GAMES = int(os.environ.get("MATCHLEDGER_GAMES", "200"))
GOLDEN_SEED = 3


def test_engine_contract_default_profile() -> None:
    """The shared contract (tests/engine_contract.py) under the default profile of §13."""
    check_engine(ENGINE, start(), seed=20261129)


def test_engine_contract_variant_profile() -> None:
    """The shared contract with south moving first and the non-default move and result options."""
    check_engine(ENGINE, start(first=1, hop_mode="equidistant", side_triangles="pass_through_only",
                               goal_lock="within_chain", margin_model="own_moves", stage="final"), seed=4242)


def _transcript(events: list[Event]) -> str:
    lines = []
    for step in ENGINE.replay(events):
        facts = " ".join(f"{k}={v}" for k, v in step.facts.items())
        found = "".join(f" !{f.code}" for f in step.findings)
        lines.append(f"{step.event.seq} {step.event.kind} {facts}{found}")  # type: ignore[attr-defined]
    return "\n".join(lines) + "\n" + ENGINE.render_text(step.state) + "\n"


def test_golden_playthrough(regen_golden: bool) -> None:
    """A fixed-seed bot game: its events, facts and outcome match the stored files (regenerate
    with MATCHLEDGER_REGEN_GOLDEN=1 after a deliberate rule change)."""
    events = ENGINE.bot_game(start(), random.Random(GOLDEN_SEED))
    encoded = b"".join(schemas.encode(e) + b"\n" for e in events)
    transcript = _transcript(events)
    event_file = DATA / f"golden-seed-{GOLDEN_SEED}.jsonl"
    facts_file = DATA / f"golden-seed-{GOLDEN_SEED}.txt"
    outcome_file = DATA / f"golden-seed-{GOLDEN_SEED}.outcome.json"
    outcome = ENGINE.outcome(final(list(ENGINE.replay(events))))
    if regen_golden:
        event_file.write_bytes(encoded)
        facts_file.write_text(transcript)
        outcome_file.write_bytes(msgspec.json.format(msgspec.json.encode(outcome)) + b"\n")
    assert event_file.read_bytes() == encoded
    assert facts_file.read_text() == transcript
    stored = [schemas.decode(line) for line in event_file.read_bytes().splitlines()]
    assert msgspec.json.decode(outcome_file.read_bytes(), type=Outcome) == ENGINE.outcome(final(list(ENGINE.replay(stored))))


def test_simulated_games_replay_clean() -> None:
    """Bot games (MATCHLEDGER_GAMES of them) replay with no finding at all, and every claim holds."""
    seed = 777
    print(f"checkers simulated games seed={seed} games={GAMES}")
    rng = random.Random(seed)
    ends = set()
    for _ in range(GAMES):
        events = ENGINE.bot_game(start(first=rng.randrange(2)), random.Random(rng.getrandbits(64)))
        steps = list(ENGINE.replay(events, strict=True))
        assert codes(steps) == []
        outcome = final(steps).outcome
        assert outcome is not None
        ends.add(outcome.termination)
    assert "ALL_HOME" in ends


def _bot_events(seed: int = 5) -> list[Event]:
    return ENGINE.bot_game(start(), random.Random(seed))


def _first(events: list[Event], test: object) -> int:
    return next(i for i, e in enumerate(events) if test(e))  # type: ignore[operator]


def _state_before(events: list[Event], index: int) -> object:
    return final(list(ENGINE.replay(events[:index])))


def _plant_occupied(events: list[Event]) -> list[Event]:
    """A step into a hole that holds a piece."""
    i = _first(events, lambda e: isinstance(e, Moved) and e.path is None and e.seq > 20)
    ev = events[i]
    assert isinstance(ev, Moved)
    s = _state_before(events, i)
    occupied = s.pieces[0] | s.pieces[1]  # type: ignore[attr-defined]
    to = next(n for n in ids(NEIGHBOUR_MASK[ev.from_]) if occupied & BIT[n])
    return [*events[:i], replace(ev, to=to), *events[i + 1:]]


def _plant_broken_chain(events: list[Event]) -> list[Event]:
    """A hop chain whose witness path skips a landing (the endpoint itself is reachable)."""
    i = _first(events, lambda e: isinstance(e, Moved) and e.path is not None and len(e.path) >= 3)
    ev = events[i]
    assert isinstance(ev, Moved) and ev.path is not None
    return [*events[:i], replace(ev, path=(ev.path[0], *ev.path[2:])), *events[i + 1:]]


def _plant_out_of_turn(events: list[Event]) -> list[Event]:
    """A second move by the seat that just moved."""
    i = _first(events, lambda e: isinstance(e, Moved) and e.seq > 10)
    ev = events[i]
    assert isinstance(ev, Moved)
    s = final(list(ENGINE.replay(events[: i + 1])))
    own = s.pieces[ev.seat]
    frm = ids(own)[0]
    to = next(n for n in ids(NEIGHBOUR_MASK[frm]) if not (s.pieces[0] | s.pieces[1]) & BIT[n]) if any(
        not (s.pieces[0] | s.pieces[1]) & BIT[n] for n in ids(NEIGHBOUR_MASK[frm])) else frm
    return [*events[: i + 1], replace(ev, from_=frm, to=to, path=None), *events[i + 1:]]


def _plant_after_end(events: list[Event]) -> list[Event]:
    """A move between the game's last turn and its claim."""
    s = final(list(ENGINE.replay(events)))
    assert s.outcome is not None
    seat = 1 - s.outcome.winners[0] if s.outcome.winners else 0
    frm = ids(s.pieces[seat])[0]
    extra = Moved(stream=events[0].stream, seq=0, ts=events[-1].ts, seat=seat, from_=frm, to=frm ^ 1)
    return [*events[:-1], extra, events[-1]]


def _plant_false_claim(events: list[Event]) -> list[Event]:
    """A claim whose termination is not the derived one."""
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    return [*events[:-1], replace(ended, termination="REPETITION")]


@pytest.mark.parametrize(
    ("plant", "expected"),
    [
        (_plant_occupied, ["checkers.M03"]),
        (_plant_broken_chain, ["checkers.M08"]),
        (_plant_out_of_turn, ["checkers.M01"]),
        (_plant_after_end, ["checkers.E05"]),
        (_plant_false_claim, ["checkers.E01"]),
    ],
    ids=["step-into-occupied-hole", "broken-hop-chain", "move-out-of-turn", "move-after-end", "false-claim"],
)
def test_planted_illegal_event_gives_exactly_its_finding(plant: object, expected: list[str]) -> None:
    """§4.7, §8 and the claim check: one planted event, exactly one finding with its code."""
    events = resequenced(plant(_bot_events()))  # type: ignore[operator]
    steps = list(ENGINE.replay(events))
    assert codes(steps) == expected


def test_strict_replay_raises_at_the_first_error() -> None:
    """DESIGN replay/: strict mode raises StrictReplayError at the first error finding."""
    events = resequenced(_plant_occupied(_bot_events()))
    # its checkers.md name too
    line = r"^error checkers.M03 \(E_OCCUPIED\) \(第一条, 传统1v1跳棋竞赛规则\(2017\)\): \S+ seq \d+: 座位\d走 .* seat \d moved"
    with pytest.raises(StrictReplayError, match=line):
        list(ENGINE.replay(events, strict=True))


def test_log_ending_at_the_first_movers_arrival_is_settled_by_search() -> None:
    """§5.2 `equalizer_source = log_then_search` (§5.5 third example): the log ends at F's arrival,
    so the replay searches G's moves for an equalising arrival at the claim."""
    for seed in range(40):
        events = ENGINE.bot_game(start(), random.Random(seed))
        steps = list(ENGINE.replay(events))
        state = final(steps)
        assert state.outcome is not None
        if state.outcome.termination == "ALL_HOME" and state.outcome.winners == (0,):
            break
    print(f"checkers equaliser seed={seed}")
    cut = [*events[:-3], events[-1]]  # drop G's last turn and its move_time; keep the claim
    steps = list(ENGINE.replay(resequenced(cut)))
    assert steps[-1].facts["equalizer"] == "computed"
    outcome = final(steps).outcome
    assert codes(steps) == [] and outcome is not None and outcome.winners == (0,)
