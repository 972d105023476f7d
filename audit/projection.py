"""The projection: Arrow tables built from the ledger's entries and the replay of every game.

DuckDB reads these tables; they are disposable and rebuilt from the ledger, the only source of truth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from audit.checks import check_of
from ledger.store import iter_entries
from replay.run import GameReplay, group_streams, is_game_stream, replay_game
from schemas import decode
from schemas.common import GameStarted, PlayerRegistered, RoundSeated, TournamentOpened
from schemas.envelope import Event

_json = msgspec.json.Encoder()

SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64()),
                         ("kind", pa.string()), ("seat", pa.int8()), ("body", pa.string())]),
    "steps": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64()), ("kind", pa.string()),
                        ("seat", pa.int8()), ("action", pa.string()), ("facts", pa.string())]),
    "games": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("game", pa.string()), ("tournament", pa.string()), ("round", pa.int32()),
                        ("table_no", pa.int32()), ("game_no", pa.int32()), ("board", pa.string()), ("first", pa.int8()),
                        ("seats", pa.int8()), ("termination", pa.string()), ("winners", pa.list_(pa.int8())),
                        ("started_ts", pa.int64()), ("ended_ts", pa.int64()), ("profile", pa.string())]),
    "seats": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("tournament", pa.string()), ("round", pa.int32()), ("table_no", pa.int32()),
                        ("game_no", pa.int32()), ("board", pa.string()), ("seat", pa.int8()), ("player", pa.string()),
                        ("points", pa.float64())]),
    "findings": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("code", pa.string()), ("article", pa.string()),
                           ("severity", pa.string()), ("message", pa.string()), ("source", pa.string()),
                           ("check_name", pa.string())]),
    "seatings": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("round", pa.int32()), ("table_no", pa.int32()), ("group_no", pa.int32()),
                           ("seat", pa.int8()), ("player", pa.string())]),
    "players": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("player", pa.string()), ("name", pa.string())]),
    "tournaments": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("game", pa.string()), ("name", pa.string()), ("format", pa.string()),
                              ("stage", pa.string()), ("profile", pa.string()), ("rules", pa.string())]),
}


@dataclass
class Projection:
    """Rows of every table, filled from events and replays, then turned into Arrow tables."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {name: [] for name in SCHEMAS})
    replays: dict[str, GameReplay] = field(default_factory=dict)
    entries: dict[tuple[str, int], int] = field(default_factory=dict)
    """The log index of every event, by (stream, seq): every row names the entry it rests on."""

    def tables(self) -> dict[str, pa.Table]:
        """Returns every table as Arrow, with its fixed schema (empty tables included)."""
        return {name: pa.Table.from_pylist(self.rows[name], schema=SCHEMAS[name]) for name in SCHEMAS}


def project(entries: Iterable[tuple[int, bytes]], on_game: Callable[[int], None] | None = None) -> Projection:
    """Builds the projection of a log: every entry, and every game replayed by its engine."""
    proj = Projection()
    events: list[Event] = []
    for index, data in entries:
        event = decode(data)
        events.append(event)
        proj.entries[(event.stream, event.seq)] = index
        proj.rows["events"].append({"entry": index, "stream": event.stream, "seq": event.seq, "ts": event.ts,
                                    "kind": event.kind, "seat": event.seat, "body": data.decode()})
        _tournament_rows(proj, event, index)
    for stream, items in group_streams(events).items():
        if is_game_stream(items):
            _game_rows(proj, replay_game(items))
            if on_game:
                on_game(1)
    return proj


def project_ledger(root: Path, on_game: Callable[[int], None] | None = None) -> Projection:
    """Builds the projection of a ledger directory."""
    return project(iter_entries(root), on_game)


def _tournament_rows(proj: Projection, event: Event, entry: int) -> None:
    if isinstance(event, TournamentOpened):
        proj.rows["tournaments"].append({"entry": entry, "tournament": event.stream, "game": event.game, "name": event.name, "format": event.format,
                                         "stage": event.stage, "profile": _json.encode(event.profile).decode(),
                                         "rules": _json.encode(event.rules).decode()})
    elif isinstance(event, PlayerRegistered):
        proj.rows["players"].append({"entry": entry, "tournament": event.stream, "player": event.player, "name": event.name})
    elif isinstance(event, RoundSeated):
        proj.rows["seatings"].extend(
            {"entry": entry, "tournament": event.stream, "round": event.round, "table_no": t.table, "group_no": t.group, "seat": s.seat, "player": s.holder}
            for t in event.tables for s in t.seats
        )


def _game_rows(proj: Projection, r: GameReplay) -> None:
    proj.replays[r.stream] = r
    start: GameStarted = r.start
    entry = proj.entries[(r.stream, 0)]
    where = {"tournament": start.tournament, "round": start.round, "table_no": start.table, "game_no": start.game_no, "board": start.board}
    outcome = r.outcome
    proj.rows["games"].append({
        "entry": entry, "stream": r.stream, "game": r.game, **where, "first": start.first, "seats": len(start.seats),
        "termination": outcome.termination if outcome else None, "winners": list(outcome.winners) if outcome else None,
        "started_ts": start.ts, "ended_ts": r.facts[-1]["ts"], "profile": _json.encode(start.profile).decode(),
    })
    for holder in start.seats:
        points = outcome.points[holder.seat] if outcome and holder.seat < len(outcome.points) else None
        proj.rows["seats"].append({"entry": entry, "stream": r.stream, **where, "seat": holder.seat, "player": holder.holder, "points": points})
    for f in r.facts:
        rest = {k: v for k, v in f.items() if k not in ("seq", "ts", "kind", "seat", "action")}
        proj.rows["steps"].append({"entry": proj.entries[(r.stream, f["seq"])], "stream": r.stream, "seq": f["seq"], "ts": f["ts"], "kind": f["kind"], "seat": f.get("seat"),
                                   "action": f.get("action"), "facts": _json.encode(rest).decode()})
    proj.rows["findings"].extend(
        {"entry": proj.entries.get((x.stream, x.seq)), "stream": x.stream, "seq": x.seq, "code": x.code, "article": x.article, "severity": x.severity, "message": x.message, "source": "replay",
         "check_name": check_of(x.code)}
        for x in r.findings
    )
