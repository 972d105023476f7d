"""The live service's group commit in-process, against SQLite committing the same rows.

A group commit of `matchledger serve` (ledger/group_commit.py `Writer._write`) is `Ledger.append` of
its batches' events and records, then `Ledger.checkpoint(index=False)` (a signed note per commit),
with a full checkpoint (`checkpoint()`: stream index, partial tiles, served file) every 5 s. Here
each commit is 25 batches of two entries (an event and its batch record), as at 64 tables; the
peer inserts the same 50 rows in one SQLite transaction (WAL, synchronous=FULL). Prints the CPU
time of the committing thread per commit for both, the files created and synced per commit by
ours, and the CPU ratio (peer / ours: above 1 means ours costs less); the last line is
`commit: ratio X.XX`.

    python bench/commit.py [COMMITS]
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import move_time_lines  # noqa: E402
from ledger import store  # noqa: E402
from ledger.recorder import validate_lines  # noqa: E402

PER_COMMIT = 50  # 25 batches of two entries
WARM = 20  # commits before the measured ones (the tiles and notes directories exist)
FULL_EVERY_S = 5.0


class Counting:
    """Counts the files created (O_CREAT opens, directories made) and synced while it is on."""

    def __init__(self) -> None:
        self.created = self.synced = 0
        self._open, self._fsync, self._fdatasync, self._mkdir = os.open, os.fsync, os.fdatasync, os.mkdir

    def __enter__(self) -> Counting:
        def counted_open(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
            self.created += bool(flags & os.O_CREAT) and not os.path.lexists(path)
            return self._open(path, flags, *args, **kwargs)

        def counted_sync(fd):  # noqa: ANN001, ANN202
            self.synced += 1
            return self._fsync(fd)

        def counted_datasync(fd):  # noqa: ANN001, ANN202
            self.synced += 1
            return self._fdatasync(fd)

        def counted_mkdir(path, *args, **kwargs):  # noqa: ANN001, ANN202
            self.created += 1
            return self._mkdir(path, *args, **kwargs)

        os.open, os.fsync, os.fdatasync, os.mkdir = counted_open, counted_sync, counted_datasync, counted_mkdir
        return self

    def __exit__(self, *exc: object) -> None:
        os.open, os.fsync, os.fdatasync, os.mkdir = self._open, self._fsync, self._fdatasync, self._mkdir


def ours(tmp: Path, commits: int, lines: list[bytes], count: bool) -> tuple[float, float, float, float]:
    """Returns (CPU s per commit, wall s per commit, files created per commit, files synced per commit)."""
    root = tmp / "ledger"
    store.init(root)
    pending = validate_lines(lines, 65536)
    batches = [pending[i:i + PER_COMMIT] for i in range(0, len(pending), PER_COMMIT)]
    with store.Ledger.open(root) as led:
        for batch in batches[:WARM]:
            led.append(batch)
            led.checkpoint(index=False)
        counter = Counting()
        full_at = time.monotonic() + FULL_EVERY_S
        t0, c0 = time.perf_counter(), time.thread_time()
        with counter if count else _nothing():
            for batch in batches[WARM:WARM + commits]:
                led.append(batch)
                now = time.monotonic()
                led.checkpoint(index=now >= full_at)
                if now >= full_at:
                    full_at = now + FULL_EVERY_S
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    return cpu / commits, wall / commits, counter.created / commits, counter.synced / commits


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def sqlite(tmp: Path, commits: int, lines: list[bytes]) -> tuple[float, float]:
    """Returns (CPU s per commit, wall s per commit) of the same rows, one transaction per commit."""
    con = sqlite3.connect(tmp / "peer.db", isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE events (stream TEXT, seq INTEGER, payload BLOB, PRIMARY KEY (stream, seq))")
    rows = [(f"s{i % 64}", i // 64, line) for i, line in enumerate(lines)]
    chunks = [rows[i:i + PER_COMMIT] for i in range(0, len(rows), PER_COMMIT)]
    for chunk in chunks[:WARM]:
        con.execute("BEGIN")
        con.executemany("INSERT INTO events VALUES (?, ?, ?)", chunk)
        con.execute("COMMIT")
    t0, c0 = time.perf_counter(), time.thread_time()
    for chunk in chunks[WARM:WARM + commits]:
        con.execute("BEGIN")
        con.executemany("INSERT INTO events VALUES (?, ?, ?)", chunk)
        con.execute("COMMIT")
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    con.close()
    return cpu / commits, wall / commits


def main() -> None:
    commits = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    lines = move_time_lines(PER_COMMIT * (WARM + commits))
    with tempfile.TemporaryDirectory() as d:
        cpu, wall, created, synced = ours(Path(d), commits, lines, count=False)
        counted = Path(d) / "counted"  # a second run, counting files (the patched calls cost CPU of their own)
        counted.mkdir()
        _, _, created, synced = ours(counted, max(commits // 3, 1), lines, count=True)
        peer_cpu, peer_wall = sqlite(Path(d), commits, lines)
    print(f"group commit ({PER_COMMIT} entries, {commits} commits): matchledger {cpu * 1e3:.2f} ms CPU ({wall * 1e3:.1f} ms wall), "
          f"{created:.1f} files created and {synced:.1f} synced per commit; sqlite {peer_cpu * 1e3:.2f} ms CPU ({peer_wall * 1e3:.1f} ms wall)")
    print(f"commit: ratio {peer_cpu / cpu:.2f} (peer's CPU per commit / ours)")


if __name__ == "__main__":
    main()
