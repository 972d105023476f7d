"""Hand-built projections for audit tests: games and seats rows without a ledger."""

from __future__ import annotations

from audit.query.db import AuditDB
from audit.query.projection import Projection


def add_game(proj: Projection, tournament: str, game: str, rnd: int, table: int, game_no: int,
             players: list[str], points: list[float], board: str | None = None) -> None:
    """Adds one finished game with its seats and points."""
    stream = f"{tournament}/r{rnd}/t{table}/g{game_no}"
    best = max(points)
    winners = [] if points.count(best) == len(points) else [s for s, p in enumerate(points) if p == best]
    where = {"tournament": tournament, "round": rnd, "table_no": table, "game_no": game_no, "board": board}
    proj.rows["games"].append({"stream": stream, "game": game, **where, "first": 0, "seats": len(players),
                               "termination": "TEST", "winners": winners, "started_ts": 0, "ended_ts": 0, "profile": "{}",
                               "derived_termination": "TEST", "derived_winners": winners})
    for seat, (player, pts) in enumerate(zip(players, points)):
        proj.rows["seats"].append({"stream": stream, **where, "seat": seat, "player": player, "points": pts, "derived_points": pts})
        proj.rows["seatings"].append({"tournament": tournament, "round": rnd, "table_no": table, "group_no": None, "seat": seat, "player": player})


def database(proj: Projection) -> AuditDB:
    """Loads a hand-built projection."""
    return AuditDB(proj.tables())
