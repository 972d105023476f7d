"""A season, not an event (issue 32, Show): the commands' time and peak memory on ONE event and on a
season of EVENTS events in one log, and the season/event ratios.

The season is MATCHLEDGER_BENCH_SEASON_EVENTS (default 10) tournaments of
MATCHLEDGER_BENCH_SEASON_GAMES games each (default 10,000: about 30 M entries), Junqi, Paohuzi and
checkers in turn, each a real tournament of the simulator (its own id, registrations, a committed
draw, rounds seated by the movement or Swiss rules, round closings). It is built once and cached
under MATCHLEDGER_BENCH_CACHE (`season-<games>x<events>/`): each event in its own ledger through
`simulate_tournament` (the builder of bench/audit.py; its between-round rankings then read only
that event, not the season so far), MATCHLEDGER_BENCH_SEASON_JOBS of them at once in worker
processes (default: the CPU count), then recorded one after another into the season's log in
batches of BATCH events (one append, one sync and one checkpoint per batch). The first event is
bench/audit.py's Junqi event at the same scale: when that bench's cache holds it, it is copied, not
built again. The event ledger kept is the first; the others go once recorded into the season.

Each command runs on a scratch copy (the commands keep derived files in the ledger), as a child
process under `/usr/bin/time` (wall seconds, peak RSS, CPU seconds), in this order: `verify`,
`replay`, `audit --certificate` (full, signed by a bench auditor key), `standings (first)` of the
first tournament (it builds the projection and keeps it), `record` of one more game (a free Junqi
game), `standings` again (the first command to see that game: the kept projection extended),
`audit --since` the certificate (skipped with a note when `audit --help` has no `--since`), `audit`
again (the full peer of `--since` at the same size), `export --parquet`, and `serve` start-up to
`/healthz` saying `live: ready` (bench/serve_start.py, no kept live files). MATCHLEDGER_BENCH_SEASON_SKIP
(comma-separated labels, e.g. `serve`) leaves commands out.

Last lines: each command's season/event ratios of time and memory beside its goal (linear work:
time ≤ 1.05 × the entries' ratio, which is 10.5 at ten like events; work that follows the change
(`record`, `standings` after a game, `audit --since`, `serve`): ≈ 1; memory: ≈ 1 for all), and
`audit --since` over the full `audit` on the season (goal ≤ 0.05)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CACHE, event_plan  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
GAMES = int(os.environ.get("MATCHLEDGER_BENCH_SEASON_GAMES", "10000"))
EVENTS = int(os.environ.get("MATCHLEDGER_BENCH_SEASON_EVENTS", "10"))
JOBS = int(os.environ.get("MATCHLEDGER_BENCH_SEASON_JOBS", str(os.cpu_count() or 1)))
SKIP = {s for s in os.environ.get("MATCHLEDGER_BENCH_SEASON_SKIP", "").split(",") if s}
KEEP = os.environ.get("MATCHLEDGER_BENCH_SEASON_KEEP") == "1"
ROTATION = ("junqi", "paohuzi", "checkers")
FIRST_SEED = 10_000
"""bench/audit.py's seed: the season's first event is that bench's event."""
BATCH = 65_536
"""Events per append when an event is recorded into the season's log."""
CLI = (sys.executable, "-c", "from audit.cli import main; main()")
BUILT = "season.json"
"""The build's record, written last: a season directory without it is an interrupted build."""

LINEAR = {"verify", "replay", "audit", "standings (first)", "audit (again)", "export --parquet"}
"""The commands that read the whole log by design: their time may follow the season (linearly)."""


@dataclass(frozen=True)
class Figure:
    """One command's run: wall seconds, peak RSS in MB, CPU seconds (user + system) and exit status."""

    seconds: float
    rss_mb: int
    cpu: float
    status: int


def plans(games: int = GAMES, events: int = EVENTS) -> list:  # noqa: ANN001 - TournamentPlans
    """Returns the season's tournaments: the games in turn, seeds from bench/audit.py's on."""
    return [event_plan(ROTATION[k % len(ROTATION)], games, FIRST_SEED + k) for k in range(events)]


def season_dir(games: int = GAMES, events: int = EVENTS, cache: Path = CACHE) -> Path:
    return cache / f"season-{games}x{events}"


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_self() -> float:
    """This process's CPU seconds and those of its children waited for (the projection's workers)."""
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def build_event(root: Path, plan) -> dict[str, object]:  # noqa: ANN001 - a TournamentPlan
    """Records one tournament into a new ledger at `root` (built beside it, renamed when whole);
    returns its figures. The rankings' kept projection is dropped: the cached event is the log alone."""
    from audit.query.session import movement_ranking
    from audit.simulator.tournament import simulate_tournament
    from ledger import store

    part = root.with_name(root.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    t0, cpu = time.perf_counter(), _cpu_self()
    store.init(part)
    result = simulate_tournament(part, plan, movement_ranking)
    shutil.rmtree(part / "derived", ignore_errors=True)
    part.rename(root)
    return {"tournament": plan.tournament, "game": plan.game, "games": result.games, "entries": result.size,
            "seconds": time.perf_counter() - t0, "cpu": _cpu_self() - cpu}


def _copy_cached_event(source: Path, root: Path, plan) -> dict[str, object]:  # noqa: ANN001
    from ledger import LogReader

    shutil.copytree(source, root, ignore=shutil.ignore_patterns("derived", "lock"))
    size = LogReader(root).size()
    print(f"  event 1 ({plan.tournament}): copied from {source} ({size:,} entries)", flush=True)
    return {"tournament": plan.tournament, "game": plan.game, "games": plan.expected_games(), "entries": size,
            "seconds": 0.0, "cpu": 0.0, "copied": str(source)}


def record_into(season, root: Path) -> int:  # noqa: ANN001 - an open Ledger
    """Records an event's signed entries into the season's open ledger in batches of BATCH, through
    the recorder's own validation; returns how many."""
    from audit.simulator.simulate import record_events
    from ledger import LogReader
    from schemas import decode_stored

    done, payloads = 0, []
    for _, data in LogReader(root).entries():
        payloads.append(data)
        if len(payloads) == BATCH:
            done += record_events(season, decode_stored(payloads))
            payloads.clear()
    if payloads:
        done += record_events(season, decode_stored(payloads))
    return done


def build_season(games: int = GAMES, events: int = EVENTS, jobs: int = JOBS, cache: Path = CACHE) -> Path:
    """Builds the season once (see the module's docstring); returns its directory, which holds
    `event` (the first event's ledger), `season` (every event's, in one log) and BUILT."""
    from ledger import Ledger, store

    out = season_dir(games, events, cache)
    if (out / BUILT).exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    season_plans = plans(games, events)
    roots = [out / f"event-{k + 1:02d}" for k in range(events)]
    figures: dict[int, dict[str, object]] = {}
    todo = []
    cached = cache / f"audit-{games}"
    for k, (root, plan) in enumerate(zip(roots, season_plans)):
        if root.exists() and (root / "ledger.json").exists():
            print(f"  event {k + 1} ({plan.tournament}): built before", flush=True)
            figures[k] = {"tournament": plan.tournament, "game": plan.game, "games": plan.expected_games(),
                          "entries": None, "seconds": 0.0, "cpu": 0.0, "reused": True}
        elif k == 0 and (cached / "ledger.json").exists():
            figures[k] = _copy_cached_event(cached, root, plan)
        else:
            todo.append(k)
    print(f"building {len(todo)} of {events} events of ~{games:,} games ({', '.join(ROTATION)} in turn) in {out}, "
          f"{min(jobs, max(1, len(todo)))} at once; load average {os.getloadavg()[0]:.2f} …", flush=True)
    t0, cpu = time.perf_counter(), _cpu_children()
    if todo:
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
            running = {k: pool.submit(build_event, roots[k], season_plans[k]) for k in todo}
            for k, future in running.items():
                figures[k] = future.result()
                f = figures[k]
                print(f"  event {k + 1} ({f['tournament']}): {f['games']:,} games, {f['entries']:,} entries in "
                      f"{f['seconds']:.0f} s ({f['cpu']:.0f} s CPU)", flush=True)
    built_s, built_cpu = time.perf_counter() - t0, _cpu_children() - cpu
    part = out / "season.part"
    shutil.rmtree(part, ignore_errors=True)
    t1, cpu = time.perf_counter(), _cpu_self()
    store.init(part)
    with Ledger.open(part) as season:
        for k, root in enumerate(roots):
            figures[k]["entries"] = record_into(season, root)
        season.checkpoint()
        size = season.size
    record_s, record_cpu = time.perf_counter() - t1, _cpu_self() - cpu
    print(f"  recorded {size:,} entries into the season's log in {record_s:.0f} s ({size / record_s:,.0f} entries/s)", flush=True)
    shutil.rmtree(out / "season", ignore_errors=True)
    part.rename(out / "season")
    shutil.rmtree(out / "event", ignore_errors=True)
    roots[0].rename(out / "event")
    for root in roots[1:]:
        shutil.rmtree(root)
    made = [f for f in figures.values() if not f.get("copied") and not f.get("reused")]
    record = {"games": games, "events": events, "jobs": jobs, "entries": size, "event_entries": figures[0]["entries"],
              "events_built": [figures[k] for k in range(events)], "build_seconds": built_s, "build_cpu": built_cpu,
              "built_games": sum(int(cast(int, f["games"])) for f in made), "built_entries": sum(int(cast(int, f["entries"])) for f in made),
              "record_seconds": record_s, "record_cpu": record_cpu, "load": os.getloadavg()[0]}
    (out / BUILT).write_text(json.dumps(record, indent=1))
    return out


def timed(args: list[str], work: Path, label: str) -> Figure:
    """Runs one matchledger command under `/usr/bin/time`; its output goes to `work/<label>.out|err`."""
    name = label.replace(" ", "_").replace("(", "").replace(")", "")
    stamp = work / f"{name}.time"
    with (work / f"{name}.out").open("w") as out, (work / f"{name}.err").open("w") as err:
        status = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(stamp), *CLI, *args], cwd=REPO, stdout=out,
                                stderr=err).returncode
    seconds, kb, user, system = stamp.read_text().split()[-4:]  # (after a "Command exited with non-zero status" line)
    return Figure(float(seconds), round(int(kb) / 1024), float(user) + float(system), status)


def has_since() -> bool:
    """Tells whether this checkout's `audit` takes `--since` (another change adds it)."""
    text = subprocess.run([*CLI, "audit", "--help"], cwd=REPO, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}).stdout
    return "--since" in text


def extra_game(path: Path) -> None:
    """Writes one more Junqi bot game, outside every tournament, as JSON lines `record` takes."""
    import random

    from audit.simulator.simulate import START_MS, game_start
    from replay.registry import engine
    from schemas import encode

    start = game_start("junqi", "season-extra/g1", ["X1", "X2", "X3", "X4"], 0, START_MS + 400 * 86_400_000)
    path.write_bytes(b"".join(encode(e) + b"\n" for e in engine("junqi").bot_game(start, random.Random(32))))


EXPECTED = {"replay": (0, 1), "audit": (0, 1), "audit (again)": (0, 1), "audit --since": (0, 1)}
"""Exit statuses that are figures: a finding (1) is still a timed run; anything else is a failure."""


def measure(ledger: Path, work: Path, tournament: str, since: bool) -> dict[str, Figure]:
    """Times every command on `ledger` (a scratch copy), in the module docstring's order."""
    from bench.serve_start import start

    work.mkdir(parents=True, exist_ok=True)
    key = work / "auditor.key"
    subprocess.run([*CLI, "keygen", "--name", "bench-auditor", "--out", str(key)], cwd=REPO, check=True, capture_output=True)
    extra_game(work / "extra.jsonl")
    cert = work / "audit.cert"
    steps: list[tuple[str, list[str]]] = [
        ("verify", ["verify", "--ledger", str(ledger), "--json"]),
        ("replay", ["replay", "--ledger", str(ledger), "--json"]),
        ("audit", ["audit", "--ledger", str(ledger), "--certificate", str(cert), "--auditor-key", str(key), "--json"]),
        ("standings (first)", ["standings", "--ledger", str(ledger), "--tournament", tournament, "--json"]),
        ("record", ["record", "--ledger", str(ledger), str(work / "extra.jsonl"), "--json"]),
        ("standings", ["standings", "--ledger", str(ledger), "--tournament", tournament, "--json"]),
        ("audit --since", ["audit", "--ledger", str(ledger), "--since", str(cert), "--certificate", str(work / "since.cert"),
                           "--auditor-key", str(key), "--json"]),
        ("audit (again)", ["audit", "--ledger", str(ledger), "--json"]),
        ("export --parquet", ["export", "--ledger", str(ledger), "--parquet", str(work / "parquet")]),
    ]
    figures: dict[str, Figure] = {}
    for label, args in steps:
        if label in SKIP or label.split()[0] in SKIP or (label == "audit --since" and not since):
            continue
        figure = figures[label] = timed(args, work, label)
        ok = figure.status in EXPECTED.get(label, (0,))
        print(f"  {label:<18} {figure.seconds:9.2f} s {figure.rss_mb:7,} MB {figure.cpu:9.2f} s CPU  exit {figure.status}"
              + ("" if ok else "  FAILED: " + (work / f"{label.replace(' ', '_').replace('(', '').replace(')', '')}.err")
                 .read_text().strip()[-300:]), flush=True)
    if "serve" not in SKIP:
        shutil.rmtree(ledger / "derived" / "live", ignore_errors=True)
        served = start(ledger, work / "serve.log")
        ready, peak = served["ready_s"], served["peak_rss_mb"]
        assert ready is None or isinstance(ready, float)
        assert isinstance(peak, int)
        times = [float(line.split(":")[1]) for line in (work / "serve.log").read_text().splitlines()
                 if line.strip().startswith(("User time (seconds)", "System time (seconds)"))]
        figures["serve"] = Figure(float(ready) if ready is not None else float("nan"), int(peak),
                                  sum(times) if times else float("nan"), 0 if ready is not None else 1)
        serve = figures["serve"]
        print(f"  {'serve':<18} {serve.seconds:9.2f} s {serve.rss_mb:7,} MB {serve.cpu:9.2f} s CPU  (to live: ready; "
              f"started {served['started_s'] or float('nan'):.2f} s)", flush=True)
    return figures


def main() -> None:
    out = build_season()
    built = json.loads((out / BUILT).read_text())
    if built["built_games"]:
        rate = built["built_games"] / built["build_seconds"]
        print(f"build: {built['built_games']:,} games, {built['built_entries']:,} entries in {built['build_seconds']:.0f} s "
              f"({built['build_cpu']:.0f} s CPU, {built['jobs']} jobs, load {built['load']:.2f} at the end): {rate:.1f} games/s, "
              f"{built['build_cpu'] / built['built_games'] * 1000:.0f} ms CPU a game; then {built['entries']:,} entries recorded into "
              f"one log in {built['record_seconds']:.0f} s")
    tournaments = [(e["tournament"], e["game"], e["entries"]) for e in built["events_built"]]
    print(f"season: {built['entries']:,} entries in {len(tournaments)} tournaments "
          f"({', '.join(f'{t} {n:,}' for t, _, n in tournaments)}); the event: {tournaments[0][0]}, {built['event_entries']:,} entries")
    since = has_since()
    if not since:
        print("note: this checkout's `matchledger audit` has no --since: `audit --since` is skipped (issue 32 adds it)")
    scratch = Path(tempfile.mkdtemp(prefix="season-run-", dir=out))
    results: dict[str, dict[str, Figure]] = {}
    try:
        for name in ("event", "season"):
            ledger = scratch / name / "ledger"
            t0 = time.perf_counter()
            shutil.copytree(out / name, ledger)
            print(f"{name}: copied to {ledger} in {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f}", flush=True)
            results[name] = measure(ledger, scratch / name, tournaments[0][0], since)
    finally:
        if not KEEP:
            shutil.rmtree(scratch, ignore_errors=True)
    size_ratio = built["entries"] / built["event_entries"]
    print(f"season/event ({built['entries']:,} / {built['event_entries']:,} entries, ratio {size_ratio:.2f}); "
          f"load average {os.getloadavg()[0]:.2f}:")
    for label, event in results["event"].items():
        season = results["season"].get(label)
        if season is None or not all(f.status in EXPECTED.get(label, (0,)) for f in (event, season)):
            print(f"  {label:<18} no ratio: a run failed (see its exit status above)")
            continue
        goal = f"≤ {1.05 * size_ratio:.2f}" if label in LINEAR else "≈ 1"
        print(f"  {label:<18} time {season.seconds / event.seconds:6.2f} (goal {goal}; CPU {season.cpu / event.cpu:6.2f}), memory "
              f"{season.rss_mb / event.rss_mb:5.2f} (goal ≈ 1): {event.seconds:.2f} s / {event.rss_mb:,} MB → {season.seconds:.2f} s / "
              f"{season.rss_mb:,} MB")
    for name, figures in results.items():
        if "audit --since" in figures and "audit (again)" in figures and figures["audit --since"].status in EXPECTED["audit --since"]:
            print(f"audit --since / full audit on the {name}: {figures['audit --since'].seconds / figures['audit (again)'].seconds:.3f} "
                  f"(goal ≤ 0.05)")


if __name__ == "__main__":
    main()
