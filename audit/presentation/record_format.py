"""A game's text record for people and diffs, after PGN: tag lines, then one line per action in
the engine's notation with the seat, the player and the move time claimed for it, then the result.

    [Event "junqi cup 1"]
    [Stream "junqi-cup-1/r1/t1/g1"]
    ...
    [Result "5-1-5-3"]

    1. S1 P003 W11>N15 {[%emt 0:00:05.7]}
    2. S2 P001 N35>N24 {[%emt 0:00:01.9]}
    ...
    5-1-5-3

The notation is each engine's, the one its findings use: checkers `from>to` (hole ids, as
`perft --moves`), Junqi `from>to` (point ids, as `junqi.moved`), Paohuzi the action and its cards
(`discard 壹`, `chi 一二三` …). Events that are not actions (draw offers, penalties, rulings …)
appear as comments `{seq N kind seat S}`, the engine's findings as `{finding CODE article: message}`
after the action they concern. An unknown tag value is `?` and a game without a derived result
ends with `*`, as in PGN.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import msgspec

from audit.query.arbitration import IGNORED
from ledger.outputs import stream_file_name
from replay.fold import RulingCheck
from replay.run import GameReplay, replay_game
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
from schemas.envelope import Event

SILENT_KINDS = {"game.started", "game.move_time", "game.ended"}
"""Events the record shows through its tags and clock comments rather than as a line of their own."""


def game_record(events: list[Event], event_name: str | None = None, rulings: RulingCheck | None = None) -> str:
    """Returns the text record of one game from its events (replayed here, the rulings `rulings`
    sets aside changing nothing), `event_name` being the tournament's name when it has one.

    :raises ValueError: when the events are not one game opening with game.started.
    """
    if not events or not isinstance(events[0], GameStarted):
        raise ValueError("a game record needs a game's events, opening with game.started")
    replayed = replay_game(events, rulings=rulings)
    return "\n".join([*_tags(replayed, event_name), "", *_movetext(replayed), _result(replayed), ""])


def _tags(r: GameReplay, event_name: str | None) -> list[str]:
    start = r.start
    claim = next((e for e in reversed(r.events) if isinstance(e, GameEnded)), None)
    tags: list[tuple[str, Any]] = [
        ("Event", event_name or start.tournament), ("Tournament", start.tournament), ("Round", start.round),
        ("Table", start.table), ("Game", start.game_no), ("Board", start.board), ("Stream", r.stream), ("GameType", r.game),
        ("Date", _utc(start.ts).strftime("%Y.%m.%d")), ("Time", _utc(start.ts).strftime("%H:%M:%S")),
        *((f"Seat{h.seat}", h.holder) for h in start.seats), ("First", start.first),
        ("Profile", msgspec.json.encode(start.profile).decode()),
        ("Result", _result(r)), ("Winners", ",".join(map(str, r.outcome.winners)) if r.outcome else None),
        ("Termination", r.outcome.termination if r.outcome else None),
        ("ClaimedTermination", claim.termination if claim else None),
        ("ClaimedPoints", "-".join(_points(p) for p in claim.points) if claim else None),
        ("Findings", len(r.findings)),
    ]
    return [f'[{name} "{_escape(value)}"]' for name, value in tags]


def _movetext(r: GameReplay) -> list[str]:
    """Returns one line per action and a comment per other event and per finding."""
    clocks = {e.move_seq: e.ms for e in r.events if isinstance(e, MoveTimeUsed) and e.move_seq is not None}
    players = {h.seat: h.holder for h in r.start.seats}
    findings: dict[int, list[str]] = {}
    for f in r.findings:
        findings.setdefault(f.seq, []).append(f"{{finding {f.code}{' ' + f.article if f.article else ''}: {f.message}}}")
    lines, number = [], 0
    for event, facts in zip(r.step_events, r.step_facts):
        action = facts.get("action")
        seat = facts.get("seat", event.seat)
        if action is not None:
            number += 1
            clock = f" {{[%emt {_clock(clocks[event.seq])}]}}" if event.seq in clocks else ""
            lines.append(f"{number}. S{seat} {players.get(seat, '?') if seat is not None else '?'} {action}{clock}")
        elif event.kind not in SILENT_KINDS:
            aside = f" 未计入 set aside: {' '.join(IGNORED[facts['set_aside']])}" if "set_aside" in facts else ""
            lines.append(f"{{seq {event.seq} {event.kind}{'' if seat is None else f' seat {seat}'}{aside}}}")
        lines += findings.pop(event.seq, [])
    lines += [line for seq in sorted(findings) for line in findings[seq]]  # findings past the last step
    return lines


def _result(r: GameReplay) -> str:
    """Returns the derived points of every seat joined by `-` (PGN's `1-0` for more seats), or `*`."""
    if r.outcome is None or not r.outcome.points:
        return "*"
    return "-".join(_points(p) for p in r.outcome.points)


def _points(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _clock(ms: int) -> str:
    """Returns a duration as PGN's clock comments write it, H:MM:SS.s."""
    tenths = round(ms / 100)
    return f"{tenths // 36000}:{tenths // 600 % 60:02d}:{tenths // 10 % 60:02d}.{tenths % 10}"


def _utc(ts: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc)


def _escape(value: Any) -> str:
    """Returns a tag value as PGN quotes it: `?` when unknown, backslash and quote escaped."""
    if value is None:
        return "?"
    return str(value).replace("\\", "\\\\").replace('"', '\\"')


def record_file_name(stream: str) -> str:
    """Returns the file a game's record goes to in a directory (one name per stream: `ledger.stream_file_name`)."""
    return stream_file_name(stream, ".txt")


def game_streams(events: Iterable[Event], tournament: str) -> list[str]:
    """Returns the game streams of a tournament, in the order their games started."""
    return [e.stream for e in events if isinstance(e, GameStarted) and e.tournament == tournament]
