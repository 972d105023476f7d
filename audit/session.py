"""An audit session: the projection of a ledger loaded into DuckDB, with the replays kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from audit.db import AuditDB
from audit.projection import Projection, project_ledger


@dataclass
class Session:
    """The projection of one ledger and the database built from it."""

    projection: Projection
    db: AuditDB

    def tournament_game(self, tournament: str) -> tuple[str, str]:
        """Returns a tournament's game and format.

        :raises ValueError: when the ledger holds no such tournament.
        """
        for row in self.projection.tournaments:
            if row["tournament"] == tournament:
                return row["game"], row["format"]
        known = ", ".join(r["tournament"] for r in self.projection.tournaments) or "none"
        raise ValueError(f"no tournament {tournament!r} in the ledger (known: {known})")


def open_session(root: Path, progress: Callable[[int], None] | None = None) -> Session:
    """Replays a ledger and loads its projection into an in-memory DuckDB."""
    projection = project_ledger(root, progress)
    return Session(projection, AuditDB(projection.tables()))


def movement_ranking(root: Path, tournament: str, through_round: int) -> list[str]:
    """Returns the players in movement order after a round (cumulative R, tie-breaks, player number)."""
    session = open_session(root)
    _, fmt = session.tournament_game(tournament)
    if fmt == "swiss":
        return [r["player"] for r in session.db.run("swiss_standings", tournament=tournament, through=through_round)]
    return [r["player"] for r in session.db.run("ranking_through", tournament=tournament, through=through_round)]
