"""The certification of the 10,000-game event on Apache Spark (`local[2]`, an export of the event)
against the DuckDB path over the ledger, in the same run on the same machine: seconds of each,
the ratio, and the CPU time per event of Spark's processes (its JVM and the Python workers that
replay the games) and of the driver. No goal on 2 cores: the figures feed the cluster size in
bench/README.md. The event is bench/audit.py's, copied once (the export keeps its projection
inside the ledger it reads) and exported once, beside it in the bench cache.

Linux only: the CPU times are read from /proc for this process and every process below it."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.certification.certify import Certification, certify, certify_session  # noqa: E402
from audit.lake.export import MANIFEST, MANIFEST_FORMAT, export_parquet  # noqa: E402
from audit.query.projection_cache import projection_of  # noqa: E402
from audit.spark.session import open_export  # noqa: E402
from bench.audit import GAMES, build  # noqa: E402
from bench.common import CACHE  # noqa: E402
from ledger import LogReader, Verifier
from ledger.layout import PUBLIC_KEY

MASTER = os.environ.get("MATCHLEDGER_BENCH_MASTER", "local[2]")
_TICKS = os.sysconf("SC_CLK_TCK")


def prepare() -> tuple[Path, Path]:
    """Returns a copy of bench/audit.py's event (built there when missing) and its export."""
    source = CACHE / f"audit-{GAMES}"
    if not (source / "ledger.json").exists():
        build(source)
    base = CACHE / f"spark-{GAMES}"
    ledger, out = base / "ledger", base / "parquet"
    if not (ledger / "ledger.json").exists():
        print(f"copying {source} to {ledger} (once) …", flush=True)
        shutil.copytree(source, ledger)
    if not _current(out):
        print(f"exporting {ledger} to {out} (once per export format) …", flush=True)
        shutil.rmtree(out, ignore_errors=True)
        projection, db, _ = projection_of(ledger, LogReader(ledger).packed())
        export_parquet(ledger, projection, out, db)
    return ledger, out


def _current(out: Path) -> bool:
    """Tells whether an export is there in this version's format."""
    try:
        return json.loads((out / MANIFEST).read_text())["format"] == MANIFEST_FORMAT
    except (OSError, ValueError, KeyError):
        return False


def cpu_seconds() -> tuple[float, float]:
    """Returns the CPU seconds (user + system) of this process and of every live process below it."""
    own = _cpu(os.getpid())
    below = sum(_cpu(pid) for pid in _descendants(os.getpid()))
    return own, below


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def summary(cert: Certification) -> tuple[bool, int, list[tuple[str, int, int]]]:
    return cert.ok, cert.games, [(c.name, c.checked, c.failed) for c in cert.checks]


def main() -> None:
    ledger, out = prepare()
    t0 = time.perf_counter()
    local = certify(ledger)
    duckdb_s = time.perf_counter() - t0
    events = local.log.size
    print(f"DuckDB path (verify, replay, project, every check) over the ledger: {duckdb_s:.1f} s, {events / duckdb_s:,.0f} events/s")
    own0, below0 = cpu_seconds()
    t0 = time.perf_counter()
    report, session = open_export(out, Verifier.load(ledger / PUBLIC_KEY), MASTER)
    opened = time.perf_counter() - t0
    remote = certify_session(report, session)
    spark_s = time.perf_counter() - t0
    own1, below1 = cpu_seconds()
    print(f"Spark {MASTER} over the export: {spark_s:.1f} s ({opened:.1f} s to check the export, replay and load; "
          f"{spark_s - opened:.1f} s for the checks), {events / spark_s:,.0f} events/s")
    spark_cpu, driver_cpu = below1 - below0, own1 - own0
    print(f"CPU: Spark's JVM and Python workers {spark_cpu:.1f} s ({spark_cpu / events * 1e6:.1f} µs an event), "
          f"the driver's Python {driver_cpu:.1f} s ({driver_cpu / events * 1e6:.1f} µs an event)")
    print(f"same verdict and check counts: {summary(local) == summary(remote)}")
    print(f"spark: ratio {duckdb_s / spark_s:.3f} (DuckDB seconds over Spark seconds on the same machine; no goal on 2 cores)")


if __name__ == "__main__":
    main()
