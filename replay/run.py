"""Replays the games of a stream of events: groups them by stream and folds each game with its engine."""

from __future__ import annotations

import gc
import operator
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from replay.fold import GameEnd, RulingCheck, fold_game
from replay.protocol import Finding, GameEngine, Outcome, Step
from replay.registry import engine
from schemas.common import GameStarted
from schemas.envelope import Event


@dataclass
class GameReplay:
    """One game replayed: its start, every step's event and facts, the derived outcome and the findings."""

    stream: str
    game: str
    start: GameStarted
    step_events: list[Event]
    step_facts: list[dict[str, Any]]
    """The facts the engine derived at each step, beside the step's event."""
    outcome: Outcome | None
    findings: list[Finding]
    final_state: Any
    events: list[Event]
    derived: Outcome | None = None
    """The result of play as the engine derived it, before any ruling (`outcome` is after them)."""
    rulings: list[dict[str, Any]] = field(default_factory=list)
    """What each result-changing ruling did, in log order (replay/rulings.py)."""

    @property
    def facts(self) -> list[dict[str, Any]]:
        """Every step's facts with its event's seq, kind and ts, one record per step."""
        return [{"seq": e.seq, "kind": e.kind, "ts": e.ts, **f} for e, f in zip(self.step_events, self.step_facts)]

    @property
    def moves(self) -> int:
        """Counts the events that were actions of the game (facts with an `action`)."""
        return sum(1 for f in self.step_facts if f.get("action") is not None)


@dataclass
class ReplaySummary:
    """Totals of a replay run, as `matchledger replay` prints them."""

    games: int = 0
    events: int = 0
    moves: int = 0
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


_seq = operator.attrgetter("seq")


def group_streams(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Returns each stream's events in sequence order."""
    streams: dict[str, list[Event]] = {}
    for event in events:
        streams.setdefault(event.stream, []).append(event)
    for items in streams.values():
        items.sort(key=_seq)
    return streams


def is_game_stream(events: list[Event]) -> bool:
    """Tells whether a stream is a game: it opens with `game.started`."""
    return bool(events) and isinstance(events[0], GameStarted)


def replay_game(events: list[Event], strict: bool = False, rulings: RulingCheck | None = None) -> GameReplay:
    """Folds one game's events with the engine its start event names, keeping every step (the
    rulings `rulings` sets aside changing nothing: replay/fold.py).

    :raises NoStartError: when the first event is not a `game.started` of a registered game.
    :raises StrictReplayError: in strict mode, at the first finding.
    """
    return fold_game(events, KeepSteps(), strict, rulings)


class KeepSteps:
    """The visitor that keeps a game step by step (`GameReplay`): the projection's rows, the report, the live audit."""

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        self.start, self.game = start, game
        self.step_events: list[Event] = []
        self.step_facts: list[dict[str, Any]] = []
        self.findings: list[Finding] = []
        self.end: GameEnd | None = None

    def visit_step(self, step: Step) -> None:
        self.step_events.append(step.event)
        self.step_facts.append(step.facts)
        if step.findings:
            self.findings.extend(step.findings)

    def end_game(self, end: GameEnd) -> None:
        self.end = end

    def result(self) -> GameReplay:
        end = self.end
        assert end is not None
        return GameReplay(self.start.stream, self.game, self.start, self.step_events, self.step_facts, end.ruled,
                          self.findings + end.unusable, end.state, self.step_events, end.derived, end.rulings)


def game_streams(events: Iterable[Event], game: str | None = None) -> list[list[Event]]:
    """Returns the events of every game stream (or only of `game`), in stream order."""
    return [items for stream, items in sorted(group_streams(events).items())
            if (game is None or stream == game) and is_game_stream(items)]


def replay_all(events: Iterable[Event], game: str | None = None, strict: bool = False) -> Iterator[GameReplay]:
    """Replays every game stream (or only `game`), in stream order, keeping each step."""
    for items in game_streams(events, game):
        yield replay_game(items, strict)


def summarise(events: Iterable[Event], game: str | None = None, strict: bool = False,
              on_game: Callable[[int], None] | None = None, rulings: Callable[[str], RulingCheck] | None = None) -> ReplaySummary:
    """Replays every game stream (or only `game`) and adds up games, events, moves (steps whose facts
    name an `action`) and findings, timing the work (and telling `on_game` of each game): what
    `matchledger replay` prints. Only the totals are kept, not each step as `replay_game` keeps them
    for the projection."""
    return summarise_streams(game_streams(events, game), strict, on_game, rulings)


def summarise_streams(streams: Iterable[list[Event]], strict: bool = False,
                      on_game: Callable[[int], None] | None = None,
                      rulings: Callable[[str], RulingCheck] | None = None) -> ReplaySummary:
    """As `summarise`, over streams given one at a time, in any order (each stream's events; those
    that are no game are passed over), each dropped once folded: memory follows one game, not the
    log (issue 32.1). The findings come in stream order, whatever order the streams came in.
    `rulings` gives each game stream's ruling check (replay/fold.py)."""
    summary = ReplaySummary()
    t0 = time.perf_counter()
    found: list[tuple[str, list[Finding]]] = []
    totals = Totals(summary, on_game)
    with gc_paused():
        for items in streams:
            items.sort(key=_seq)
            if not is_game_stream(items):
                continue
            before = len(summary.findings)
            fold_game(items, totals, strict, rulings(items[0].stream) if rulings is not None else None)
            if len(summary.findings) > before:
                found.append((items[0].stream, summary.findings[before:]))
                del summary.findings[before:]
    found.sort(key=operator.itemgetter(0))
    summary.findings = [finding for _, findings in found for finding in findings]
    summary.seconds = time.perf_counter() - t0
    return summary


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pauses the cyclic garbage collector for the duration (as it was before, after): reading and
    replaying make many containers and no cycles (the replay of 200 games of each game leaves nothing
    for `gc.collect()`), so its passes over them are pure cost, 2-3 % of `matchledger replay`.
    Reference counting still frees everything as it goes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Totals:
    """The visitor that adds each game to a replay's totals (games, events, moves, findings), keeping no step."""

    def __init__(self, summary: ReplaySummary, on_game: Callable[[int], None] | None = None) -> None:
        self.summary = summary
        self.on_game = on_game

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        self.steps = self.moves = 0

    def visit_step(self, step: Step) -> None:
        self.steps += 1
        if step.facts.get("action") is not None:
            self.moves += 1
        if step.findings:
            self.summary.findings.extend(step.findings)

    def end_game(self, end: GameEnd) -> None:
        summary = self.summary
        summary.findings.extend(end.unusable)  # a ruling that cannot apply is a finding too
        if self.on_game is not None:
            self.on_game(1)
        summary.games += 1
        summary.events += self.steps
        summary.moves += self.moves

    def result(self) -> ReplaySummary:
        return self.summary


@dataclass
class Position:
    """A game's state after one of its events, with the engine that draws it."""

    engine: Any
    state: Any
    seq: int
    kind: str
    players: tuple[str, ...] = ()
    """Who holds each seat, for the pictures' legend."""


def position(events: Iterable[Event], stream: str, seq: int | None = None, rulings: RulingCheck | None = None) -> Position:
    """Returns the position of a game after event `seq` (the last event by default), the rulings
    `rulings` sets aside changing nothing.

    :raises ValueError: when there is no such game or event.
    """
    items = [e for e in events if e.stream == stream]
    if not is_game_stream(items):
        raise ValueError(f"no game stream {stream!r} (a game opens with game.started)")
    if seq is not None and not 0 <= seq < len(items):
        raise ValueError(f"game {stream!r} has events 0–{len(items) - 1}, not {seq}")
    return fold_game(items[: len(items) if seq is None else seq + 1], LastStep(), rulings=rulings)


class LastStep:
    """The visitor that keeps only the position after the last step folded."""

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        self.engine = engine
        self.players = tuple(h.holder for h in sorted(start.seats, key=lambda h: h.seat))
        self.last: Step | None = None

    def visit_step(self, step: Step) -> None:
        self.last = step

    def end_game(self, end: GameEnd) -> None:
        pass

    def result(self) -> Position:
        last = self.last
        assert last is not None
        return Position(self.engine, last.state, last.event.seq, last.event.kind, self.players)


class EveryStep:
    """The visitor that keeps every step, state and all (the arbitration report draws the board at each)."""

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        self.steps: list[Step] = []

    def visit_step(self, step: Step) -> None:
        self.steps.append(step)

    def end_game(self, end: GameEnd) -> None:
        pass

    def result(self) -> list[Step]:
        return self.steps


def perft(game: str, depth: int, setup: str | None = None) -> list[int]:
    """Counts move endpoints per depth from the initial position or a game-specific setup."""
    return engine(game).perft(depth, setup)  # type: ignore[attr-defined, no-any-return]


def perft_divide(game: str, depth: int, setup: str | None = None) -> list[tuple[str, int]]:
    """Returns each first move with the count of move sequences of length `depth` below it."""
    return engine(game).perft_divide(depth, setup)  # type: ignore[attr-defined, no-any-return]
