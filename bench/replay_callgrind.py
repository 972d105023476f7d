"""`matchledger replay`'s timed path counted in instructions (valgrind's callgrind), which the load of a
shared machine does not disturb: the same path as `bench/replay_cli.py` (read the ledger, decode,
replay every game, summarise) over its cached ledger (run it first to build the ledger).

The path is run once, then once more in another process that runs it twice: the difference is one
warm run, as the bench's best of several rounds sees it (decoders built, caches filled), without
the interpreter's start-up and imports. `--read` counts reading and decoding the ledger alone.
Needs valgrind; a run takes a few minutes under it.

    python bench/replay_callgrind.py [--game paohuzi] [--games 200] [--read]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CACHE  # noqa: E402

GAMES = ("checkers", "junqi", "paohuzi")


def instructions(root: Path, what: str, times: int) -> int:
    """Returns the instructions of a process that imports the engines and runs `what` `times` times."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
         "--inner", what, "--times", str(times), "--root", str(root)],
        capture_output=True, text=True, check=True,
    ).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise SystemExit(f"no callgrind total in valgrind's output:\n{out[-2000:]}")
    return int(found.group(1))


def inner(what: str, times: int, root: Path) -> None:
    """The process callgrind counts: the engines imported, then the path `times` times."""
    import replay.checkers.fold  # noqa: F401
    import replay.junqi.fold  # noqa: F401
    import replay.paohuzi.fold  # noqa: F401
    from ledger import LogReader
    from replay import run as run_mod

    for _ in range(times):
        if what == "replay":
            run_mod.summarise(LogReader(root).events())
        else:
            list(LogReader(root).events())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--game", choices=GAMES, default="paohuzi")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--read", action="store_true", help="count reading and decoding only")
    parser.add_argument("--inner", choices=("replay", "read"), help=argparse.SUPPRESS)
    parser.add_argument("--times", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner, args.times, args.root)
        return
    root = CACHE / f"replay-cli-{args.game}-{args.games}"
    if not root.exists():
        raise SystemExit(f"no cached ledger at {root}: run `python bench/replay_cli.py --game {args.game}` first")
    what = "read" if args.read else "replay"
    once, twice = instructions(root, what, 1), instructions(root, what, 2)
    print(f"{args.game}: {what} of {args.games} games from the ledger, one warm run: {(twice - once) / 1e6:,.1f} M instructions")


if __name__ == "__main__":
    main()
