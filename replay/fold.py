"""One driver for every fold of a game's events (DESIGN.md replay/), as python-chess's pgn reader
serves its visitors: it checks the start, picks the engine once, walks the events through the
engine's fold and tells a `Visitor` of the start, of each step (its findings tied to the acting
seat) and of the end. Replay totals, a game kept step by step, the position at a step and the live
audit are visitors of it (replay/run.py, audit/live/auditor.py).

Each game's fold (`steps(start, events)` in replay/<game>/fold.py) yields one `Step` per event in
collect mode; `checked_steps` gives all three the same refusal of a bad first event and the same
strict mode, so no engine tells them apart. Inside a fold, an event's rule is a `Handler` and a
finding is reported one way, `Findings.find`: the handler never returns or raises a finding.

A referee's `game.ruling` acts during play (an authorised skip, a result override) and after it
(replay/rulings.py) only when it counts, and whether it counts is a question of signatures the
replay cannot answer (it knows no keys and no stored bytes). Whoever reads the log says so with a
`RulingCheck` (audit/query/arbitration.py). The engine sees a ruling set aside as one that changes
nothing (a penalty card without points), so its envelope (seq, time) is checked as any event's, and
the step says the ruling and why it was set aside; the rulings applied after play leave it out. A
fold given no check is an engine test's, whose caller vouches for its rulings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from replay.protocol import Finding, GameEngine, NoStartError, Outcome, Place, Step, StrictReplayError
from replay.registry import engine_for, game_of
from replay.rulings import apply_rulings
from schemas.common import GameStarted, Ruling, ruling_kind
from schemas.envelope import Event
from schemas.profiles import Profile

R = TypeVar("R", covariant=True)
S = TypeVar("S")
F = TypeVar("F", contravariant=True)
Facts = dict[str, Any]
"""A step's derived facts, by name (DESIGN.md replay/)."""
GameSteps = Callable[[GameStarted, Iterator[Event]], Iterator[Step]]
"""A game's fold in collect mode: the checked start, then the rest of its events, to one step each (the start's first)."""
RulingCheck = Callable[[Ruling], str | None]
"""Why a game's `game.ruling` does not count (its signature status, e.g. `unsigned`), or None when it does."""


class Findings(Protocol):
    """The one way a fold reports a finding: its running context (Junqi's `Audit`, checkers' `Clock`)
    records it with `find`, through `replay.protocol.found` (severity from the game's catalogue),
    and the fold gives the event's step what was found, in the order found."""

    def find(self, event: Place, code: str, message: str, article: str | None = None) -> None:
        """Records the finding of `code` (the full code, `junqi.M02`) at `event`."""


class Handler(Protocol[S, F]):
    """The one shape of an event's rule in every fold: `(state, event, fold, facts) -> state`. It
    returns the state after the event, adds its facts to `facts` (the seat and action are in
    already) and reports findings through `fold.find` (`Findings`); `fold` is the game's running
    context beside the state (clock, owed reveals). Paohuzi's handlers leave `facts` alone and put
    their own on the fold, which builds the step's facts at once after them (replay/paohuzi/fold.py
    says why)."""

    def __call__(self, state: S, event: Any, fold: F, facts: Facts, /) -> S: ...


def opening(events: Iterator[Event], game: str, profile_type: type[Profile]) -> GameStarted:
    """Returns the first event when it is a `game.started` of `game`.

    :raises NoStartError: when it is none, another kind or another game's start.
    """
    start = next(events, None)
    if isinstance(start, GameStarted) and isinstance(start.profile, profile_type):
        return start
    if start is None:
        got = "nothing"
    elif isinstance(start, GameStarted):
        got = f"a game.started of {game_of(start)}"
    else:
        got = f"{start.kind} ({start.stream} seq {start.seq})"  # type: ignore[attr-defined]
    raise NoStartError(f"{game} 对局须以它的 game.started 开始 a {game} replay opens with its game.started, not {got}")


def checked_steps(game: str, profile_type: type[Profile], fold: GameSteps, events: Iterable[Event],
                  strict: bool = False) -> Iterator[Step]:
    """Folds a game's events with `fold` after checking its start; strict mode raises at the first
    error finding, collect mode yields every step with its findings.

    :raises NoStartError: when the first event is not this game's `game.started`.
    :raises StrictReplayError: in strict mode, at the first error finding.
    """
    it = iter(events)  # read when the first step is asked for: a pushed fold has no event before that
    start = opening(it, game, profile_type)
    yield from _strict(fold(start, it)) if strict else fold(start, it)


def _strict(steps: Iterator[Step]) -> Iterator[Step]:
    for step in steps:
        for finding in step.findings:
            if finding.severity == "error":
                raise StrictReplayError(finding)
        yield step


@dataclass
class GameEnd:
    """A game as far as it was folded: the last state, the outcome derived from play, the outcome
    after the referee's rulings, what each ruling did and the findings of rulings that cannot apply."""

    state: Any
    derived: Outcome | None
    ruled: Outcome | None
    rulings: list[dict[str, Any]] = field(default_factory=list)
    unusable: list[Finding] = field(default_factory=list)


class Visitor(Protocol[R]):
    """What a consumer of a fold is told: the start and engine, each step, the end; then asked for its result."""

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        """Is told the game's start and the engine that folds it, before any step."""

    def visit_step(self, step: Step) -> None:
        """Is told each step in order, the start's first, its findings tied to the acting seat."""

    def end_game(self, end: GameEnd) -> None:
        """Is told the end of the fold (all the events given, or as far as a live game has come)."""

    def result(self) -> R:
        """Returns what the visitor built."""


class FoldReadAhead(RuntimeError):
    """An engine's fold asked for an event before the one pushed was folded: it cannot run live."""


class Inbox:
    """The iterator a pushed fold reads: it holds the one event pushed before each pull, and counts the pulls."""

    __slots__ = ("event", "pulls")

    def __init__(self) -> None:
        self.event: Event | None = None
        self.pulls = 0

    def __iter__(self) -> Inbox:
        return self

    def __next__(self) -> Event:
        event, self.event = self.event, None
        if event is None:
            raise FoldReadAhead("the fold asked for an event that has not arrived")
        self.pulls += 1
        return event


class GameFold(Generic[R]):
    """The driver: one game's events through the engine its start names, told to a visitor. `run`
    folds a whole list; `push` folds one event as it arrives (the live audit), through an inbox the
    engine's fold reads without reading ahead.

    :raises NoStartError: when `start` is not a `game.started` of a registered game.
    """

    def __init__(self, start: Event, visitor: Visitor[R], strict: bool = False, rulings: RulingCheck | None = None) -> None:
        if not isinstance(start, GameStarted):
            raise NoStartError(f"对局须以 game.started 开始 a game opens with game.started, not {start.kind} "  # type: ignore[attr-defined]
                               f"({start.stream} seq {start.seq})")
        self.start = start
        self.game = game_of(start)
        self.engine = engine_for(start)
        self.visitor = visitor
        self.strict = strict
        self.players = {h.seat: h.holder for h in start.seats}
        self.rulings = rulings
        self.events: list[Event] = []
        """The events folded, in order (a ruling set aside is not among them)."""
        self.state: Any = None
        self.inbox = Inbox()
        self.steps: Iterator[Step] | None = None
        """The engine's steps over the inbox, once an event was pushed."""
        visitor.begin_game(start, self.game, self.engine)

    def run(self, events: list[Event]) -> R:
        """Folds `events` (the start first) and ends the game; returns the visitor's result.

        :raises StrictReplayError: in strict mode, at the first error finding.
        """
        aside: dict[int, tuple[Ruling, str]] = {}
        if self.rulings is not None and Ruling in map(type, events):  # rare: a game a referee ruled in
            events = list(events)
            for at, event in enumerate(events):
                if type(event) is Ruling and (why := self.rulings(event)) is not None:
                    aside[at] = (event, why)
                    events[at] = _inert(event)
        self.events = [e for at, e in enumerate(events) if at not in aside] if aside else events
        visit, players = self.visitor.visit_step, self.players
        state = None
        for at, step in enumerate(self.engine.replay(events, strict=self.strict)):
            if step.findings:
                step = _with_seats(step, players)
            if aside and at in aside:
                step = _set_aside(step, *aside[at])
            visit(step)
            state = step.state
        self.state = state
        self.visitor.end_game(self.end())
        return self.visitor.result()

    def push(self, event: Event) -> Step:
        """Folds one more event of the game and tells the visitor of its step; returns the step.

        :raises FoldReadAhead: when the engine's fold reads ahead of the events pushed.
        """
        if self.steps is None:
            self.steps = self.engine.replay(self.inbox, strict=self.strict)
            if event is not self.start:  # the fold opens with the start, whether or not it is pushed
                self._pull(self.start)
        return self._pull(event)

    def _pull(self, event: Event) -> Step:
        why = self.rulings(event) if type(event) is Ruling and self.rulings is not None else None
        self.inbox.event = event if why is None else _inert(event)  # type: ignore[arg-type]
        assert self.steps is not None
        step = next(self.steps)
        if step.findings:
            step = _with_seats(step, self.players)
        if why is None:
            self.events.append(event)
        else:
            step = _set_aside(step, event, why)  # type: ignore[arg-type]
        self.state = step.state
        self.visitor.visit_step(step)
        return step

    def end(self) -> GameEnd:
        """Returns the game as far as it was folded, its rulings applied (replay/rulings.py)."""
        derived = self.engine.outcome(self.state)
        ruled, applied, unusable = apply_rulings(self.start, derived, self.events)
        return GameEnd(self.state, derived, ruled, applied, unusable)


def fold_game(events: list[Event], visitor: Visitor[R], strict: bool = False, rulings: RulingCheck | None = None) -> R:
    """Folds one game's events (its `game.started` first) for a visitor, the rulings that `rulings`
    sets aside changing nothing; returns the visitor's result.

    :raises NoStartError: when the first event is not a `game.started` of a registered game.
    :raises StrictReplayError: in strict mode, at the first error finding.
    """
    if not events:
        raise NoStartError("对局须以 game.started 开始 a game opens with game.started, not nothing")
    return GameFold(events[0], visitor, strict, rulings).run(events)


def _inert(ruling: Ruling) -> Ruling:
    """The ruling as the engine sees it when it does not count: a card without points, which no
    engine acts on during play and which changes no result after it."""
    return msgspec.structs.replace(ruling, ruling="penalty", seat=None, winners=None, termination=None, points=None)


def _set_aside(step: Step, ruling: Ruling, why: str) -> Step:
    """The step of a ruling that does not count: the engine's (its state unchanged, the envelope's
    findings) with the ruling as recorded and, in its facts, its kind and why it was set aside
    (audit.A06 is the audit's finding about it)."""
    return msgspec.structs.replace(step, event=ruling, facts={**step.facts, "ruling": ruling_kind(ruling), "set_aside": why})


def _with_seats(step: Step, players: dict[int, str]) -> Step:
    seat = step.event.seat
    return msgspec.structs.replace(step, findings=tuple(with_seat(f, seat, players) for f in step.findings))


def with_seat(finding: Finding, seat: int | None, players: dict[int, str]) -> Finding:
    """Returns a finding tied to the seat that acted in its event and the player holding it."""
    if finding.seat is not None or seat is None:
        return finding
    return msgspec.structs.replace(finding, seat=seat, player=players.get(seat))
