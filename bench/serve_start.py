"""Start-up of `matchledger serve` on a season-sized ledger (issue 14, the live audit at start-up):
the seconds to the service's `started` log line and to live findings being ready (`/healthz` says
`live: ready`), and the peak RSS (`/usr/bin/time -v`), for the two ways the live audit opens:

- rebuilt: no kept files (`derived/live/` removed), so the whole log is folded, on the auditor's
  thread while the service already takes batches — the peer, measured in the same run;
- resumed: from the files the first run kept, reading only the games under way and the entries since.

The ledger is the 10,000-game event of bench/audit.py (built once there), copied to a temporary
directory first (the service writes its kept files into the ledger). Give another ledger directory
as the argument to use it in place (its `derived/live/` is removed). Last line:
`serve start: resumed X s / Y MB, rebuilt … ; ratio R` (the rebuilt start's time to ready over the
resumed one's)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CACHE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = float(os.environ.get("MATCHLEDGER_BENCH_SERVE_START_TIMEOUT", "3600"))


def start(ledger: Path, err: Path) -> dict[str, object]:
    """Runs the service until live findings are ready, then stops it (SIGTERM); returns the figures."""
    t0 = time.monotonic()
    with err.open("w") as out:
        proc = subprocess.Popen(["/usr/bin/time", "-v", sys.executable, "-c", "from audit.cli import main; main()", "serve",
                                 "--ledger", str(ledger), "--port", "0"], cwd=REPO, stderr=out, stdout=subprocess.DEVNULL)
        started = ready = None
        url = ""
        while proc.poll() is None and time.monotonic() - t0 < TIMEOUT_S:
            records = [json.loads(line) for line in err.read_text().splitlines() if line.startswith("{")]
            for record in records:
                if record.get("at") == "started" and started is None:
                    started, url = time.monotonic() - t0, str(record["url"])
            if url:
                try:
                    with urllib.request.urlopen(url + "/healthz", timeout=5) as response:
                        if json.load(response)["live"] == "ready":
                            ready = time.monotonic() - t0
                            break
                except OSError:
                    pass
            time.sleep(0.2)
        for child in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split():
            os.kill(int(child), signal.SIGTERM)
        proc.wait(120)
    text = err.read_text()
    rss = next(int(line.split(":")[1]) for line in text.splitlines() if "Maximum resident set size" in line)
    live = next((json.loads(line) for line in text.splitlines() if line.startswith("{") and '"at":"live"' in line), None)
    return {"started_s": started, "ready_s": ready, "peak_rss_mb": round(rss / 1024), "live": live}


def main() -> None:
    if len(sys.argv) > 1:
        ledger, scratch = Path(sys.argv[1]), None
    else:
        source = CACHE / "audit-10000"
        if not source.is_dir():
            sys.exit(f"{source} is missing: run `python bench/audit.py` once to build it")
        scratch = Path(tempfile.mkdtemp(prefix="serve-start-"))
        ledger = scratch / "ledger"
        print(f"copying {source} to {ledger} …", flush=True)
        shutil.copytree(source, ledger)
    try:
        shutil.rmtree(ledger / "derived" / "live", ignore_errors=True)
        log = ledger.parent / f"{ledger.name}.serve-start.log"
        rebuilt = start(ledger, log)
        print("rebuilt:", json.dumps(rebuilt), flush=True)
        resumed = start(ledger, log)
        print("resumed:", json.dumps(resumed), flush=True)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    ratio = (rebuilt["ready_s"] or float("nan")) / (resumed["ready_s"] or float("nan"))  # type: ignore[operator]
    print(f"serve start: resumed {resumed['ready_s']:.2f} s / {resumed['peak_rss_mb']} MB, rebuilt {rebuilt['ready_s']:.2f} s "
          f"(started {rebuilt['started_s']:.2f} s) / {rebuilt['peak_rss_mb']} MB; ratio {ratio:.1f}")


if __name__ == "__main__":
    main()
