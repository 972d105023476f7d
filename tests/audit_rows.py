"""Hand-built projections for the SQL checks: games, seats, steps and events written row by row,
good or deliberately broken, without a ledger or an engine, loaded with the projection's schemas."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pyarrow as pa

from audit.query.db import AuditDB
from audit.query.projection import SCHEMAS

Finding = tuple[str, int | None, str, str]
"""A finding row as (stream, seq, code, message)."""


def profile_json(profile: msgspec.Struct) -> str:
    """Returns a rule profile as the JSON the `games.profile` column holds (with its `game` tag)."""
    return msgspec.json.encode(profile).decode()


class HandBuilt:
    """The projection's tables as lists of rows; a row leaves out the columns it does not need."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {name: [] for name in SCHEMAS}

    def tables(self) -> dict[str, pa.Table]:
        """Returns every table as Arrow with the projection's schema (keys a schema lacks are dropped)."""
        return {name: pa.Table.from_pylist(self.rows[name], schema=SCHEMAS[name]) for name in SCHEMAS}

    def db(self) -> AuditDB:
        """Loads the rows into a fresh audit database."""
        return AuditDB(self.tables())

    def run(self, query: str, **params: Any) -> list[Finding]:
        """Runs a named check query and returns its findings as (stream, seq, code, message)."""
        return [(r["stream"], r["seq"], r["code"], r["message"]) for r in self.db().run(query, **params)]

    def game(self, stream: str, game: str, profile: str, termination: str | None, winners: list[int] | None,
             seats: list[tuple[str, float | None]], **where: Any) -> None:
        """Adds a game with the engine's result and one `seats` row per (player, points)."""
        place = {"tournament": where.get("tournament"), "round": where.get("round"), "table_no": where.get("table_no"),
                 "game_no": where.get("game_no", 1), "board": where.get("board")}
        self.rows["games"].append({"stream": stream, "game": game, **place, "first": where.get("first", 0),
                                   "seats": len(seats), "termination": termination, "winners": winners,
                                   "started_ts": 0, "ended_ts": 0, "profile": profile,
                                   "derived_termination": termination, "derived_winners": winners})  # no ruling
        for seat, (player, points) in enumerate(seats):
            self.rows["seats"].append({"stream": stream, **place, "seat": seat, "player": player, "points": points, "derived_points": points})

    def step(self, stream: str, seq: int, kind: str, seat: int | None = None, action: str | None = None,
             ts: int = 0, **facts: Any) -> None:
        """Adds a replayed step: `action` is set for moves; `facts` are the engine's derived facts,
        kept both as JSON and, where the schema has them, as typed columns."""
        self.rows["steps"].append({"stream": stream, "seq": seq, "ts": ts, "kind": kind, "seat": seat, "action": action,
                                   **facts, "facts": json.dumps(facts)})

    def event(self, stream: str, seq: int, kind: str, seat: int | None = None, ts: int = 0, **body: Any) -> None:
        """Adds a logged event with its JSON body, as the recorder stores it."""
        data = {"kind": kind, "stream": stream, "seq": seq, "ts": ts, "seat": seat, "v": 1, **body}
        self.rows["events"].append({"stream": stream, "seq": seq, "ts": ts, "kind": kind, "seat": seat,
                                    "body": json.dumps(data, ensure_ascii=False)})

    def finding(self, stream: str, seq: int, code: str, check_name: str, severity: str = "error") -> None:
        """Adds an engine finding of the replay."""
        self.rows["findings"].append({"stream": stream, "seq": seq, "code": code, "article": None, "severity": severity,
                                      "message": f"{code} at seq {seq}", "source": "replay", "check_name": check_name})

    def tournament(self, tournament: str, game: str, rules: dict[str, Any]) -> None:
        """Adds a tournament with its rules JSON."""
        self.rows["tournaments"].append({"tournament": tournament, "game": game, "name": tournament, "format": "duplicate",
                                         "stage": "preliminary", "profile": "{}", "rules": json.dumps(rules)})
