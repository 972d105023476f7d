"""Start-up and memory of `matchledger serve` after a tournament day's batches (issue 33 point 2):
before, the source book kept a record per batch and read every `source.batch` entry at open, so
start-up and the writer's memory grew with every batch ever received (23.3 s of a 26.2 s start and
122 MB at 870 k entries; about 5 minutes and 1.4 GB foreseen at 10 M).

The log is filled through the service itself, as a venue fills it: 64 registered tables, each
sending signed batches of two `game.move_time` events on a keep-alive connection (the lean driver of
bench/serve.py), so that it holds half as many batches as events. At each size of
MATCHLEDGER_BENCH_HISTORY (default `870000,3000000` entries; add `10000000` for a season's day) the
service is stopped and started again three ways, each timed to `/healthz` saying `live: ready`, with
its peak RSS (`/usr/bin/time -v`):

- clean: after a SIGTERM (the book's index and the live audit's files written at the close);
- killed: after a SIGKILL in the middle of a load (the index behind by the last commits);
- rebuilt: with `index/book` removed (the book rebuilt from the registry and the batch records:
  the peer, the old way's cost, measured in the same run).

Last line: `serve history: clean start X s / Y MB at the largest size over Z s at the smallest: ratio R`
(start-up must not grow with the log: goal ≤ 1.5). MATCHLEDGER_BENCH_HISTORY_KEEP=DIR fills the ledger
there and leaves it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.serve import drive, serve_args, start  # noqa: E402
from bench.serve_start import start as timed_start  # noqa: E402

SIZES = [int(s) for s in os.environ.get("MATCHLEDGER_BENCH_HISTORY", "870000,3000000").split(",")]
TABLES = 64
PER_BATCH = 2
CHUNK = 64 * 2_000
"""Events signed and sent per load step (signed before the step's clock starts, as in bench/serve.py)."""
ORIGIN = "bench.local/history"


class Venue:
    """The tables: their signers and the next seq of each table's stream."""

    def __init__(self, root: Path) -> None:
        import ledger as ledger_api
        from ledger.sources import SourceBook, SourceRegistered, change_sources, log_identity, registration

        ledger_api.init(root, ORIGIN)
        self.log = log_identity(ORIGIN, ledger_api.load_verifier(root).key_id)
        self.signers = [ledger_api.Signer.generate(f"t{n}") for n in range(TABLES)]
        for n, signer in enumerate(self.signers):
            def register(book: SourceBook, led: ledger_api.Ledger, s: ledger_api.Signer = signer, n: int = n) -> SourceRegistered:
                return registration(book, led, s.name, s.verifier, (), [f"day/t{n}"])

            change_sources(root, register)
        self.seq = [0] * TABLES

    def requests(self, events: int) -> list[list[tuple[bytes, dict[str, str]]]]:
        """Signs the next `events` events, spread over the tables, in batches of PER_BATCH."""
        from ledger.sources import HEADER, sign_batch

        per_table = max(PER_BATCH, events // TABLES // PER_BATCH * PER_BATCH)
        out = []
        for n, signer in enumerate(self.signers):
            batches = []
            for _ in range(per_table // PER_BATCH):
                body = b"".join(b'{"kind":"game.move_time","stream":"day/t%d","seq":%d,"ts":%d,"seat":0,"ms":%d}\n'
                                % (n, s, 1_000 + s, 500 + s % 997) for s in range(self.seq[n], self.seq[n] + PER_BATCH))
                self.seq[n] += PER_BATCH
                batches.append((body, {HEADER: sign_batch(signer, body, self.log)}))
            out.append(batches)
        return out


def fill(venue: Venue, root: Path, size: int, log: Path) -> None:
    """Sends batches through a running service until the log holds about `size` entries (each batch
    adds its events and the writer's record of it), then stops the service with SIGTERM."""
    proc, url = start(serve_args(root), log)
    try:
        while (have := _size(url)) < size:
            step = venue.requests(min(CHUNK, (size - have) * PER_BATCH // (PER_BATCH + 1)))
            events = sum(len(t) for t in step) * PER_BATCH
            wall, _ = asyncio.run(drive(url, step))
            print(f"  {_size(url):>11,} entries ({events / wall:,.0f} events/s)", flush=True)
    finally:
        _stop(proc, signal.SIGTERM)


def kill_during_load(venue: Venue, root: Path, log: Path) -> None:
    """Drives one load step and SIGKILLs the service (front and writer) two seconds into it."""
    proc, url = start(serve_args(root), log)

    async def run() -> None:
        load = asyncio.ensure_future(drive(url, venue.requests(CHUNK)))
        await asyncio.sleep(2.0)
        _stop(proc, signal.SIGKILL)
        try:
            await load
        except (RuntimeError, OSError, asyncio.IncompleteReadError):
            pass  # the service went away under the load, as intended

    asyncio.run(run())


def _size(url: str) -> int:
    with urllib.request.urlopen(url + "/healthz", timeout=30) as response:
        return int(json.load(response)["size"])


def _stop(proc: subprocess.Popen, how: signal.Signals) -> None:
    for child in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split():
        os.kill(int(child), how)
    proc.send_signal(how)
    proc.wait(120)


def measure(root: Path, label: str) -> dict[str, object]:
    figures = timed_start(root, root.parent / f"{label}.start.log")
    print(f"  {label:<8} started {figures['started_s']:.2f} s, ready {figures['ready_s']:.2f} s, peak RSS {figures['peak_rss_mb']} MB",
          flush=True)
    return figures


def main() -> None:
    import ledger as ledger_api

    print(f"{TABLES} tables, {PER_BATCH} events a batch; sizes {', '.join(f'{s:,}' for s in SIZES)}; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    results: list[tuple[int, dict, dict, dict]] = []
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        root = Path(os.environ.get("MATCHLEDGER_BENCH_HISTORY_KEEP") or Path(tmp) / "ledger")  # kept there, to look into
        venue = Venue(root)
        for size in SIZES:
            fill(venue, root, size, Path(tmp) / "fill.log")
            with ledger_api.Ledger.open(root) as led:
                at = led.size
            clean = measure(root, "clean")
            kill_during_load(venue, root, Path(tmp) / "kill.log")
            killed = measure(root, "killed")  # the service recovers the crash tail itself, on the clock
            with ledger_api.Ledger.open(root) as led:
                print(f"  after the SIGKILL the log holds {led.size:,} entries", flush=True)
                venue.seq = [led.next_seq(f"day/t{n}") for n in range(TABLES)]  # what landed: the tables resend the rest
            (root / "index" / "book").unlink(missing_ok=True)
            rebuilt = measure(root, "rebuilt")
            results.append((at, clean, killed, rebuilt))
        assert ledger_api.verify(root).ok
    for size, clean, killed, rebuilt in results:
        print(f"{size:>11,} entries (killed and rebuilt a load step later): clean {clean['ready_s']:.2f} s / {clean['peak_rss_mb']} MB, "
              f"killed {killed['ready_s']:.2f} s / "
              f"{killed['peak_rss_mb']} MB, rebuilt {rebuilt['ready_s']:.2f} s / {rebuilt['peak_rss_mb']} MB")
    (small, first, *_), (large, last, *_) = results[0], results[-1]
    print(f"serve history: clean start {last['ready_s']:.2f} s / {last['peak_rss_mb']} MB at {large:,} entries over "
          f"{first['ready_s']:.2f} s / {first['peak_rss_mb']} MB at {small:,}: ratio {last['ready_s'] / first['ready_s']:.2f} (goal ≤ 1.5)")


if __name__ == "__main__":
    main()
