"""The certification of the 10,000-game event on Apache Spark (`local[2]`, an export of the event)
against the DuckDB path over the ledger, in the same run on the same machine: seconds of each,
the ratio, and the CPU time per event of Spark's processes (its JVM and the Python workers that
replay the games) and of the driver, the driver's peak RSS (its Python process; in local mode
the executors run in its JVM, whose peak is said beside it) and the rows that reached the driver.
The DuckDB path runs in a forked child first, so that its memory is not the driver's. No goal on 2
cores: the figures feed the cluster size in bench/README.md. The event is bench/audit.py's, copied once (the export keeps its projection
inside the ledger it reads) and exported once, beside it in the bench cache.

Linux only: the CPU times are read from /proc for this process and every process below it."""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
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
        projection, db, _, _ = projection_of(ledger, LogReader(ledger).packed())
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


def peak_kb(pid: int | str = "self") -> int:
    """Returns a process's peak resident set (VmHWM) in KB, 0 when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def _is_java(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "java"
    except OSError:
        return False


def frame_class() -> type:
    """Returns the DataFrame class whose methods hand rows to the driver (pyspark 4's classic one)."""
    try:
        from pyspark.sql.classic.dataframe import DataFrame as Classic
    except ImportError:
        from pyspark.sql import DataFrame
        return DataFrame
    return Classic


class Collected:
    """Counts the rows Spark hands to the driver (collect, toArrow, toLocalIterator) while active."""

    def __init__(self) -> None:
        self.rows = 0
        self.calls = 0

    def __enter__(self) -> Collected:
        DataFrame = frame_class()  # noqa: N806

        self._saved = {name: getattr(DataFrame, name) for name in ("collect", "toArrow", "toLocalIterator")}
        counter = self

        def counted(name: str):  # noqa: ANN202
            original = self._saved[name]

            def call(frame, *args, **kwargs):  # noqa: ANN001, ANN202
                got = original(frame, *args, **kwargs)
                if name == "toLocalIterator":
                    return counter._iterated(got)
                counter.calls += 1
                counter.rows += got.num_rows if name == "toArrow" else len(got)
                return got

            return call

        for name in self._saved:
            setattr(DataFrame, name, counted(name))
        return self

    def _iterated(self, rows):  # noqa: ANN001, ANN202
        self.calls += 1
        for row in rows:
            self.rows += 1
            yield row

    def __exit__(self, *exc: object) -> None:
        DataFrame = frame_class()  # noqa: N806

        for name, original in self._saved.items():
            setattr(DataFrame, name, original)


def _duckdb_child(ledger: Path, sender) -> None:  # noqa: ANN001
    t0 = time.perf_counter()
    local = certify(ledger)
    sender.send((time.perf_counter() - t0, local.log.size, summary(local), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
    sender.close()


def duckdb_path(ledger: Path) -> tuple[float, int, tuple, int]:
    """Certifies the ledger in a forked child; returns its seconds, entries, summary and peak RSS (KB)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_duckdb_child, args=(ledger, sender))
    child.start()
    sender.close()
    got = receiver.recv()
    child.join()
    return got


def summary(cert: Certification) -> tuple[bool, int, list[tuple[str, int, int]]]:
    return cert.ok, cert.games, [(c.name, c.checked, c.failed) for c in cert.checks]


def main() -> None:
    ledger, out = prepare()
    print(f"load before: {os.getloadavg()}", flush=True)
    duckdb_s, events, local, duckdb_kb = duckdb_path(ledger)
    print(f"DuckDB path (verify, replay, project, every check) over the ledger: {duckdb_s:.1f} s, {events / duckdb_s:,.0f} events/s, "
          f"peak RSS {duckdb_kb / 1024:,.0f} MB (forked child)")
    own0, below0 = cpu_seconds()
    t0 = time.perf_counter()
    with Collected() as collected:
        report, session = open_export(out, Verifier.load(ledger / PUBLIC_KEY), MASTER)
        opened = time.perf_counter() - t0
        remote = certify_session(report, session)
    spark_s = time.perf_counter() - t0
    own1, below1 = cpu_seconds()
    jvm = max((peak_kb(pid) for pid in _descendants(os.getpid()) if _is_java(pid)), default=0)
    print(f"Spark {MASTER} over the export: {spark_s:.1f} s ({opened:.1f} s to check the export, replay and load; "
          f"{spark_s - opened:.1f} s for the checks), {events / spark_s:,.0f} events/s")
    spark_cpu, driver_cpu = below1 - below0, own1 - own0
    print(f"CPU: Spark's JVM and Python workers {spark_cpu:.1f} s ({spark_cpu / events * 1e6:.1f} µs an event), "
          f"the driver's Python {driver_cpu:.1f} s ({driver_cpu / events * 1e6:.1f} µs an event)")
    print(f"driver: peak RSS {peak_kb() / 1024:,.0f} MB (Python), {jvm / 1024:,.0f} MB (its JVM, the local executors inside); "
          f"{collected.rows:,} rows reached the driver in {collected.calls} collects")
    print(f"same verdict and check counts: {local == summary(remote)}")
    print(f"load after: {os.getloadavg()}")
    print(f"spark: ratio {duckdb_s / spark_s:.3f} (DuckDB seconds over Spark seconds on the same machine; no goal on 2 cores)")


if __name__ == "__main__":
    main()
