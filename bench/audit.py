"""End-to-end audit (verify, replay, project, every query) of a simulated event of 10,000 games,
in events per second and seconds, with the time of each query. The figure is a ratio against
python-chess `push_uci` (the engine benches' peer), timed in the same run before and after the audit:
the goal, 10 s for the 3.13 M-event Junqi event, was set on 2026-11-29 where python-chess replayed
128,000 moves/s, so it asks for at least 2.45 audited events per python-chess move (GOAL_EVENTS_PER_MOVE);
the ratio is the measured events per move over that. Also DuckDB rows/s of the heaviest query beside a
plain DuckDB aggregate over the same rows (the limit). The event is generated once and cached outside
the repository.

The simulator records a round's games one after another. With MATCHLEDGER_BENCH_INTERLEAVED=1 the
bench audits a copy of the event re-recorded as concurrent tables would send it: each round's game
events in timestamp order, every table's game running at once."""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.certification.certify import collect_findings  # noqa: E402
from audit.query.db import QUERIES  # noqa: E402
from audit.query.session import movement_ranking, open_verified_session  # noqa: E402
from audit.simulator.simulate import record_events  # noqa: E402
from audit.simulator.tournament import TournamentPlan, simulate_tournament  # noqa: E402
from bench.common import CACHE, best_rate, chess_games, event_plan, replay_chess  # noqa: E402
from ledger import LogReader, store  # noqa: E402
from ledger.store import Ledger  # noqa: E402
from ledger.verify import verify  # noqa: E402
from schemas.envelope import Event  # noqa: E402

GAMES = int(os.environ.get("MATCHLEDGER_BENCH_GAMES", "10000"))
GAME = os.environ.get("MATCHLEDGER_BENCH_GAME", "junqi")
INTERLEAVED = os.environ.get("MATCHLEDGER_BENCH_INTERLEAVED") == "1"
GOAL_EVENTS_PER_MOVE = 3_132_445 / 10.0 / 128_000
"""The 10 s goal for the 3.13 M-event Junqi event, in events per python-chess move, as set on a
machine where python-chess replayed 128,000 moves/s (bench/README.md, 2026-11-29)."""


def plan() -> TournamentPlan:
    """A duplicate event of GAMES games (Junqi, or Paohuzi with MATCHLEDGER_BENCH_GAME=paohuzi):
    5 rounds of 8 boards, as many tables as needed."""
    return event_plan(GAME, GAMES, 10_000)


def build(root: Path) -> None:
    store.init(root)
    print(f"building a {plan().expected_games():,}-game event in {root} (once) …", flush=True)
    simulate_tournament(root, plan(), movement_ranking)


def interleave(source: Path, root: Path) -> None:
    """Re-records an event with the games of each round interleaved: the game events between two
    tournament events in timestamp order (a stable sort, so every stream keeps its own order)."""
    store.init(root)
    print(f"re-recording {source.name} with each round's games interleaved in {root} (once) …", flush=True)
    games: list[Event] = []
    tournament: list[Event] = []
    with Ledger.open(root) as ledger:
        for event in LogReader(source).events():
            if event.kind.startswith("tournament."):
                _record(ledger, sorted(games, key=lambda e: e.ts))
                games.clear()
                tournament.append(event)
            else:
                _record(ledger, tournament)
                tournament.clear()
                games.append(event)
        _record(ledger, tournament)
        _record(ledger, sorted(games, key=lambda e: e.ts))
        ledger.checkpoint()


def _record(ledger: Ledger, events: list[Event], batch: int = 4096) -> None:
    for i in range(0, len(events), batch):
        record_events(ledger, events[i:i + batch])


def timed(label: str, fn, times: dict[str, float]):  # noqa: ANN001, ANN201
    t0 = time.perf_counter()
    value = fn()
    times[label] = time.perf_counter() - t0
    return value


def _cpu() -> float:
    """Returns the CPU seconds (user + system) of this process and of its children waited for: on a
    shared machine the audit's work, where its wall time is the load's."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    root = CACHE / (f"audit-{GAMES}" if GAME == "junqi" else f"audit-{GAME}-{GAMES}")
    if not (root / "ledger.json").exists():
        build(root)
    if INTERLEAVED:
        source, root = root, root.with_name(f"{root.name}-interleaved")
        if not (root / "ledger.json").exists():
            interleave(source, root)
    chess = chess_games(40, seed=1)
    chess_before = best_rate(lambda: replay_chess(chess), 3)
    times: dict[str, float] = {}
    cpu = _cpu()
    report, session = timed("verify beside replay, project, load DuckDB", lambda: open_verified_session(root), times)
    assert report.ok and session is not None, report.error
    timed("run every check (SQL, seating, deals)", lambda: collect_findings(session, None), times)
    total = sum(times.values())
    cpu = _cpu() - cpu
    for label, seconds in times.items():
        print(f"  {label:<44} {seconds:8.3f} s")
    alone = time.perf_counter()
    verify(root)
    print(f"  (verify alone, for comparison: {time.perf_counter() - alone:.3f} s)")
    games = len(session.projection.games)
    print(f"audit of {games:,} games, {report.size:,} events: {total:.2f} s, {report.size / total:,.0f} events/s; "
          f"{cpu:.2f} s of CPU (user + system, this process and its workers)")
    query_times: dict[str, float] = {}
    for name, query in QUERIES.items():
        if query.check:
            timed(name, lambda n=name: session.db.run(n, tournament=None), query_times)
    print("  each check query again, alone: " + ", ".join(f"{n} {t:.3f} s" for n, t in sorted(query_times.items(), key=lambda x: -x[1])))
    heaviest = max(query_times, key=query_times.get)  # type: ignore[arg-type]
    rows = session.db.query("SELECT count(*) FROM steps")[1][0][0]
    t1 = time.perf_counter()
    session.db.query("SELECT stream, count(*), max(seq), sum(quiet) FROM steps GROUP BY stream")
    plain = time.perf_counter() - t1
    print(f"heaviest query {heaviest}: {rows / query_times[heaviest]:,.0f} rows/s; a plain DuckDB aggregate over the same "
          f"{rows:,} rows: {rows / plain:,.0f} rows/s (ratio {plain / query_times[heaviest]:.2f})")
    chess_rate = max(chess_before, best_rate(lambda: replay_chess(chess), 3))
    per_move = report.size / total / chess_rate
    print(f"python-chess push_uci: {chess_rate:,.0f} moves/s (best of 3 before and 3 after); "
          f"{per_move:.2f} audited events per python-chess move (goal ≥ {GOAL_EVENTS_PER_MOVE:.2f})")
    print(f"audit: ratio {per_move / GOAL_EVENTS_PER_MOVE:.2f} (goal ≥ 1.00)")


if __name__ == "__main__":
    main()
