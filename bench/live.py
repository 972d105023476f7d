"""The live audit's fold against the batch replay of the same events, measured in the same run.

Live: `LiveAuditor.feed` takes the entries of seeded bot games of each game one at a time, the
games interleaved as tables playing at once send them (a round-robin over the tables), each event
pushed into its game's engine fold and one step pulled out. Batch: `replay.run.replay_all` over
the same events (grouped by stream, each game folded whole). Both count events per second of
CPU time (`time.process_time`: the machines are shared), best of `--repeat`; the last line prints
the ratio live ÷ batch. Round checks are not in either: they run once per round close (SQL over
the data so far), not per event.

    .venv/bin/python bench/live.py [--games 30] [--repeat 5] [--batch 1] [--contiguous]

`--batch N` feeds N entries per call (a group commit's worth); `--contiguous` feeds each game's
events one game after another instead of interleaved.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.live.auditor import LiveAuditor  # noqa: E402
from bench.common import best_rate  # noqa: E402
from replay.registry import GAMES, SEATS, engine  # noqa: E402
from replay.run import replay_all  # noqa: E402
from schemas.common import GameStarted  # noqa: E402
from schemas.envelope import Event, SeatHolder  # noqa: E402

GOAL = 0.50
"""Live may cost up to twice the batch per event: it keeps every game's events, facts and state
resident for the round checks (a batch replay frees each game once folded) and does an entry's
bookkeeping per event."""


def bot_games(game: str, n: int, seed: int) -> list[list[Event]]:
    """Returns the events of n seeded bot games of one game."""
    rng = random.Random(seed)
    eng = engine(game)
    seats = [SeatHolder(seat=s, player=f"P{s}") for s in range(SEATS[game])]
    return [eng.bot_game(GameStarted(stream=f"bench/{game}/t{i}", seq=0, ts=1_764_000_000_000, profile=eng.profile_type(),  # type: ignore[arg-type]
                                     seats=seats, first=i % SEATS[game]), random.Random(rng.getrandbits(64))) for i in range(n)]


def interleaved(games: list[list[Event]]) -> list[Event]:
    """Returns the games' events as tables playing at once send them: one event of each table in turn."""
    return [e for row in itertools.zip_longest(*games) for e in row if e is not None]


def live_rate(events: list[Event], batch: int) -> int:
    """Feeds the entries `batch` at a time; returns the event count."""
    live = LiveAuditor()
    entries = list(enumerate(events))
    for at in range(0, len(entries), batch):
        live.feed(entries[at:at + batch])
    assert live.steps_folded == len(events)
    return len(events)


def batch_rate(events: list[Event]) -> int:
    """Replays every game whole; returns the event count."""
    return sum(len(r.step_facts) for r in replay_all(events))


def main() -> None:
    """Measures both and prints one line per game and the ratio over all of them."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="bot games of each game")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1, help="entries per feed call")
    parser.add_argument("--contiguous", action="store_true", help="each game's events together, not interleaved")
    args = parser.parse_args()
    order = (lambda games: [e for g in games for e in g]) if args.contiguous else interleaved
    everything: list[Event] = []
    for game in GAMES:
        events = order(bot_games(game, args.games, seed=2026))
        everything += events
        live = best_rate(functools.partial(live_rate, events, args.batch), args.repeat, time.process_time)
        batch = best_rate(functools.partial(batch_rate, events), args.repeat, time.process_time)
        print(f"{game:9s} {len(events):7d} events: live {live:10,.0f} events/s, batch replay {batch:10,.0f} events/s, ratio {live / batch:.2f}")
    live = best_rate(lambda: live_rate(everything, args.batch), args.repeat, time.process_time)
    batch = best_rate(lambda: batch_rate(everything), args.repeat, time.process_time)
    print(f"all       {len(everything):7d} events: live {live:10,.0f} events/s, batch replay {batch:10,.0f} events/s")
    print(f"live: ratio {live / batch:.2f} (goal ≥ {GOAL:.2f})")


if __name__ == "__main__":
    main()
