"""Shared helpers for the benchmarks: realistic event payloads and a cache outside the repository."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("MATCHLEDGER_BENCH_CACHE", Path.home() / ".cache" / "matchledger-bench"))


def move_time_lines(n: int, streams: int = 64, start_ms: int = 1_790_000_000_000) -> list[bytes]:
    """Returns `n` timing events spread over `streams` games, as JSON lines."""
    return [
        b'{"kind":"game.move_time","stream":"T1/r1/t%d/g1","seq":%d,"ts":%d,"seat":%d,"ms":%d}'
        % (i % streams, i // streams, start_ms + i * 900, i % 2, 800 + (i * 37) % 9000)
        for i in range(n)
    ]


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """Returns the fastest wall time of `runs` calls, in seconds."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
