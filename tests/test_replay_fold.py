"""The one fold driver (replay/fold.py): every game refused alike at a bad first event, strict
mode alike, and its visitors (totals, kept steps, the position, the live push) agreeing with each
other on the same games."""

from __future__ import annotations

import random

import msgspec
import pytest

from audit.simulator.simulate import game_start
from replay.fold import GameEnd, GameFold, fold_game
from replay.protocol import GameEngine, NoStartError, Step, StrictReplayError
from replay.registry import GAMES, SEATS, engine, engine_for, game_of
from replay.run import EveryStep, KeepSteps, ReplaySummary, Totals, position, replay_game
from schemas.common import GameStarted
from schemas.envelope import Event


def _game(game: str, seed: int) -> list[Event]:
    players = [f"p{s}" for s in range(SEATS[game])]
    return engine(game).bot_game(game_start(game, f"t/{game}-{seed}", players, 0, 1_764_000_000_000), random.Random(seed))


def _with_error(game: str, seed: int) -> tuple[list[Event], int]:
    """Returns a bot game with one move sent by the wrong seat, and that event's index."""
    events = _game(game, seed)
    i = next(n for n, e in enumerate(events) if n > 1 and e.seat is not None and ("moved" in e.kind or "discarded" in e.kind))
    wrong = (events[i].seat + 1) % len(events[0].seats)  # type: ignore[attr-defined, operator]
    return events[:i] + [msgspec.structs.replace(events[i], seat=wrong)] + events[i + 1:], i


@pytest.mark.parametrize("game", GAMES)
def test_every_game_refuses_a_bad_first_event_alike(game: str) -> None:
    """DESIGN replay/ (one fold driver): a replay that does not open with its game's game.started is
    NoStartError, with the same message for every game (no finding, no TypeError, no state)."""
    events = _game(game, 3)
    with pytest.raises(NoStartError, match=rf"^{game} 对局须以它的 game.started 开始 a {game} replay opens with its "
                                           rf"game.started, not {events[1].kind} \(t/{game}-3 seq 1\)$"):
        list(engine(game).replay(events[1:]))
    with pytest.raises(NoStartError, match=rf"^{game} .* not nothing$"):
        list(engine(game).replay([]))
    other = next(g for g in GAMES if g != game)
    with pytest.raises(NoStartError, match=rf"not a game.started of {other}$"):
        list(engine(game).replay(_game(other, 3)))
    with pytest.raises(NoStartError, match=r"^对局须以 game.started 开始 a game opens with game.started"):
        replay_game(events[1:])


@pytest.mark.parametrize("game", GAMES)
def test_strict_mode_is_the_drivers_for_every_game(game: str) -> None:
    """DESIGN replay/ (strict mode raises at the first finding): every game raises StrictReplayError
    carrying the first error finding of collect mode, through the engine and through the driver."""
    events, _ = _with_error(game, 5)
    collected = [f for s in engine(game).replay(events) for f in s.findings if f.severity == "error"]
    assert collected, f"the planted move of {game} gives no finding"
    with pytest.raises(StrictReplayError) as raised:
        list(engine(game).replay(events, strict=True))
    assert raised.value.finding == collected[0]
    with pytest.raises(StrictReplayError) as driven:
        replay_game(events, strict=True)
    assert driven.value.finding == collected[0]


@pytest.mark.parametrize("game", GAMES)
def test_visitors_of_one_driver_agree(game: str) -> None:
    """DESIGN replay/ (one driver, many visitors): totals, kept steps, every step and the position
    are told the same steps; findings carry the acting seat whichever visitor collects them."""
    events, i = _with_error(game, 7)
    kept = replay_game(events)
    summary = fold_game(events, Totals(ReplaySummary()))
    assert (summary.games, summary.events, summary.moves) == (1, len(kept.step_events), kept.moves)
    assert summary.findings == kept.findings
    assert any(f.seq == events[i].seq and f.seat == events[i].seat and f.player for f in kept.findings)
    steps = fold_game(events, EveryStep())
    assert [s.facts for s in steps] == kept.step_facts
    at = position(events, events[0].stream, i)
    assert (at.seq, at.kind) == (events[i].seq, events[i].kind)
    assert engine_for(events[0]) is at.engine and game_of(events[0]) == game  # type: ignore[arg-type]


@pytest.mark.parametrize("game", GAMES)
def test_pushed_fold_is_the_batch_fold(game: str) -> None:
    """The live audit's way (one event pushed, one step out) gives the batch's steps and result."""
    events, _ = _with_error(game, 9)
    batch = replay_game(events)
    kept = KeepSteps()
    fold = GameFold(events[0], kept)
    for event in events:
        fold.push(event)
    kept.end_game(fold.end())
    pushed = kept.result()
    assert (pushed.step_facts, pushed.findings, pushed.outcome, pushed.derived) == \
        (batch.step_facts, batch.findings, batch.outcome, batch.derived)


def test_a_visitor_is_told_begin_steps_end_in_order() -> None:
    """The visitor protocol: begin_game once with the start and engine, visit_step per event, end_game once."""
    events = _game("checkers", 11)
    calls: list[str] = []

    class Spy:
        def begin_game(self, start: GameStarted, game: str, eng: GameEngine) -> None:
            calls.append(f"begin {game} {start.seq}")

        def visit_step(self, step: Step) -> None:
            calls.append("step")

        def end_game(self, end: GameEnd) -> None:
            calls.append(f"end {end.derived.termination if end.derived else None}")

        def result(self) -> int:
            return len(calls)

    assert fold_game(events, Spy()) == len(events) + 2
    assert calls[0] == "begin checkers 0" and calls[1:-1] == ["step"] * len(events) and calls[-1].startswith("end ")


TERMINATIONS = {"junqi": "replay.junqi.codes", "paohuzi": "replay.paohuzi.codes", "checkers": "replay.checkers.codes"}


@pytest.mark.parametrize("game", GAMES)
def test_every_derived_termination_is_a_documented_member(game: str) -> None:
    """DESIGN replay/ (Outcome is a value with a reason): what an engine derives is a member of its
    game's Termination, each member documented in one line, none shadowing a shared one; the stored
    string is the member's value, so logs and goldens read as before."""
    import importlib

    from replay.values import SharedTermination

    members = importlib.import_module(TERMINATIONS[game]).Termination
    assert all(m.doc and "\n" not in m.doc and m.value == m.name for m in [*members, *SharedTermination])
    assert not {m.value for m in members} & {m.value for m in SharedTermination}
    for seed in range(12):
        derived = replay_game(_game(game, seed)).derived
        assert derived is not None and type(derived.termination) is members, (seed, derived)
        assert msgspec.json.encode(derived).decode().startswith(f'{{"termination":"{str(derived.termination)}"')


@pytest.mark.parametrize("game", GAMES)
def test_severity_is_the_catalogues(game: str) -> None:
    """DESIGN replay/ (finding codes are a catalogue beside each engine): every finding a fold
    reports has the severity its game's catalogue gives the code, and no fold restates one."""
    from pathlib import Path

    from audit.presentation.codes import CODES

    events, _ = _with_error(game, 13)
    late = [msgspec.structs.replace(e, ts=events[0].ts - 1) for e in events[2:4]]  # timestamps that go back
    findings = replay_game(events[:2] + late + events[4:]).findings
    assert findings and {f.severity for f in findings} <= {"error", "warning"}
    assert all(f.severity == CODES[f.code].severity for f in findings)
    source = (Path(__file__).resolve().parents[1] / "replay" / game / "fold.py").read_text(encoding="utf-8")
    assert "severity=" not in source


def test_the_engine_a_start_names_is_read_in_one_place() -> None:
    """Issue 29 Build 4 (the engine is chosen once): only replay/registry.py reads which game a
    start's profile names; replay, projection, report, rulings and the live audit ask it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readers = sorted(str(path.relative_to(root)) for folder in ("replay", "audit", "ledger", "bench")
                     for path in (root / folder).rglob("*.py")
                     if "profile.__struct_config__" in path.read_text(encoding="utf-8"))
    assert readers == ["replay/registry.py"]


HANDLER_FOLDS = {"checkers": ("replay.checkers.fold", "Clock"), "junqi": ("replay.junqi.fold", "Audit"),
                 "paohuzi": ("replay.paohuzi.fold", "_Fold")}
"""The folds whose rules are handler tables: every game's."""


@pytest.mark.parametrize("game", sorted(HANDLER_FOLDS))
def test_one_handler_shape_and_one_way_to_report(game: str) -> None:
    """Issue 29 Build 4 (one handler shape, one way to report a finding): every handler of a table
    fold is `(state, event, fold, facts) -> state` (replay.fold.Handler) and returns a state, never
    findings; its fold context reports through `find(event, code, message, article)`
    (replay.fold.Findings), with the full code and the catalogue's severity."""
    import importlib
    import inspect

    from audit.presentation.codes import CODES
    from replay.fold import Findings

    module_name, context = HANDLER_FOLDS[game]
    module = importlib.import_module(module_name)
    for kind, handler in module._HANDLERS.items():
        assert len(inspect.signature(handler).parameters) == 4, (kind, handler)
    assert list(inspect.signature(getattr(module, context).find).parameters) == \
        list(inspect.signature(Findings.find).parameters) == ["self", "event", "code", "message", "article"]
    events, i = _with_error(game, 17)
    steps = list(engine(game).replay(events))
    assert all(type(s.state).__name__ != "tuple" and isinstance(s.facts, dict) for s in steps)
    (wrong,) = [f for f in steps[i].findings if f.severity == "error"][:1]
    assert wrong.code.startswith(f"{game}.") and wrong.code.count(".") == 1 and wrong.code in CODES
    assert wrong.severity == CODES[wrong.code].severity and wrong.article
    assert all(step.findings == () for step in steps[:i]) and not any(f.code.count(".") > 1 for s in steps for f in s.findings)
    if game == "paohuzi":  # its handlers leave `facts` alone: the step's facts are built after them
        assert module._NO_FACTS == {} and all(s.facts is not module._NO_FACTS for s in steps)


def test_a_checkers_turns_findings_name_the_position_after_it() -> None:
    """checkers.md (a turn's finding shows the position after it): a finding reported through the
    Clock at a move is tied to the position after the turn, one at another event is not, and a
    message that names a position already (an illegal move's) is left as it is."""
    from replay.checkers.state import describe

    events, i = _with_error("checkers", 19)
    j = next(n for n, e in enumerate(events) if n > i + 2 and e.kind == "checkers.moved")
    k = next(n for n, e in enumerate(events) if n > i + 2 and e.seat is not None and e.kind != "checkers.moved")
    for n in (j, k):
        events[n] = msgspec.structs.replace(events[n], ts=events[0].ts - 1)  # a timestamp that goes back: W_CLOCK
    steps = list(engine("checkers").replay(events))
    illegal = [f for f in steps[i].findings if f.severity == "error"]
    assert illegal and all(f.message.count("position") == 1 for f in illegal)
    (at_move,) = [f for f in steps[j].findings if f.code == "checkers.T05"]
    assert at_move.message.startswith(f"时间戳 {events[0].ts - 1} 早于上一事件的 ")
    assert f"timestamp {events[0].ts - 1} is before the previous event's " in at_move.message
    assert at_move.message.endswith(f"；此后局面 position after it {describe(steps[j].state)}")
    (elsewhere,) = [f for f in steps[k].findings if f.code == "checkers.T05"]
    assert "position" not in elsewhere.message, events[k].kind


@pytest.mark.parametrize("game", GAMES)
def test_projection_rows_are_a_visitor_of_the_driver(game: str) -> None:
    """Issue 29 Build 4 (the projection's rows are a visitor of the one driver): the rows a fold
    writes through `_GameRows.visitor` are those `_GameRows.add` writes from the same game kept
    step by step, the live audit's way (games, seats, findings with their entries, steps)."""
    from array import array

    from audit.query.projection import _GameRows

    events, _ = _with_error(game, 23)
    entries = array("q", range(100, 100 + len(events)))
    visited, added = _GameRows(), _GameRows()
    fold_game(events, visited.visitor(entries))
    added.add(replay_game(events), entries)
    assert visited.findings == added.findings and visited.findings
    tables = visited.tables()
    for name, table in added.tables().items():
        assert table.num_rows and tables[name].equals(table), name
