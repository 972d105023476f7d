"""What both processes of `matchledger serve` run on and say to each other: the event loop
(`run_loop`, `settle_heap`), the JSON access log, the JSON error of a refusal, the signature checker,
and the socket pair between a front (`audit/service/front.py`) and the writer's process
(`audit/service/serve.py`): `Link` and the source messages. Below both, so neither imports the
other (the writer's process starts a front by module name).
"""

from __future__ import annotations

import asyncio
import gc
import struct
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ledger import Verifier
from ledger import fastscan as ledger_fastscan
from ledger.group_commit import Refusal

if TYPE_CHECKING:
    from audit.service.http1 import Refused


# -- the event loop ---------------------------------------------------------------------------------

SWITCH_INTERVAL = 0.0005
"""Seconds a thread waiting for the interpreter lock waits before the holder is asked to let go
(Python's default is 0.005). The service's threads hand the lock to each other at every system call
(the writer's thread at each write and sync, the live auditor between games), and the loop
thread, busy with a group's receipts or requests, kept it up to 5 ms each time: a commit's syncs
queued behind it, which showed in the acknowledgements' p99 (bench/README, issue 14)."""


def run_loop(main: Awaitable[None]) -> None:
    """Runs the service's event loop: uvloop where it is installed (libuv's loop in C: less CPU a
    request than asyncio's), else asyncio's own. The bench's peer runs on the same."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        asyncio.run(main)  # type: ignore[arg-type]
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)  # type: ignore[arg-type]


def settle_heap() -> None:
    """Puts what start-up made (the modules, the ledger's index, the live audit's games: some
    100,000 objects) out of the cyclic garbage collector's reach, once, before the first batch.
    A full collection scans every object it tracks while it holds the interpreter lock: on the
    event loop under load one took 75-155 ms (bench/serve.py), and every batch waiting for its
    answer waited with it, which was the ack p99. Frozen objects are never collected, so the
    garbage of start-up is collected first; what the service makes later is collected as before."""
    gc.collect()
    gc.freeze()


# -- what each request says: its log line, its JSON error -----------------------------------------

_encode_log = msgspec.json.Encoder().encode


class JsonLog:
    """Writes each record as one JSON line (with a UTC timestamp) to stderr.

    On the event loop the lines of one loop turn are written together when the turn ends (one
    write a turn instead of one per request: under load the requests answered in a turn share it);
    elsewhere, and on `flush`, at once. A line is never held past the turn that logged it."""

    def __init__(self, stream: Any = None) -> None:
        self.out = stream or sys.stderr
        self._lines: list[bytes] = []
        self._second, self._prefix = -1, ""

    def __call__(self, record: dict[str, Any]) -> None:
        now = time.time()
        second = int(now)
        if second != self._second:  # the date and time formatted once a second
            self._second, self._prefix = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        self._lines.append(_encode_log({"ts": f"{self._prefix}.{int(now * 1000) % 1000:03d}Z", **record}))
        if len(self._lines) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # not on the event loop
                self.flush()

    def flush(self) -> None:
        """Writes the lines logged so far."""
        lines, self._lines = self._lines, []
        if lines:
            data = b"\n".join(lines) + b"\n"
            binary = getattr(self.out, "buffer", None)
            if binary is None:
                self.out.write(data.decode())
                self.out.flush()
            else:  # straight to the bytes below (no decoding and encoding again); what the text layer holds goes first
                self.out.flush()
                binary.write(data)
                binary.flush()


def json_log(stream: Any = None) -> JsonLog:
    """Returns a logger writing each record as one JSON line (with a UTC timestamp) to stderr."""
    return JsonLog(stream)


def error_body(refusal: Refusal | Refused) -> bytes:
    """Returns the JSON error of a refusal (the service's, or its HTTP server's own): `error` (the
    stable reason), `message`, and `line` where there is one."""
    body: dict[str, Any] = {"error": refusal.reason, "message": str(refusal)}
    if refusal.line is not None:
        body["line"] = refusal.line
    return msgspec.json.encode(body)


def too_many_streams(most: int) -> Refusal:
    """Returns the refusal of a `/live` stream beyond the `most` served at once (by a front or by this process)."""
    return Refusal(503, "too-many-streams", f"实时流已满 / the service serves {most} live streams, all it may: read "
                   "GET /findings?since=N, or send again later", retry_after=5)


# -- signatures -----------------------------------------------------------------------------------

CHECKS_PER_CALL = 128
"""The most signature checks the event loop waits for at once (a few ms); more wait for its next turn."""


class SignatureChecker:
    """Checks batch signatures for the event loop: the checks asked for during one turn of the loop
    are made together when the turn ends, in one call to the accelerator, which lets go of the GIL
    and splits them over `threads` threads of its own (libsodium: 40-110 µs a check on this
    machine, so a group commit's 20-30 answered batches, sent again at once, take about 1 ms).
    The loop waits for that call; nothing else in the process does.

    Why not a pool of Python threads, as before: each part handed over and back cost the loop a
    future, a wake-up and a call from another thread, and each verdict then waited for the
    interpreter lock behind whatever the loop was doing. Under bench/serve.py's load a check so
    took 7 ms (p50) from asking to verdict, most of a request's time in the front."""

    def __init__(self, threads: int = 2) -> None:
        self._asked: list[tuple[Verifier, bytes, bytes, asyncio.Future[bool]]] = []
        self._threads = threads

    def check(self, verifier: Verifier, message: bytes, signature: bytes) -> asyncio.Future[bool]:
        """Returns a future that tells whether the signature verifies (on the event loop)."""
        loop = asyncio.get_running_loop()
        verdict: asyncio.Future[bool] = loop.create_future()
        self._asked.append((verifier, message, signature, verdict))
        if len(self._asked) == 1:
            loop.call_soon(self._check_asked, loop)
        return verdict

    def _check_asked(self, loop: asyncio.AbstractEventLoop) -> None:
        asked, self._asked = self._asked[:CHECKS_PER_CALL], self._asked[CHECKS_PER_CALL:]
        if self._asked:
            loop.call_soon(self._check_asked, loop)
        try:
            verdicts = ledger_fastscan.verify_each([v for v, _, _, _ in asked], [m for _, m, _, _ in asked],
                                              [s for _, _, s, _ in asked], self._threads)
        except Exception as exc:  # noqa: BLE001 - every waiting handler hears of it
            for *_, verdict in asked:
                if not verdict.done():
                    verdict.set_exception(exc)
            return
        for (*_, verdict), ok in zip(asked, verdicts):
            if not verdict.done():
                verdict.set_result(bool(ok))


# -- the socket pair between a front and the writer's process -------------------------------------

FRAME = struct.Struct("!I")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


class Link(asyncio.Protocol):
    """One end of the socket pair between a front and the writer's process: messages (msgpack
    lists) framed by a 4-byte length. What is sent during one loop turn goes in one write."""

    def __init__(self, on_message: Callable[[list[Any]], None], on_lost: Callable[[], None]) -> None:
        self._on_message, self._on_lost = on_message, on_lost
        self._buffer = bytearray()
        self._out: list[bytes] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        at, end = 0, len(buffer)
        while end - at >= 4:
            (size,) = FRAME.unpack_from(buffer, at)
            if end - at - 4 < size:
                break
            message = _decode(bytes(buffer[at + 4:at + 4 + size]))
            at += 4 + size
            self._on_message(message)
        del buffer[:at]

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_lost()

    def send(self, message: list[Any]) -> None:
        """Queues a message; the messages of one loop turn are written together when it ends."""
        data = _encode(message)
        self._out.append(FRAME.pack(len(data)) + data)
        if len(self._out) == 1:
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        out, self._out = self._out, []
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))


def sources_message(book: Any) -> list[Any]:
    """Returns the message that gives a starting front the sources it checks signatures against, and the log's origin they sign."""
    return ["sources", [_source_row(s) for s in book.sources.values()], book.origin]


def source_message(source: Any) -> list[Any]:
    """Returns the message that tells a front of one source registered or revoked: only the change,
    so a registration costs the front one key, however many sources the log has (issue 33)."""
    return ["source", _source_row(source)]


def _source_row(source: Any) -> list[Any]:
    return [source.name, source.verifier.name, source.verifier.public, source.revoked]
