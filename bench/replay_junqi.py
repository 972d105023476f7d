"""Replay speed of the junqi engine against python-chess, measured in the same run on one core.

Junqi: moves per second of `ENGINE.replay` over seeded bot games (every event folded, legality
checked, facts and findings built). Chess: moves per second of `Board.push_uci` replaying random
legal games (each move parsed and checked for legality). The first line says whether the junqi
rules run compiled (setup.py's optional mypyc build) or from their sources; the last prints the ratio.

    /work/venv/bin/python bench/replay_junqi.py [--games 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_rate, chess_games, replay_chess  # noqa: E402
from replay.junqi import ENGINE, fold
from schemas.common import GameStarted
from schemas.envelope import SeatHolder
from schemas.junqi import JunqiProfile, Moved

GOAL = 1.00


def junqi_games(n: int, seed: int) -> list[list]:  # type: ignore[type-arg]
    """Returns the events of n seeded bot games."""
    start = GameStarted(stream="bench-g1", seq=0, ts=1_764_000_000_000, profile=JunqiProfile(),
                        seats=[SeatHolder(seat=s, player=f"p{s}") for s in range(4)], first=0)
    rng = random.Random(seed)
    return [ENGINE.bot_game(start, random.Random(rng.getrandbits(64))) for _ in range(n)]


def rules_build() -> str:
    """Tells which build of the junqi rule modules runs."""
    source = (fold.__file__ or "").endswith(".py")
    return "pure Python (the compiled build is missing or stale, or MATCHLEDGER_NO_MYPYC is set; see setup.py)" if source else "compiled by mypyc"


def main() -> None:
    """Measures both replays and prints the ratio line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    jq = junqi_games(args.games, seed=2026)
    ch = chess_games(args.games * 2, seed=2026)

    def replay_junqi() -> int:
        moves = 0
        for events in jq:
            for step in ENGINE.replay(events):
                moves += isinstance(step.event, Moved)
        return moves

    junqi_rate = best_rate(replay_junqi, args.repeat)
    chess_rate = best_rate(lambda: replay_chess(ch), args.repeat)
    print(f"junqi rules: {rules_build()}")
    print(f"junqi replay: {junqi_rate:,.0f} moves/s over {args.games} bot games ({sum(len(g) for g in jq):,} events)")
    print(f"python-chess {chess.__version__} push_uci: {chess_rate:,.0f} moves/s over {len(ch)} random games")
    print(f"replay_junqi: ratio {junqi_rate / chess_rate:.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
