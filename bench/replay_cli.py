"""`matchledger replay` end to end, from the ledger, for each game, against python-chess in the same run.

For each game a ledger of seeded bot games is simulated once (cached in the bench cache, outside the
repository, `MATCHLEDGER_BENCH_CACHE`; about a minute per game); then the
replay command's own path (read the log in batches, decode, replay every game, summarise) is timed
in this process, in moves per second, beside python-chess `Board.push_uci` over random legal games
(the engine benches' peer), the two taking turns. The wall time of the command itself, interpreter start-up included, is
printed for reference. The last line carries the smallest ratio.

    python bench/replay_cli.py [--games 200] [--repeat 5] [--game paohuzi]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.simulator.simulate import simulate_games  # noqa: E402
from bench.common import CACHE, chess_games, replay_chess  # noqa: E402
from ledger import LogReader, init  # noqa: E402
from replay import run as run_mod  # noqa: E402

GOAL = 1.00
GAMES = ("checkers", "junqi", "paohuzi")


def cached_ledger(game: str, games: int) -> Path:
    """Returns a ledger of `games` seeded bot games of `game`, simulated on the first call."""
    root = CACHE / f"replay-cli-{game}-{games}"
    if not root.exists():
        building = root.with_name(root.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        init(building)
        simulate_games(building, game, games, seed=7)
        building.rename(root)
    return root


class Rates(NamedTuple):
    replay: float
    chess: float
    cpu_ratio: float
    """The ratio of the two in moves per second of this process's CPU time, which the other work on
    a shared machine disturbs less than the wall time."""
    moves: int


def _rates(run: Callable[[], int]) -> tuple[float, float]:
    """Returns the items per second of one run of `run`, by the wall clock and by this process's CPU time."""
    t0, c0 = time.perf_counter(), time.process_time()
    items = run()
    return items / (time.perf_counter() - t0), items / (time.process_time() - c0)


def replay_rates(root: Path, peer: list[list[str]], repeat: int) -> Rates:
    """Returns the best moves/s of the replay command's path over a ledger and of python-chess over
    `peer`, each run once in turn `repeat` times (on a shared machine the load drifts within a
    run: taking turns gives both the same chances), and the moves replayed."""
    moves = [0]

    def run() -> int:
        summary = run_mod.summarise(LogReader(root).events())
        moves[0] = summary.moves
        return summary.moves

    rate = chess_rate = cpu_rate = chess_cpu_rate = 0.0
    for _ in range(repeat):
        wall, cpu = _rates(lambda: replay_chess(peer))
        chess_rate, chess_cpu_rate = max(chess_rate, wall), max(chess_cpu_rate, cpu)
        wall, cpu = _rates(run)
        rate, cpu_rate = max(rate, wall), max(cpu_rate, cpu)
    return Rates(rate, chess_rate, cpu_rate / chess_cpu_rate, moves[0])


def command_seconds(root: Path) -> float:
    """Returns the wall time of `matchledger replay` on a ledger, start-up included."""
    exe = Path(sys.executable).with_name("matchledger")
    t0 = time.perf_counter()
    subprocess.run([str(exe), "replay", "--ledger", str(root), "--json"], capture_output=True, check=False)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--game", choices=GAMES, action="append", help="only this game (repeatable; default: all three)")
    args = parser.parse_args()
    peer = chess_games(80, seed=2026)
    ratios = []
    for game in args.game or GAMES:
        root = cached_ledger(game, args.games)
        rate, chess_rate, cpu_ratio, moves = replay_rates(root, peer, args.repeat)
        ratios.append(rate / chess_rate)
        print(f"{game:>8}: replay from the ledger {rate:>10,.0f} moves/s ({moves:,} moves, {args.games} games) vs "
              f"python-chess push_uci {chess_rate:,.0f} moves/s; ratio {rate / chess_rate:.2f} (by CPU time {cpu_ratio:.2f}); "
              f"the command, start-up included: {command_seconds(root):.2f} s")
    print(f"replay_cli: ratio {min(ratios):.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
