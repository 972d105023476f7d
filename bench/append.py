"""Durable append throughput against SQLite (WAL, synchronous=FULL), same events, same batch sizes.

Each batch counts only once its bytes are fsynced (ours) or committed (SQLite). Prints events/s
for both and their ratio at batch sizes 1, 100 and 1,000; the last line carries the smallest ratio.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import move_time_lines  # noqa: E402
from ledger import store  # noqa: E402
from ledger.recorder import validate_lines  # noqa: E402

PLAN = {1: 400, 100: 20_000, 1000: 100_000}  # batch size -> events


def ours(tmp: Path, batch: int, lines: list[bytes]) -> float:
    root = tmp / f"ledger-{batch}"
    store.init(root)
    pending = validate_lines(lines, 65536)
    batches = [pending[i:i + batch] for i in range(0, len(pending), batch)]
    with store.Ledger.open(root) as led:
        t0 = time.perf_counter()
        for b in batches:
            led.append(b)
        return len(lines) / (time.perf_counter() - t0)


def sqlite(tmp: Path, batch: int, lines: list[bytes]) -> float:
    con = sqlite3.connect(tmp / f"peer-{batch}.db", isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE events (stream TEXT, seq INTEGER, payload BLOB, PRIMARY KEY (stream, seq))")
    rows = [(f"s{i % 64}", i // 64, line) for i, line in enumerate(lines)]
    t0 = time.perf_counter()
    for i in range(0, len(rows), batch):
        con.execute("BEGIN")
        con.executemany("INSERT INTO events VALUES (?, ?, ?)", rows[i:i + batch])
        con.execute("COMMIT")
    rate = len(lines) / (time.perf_counter() - t0)
    con.close()
    return rate


def main() -> None:
    ratios = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for batch, n in PLAN.items():
            lines = move_time_lines(n)
            a, b = ours(tmp, batch, lines), sqlite(tmp, batch, lines)
            ratios.append(a / b)
            print(f"batch {batch:>5}: matchledger {a:>10,.0f} events/s   sqlite {b:>10,.0f} events/s   ratio {a / b:.2f}")
    print(f"append: ratio {min(ratios):.2f} (goal ≥ 1.00)")


if __name__ == "__main__":
    main()
