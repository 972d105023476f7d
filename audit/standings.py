"""Standings of a tournament and the chain from events to one player's rank (tournament.md §6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from audit.session import Session


@dataclass
class Standings:
    """A tournament's ranking with every tie-break column, in rank order."""

    tournament: str
    game: str
    format: str
    columns: list[str]
    rows: list[dict[str, Any]]


@dataclass
class Explanation:
    """Why a player holds its rank: the games, boards, rates and tie-break values it rests on."""

    player: str
    rank: dict[str, Any]
    games: list[dict[str, Any]] = field(default_factory=list)
    boards: list[dict[str, Any]] = field(default_factory=list)
    seating: list[dict[str, Any]] = field(default_factory=list)


DUPLICATE_COLUMNS = ["rank", "player", "r_shown", "boards", "opp_r", "beaten_r", "move_ms", "trimmed_ms", "unresolved", "unverified"]
SWISS_COLUMNS = ["rank", "player", "big", "bh", "ps", "direct_encounter", "wins", "games", "win_rate", "bh_prev", "unresolved",
                 "unverified"]
"""The columns shown; `unverified` counts a player's games that stand on a declared result the
engine could not verify (checkers.md §4.7), so that no game drops out of the standings unseen."""


def standings(session: Session, tournament: str) -> Standings:
    """Returns the final standings of a tournament.

    :raises ValueError: when the ledger holds no such tournament.
    """
    game, fmt = session.tournament_game(tournament)
    if fmt == "swiss":
        rows = session.db.run("swiss_standings", tournament=tournament, through=1_000_000)
        return Standings(tournament, game, fmt, SWISS_COLUMNS, rows)
    return Standings(tournament, game, fmt, DUPLICATE_COLUMNS, session.db.run("ranking", tournament=tournament))


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
