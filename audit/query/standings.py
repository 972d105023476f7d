"""Standings of a tournament and the chain from events to one player's rank (tournament.md §6)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from audit.query.session import Session


@dataclass
class Standings:
    """A tournament's ranking with every tie-break column, in rank order."""

    tournament: str
    game: str
    format: str
    columns: list[str]
    rows: list[dict[str, Any]]
    as_of: str | None = None
    """When each row's `status` is judged (ISO 8601, UTC): `--as-of`, else the competition's latest event."""


@dataclass
class Explanation:
    """Why a player holds its rank: the games, boards, rates and tie-break values it rests on."""

    player: str
    rank: dict[str, Any]
    games: list[dict[str, Any]] = field(default_factory=list)
    boards: list[dict[str, Any]] = field(default_factory=list)
    seating: list[dict[str, Any]] = field(default_factory=list)


DUPLICATE_COLUMNS = ["rank", "player", "r_shown", "boards", "opp_r", "beaten_r", "move_ms", "trimmed_ms", "unresolved", "unverified",
                     "void_games", "status"]
SWISS_COLUMNS = ["rank", "player", "big", "bh", "ps", "direct_encounter", "wins", "games", "win_rate", "bh_prev", "unresolved",
                 "unverified", "forfeits", "status"]
"""The columns shown; `unverified` counts a player's games that stand on a declared result the
engine could not verify (checkers.md §4.7), so that no game drops out of the standings unseen;
`void_games` the games a ruling voided, `forfeits` the matches awarded after a withdrawal
(第十二条); `status` is the least settled of the player's games: final, provisional (an appeal
window open), under_appeal, or unresolved (see the `game_status` view)."""


def standings(session: Session, tournament: str) -> Standings:
    """Returns the final standings of a tournament.

    :raises ValueError: when the ledger holds no such tournament.
    """
    game, fmt = session.tournament_game(tournament)
    if fmt == "swiss":
        rows = session.db.run("swiss_standings", tournament=tournament, through=1_000_000)
        return Standings(tournament, game, fmt, SWISS_COLUMNS, rows, status_time(session))
    return Standings(tournament, game, fmt, DUPLICATE_COLUMNS, session.db.run("ranking", tournament=tournament), status_time(session))


def status_time(session: Session) -> str | None:
    """Returns the time the games' status is judged at, ISO 8601 in UTC (None for a log without games)."""
    rows = session.db.run("status_as_of")
    ms = rows[0]["as_of_ts"] if rows else None
    return None if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def as_of(session: Session, ms: int) -> Session:
    """Returns the session with every game's status judged at `ms` (the projection's tables loaded afresh)."""
    from audit.query.db import AuditDB

    return Session(session.projection, AuditDB(session.projection.tables(), as_of=ms), session.origin)


@dataclass
class Crosstable:
    """Each player's result in every round, in rank order: Swiss, the opponent and match points
    (`P005 1`, `P005 ½`, `P005 0`, `bye`, `P005 F+` / `F-` for a match awarded after a withdrawal);
    duplicate, the mean board rate r of the round."""

    tournament: str
    format: str
    rounds: list[int]
    rows: list[dict[str, Any]]


def crosstable(session: Session, tournament: str) -> Crosstable:
    """Returns the crosstable of a tournament.

    :raises ValueError: when the ledger holds no such tournament.
    """
    table = standings(session, tournament)
    cells: dict[str, dict[int, str]] = {}
    if table.format == "swiss":
        for m in session.db.run("crosstable_swiss", tournament=tournament):
            cells.setdefault(m["player"], {})[m["round"]] = _swiss_cell(m)
    else:
        for m in session.db.run("crosstable_duplicate", tournament=tournament):
            cells.setdefault(m["player"], {})[m["round"]] = f"{m['r']:.1f}"
    rounds = sorted({n for row in cells.values() for n in row})
    total = "big" if table.format == "swiss" else "r_shown"
    rows = [{"rank": r["rank"], "player": r["player"], "rounds": cells.get(r["player"], {}), "total": r[total], "status": r["status"]}
            for r in table.rows]
    return Crosstable(tournament, table.format, rounds, rows)


def _swiss_cell(m: dict[str, Any]) -> str:
    if m["kind"] == "bye":
        return "bye"
    if m["kind"] == "forfeit":
        return f"{m['opponent']} F{'+' if m['mp'] else '-'}"
    return f"{m['opponent']} {dict([(1.0, '1'), (0.5, '½'), (0.0, '0')])[m['mp']]}"


def explain(session: Session, tournament: str, player: str) -> Explanation:
    """Returns the chain from events to a player's rank.

    :raises ValueError: when the player has no rank in the tournament.
    """
    table = standings(session, tournament)
    rank = next((r for r in table.rows if r["player"] == player), None)
    if rank is None:
        raise ValueError(f"player {player!r} has no rank in {tournament}")
    out = Explanation(player, rank)
    out.games = session.db.run("player_games", tournament=tournament, player=player)
    if table.format == "duplicate":
        out.boards = session.db.run("player_boards", tournament=tournament, player=player)
    out.seating = session.db.run("player_seating", tournament=tournament, player=player)
    return out
