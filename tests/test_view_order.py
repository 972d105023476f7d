"""The views a reader lists (board_mp, game_lengths, player_results) give their rows in one order
whatever order the games were recorded in: by tournament, round, board or table and game, then seat
(tournament.md §1–§3 tables read by a referee; an export's files hash the same for the same event)."""

from __future__ import annotations

import random

from audit.query.db import AuditDB
from audit.query.projection import Projection
from tests.audit_support import add_game, database

GAMES = [(rnd, table, game_no) for rnd in (1, 2) for table in (1, 2, 3) for game_no in (1, 2)]


def _shuffled_event(seed: int) -> Projection:
    """A Junqi duplicate event whose games are added in a shuffled order (the seed is printed on failure)."""
    proj = Projection()
    games = GAMES[:]
    random.Random(seed).shuffle(games)
    for rnd, table, game_no in games:
        players = [f"p{table}{seat}" for seat in range(4)]
        add_game(proj, "T", "junqi", rnd, table, game_no, players, [3.0 * (table % 2), 0.0, 1.0, 2.0], board=f"r{rnd}-b{game_no}")
    return proj


def _keys(db: AuditDB, view: str, columns: str) -> list[tuple]:
    return [tuple(row) for row in db.query(f"SELECT {columns} FROM {view}")[1]]


def test_views_list_their_rows_in_one_order_whatever_the_recording_order() -> None:
    """board_mp by tournament, round, board, seat, MP; game_lengths by round, table, game; player_results
    by round, table, game, seat: the same rows in the same order for every recording order."""
    for seed in (1, 2, 3):
        db = database(_shuffled_event(seed))
        lengths = _keys(db, "game_lengths", "round, table_no, game_no")
        assert lengths == GAMES, f"seed {seed}"
        results = _keys(db, "player_results", "round, table_no, game_no, seat")
        assert results == [(*game, seat) for game in GAMES for seat in range(4)], f"seed {seed}"
        mp = _keys(db, "board_mp", "round, board, seat, mp")
        assert mp == sorted(mp, key=lambda row: (row[0], row[1], row[2], -row[3])) and len(mp) == 4 * len(GAMES), f"seed {seed}"
        players = _keys(db, "board_mp", "player")
        assert players == _keys(database(_shuffled_event(seed + 10)), "board_mp", "player"), f"seed {seed}"
        exported = db.derived_tables()  # what `export` writes
        assert exported["game_lengths"].select(["round", "table_no", "game_no"]).to_pylist() == [
            {"round": r, "table_no": t, "game_no": g} for r, t, g in GAMES], f"seed {seed}"
