"""What a user waits for on a season-sized log: one-event `record`, one-game `prove` and `show --game`,
on simulated Junqi events of about 25k, 300k and 3 M entries. The ratio is the latency on the
largest log over the latency on the smallest (goal ≤ 1.30: an append costs the same on the first
day and at the end of a season). Each figure is the median of several calls in this process (the
CLI adds the same interpreter start-up to every size; it is printed once for reference).
The ledgers are built once and cached outside the repository; the 3 M one is a copy of
bench/audit.py's event when that is cached."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.query.session import movement_ranking  # noqa: E402
from audit.simulator.tournament import TournamentPlan, simulate_tournament  # noqa: E402
from bench.common import CACHE, event_plan  # noqa: E402
from ledger import LogReader, bundle, store  # noqa: E402
from ledger.recorder import record  # noqa: E402
from replay import run as run_mod  # noqa: E402

SIZES = {"small": 80, "300k": 960, "3M": 10_000}  # games of a 5-round Junqi event, about 313 entries each (80: the plan's least)
GAME = "junqi-cup-10000/r3/t1/g1"  # the plan's seed names the tournament
STREAM = "bench.record"
RUNS = int(os.environ.get("MATCHLEDGER_BENCH_RUNS", "15"))


def plan(games: int) -> TournamentPlan:
    """The event of bench/audit.py at a given number of games."""
    return event_plan("junqi", games, 10_000)


def ledger_for(games: int) -> Path:
    """Returns a cached ledger of `games` simulated games (copying bench/audit.py's when it has that size)."""
    root = CACHE / f"record-{games}"
    if (root / "ledger.json").exists():
        return root
    audit_copy = CACHE / f"audit-{games}"
    if (audit_copy / "ledger.json").exists():
        print(f"copying {audit_copy} to {root} (once) …", flush=True)
        shutil.copytree(audit_copy, root, ignore=shutil.ignore_patterns("lock"))
        return root
    print(f"building a {games:,}-game event in {root} (once) …", flush=True)
    store.init(root)
    simulate_tournament(root, plan(games), movement_ranking)
    return root


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    """Returns the median wall time of `runs` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def measure(root: Path, games: int) -> dict[str, float]:
    """Times one-event record, prove of one game and show of one game on a ledger."""
    with store.Ledger.open(root) as led:
        seq = [led.next_seq(STREAM)]
        size = led.size
    game = GAME

    def record_one() -> None:
        line = b'{"kind":"game.move_time","stream":"%s","seq":%d,"ts":%d,"seat":0,"ms":900}' % (STREAM.encode(), seq[0], 1_790_000_000_000 + seq[0])
        assert record(root, [line]).appended == 1
        seq[0] += 1

    def show_one() -> None:
        run_mod.position(list(LogReader(root).events(game)), game, None)

    figures = {"entries": float(size), "record": median_ms(record_one), "prove": median_ms(lambda: bundle.prove(root, game)),
               "show": median_ms(show_one)}
    return figures


def cli_record_ms(root: Path) -> float:
    """Returns the wall time of one `matchledger record` of one event, interpreter start-up included."""
    with store.Ledger.open(root) as led:
        seq = led.next_seq(STREAM)
    line = b'{"kind":"game.move_time","stream":"%s","seq":%d,"ts":1790000000000,"seat":0,"ms":900}\n' % (STREAM.encode(), seq)
    exe = Path(sys.executable).with_name("matchledger")
    t0 = time.perf_counter()
    subprocess.run([str(exe), "record", "--ledger", str(root), "-"], input=line, check=True, capture_output=True)
    return 1000 * (time.perf_counter() - t0)


def main() -> None:
    results = {}
    for label, games in SIZES.items():
        root = ledger_for(games)
        results[label] = measure(root, games)
        r = results[label]
        print(f"{label:>5} ({r['entries']:>12,.0f} entries): record {r['record']:7.2f} ms   prove {r['prove']:7.2f} ms   "
              f"show --game {r['show']:7.2f} ms", flush=True)
    print(f"  `matchledger record` of one event on the largest, start-up included: {cli_record_ms(ledger_for(SIZES['3M'])):.0f} ms")
    small, large = results["small"], results["3M"]
    for name in ("prove", "show", "record"):
        print(f"{name}: ratio {large[name] / small[name]:.2f} (goal ≤ 1.30)")


if __name__ == "__main__":
    main()
