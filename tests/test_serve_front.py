"""The live service's HTTP front processes (issue 14, Build 1, 4 and 8, `serve --fronts`): the
fronts take the HTTP connections and the writer's process keeps the ledger, yet one writer holds
the lock, a 200 still means durable, a graceful stop finishes the commit in flight, and a killed
service leaves no front holding its port."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
import msgspec
import pytest

import ledger as ledger_api
from audit.service.serve import PRIVATE_PREFIX
from bench.serve import children
from tests.ledger_support import cli, event_line
from tests.serve_support import Server, get, log_of, make_source, post, signed


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def listening(host: str, port: int) -> bool:
    """Tells whether something accepts connections on the port (a process whose main thread has
    exited is a zombie while its other threads, holding its sockets, still end)."""
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return False
    return True


def body_of(stream: str, seq: int) -> bytes:
    return event_line(stream, seq) + b"\n"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the fronts through Linux's /proc")
def test_the_fronts_serve_every_route_and_die_with_a_killed_writer(ledger_dir: Path, tmp_path: Path) -> None:
    """`serve --fronts 2`: two front processes answer batches and the read API; after SIGKILL of the
    writer's process they are gone within seconds (the kernel kills them with their parent) and the
    port is free, so a restart can take it."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    server = Server(ledger_dir, "--fronts", "2")
    try:
        assert server.wait_for(lambda r: r.get("at") == "started")["fronts"] == 2
        fronts = children(server.proc.pid)
        assert len(fronts) == 2, fronts
        for seq in range(6):  # a new connection each: the kernel spreads them over both fronts
            assert post(server.url, body_of("g", seq), signed(venue, body_of("g", seq)))[0] == 200
        status, data = get(server.url, "/healthz")
        health = json.loads(data)
        assert status == 200 and health["ok"] and health["size"] > 6
        assert [e["seq"] for e in json.loads(get(server.url, "/streams/g")[1])["entries"]] == list(range(6))
        assert int(get(server.url, "/checkpoint")[1].decode().splitlines()[1]) == health["size"], "the signed note, passed through"
        server.wait_for(lambda r: r.get("path") == "/checkpoint")  # the fronts' log lines reach the reader as they are written
        logged = [r for r in server.lines if r.get("at") == "request"]
        assert {r["path"] for r in logged} >= {"/batches", "/healthz", "/streams/g", "/checkpoint"}, "each request logged once, by its front"
        assert len([r for r in logged if r["path"] == "/healthz"]) == 1
        host, port = server.url.removeprefix("http://").split(":")
        server.kill()
        deadline = time.monotonic() + 10
        while (any(alive(p) for p in fronts) or listening(host, int(port))) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(p) for p in fronts), "a front outlived the killed writer"
        assert not listening(host, int(port)), "the port is still taken"
    finally:
        if server.proc.poll() is None:
            server.kill()
    left = list(Path(tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}{server.proc.pid}-*"))
    assert left, "the killed writer had no chance to remove its private directory"
    with Server(ledger_dir) as again:
        assert post(again.url, body_of("g", 6), signed(venue, body_of("g", 6)))[0] == 200
        assert not any(p.exists() for p in left), "the next service removed what the killed one left"
    assert [e.seq for e in list(ledger_api.LogReader(ledger_dir).events("g"))] == list(range(7))
    assert ledger_api.verify(ledger_dir).ok


def test_sigterm_under_load_answers_every_batch_and_stops_the_fronts(ledger_dir: Path, tmp_path: Path) -> None:
    """A graceful stop with a front: SIGTERM while four sources send; every batch answered 200 is in
    the log, the rest were answered 503 or not at all (connection closed), the service and its
    front exit with 0 and `verify` is clean."""
    signers = [make_source(tmp_path, ledger_dir, f"v{n}", streams=[f"v{n}/"]) for n in range(4)]
    acked: list[list[int]] = [[] for _ in signers]
    server = Server(ledger_dir, "--rate", "0")  # under load: a fast machine takes one source past the default 50 batches a second
    fronts = children(server.proc.pid)

    async def send(n: int) -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
            for seq in range(2000):
                body = body_of(f"v{n}/g", seq)
                try:
                    async with session.post(server.url + "/batches", data=body, headers=signed(signers[n], body)) as response:
                        data = await response.read()
                except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                    return
                if response.status == 503:
                    return
                assert response.status == 200, data
                receipt = msgspec.json.decode(data, type=ledger_api.Receipt)
                acked[n].append(receipt.entries[0].index)

    async def load() -> None:
        await asyncio.gather(*(send(n) for n in range(len(signers))))

    threading.Timer(0.5, server.proc.send_signal, args=(signal.SIGTERM,)).start()
    asyncio.run(load())
    assert server.proc.wait(30) == 0
    assert server.wait_for(lambda r: r.get("at") == "stopped")
    deadline = time.monotonic() + 10
    while any(alive(p) for p in fronts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in fronts)
    assert all(acked), "every source had batches acknowledged before the stop"
    for n in range(len(signers)):
        stored = list(ledger_api.LogReader(ledger_dir).events(f"v{n}/g"))
        assert len(stored) >= len(acked[n]), f"source {n}: an acknowledged batch is missing"
    assert ledger_api.verify(ledger_dir).ok


def test_a_source_registered_through_the_service_sends_at_once(ledger_dir: Path, tmp_path: Path) -> None:
    """The fronts learn a registration made through the service; a batch sent right after it is
    taken (the writer's process checks what its front could not), and one signed by another key
    under that name is refused 401."""
    key = tmp_path / "late.key"
    assert cli("keygen", "--name", "late", "--out", str(key)).exit_code == 0
    late = ledger_api.Signer.load(key)
    forger = ledger_api.Signer.generate("late")
    with Server(ledger_dir) as server:
        added = cli("source", "add", "--url", server.url, "--admin-key", str(ledger_dir / "signer.key"), "--name", "late",
                    "--key", str(tmp_path / "late.pub"))
        assert added.exit_code == 0, added.output
        assert post(server.url, body_of("late/g", 0), signed(late, body_of("late/g", 0), log_of(ledger_dir)))[0] == 200
        status, _, data = post(server.url, body_of("late/g", 1), signed(forger, body_of("late/g", 1), log_of(ledger_dir)))
        assert (status, json.loads(data)["error"]) == (401, "bad-signature")
    assert [e.seq for e in list(ledger_api.LogReader(ledger_dir).events("late/g"))] == [0]


def test_without_fronts_one_process_serves_everything(ledger_dir: Path, tmp_path: Path) -> None:
    """`serve --fronts 0`: no front process; batches, the read API and a refusal are answered by the
    writer's process itself, one log line each, and SIGTERM stops it with 0."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    with Server(ledger_dir, "--fronts", "0") as server:
        assert server.wait_for(lambda r: r.get("at") == "started")["fronts"] == 0
        assert children(server.proc.pid) == []
        for seq in range(3):
            status, _, data = post(server.url, body_of("g", seq), signed(venue, body_of("g", seq)))
            assert status == 200
            ledger_api.check_receipt(msgspec.json.decode(data, type=ledger_api.Receipt), ledger_api.load_verifier(ledger_dir))
        status, _, data = post(server.url, body_of("g", 9), signed(venue, body_of("g", 9)))
        assert (status, json.loads(data)["error"]) == (409, "seq-gap")
        assert [e["seq"] for e in json.loads(get(server.url, "/streams/g")[1])["entries"]] == [0, 1, 2]
        server.wait_for(lambda r: r.get("path") == "/streams/g")
        assert server.stop() == 0
    assert [r["status"] for r in server.lines if r.get("path") == "/batches"] == [200, 200, 200, 409]


def test_the_front_is_no_proxy_and_passes_heads_and_queries(ledger_dir: Path) -> None:
    """A request target in absolute form (a proxy's request) is refused 400 by the front, not
    passed on; HEAD and a query string reach the writer's read API as sent (issue 14, Build 6)."""
    with Server(ledger_dir) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(b"GET http://elsewhere.example/checkpoint HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n")
            answer = conn.recv(4096)
        assert answer.startswith(b"HTTP/1.1 400") and b'"malformed-request"' in answer, answer[:200]
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(b"HEAD /checkpoint HTTP/1.1\r\nHost: x\r\n\r\n")
            head = conn.recv(4096)
        assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n") and b"Content-Length: " in head, head
        deadline = time.monotonic() + 30
        while get(server.url, "/findings?since=0")[0] == 503 and time.monotonic() < deadline:
            time.sleep(0.1)  # 503 while the live audit starts
        assert get(server.url, "/findings?since=0")[0] == 200
        status, data = get(server.url, "/findings?since=x")
        assert (status, json.loads(data)["error"]) == (400, "bad-query")
