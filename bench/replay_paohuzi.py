"""Replay speed of the paohuzi engine against python-chess, measured in the same run on one core.

Paohuzi: events per second of `ENGINE.replay` over seeded bot deals (every event folded, legality
checked, forced actions derived, card conservation checked, facts and findings built). Chess:
moves per second of `Board.push_uci` replaying random legal games. The first line says whether the
paohuzi rules run compiled (setup.py's optional mypyc build) or from their sources. The last line
prints the ratio of the two rates; the line before it also gives the rate counting only action
events (draw, discard, 吃, 碰, pass, hu), for a stricter comparison.

    /work/venv/bin/python bench/replay_paohuzi.py [--games 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import chess

from replay.paohuzi import ENGINE, hu
from replay.paohuzi.events import ACTION_EVENTS
from schemas.common import GameStarted
from schemas.envelope import SeatHolder
from schemas.paohuzi import PaohuziProfile

GOAL = 1.00


def paohuzi_games(n: int, seed: int) -> list[list]:  # type: ignore[type-arg]
    """Returns the events of n seeded bot deals, rotating the dealer."""
    rng = random.Random(seed)
    games = []
    for i in range(n):
        start = GameStarted(stream=f"bench-g{i}", seq=0, ts=1_764_000_000_000, profile=PaohuziProfile(),
                            seats=[SeatHolder(seat=s, player=f"p{s}") for s in range(3)], first=i % 3, board=f"b{i}")
        games.append(ENGINE.bot_game(start, random.Random(rng.getrandbits(64))))
    return games


def chess_games(n: int, seed: int, max_plies: int = 200) -> list[list[str]]:
    """Returns n random legal chess games as UCI move lists."""
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


def best_time(run: Callable[[], object], repeat: int) -> float:
    """Returns the fastest wall time of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def rules_build() -> str:
    """Tells which build of the paohuzi rule modules runs."""
    source = (hu.__file__ or "").endswith(".py")
    return "pure Python (the compiled build is missing or stale, see setup.py)" if source else "compiled by mypyc"


def main() -> None:
    """Measures both replays and prints the ratio line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pz = paohuzi_games(args.games, seed=2026)
    ch = chess_games(max(20, args.games // 4), seed=2026)
    events = sum(len(g) for g in pz)
    actions = sum(isinstance(e, ACTION_EVENTS) for g in pz for e in g)
    moves = sum(len(g) for g in ch)

    def replay_paohuzi() -> None:
        for game in pz:
            for _ in ENGINE.replay(game):
                pass

    def replay_chess() -> None:
        for game in ch:
            board = chess.Board()
            for uci in game:
                board.push_uci(uci)

    pz_time = best_time(replay_paohuzi, args.repeat)
    ch_rate = moves / best_time(replay_chess, args.repeat)
    ev_rate, act_rate = events / pz_time, actions / pz_time
    print(f"paohuzi rules: {rules_build()}")
    print(f"paohuzi replay: {ev_rate:,.0f} events/s ({act_rate:,.0f} action events/s) over {args.games} bot deals ({events:,} events)")
    print(f"python-chess {chess.__version__} push_uci: {ch_rate:,.0f} moves/s over {len(ch)} random games ({moves:,} moves)")
    print(f"action events only: ratio {act_rate / ch_rate:.2f}")
    print(f"replay_paohuzi: ratio {ev_rate / ch_rate:.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
