"""Shared helpers for the benchmarks: realistic event payloads and a cache outside the repository."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("MATCHLEDGER_BENCH_CACHE", Path.home() / ".cache" / "matchledger-bench"))


def move_time_lines(n: int, streams: int = 64, start_ms: int = 1_790_000_000_000) -> list[bytes]:
    """Returns `n` timing events spread over `streams` games, as JSON lines."""
    return [
        b'{"kind":"game.move_time","stream":"T1/r1/t%d/g1","seq":%d,"ts":%d,"seat":%d,"ms":%d}'
        % (i % streams, i // streams, start_ms + i * 900, i % 2, 800 + (i * 37) % 9000)
        for i in range(n)
    ]


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """Returns the fastest wall time of `runs` calls, in seconds."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def chess_games(n: int, seed: int, max_plies: int = 200) -> list[list[str]]:
    """Returns n random legal chess games as UCI move lists: the python-chess peer's input."""
    import chess

    rng = random.Random(seed)
    games = []
    for _ in range(n):
        board = chess.Board()
        moves: list[str] = []
        while len(moves) < max_plies and not board.is_game_over(claim_draw=False):
            move = rng.choice(list(board.legal_moves))
            moves.append(move.uci())
            board.push(move)
        games.append(moves)
    return games


def replay_chess(games: list[list[str]]) -> int:
    """Replays chess games with `Board.push_uci` (which checks legality); returns the move count."""
    import chess

    moves = 0
    for game in games:
        board = chess.Board()
        for uci in game:
            board.push_uci(uci)
        moves += len(game)
    return moves


def best_rate(run: Callable[[], int], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Returns the best items-per-second of `repeat` runs of `run` (which returns its item count),
    timed by `clock` (wall time by default; `time.process_time` for CPU time on a shared machine)."""
    best = 0.0
    for _ in range(repeat):
        t0 = clock()
        items = run()
        best = max(best, items / (clock() - t0))
    return best


def event_plan(game: str, games: int, seed: int):  # noqa: ANN201 - audit.simulator's TournamentPlan
    """Returns the plan of a simulated tournament of about `games` games: Junqi or Paohuzi in
    bench/audit.py's duplicate shape (5 rounds of 8 boards, movement groups of 8 tables), checkers
    as a Swiss event of two-game matches, 5 rounds and up to 20 as it grows, so that no round's seating
    passes the ledger's event size limit (1,000 tables of 10,000 games in 5 rounds made a 122 kB
    `tournament.round_seated`, refused); the tournament's id follows from the seed."""
    from audit.simulator.tournament import TournamentPlan

    if game == "checkers":
        rounds = max(5, min(20, games // 500))
        return TournamentPlan(game, players=2 * max(5, games // (2 * rounds)), rounds=rounds, games_per_round=2, seed=seed)
    seats = {"junqi": 4, "paohuzi": 3}[game]
    return TournamentPlan(game, players=seats * max(2, games // 40), rounds=5, games_per_round=8, seed=seed, group_tables=8)
