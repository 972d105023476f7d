"""Replay speed of the checkers engine against python-chess, measured in the same run on one core.

Checkers: moves per second of `ENGINE.replay` over seeded bot games (every event folded: each
move checked for legality — its witness path hop by hop, or its endpoint by search —, the
competition checks after each ply, facts and findings built, timing events cross-checked).
Chess: moves per second of `Board.push_uci` replaying random legal games (each move parsed and
checked for legality). The last line prints the ratio.

    /work/venv/bin/python bench/replay_checkers.py [--games 60] [--repeat 5] [--endpoints-only]

`--endpoints-only` drops the hop paths the bot records, so every hop chain is checked by the
endpoint search (§4.7) instead of segment by segment.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess
from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_rate, chess_games, replay_chess  # noqa: E402
from replay.checkers import ENGINE
from schemas.checkers import CheckersProfile, Moved
from schemas.common import GameStarted
from schemas.envelope import Event, SeatHolder

GOAL = 1.00


def checkers_games(n: int, seed: int) -> list[list[Event]]:
    """Returns the events of n seeded bot games, first mover alternating."""
    rng = random.Random(seed)
    games = []
    for i in range(n):
        start = GameStarted(stream=f"bench-g{i}", seq=0, ts=1_764_000_000_000, profile=CheckersProfile(),
                            seats=[SeatHolder(seat=0, player="p0"), SeatHolder(seat=1, player="p1")], first=i % 2)
        games.append(ENGINE.bot_game(start, random.Random(rng.getrandbits(64))))
    return games






def main() -> None:
    """Measures both replays and prints the ratio line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--endpoints-only", action="store_true")
    args = parser.parse_args()
    games = checkers_games(args.games, seed=2026)
    if args.endpoints_only:
        games = [[replace(e, path=None) if type(e) is Moved else e for e in g] for g in games]
    peer = chess_games(args.games, seed=2026)

    def replay_checkers() -> int:
        moves = 0
        for events in games:
            for step in ENGINE.replay(events):
                moves += type(step.event) is Moved
        return moves


    checkers_rate = best_rate(replay_checkers, args.repeat)
    chess_rate = best_rate(lambda: replay_chess(peer), args.repeat)
    events = sum(len(g) for g in games)
    print(f"checkers replay: {checkers_rate:,.0f} moves/s over {args.games} bot games ({events:,} events)")
    print(f"python-chess {chess.__version__} push_uci: {chess_rate:,.0f} moves/s over {len(peer)} random games")
    print(f"replay_checkers: ratio {checkers_rate / chess_rate:.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
