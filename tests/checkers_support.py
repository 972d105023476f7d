"""Helpers shared by the checkers tests: start events, scripted games and finding codes."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from replay.checkers.board import parse_hole
from replay.checkers.state import CheckersState
from replay.protocol import Step
from schemas.checkers import CheckersProfile, Moved
from schemas.common import GameEnded, GameStarted, MoveTimeUsed, Skipped, TimedOut
from schemas.envelope import Event, SeatHolder

STREAM = "t1-r1-t1-g1"
T0 = 1_767_225_600_000


def start(first: int = 0, **profile: Any) -> GameStarted:
    """Returns a `game.started` of a checkers game with the given profile settings."""
    return GameStarted(stream=STREAM, seq=0, ts=T0, profile=CheckersProfile(**profile),
                       seats=[SeatHolder(seat=0, player="north"), SeatHolder(seat=1, player="south")], first=first)


def scripted(begin: GameStarted, turns: list[str], gap_ms: int = 3000) -> list[Event]:
    """Builds a game from turn notations: `3>14` a move (holes as ids or row-col; `a>b>c` with its
    hop path), `T` a timeout, `P` a 略过; each turn is followed by its `game.move_time`, and the
    seat is whoever's turn it is in alternation from the first mover."""
    events: list[Event] = [begin]
    seat, ts = begin.first, begin.ts
    for text in turns:
        ts += gap_ms
        seq = len(events)
        if text == "T":
            events.append(TimedOut(stream=STREAM, seq=seq, ts=ts, seat=seat))
        elif text == "P":
            events.append(Skipped(stream=STREAM, seq=seq, ts=ts, seat=seat))
        else:
            holes = tuple(parse_hole(h) for h in text.split(">"))
            path = holes if len(holes) > 2 else None
            events.append(Moved(stream=STREAM, seq=seq, ts=ts, seat=seat, from_=holes[0], to=holes[-1], path=path))
        events.append(MoveTimeUsed(stream=STREAM, seq=len(events), ts=ts, seat=seat, ms=gap_ms, move_seq=seq))
        seat = 1 - seat
    return events


def claim(events: list[Event], termination: str, winners: list[int], points: list[float]) -> list[Event]:
    """Returns the events with a `game.ended` claim appended."""
    last = events[-1]
    return [*events, GameEnded(stream=STREAM, seq=len(events), ts=last.ts + 1, termination=termination,
                               winners=winners, points=points)]


def resequenced(events: list[Event]) -> list[Event]:
    """Returns the events with dense sequence numbers (after planting or removing one)."""
    return [replace(e, seq=i) for i, e in enumerate(events)]


def codes(steps: list[Step]) -> list[str]:
    """Returns the codes of every finding of a replay, in order."""
    return [f.code for s in steps for f in s.findings]


def final(steps: list[Step]) -> CheckersState:
    """Returns the state after the last event."""
    return steps[-1].state  # type: ignore[no-any-return]


def moved(seat: int, frm: int, to: int, path: tuple[int, ...] | None = None, ts: int = T0) -> Moved:
    """Returns a move event to plant (its seq is fixed by `resequenced`)."""
    return Moved(stream=STREAM, seq=0, ts=ts, seat=seat, from_=frm, to=to, path=path)


def position(profile: CheckersProfile, north: list[str], south: list[str], to_move: int, *, first: int = 0,
             turns: tuple[int, int] = (0, 0)) -> CheckersState:
    """Returns a state set up directly: holes as ids, row-col or `q,r` axial pairs; `turns` own
    turns already played (the ply follows from them)."""
    from replay.checkers.state import setup

    state = setup(profile, [_hole(h) for h in north], [_hole(h) for h in south], to_move, first)
    return replace(state, turns=turns, ply=turns[0] + turns[1])


def _hole(text: str) -> int:
    from replay.checkers.board import INDEX

    if "," in text:
        q, r = text.split(",")
        return INDEX[(int(q), int(r))]
    return parse_hole(text)


def run(state: CheckersState, turns: list[str]) -> tuple[CheckersState, list[str]]:
    """Plays turns on a state through the rule layer (`a>b` moves as ids, row-col or `q,r`
    holes, `T` timeouts, `P` passes) and returns the last state and the codes noted."""
    from replay.checkers.check import check_move
    from replay.checkers.rules import play_move, play_pass

    found: list[str] = []
    for text in turns:
        assert state.outcome is None, f"{text} after the game ended ({state.outcome.termination})"
        if text in ("T", "P"):
            turn = play_pass(state, timeout=text == "T")
        else:
            holes = [_hole(h) for h in text.split(">")]
            verdict = check_move(state, state.to_move, holes[0], holes[-1], None)
            assert verdict.code is None, f"{text}: {verdict.code} {verdict.why}"
            turn = play_move(state, holes[0], holes[-1], verdict.path)
        state = turn.state
        found.extend(n.code for n in turn.notes)
    return state, found
