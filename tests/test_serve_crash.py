"""SIGKILL of the live service under load (issue 14, Show): every acknowledged event is in the log
after the restart, a client re-sending its unacknowledged batches lands each event exactly once,
and `verify` is clean. MATCHLEDGER_SERVE_KILL_TRIALS sets the number of kills (10 by default)."""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from pathlib import Path

import aiohttp
import msgspec
import pytest

import ledger as ledger_api
from schemas.log import BatchReceived
from tests.ledger_support import event_line
from tests.serve_support import Server, make_source, signed

TRIALS = int(os.environ.get("MATCHLEDGER_SERVE_KILL_TRIALS", "10"))
SOURCES = 4
UNLIMITED = ("--rate", "0")
"""The kills must land under load: each source sends as fast as it is answered, which a fast machine
takes beyond the default 50 batches a second (the rate limit is tested in tests/test_serve.py)."""
BATCHES = 2000  # per source: more than the trials can send, so that every kill lands under load (400 were not, with front processes)


async def send_until_refused(url: str, signer: ledger_api.Signer, bodies: list[bytes], start: int,
                             acked: dict[int, ledger_api.Receipt]) -> int:
    """Sends bodies in order from `start`, each once; returns where the connection broke."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        for i in range(start, len(bodies)):
            headers = signed(signer, bodies[i])
            try:
                async with session.post(url + "/batches", data=bodies[i], headers=headers) as response:
                    data = await response.read()
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                return i
            if response.status == 503:  # refused while shutting down: not acknowledged, send again later
                return i
            assert response.status == 200, data
            acked[i] = msgspec.json.decode(data, type=ledger_api.Receipt)
        return len(bodies)


@pytest.mark.slow
def test_sigkill_under_load_loses_no_acknowledged_event_and_lands_resends_once(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    print(f"seed {seed}, {TRIALS} trials")
    rng = random.Random(seed)
    root = tmp_path / "L"
    ledger_api.init(root)
    signers = [make_source(tmp_path, root, f"venue-{n}", streams=[f"v{n}/"]) for n in range(SOURCES)]
    bodies = [[event_line(f"v{n}/g", 2 * i) + b"\n" + event_line(f"v{n}/g", 2 * i + 1) + b"\n" for i in range(BATCHES)]
              for n in range(SOURCES)]
    acked: list[dict[int, ledger_api.Receipt]] = [{} for _ in range(SOURCES)]
    sent_from = [0] * SOURCES  # each source re-sends from its first unacknowledged batch
    verifier = ledger_api.load_verifier(root)
    for trial in range(TRIALS):
        started = time.monotonic()
        server = Server(root, *UNLIMITED)
        print(f"trial {trial}: started in {time.monotonic() - started:.2f} s, from batches {sent_from}")
        threading.Timer(rng.uniform(0.15, 0.6), server.kill).start()

        async def load(url: str, starts: list[int]) -> list[int]:
            return await asyncio.gather(*(send_until_refused(url, s, bodies[n], starts[n], acked[n]) for n, s in enumerate(signers)))

        broke = asyncio.run(load(server.url, sent_from))
        server.proc.wait(30)
        assert server.proc.returncode == -9, f"trial {trial}: the service was not killed under load (seed {seed})"
        sent_from = [min(b, BATCHES) for b in broke]
    with Server(root, *UNLIMITED) as server:
        async def finish() -> list[int]:
            return await asyncio.gather(*(send_until_refused(server.url, s, bodies[n][:max(sent_from) + 1], sent_from[n], acked[n])
                                          for n, s in enumerate(signers)))

        broke = asyncio.run(finish())
    report = ledger_api.verify(root)
    assert report.ok, f"{report.error} (seed {seed})"
    log = ledger_api.LogReader(root).packed()
    records = list(ledger_api.LogReader(root).events("log.batches"))
    batches = [r for r in records if isinstance(r, BatchReceived)]
    assert batches == records
    digests = [r.digest for r in batches]
    assert max(sent_from) < BATCHES, f"every kill landed under load: the sources had batches left (seed {seed})"
    assert len(digests) == len(set(digests)) == SOURCES * (max(sent_from) + 1), f"one record per batch (seed {seed})"
    for n in range(SOURCES):
        events = list(ledger_api.LogReader(root).events(f"v{n}/g"))
        assert [e.seq for e in events] == list(range(len(events))), f"source {n}: a gap or a repeat (seed {seed})"
        assert len(events) == 2 * broke[n], f"source {n}: every batch sent landed exactly once (seed {seed})"
        for receipt in acked[n].values():
            ledger_api.check_receipt(receipt, verifier)
            for item in receipt.entries:  # an acknowledged event is where its receipt says, as it says
                assert bytes(log.data[log.ends[item.index]:log.ends[item.index + 1]]) == item.entry.encode(), f"seed {seed}"


def test_sigterm_under_load_finishes_the_commit_in_flight(tmp_path: Path) -> None:
    """Issue 14, Build 8: SIGTERM under load finishes the commit in flight (what was acknowledged is
    in the log), answers what it will not take (503, or the connection closes), exits 0 with a
    `stopped` line, and the next start has nothing to recover."""
    root = tmp_path / "L"
    ledger_api.init(root)
    signers = [make_source(tmp_path, root, f"venue-{n}", streams=[f"v{n}/"]) for n in range(SOURCES)]
    bodies = [[event_line(f"v{n}/g", i) + b"\n" for i in range(BATCHES)] for n in range(SOURCES)]
    acked: list[dict[int, ledger_api.Receipt]] = [{} for _ in range(SOURCES)]
    server = Server(root, *UNLIMITED)
    threading.Timer(0.4, server.proc.terminate).start()

    async def load() -> list[int]:
        return await asyncio.gather(*(send_until_refused(server.url, s, bodies[n], 0, acked[n]) for n, s in enumerate(signers)))

    asyncio.run(load())
    assert server.proc.wait(30) == 0
    stopped = server.wait_for(lambda r: r.get("at") == "stopped")
    assert any(acked), "the service was stopped before any batch was acknowledged"
    with Server(root) as again:
        assert again.wait_for(lambda r: r.get("at") == "started")["recovered"] is None
    assert ledger_api.verify(root).ok
    for n in range(SOURCES):
        assert len(list(ledger_api.LogReader(root).events(f"v{n}/g"))) >= len(acked[n])
    newest = ledger_api.newest_checkpoint(root, ledger_api.load_verifier(root))
    assert newest is not None
    assert stopped["size"] == newest.size


def test_a_commit_signed_without_the_index_recovers_it_after_a_crash(tmp_path: Path) -> None:
    """The live service's checkpoints (`Ledger.checkpoint(index=False)`) leave the stream index to a
    later full checkpoint: a crash before it loses nothing, the next writer re-derives the index."""
    root = tmp_path / "L"
    ledger_api.init(root)
    with ledger_api.Ledger.open(root) as led:
        led.append([ledger_api.Pending(0, e, d) for e, d in (_event("g", s) for s in range(5))])
        signed = led.checkpoint(index=False)
        # closing without a full checkpoint is what a crash leaves (the lock is released either way)
    report = ledger_api.verify(root)  # before any writer re-derives it: the index is checked as far as it is durable
    assert report.ok and any("the next writer indexes the 5 signed" in note for note in report.notes), report
    with ledger_api.Ledger.open(root) as led:
        assert led.next_seq("g") == 5 and led.checkpoint_size == signed.size
    assert ledger_api.verify(root).ok
    assert [e.seq for e in list(ledger_api.LogReader(root).events("g"))] == list(range(5))


def _event(stream: str, seq: int):  # noqa: ANN202
    from schemas import decode_line

    return decode_line(event_line(stream, seq), 1)
