"""Helpers the junqi tests share (no tests here): start events, layouts from arm grids, scripted games."""

from __future__ import annotations

from typing import Any

import msgspec

from replay.junqi import ENGINE
from replay.junqi.board import INDEX
from replay.junqi.fold import Audit, fold_event
from replay.junqi.perft import PIECES
from replay.junqi.pieces import KIND_NAMES
from replay.junqi.state import JunqiState, Layout
from schemas.common import DrawAnswered, DrawOffered, GameStarted, Resigned, Skipped, TimedOut
from schemas.envelope import Event, SeatHolder
from schemas.junqi import JunqiProfile, LayoutSubmitted, Moved

STANDARD = "63725/1o8o3/2Bo49/5o1o6/3BM74/2FM1M"
SEATS = "SWNE"
T0 = 1_764_000_000_000


def profile(**overrides: Any) -> JunqiProfile:
    """Returns the default profile with some settings changed."""
    return msgspec.convert({"game": "junqi", **overrides}, JunqiProfile)


def start(stream: str = "cup-r1-t1-g1", first: int = 0, **overrides: Any) -> GameStarted:
    """Returns a game.started event with four players and the given profile settings."""
    return GameStarted(stream=stream, seq=0, ts=T0, profile=profile(**overrides),
                       seats=[SeatHolder(seat=s, player=f"p{s}") for s in range(4)], first=first)


def grid_pieces(seat: int, rows: str) -> list[tuple[str, str]]:
    """Returns (point, piece) pairs of an arm grid (front row first, columns from the owner's left)."""
    out = []
    for r, row in enumerate(rows.split("/"), 1):
        for c, ch in enumerate(row, 1):
            if ch not in ".o":
                out.append((f"{SEATS[seat]}{r}{c}", KIND_NAMES[PIECES[ch]]))
    return out


def layout(stream: str, seq: int, seat: int, pieces: list[tuple[str, str]] | None = None,
           colour: str | None = None) -> LayoutSubmitted:
    """Returns a layout event (the standard layout unless pieces are given)."""
    return LayoutSubmitted(stream=stream, seq=seq, ts=T0 + 1000 * seq, seat=seat,
                           pieces=pieces if pieces is not None else grid_pieces(seat, STANDARD),  # type: ignore[arg-type]
                           colour=colour)  # type: ignore[arg-type]


def layout_action(seat: int, pieces: list[tuple[str, str]] | None = None, colour: str | None = None) -> Layout:
    """Returns a layout action for the engine API (the standard layout unless pieces are given)."""
    pairs = pieces if pieces is not None else grid_pieces(seat, STANDARD)
    return Layout(seat, tuple((INDEX[p], PIECES[k]) for p, k in pairs), colour)


def scripted(moves: list[str], first: int = 0, **overrides: Any) -> list[Event]:
    """Returns start, four standard layouts and the moves (`S12>S22`, or `W:W12>W22` to force the
    seat); each move's seat is otherwise the seat to move in the derived state."""
    begin = start(first=first, **overrides)
    events: list[Event] = [begin] + [layout(begin.stream, s + 1, s) for s in range(4)]
    audit = Audit(stream=begin.stream, last_ts=begin.ts)
    state: JunqiState = ENGINE.new_initial_state(begin)
    for e in events[1:]:
        state, _ = fold_event(state, e, audit)
    for text in moves:
        event = _event(text, state, begin.stream, len(events))
        events.append(event)
        state, _ = fold_event(state, event, audit)
    return events


def _event(text: str, state: JunqiState, stream: str, seq: int) -> Event:
    """Returns the event a script line stands for: a move, or `timeout`, `skip`, `resign:W`,
    `offer:S`, `accept:N`, `decline:E`."""
    is_move = ">" in text
    head, _, tail = text.rpartition(":") if is_move else text.partition(":")
    named = head if is_move else tail
    seat = SEATS.index(named) if named else state.to_move
    where: dict[str, Any] = {"stream": stream, "seq": seq, "ts": T0 + 10_000 + 1000 * seq, "seat": seat}
    if is_move:
        frm, to = tail.split(">")
        return Moved(**where, from_=frm, to=to)
    kinds: dict[str, Any] = {
        "timeout": TimedOut, "skip": Skipped, "resign": Resigned, "offer": DrawOffered,
        "accept": lambda **kw: DrawAnswered(**kw, accept=True), "decline": lambda **kw: DrawAnswered(**kw, accept=False),
    }
    return kinds[head](**where)  # type: ignore[no-any-return]


def codes(events: list[Event], errors_only: bool = False) -> list[str]:
    """Returns the codes of every finding of a replay (or only its errors), in order."""
    return [f.code for step in ENGINE.replay(events) for f in step.findings if not errors_only or f.severity == "error"]


def point(name: str) -> int:
    """Returns a point's index."""
    return INDEX[name]
