"""`matchledger replay` end to end, from the ledger, for each game, against python-chess in the same run.

For each game a ledger of seeded bot games is simulated once into a temporary directory; then the
replay command's own path (read the log in batches, decode, replay every game, summarise) is timed
in this process, in moves per second, beside python-chess `Board.push_uci` over random legal games
(the engine benches' peer). The wall time of the command itself, interpreter start-up included, is
printed for reference. The last line carries the smallest ratio.

    python bench/replay_cli.py [--games 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.simulate import simulate_games  # noqa: E402
from bench.common import best_rate, chess_games, replay_chess  # noqa: E402
from ledger import init, read_events  # noqa: E402
from replay import run as run_mod  # noqa: E402

GOAL = 1.00
GAMES = ("checkers", "junqi", "paohuzi")


def replay_rate(root: Path, repeat: int) -> tuple[float, int]:
    """Returns the best moves/s of the replay command's path over a ledger, and the moves."""
    moves = [0]

    def run() -> int:
        summary = run_mod.summarise(read_events(root))
        moves[0] = summary.moves
        return summary.moves

    return best_rate(run, repeat), moves[0]


def command_seconds(root: Path) -> float:
    """Returns the wall time of `matchledger replay` on a ledger, start-up included."""
    exe = Path(sys.executable).with_name("matchledger")
    t0 = time.perf_counter()
    subprocess.run([str(exe), "replay", "--ledger", str(root), "--json"], capture_output=True, check=False)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    peer = chess_games(80, seed=2026)
    chess_rate = best_rate(lambda: replay_chess(peer), args.repeat)
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for game in GAMES:
            root = Path(tmp) / game
            init(root)
            simulate_games(root, game, args.games, seed=7)
            rate, moves = replay_rate(root, args.repeat)
            ratios.append(rate / chess_rate)
            print(f"{game:>8}: replay from the ledger {rate:>10,.0f} moves/s ({moves:,} moves, {args.games} games); "
                  f"ratio {rate / chess_rate:.2f}; the command, start-up included: {command_seconds(root):.2f} s")
    print(f"python-chess push_uci: {chess_rate:,.0f} moves/s")
    print(f"replay_cli: ratio {min(ratios):.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
