"""Replay speed of the paohuzi engine against python-chess, measured in the same run on one core.

Paohuzi: actions per second of `ENGINE.replay` over seeded bot deals, an action being every event
the replay reports one for (draw, discard, 吃, 碰, 偎, 臭偎, 跑, 提, pass, hu), while every event is
folded (legality checked, forced actions derived, card conservation checked after each, facts and
findings built). Chess: moves per second of `Board.push_uci` replaying random legal games. The
first line says whether the paohuzi rules run compiled (setup.py's optional mypyc build) or from
their sources; the events/s of the whole log are printed too.

    /work/venv/bin/python bench/replay_paohuzi.py [--games 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import best_of, chess_games, replay_chess  # noqa: E402
from replay.paohuzi import ENGINE, hu  # noqa: E402
from schemas.common import GameStarted  # noqa: E402
from schemas.envelope import SeatHolder  # noqa: E402
from schemas.paohuzi import PaohuziProfile  # noqa: E402

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
    actions = sum(step.facts.get("action") is not None for g in pz for step in ENGINE.replay(g))
    moves = sum(len(g) for g in ch)

    def replay_paohuzi() -> None:
        for game in pz:
            for _ in ENGINE.replay(game):
                pass

    pz_time = best_of(args.repeat, replay_paohuzi)
    ch_rate = moves / best_of(args.repeat, lambda: replay_chess(ch))
    ev_rate, act_rate = events / pz_time, actions / pz_time
    print(f"paohuzi rules: {rules_build()}")
    print(f"paohuzi replay: {act_rate:,.0f} actions/s ({ev_rate:,.0f} events/s) over {args.games} bot deals "
          f"({actions:,} actions, {events:,} events)")
    print(f"python-chess {chess.__version__} push_uci: {ch_rate:,.0f} moves/s over {len(ch)} random games ({moves:,} moves)")
    print(f"all events against chess moves: ratio {ev_rate / ch_rate:.2f}")
    print(f"replay_paohuzi: ratio {act_rate / ch_rate:.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
