"""`matchledger serve`: the HTTP service competition software streams signed batches to.

Built on aiohttp: one well-kept package gives the server (its C HTTP parser, streaming responses
for Server-Sent Events, a request size limit) and the client the package ships (`audit/simulator/client.py`),
so the service, its client and the benchmark's peer run on one stack with nothing else to install;
on uvloop's event loop where it is installed (`run_loop` of `audit/service/process.py`, which holds
what this process and its fronts share).

Processes: with `fronts` (1 by default) the HTTP connections are taken by front processes
(`audit/service/front.py`), which read and check each batch and hand it over a socket pair to this process
(`Service.forward`, through the one ingress `Service.ingress`); this process keeps the ledger, the group commit, the receipts, the live
audit, and serves the read API to the fronts on a private Unix socket; a front that exits is
started again on the same listening socket (`_respawn`). With `fronts=0` this process serves HTTP
itself, as the handlers below describe.

Write path: POST /batches with a JSONL body (or a JSON array) and the `Matchledger-Signature`
header. The handler reads the whole body under a time limit, authenticates it, applies the
source's rate limit, decodes its events (a large body off the event loop), and hands the batch to
the writer (`ledger/group_commit.py`), which commits it with every other batch waiting (group commit) and
answers with a receipt. A 200 means the batch is synced, checkpointed and proved. A refusal, from
any handler, is raised as a `Refusal` and answered in one place (the access-log middleware).

Read path (everything a witness or an auditor needs to follow the log without trusting the
server): GET /checkpoint, /tile/…, /proof/{index}, /consistency?old=N, /streams/{id}, /healthz;
live findings on GET /findings?since=N and the SSE stream GET /live.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import resource
import signal
import stat
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

import ledger as ledger_api
from audit.service.live_hub import LiveHub
from audit.service.process import (
    Link,
    SignatureChecker,
    error_body,
    json_log,
    run_loop,
    settle_heap,
    source_message,
    sources_message,
    too_many_streams,
)
from ledger import bundle as ledger_bundle
from ledger import receipts as ledger_receipts
from ledger import sources as ledger_sources
from ledger import tiles as ledger_tiles
from ledger import tlog as ledger_tlog
from ledger.group_commit import Batch, Change, Refusal, Writer, digest_of, refusal_of
from schemas.codec import ContractError, decode_line

JSONL = "application/jsonl"
INLINE_PARSE = 16 * 1024
"""Bodies up to this size are decoded on the event loop; larger ones on a thread, off the loop."""
FAILED_CHECK_S = 0.5
"""How often the service looks whether its writer entered the failed state, to log that once."""
READERS = 4
"""Threads of the read API (tiles, proofs, streams): a pool of their own, so that readers never
hold up the decoding of large batches."""


@dataclass(frozen=True)
class ServeConfig:
    """The service's settings (`matchledger serve --help` documents each)."""

    root: Path
    host: str = "127.0.0.1"
    port: int = 8080
    max_body: int = 1 << 20
    rate: float = 50.0
    burst: int = 100
    read_timeout: float = 10.0
    live: bool = True
    fronts: int = 1
    """HTTP front processes (0: the HTTP server runs in the writer's process, on its interpreter lock)."""
    max_streams: int = 100
    """`/live` streams served at once; one more is answered 503 with Retry-After."""
    max_per_peer: int = 512
    """Connections one client address may hold at once (with fronts)."""


class RateLimiter:
    """A token bucket per source: `rate` batches a second, up to `burst` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}

    def retry_after(self, source: str) -> float:
        """Takes a token for the source; returns 0 when it had one, else the seconds until it will."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        tokens, then = self._buckets.get(source, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens >= 1:
            self._buckets[source] = (tokens - 1, now)
            return 0.0
        self._buckets[source] = (tokens, now)
        return (1 - tokens) / self.rate


def error_response(refusal: Refusal) -> web.Response:
    """Returns the HTTP answer of a refusal (its JSON error, `Retry-After` when it has one)."""
    headers = {"Retry-After": str(refusal.retry_after)} if refusal.retry_after else None
    return web.Response(body=error_body(refusal), status=refusal.status, content_type="application/json", headers=headers)


def access_log(log: Callable[[dict[str, Any]], None] | None) -> Any:
    """Returns the middleware that answers a refusal any handler raises with its JSON error, and
    (with a `log`) writes one JSON line per request: method, path, status, milliseconds, and what
    the handler adds to `request["log"]`."""

    @web.middleware
    async def middleware(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        start = time.perf_counter()
        request["log"] = extra = {}
        status = 500
        try:
            try:
                response = await handler(request)
            except Refusal as refusal:  # the one refusal path: every handler raises, this answers
                extra["error"] = refusal.reason
                response = error_response(refusal)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            if log is not None:
                log({"at": "request", "method": request.method, "path": request.path_qs, "status": status,
                     "ms": round((time.perf_counter() - start) * 1000, 2), "remote": request.remote, **extra})

    return middleware


async def read_body(request: web.Request, limit: int, timeout: float) -> bytes:
    """Reads the whole body within the time limit, so that a slow client never reaches the writer.

    :raises Refusal: 413 over the size limit, 408 when the body does not arrive in time.
    """
    if request.content_length is not None and request.content_length > limit:
        raise Refusal(413, "body-too-large", f"the body is {request.content_length} bytes, over the limit of {limit}")
    try:
        if request.content.is_eof():  # the whole body came with the headers (a move or a few): nothing to wait for
            return await request.read()
        async with asyncio.timeout(timeout):
            return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise Refusal(413, "body-too-large", f"the body is over the limit of {limit} bytes") from None
    except asyncio.TimeoutError:
        raise Refusal(408, "body-timeout", f"the body did not arrive within {timeout:g} s") from None


def parse_body(body: bytes, max_bytes: int) -> list[tuple[Any, bytes]]:
    """Decodes a batch body, JSONL or a JSON array, into events with their canonical bytes.

    :raises Refusal: 400 naming the line (the array element, 1-based) and field of the first bad event.
    """
    stripped = body.strip()
    if not stripped:
        raise Refusal(400, "empty-batch", "the batch holds no events")
    if stripped.startswith(b"["):
        try:
            items = [bytes(raw) for raw in msgspec.json.decode(stripped, type=list[msgspec.Raw])]
        except msgspec.DecodeError as exc:
            raise Refusal(400, "malformed-body", f"the body is not a JSON array of events: {exc}") from None
    else:
        items = body.split(b"\n")
    events = []
    try:
        for number, line in enumerate(items, start=1):
            if line.strip():
                events.append(decode_line(line.strip(), number, max_bytes))
    except ContractError as exc:
        raise Refusal(400, "malformed-body", str(exc), exc.line) from None
    if not events:
        raise Refusal(400, "empty-batch", "the batch holds no events")
    return events


class Service:
    """The aiohttp application around one writer."""

    def __init__(self, config: ServeConfig, log: Callable[[dict[str, Any]], None]) -> None:
        self.config = config
        self.log = log
        self.hub = LiveHub(config.root, log) if config.live else None
        with starting("opening the ledger (recovery, index, checkpoint)"):
            self.writer = Writer(config.root, self.hub.grew if self.hub else None)
        self.limits = RateLimiter(config.rate, config.burst)
        self.verifier = self.writer.ledger.signer.verifier
        self.signatures = SignatureChecker()
        self.readers = ThreadPoolExecutor(READERS, thread_name_prefix="reader")
        self.streams = 0
        """`/live` streams being served."""
        self.fronts: list[_FrontEnd] = []
        self.closing_fronts = False
        self.failed = 0
        self._private: Any = None
        self._front_start: tuple[dict[str, Any], dict[str, str], Any] | None = None  # what starts a front (`_spawn_front`)
        self._restarts: list[float] = []
        self.app = web.Application(client_max_size=config.max_body, middlewares=[access_log(None if config.fronts else log)])
        self.app.add_routes([
            web.post("/batches", self.post_batch),
            web.post("/sources", self.post_sources),
            web.get("/checkpoint", self.get_checkpoint),
            web.get("/tile/{path:.+}", self.get_tile),
            web.get("/proof/{index}", self.get_proof),
            web.get("/consistency", self.get_consistency),
            web.get("/streams/{stream:.+}", self.get_stream),
            web.get("/healthz", self.get_health),
            web.get("/findings", self.get_findings),
            web.get("/live", self.get_live),
        ])

    # -- writing ---------------------------------------------------------------------------------

    async def post_batch(self, request: web.Request) -> web.Response:
        """Accepts one signed batch; answers with its receipt (a refusal raised answers with its reason)."""
        body = await read_body(request, self.config.max_body, self.config.read_timeout)
        receipt = await self.ingress(request.headers.get(ledger_sources.HEADER), body, None, request["log"])
        return web.Response(body=msgspec.json.encode(receipt), content_type="application/json")

    def ingress(self, header: str | None, body: bytes, public: bytes | None, log: dict[str, Any]) -> Awaitable[ledger_api.Receipt]:
        """The one way a batch enters the writer, from this process's HTTP server or from a front:
        authenticated (unless a front checked it with the key this book holds: `public`), rate
        limited, decoded once and submitted; returns what to await for its receipt. `log` gets
        what the request's log line names (source, events, entries).

        A small batch a front checked is decoded and submitted at once and its receipt is the
        commit's own future: no coroutine nor task per batch (they cost the loop more than the
        batch's hand-over to the writer). Any other is taken in a coroutine (`_accept`).

        :raises Refusal: (here or from what it returns) 401 or 403 as the source book refuses, 429 over
            the source's rate, 400 on a malformed body, or the writer's refusal.
        """
        source = self._checked_source(header or "", public)
        if source is None or len(body) > INLINE_PARSE:
            return self._accept(source, header, body, log)
        self._admit(source, log)
        return self._submit(source, header or "", body, parse_body(body, self.writer.ledger.config.max_entry_bytes), log)

    async def _accept(self, source: ledger_sources.Source | None, header: str | None, body: bytes, log: dict[str, Any]) -> ledger_api.Receipt:
        """Takes a batch the way `ingress` does, authenticating it here when no front could, a large
        body decoded off the event loop."""
        source = source or await self._authenticate(header, body)
        self._admit(source, log)
        limit = self.writer.ledger.config.max_entry_bytes
        if len(body) <= INLINE_PARSE:  # a move or a few: decoded here, cheaper than a hop to a thread
            events = parse_body(body, limit)
        else:
            events = await asyncio.get_running_loop().run_in_executor(None, parse_body, body, limit)
        return await self._submit(source, header or "", body, events, log)

    def _submit(self, source: ledger_sources.Source, header: str, body: bytes, events: list[tuple[Any, bytes]],
                log: dict[str, Any]) -> asyncio.Future[ledger_api.Receipt]:
        """Hands a decoded batch to the writer; its receipt's entries go to the log line once committed."""
        done = self.writer.submit(self._batch(source, header, body, events, log))
        done.add_done_callback(functools.partial(_log_receipt, log))
        return done

    def _admit(self, source: ledger_sources.Source, log: dict[str, Any]) -> None:
        """Applies the source's rate limit.

        :raises Refusal: 429 over the source's rate.
        """
        log["source"] = source.name
        wait = self.limits.retry_after(source.name)
        if wait:
            raise Refusal(429, "rate-limited", f"source {source.name!r} sends more than {self.config.rate:g} batches a "
                          f"second; send again after {math.ceil(wait)} s", retry_after=math.ceil(wait))

    def _batch(self, source: ledger_sources.Source, header: str, body: bytes, events: list[tuple[Any, bytes]], log: dict[str, Any]) -> Batch:
        log["events"] = len(events)
        canonical = body == b"".join(data + b"\n" for _, data in events)
        return Batch(source, header.strip(), digest_of(body), events, canonical)

    async def _authenticate(self, header: str | None, body: bytes) -> ledger_sources.Source:
        """Returns the source whose valid signature the batch carries (as `SourceBook.authenticate`,
        the check itself off the loop).

        :raises Refusal: 401 or 403, as the source book refuses.
        """
        try:
            source, message, signature = self.writer.book.identify(header, body)
        except ledger_sources.SourceRefused as exc:
            raise refusal_of(exc) from None
        if not await self.signatures.check(source.verifier, message, signature):
            raise refusal_of(ledger_sources.signature_refusal(source, body, signature, self.writer.book.origin))
        return source

    async def post_sources(self, request: web.Request) -> web.Response:
        """Registers or revokes a source; the body must be signed with the log's own key (the operator's)."""
        body = await read_body(request, self.config.max_body, self.config.read_timeout)
        name, key_id, signature = _log_signature(request.headers.get(ledger_sources.HEADER))
        if name != self.verifier.name or key_id != self.verifier.key_id or not self.verifier.verifies(
                ledger_sources.signed_message(name, body, self.writer.book.origin), signature):
            raise Refusal(401, "bad-signature", "changes of the sources must be signed with the log's own key (signer.key)")
        change = _source_change(body)
        event = await self.writer.submit(change)
        self._tell_fronts_source(event.name)
        return web.json_response(msgspec.to_builtins(event))

    # -- reading ---------------------------------------------------------------------------------

    async def get_checkpoint(self, request: web.Request) -> web.Response:
        return web.Response(text=self.writer.checkpoint.note, content_type="text/plain")

    async def get_tile(self, request: web.Request) -> web.Response:
        try:
            level, n, width = ledger_tlog.parse_tile_path(request.match_info["path"])
        except ledger_tlog.TilePathError as exc:
            raise Refusal(404, "not-a-tile", str(exc)) from None
        size = self.writer.checkpoint.size
        if not ledger_tlog.covered(level, n, width, size):
            raise Refusal(404, "no-such-tile", f"the log of size {size} has no such tile")
        loop = asyncio.get_running_loop()
        if level is None:
            data = await loop.run_in_executor(self.readers, ledger_tlog.entry_bundle, self.writer.entries, n, width)
        else:
            data = await loop.run_in_executor(self.readers, ledger_tlog.hash_tile, self.config.root, level, n, width)
        immutable = "public, max-age=31536000, immutable" if width == 256 else "no-cache"
        return web.Response(body=data, content_type="application/octet-stream", headers={"Cache-Control": immutable})

    async def get_proof(self, request: web.Request) -> web.Response:
        checkpoint = self.writer.checkpoint
        try:
            index = int(request.match_info["index"])
        except ValueError:
            index = -1
        if not 0 <= index < checkpoint.size:
            raise Refusal(404, "no-such-entry", f"entries are 0 … {checkpoint.size - 1}")

        def prove() -> ledger_receipts.ProvedEntry:
            self.writer.entries.start_near(index)  # read from the checkpoint before it, not from its segment's start
            data = self.writer.entries.read(index, 1)[0]
            return ledger_receipts.prove_entry(ledger_tiles.TileReader(self.config.root), checkpoint, index, data)

        proved = await asyncio.get_running_loop().run_in_executor(self.readers, prove)
        return web.json_response({"checkpoint": checkpoint.note, **msgspec.to_builtins(proved)})

    async def get_consistency(self, request: web.Request) -> web.Response:
        try:
            old = int(request.query.get("old", ""))
            proof = await asyncio.get_running_loop().run_in_executor(self.readers, ledger_bundle.prove_consistency, self.config.root, old, None)
        except ValueError:
            raise Refusal(400, "bad-query", "give ?old=N, the size of a signed checkpoint") from None
        except ledger_api.LedgerError as exc:
            raise Refusal(404, "no-such-checkpoint", str(exc)) from None
        return web.json_response(msgspec.to_builtins(proof))

    async def get_stream(self, request: web.Request) -> web.Response:
        stream = request.match_info["stream"]
        size = self.writer.checkpoint.size

        def read() -> list[dict[str, Any]]:
            with self.writer.lock:
                count = self.writer.ledger.next_seq(stream)
                indexes = [self.writer.ledger.entry_of(stream, seq) for seq in range(count)]
            return [{"index": i, "seq": seq, "entry": self.writer.entries.read(i, 1)[0].decode()}
                    for seq, i in enumerate(indexes) if i < size]

        entries = await asyncio.get_running_loop().run_in_executor(self.readers, read)
        if not entries:
            raise Refusal(404, "no-such-stream", f"stream {stream!r} has no entries")
        return web.json_response({"stream": stream, "size": size, "entries": entries})

    async def get_health(self, request: web.Request) -> web.Response:
        writer = self.writer
        body = {"ok": writer.error is None and not writer.closing, "size": writer.checkpoint.size, "queued": writer.queued(),
                "commits": writer.commits, "recovered": writer.recovered, "error": writer.error,
                "live": self.hub.status() if self.hub else "off"}
        return web.json_response(body, status=200 if body["ok"] else 503)

    # -- live findings ---------------------------------------------------------------------------

    async def get_findings(self, request: web.Request) -> web.Response:
        hub, since = self._live_query(request)
        findings = hub.since(since)
        last = findings[-1].id if findings else since
        return web.Response(body=msgspec.json.encode({"findings": findings, "last": last}), content_type="application/json")

    async def get_live(self, request: web.Request) -> web.StreamResponse:
        """Streams findings as Server-Sent Events; beyond `max_streams` at once, 503 with Retry-After."""
        hub, since = self._live_query(request)
        if self.streams >= self.config.max_streams:
            raise too_many_streams(self.config.max_streams)
        self.streams += 1
        try:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await response.prepare(request)
            await hub.stream(response, since)
        finally:
            self.streams -= 1
        return response

    def _live_query(self, request: web.Request) -> tuple[LiveHub, int]:
        """Returns the hub and the finding id a live request reads after (`?since=N` or `Last-Event-ID`).

        :raises Refusal: 503 when findings are not published, 400 when the id is not one.
        """
        if self.hub is None or not self.hub.ready():
            raise Refusal(503, "live-unavailable", self.hub.status() if self.hub else "the service runs without live audit (--no-live)")
        since = _since(request)
        if since is None:
            raise Refusal(400, "bad-query", "?since=N (or Last-Event-ID) takes a finding id")
        return self.hub, since

    # -- running ---------------------------------------------------------------------------------

    async def run(self, ready: Callable[[str], None] | None = None) -> None:
        """Serves until SIGTERM or SIGINT, then stops taking requests, finishes the commit in flight and closes."""
        loop = asyncio.get_running_loop()
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False, shutdown_timeout=5.0)
        await runner.setup()
        if self.hub:  # the log's findings so far, before any batch is taken
            with starting("opening the live audit (derived/live)"):
                self.hub.start(loop)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if self.config.fronts:
            port = await self._start_fronts(runner, stop)
        else:
            site = web.TCPSite(runner, self.config.host, self.config.port)
            await site.start()
            port = runner.addresses[0][1]
        warm_up(live=self.hub is not None)
        settle_heap()
        url = f"http://{self.config.host}:{port}"
        self.log({"at": "started", "url": url, "ledger": str(self.config.root), "size": self.writer.checkpoint.size,
                  "recovered": self.writer.recovered, "sources": len(self.writer.book.sources), "fronts": self.config.fronts,
                  "files": resource.getrlimit(resource.RLIMIT_NOFILE)[0]})
        if ready:
            ready(url)
        failure = loop.create_task(self._log_failure())
        await stop.wait()
        failure.cancel()
        self.log({"at": "stopping", "queued": self.writer.queued()})
        await self.writer.stop()  # the commit in flight finishes; batches still waiting get 503
        if self.hub:
            self.hub.close()
        await self._stop_fronts()  # after every answer went to them: they finish their responses and exit
        await runner.cleanup()
        self.readers.shutdown(wait=False)
        if self._private is not None:
            self._private.cleanup()
        if self._front_start is not None:
            self._front_start[2].close()
        self.log({"at": "stopped", "size": self.writer.checkpoint.size, "commits": self.writer.commits})
        if self.failed:
            raise SystemExit(self.failed)

    async def _log_failure(self) -> None:
        """Writes one log line when the writer enters the failed state (the ledger could not be
        written, e.g. a full disk: batches are answered 503 until the service is restarted)."""
        while self.writer.error is None:
            await asyncio.sleep(FAILED_CHECK_S)
        self.log({"at": "failed", "error": self.writer.error, "message": "账本无法写入，批次一律拒收（503），直至重启 / the ledger "
                  "cannot be written: every batch is refused (503) until the service is restarted"})

    # -- front processes -------------------------------------------------------------------------

    async def _start_fronts(self, runner: web.AppRunner, stop: asyncio.Event) -> int:
        """Listens on the service's address, starts the front processes on that socket, serves the
        writer's application to them on a Unix socket in a private directory; returns the port."""
        import os
        import socket
        import tempfile

        _remove_stale_private_dirs()
        self._private = tempfile.TemporaryDirectory(prefix=f"{PRIVATE_PREFIX}{os.getpid()}-")  # 0700: this user's processes only
        internal = os.path.join(self._private.name, "writer.sock")
        inner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        inner.bind(internal)
        await web.SockSite(runner, inner).start()
        family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
        listener = socket.create_server((self.config.host, self.config.port), family=family, backlog=1024)
        settings = {"internal": internal, "listen": listener.fileno(), "max_body": self.config.max_body,
                    "read_timeout": self.config.read_timeout, "parent": os.getpid(), "max_streams": self.config.max_streams,
                    "max_per_peer": self.config.max_per_peer}
        package = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)}
        self._front_start = (settings, env, listener)  # kept open (this process accepts nothing on it): a front that exits is started again on it
        for _ in range(self.config.fronts):
            await self._spawn_front(stop)
        return int(listener.getsockname()[1])

    async def _spawn_front(self, stop: asyncio.Event) -> None:
        """Starts one front process on the service's listening socket and waits until it is ready.

        :raises RuntimeError: when it exits as it starts.
        """
        import socket

        assert self._front_start is not None  # set by `_start_fronts` before any front is spawned
        settings, env, listener = self._front_start
        mine, theirs = socket.socketpair()
        front = _FrontEnd(self, stop)
        _, front.link = await asyncio.get_running_loop().connect_accepted_socket(functools.partial(Link, front.message, front.lost), mine)
        front.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from audit.service.front import main; main()", json.dumps({**settings, "link": theirs.fileno()}),
            pass_fds=(listener.fileno(), theirs.fileno()), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, env=env)
        theirs.close()
        front.link.send(sources_message(self.writer.book))
        self.fronts.append(front)
        await asyncio.wait_for(front.ready, 120)

    async def _respawn(self, front: _FrontEnd) -> None:
        """Starts a front in the place of one that exited (issue 33): the connections it held are
        lost (their clients send again: a re-send is acknowledged once), new ones wait in the
        socket's queue meanwhile. A front that keeps exiting (FRONT_RESTARTS a minute) stops the
        service, as one that fails to start does."""
        code = await front.proc.wait()
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < 60] + [now]
        self.log({"at": "front-exited", "pid": front.proc.pid, "code": code,
                  "message": "前端进程退出，在同一端口重启 / a front process exited; another starts on the same socket"})
        if len(self._restarts) > FRONT_RESTARTS:
            self.log({"at": "front-exited", "error": f"fronts exited {len(self._restarts)} times within a minute; the service stops"})
            self.failed = 1
            front.stop.set()
            return
        try:
            await self._spawn_front(front.stop)
        except (RuntimeError, OSError, asyncio.TimeoutError) as exc:
            self.log({"at": "front-exited", "error": f"a front could not be started again ({exc}); the service stops"})
            self.failed = 1
            front.stop.set()
            return
        self.log({"at": "front-started", "pid": self.fronts[-1].proc.pid})

    def forward(self, link: Any, message: list[Any]) -> None:
        """Takes a batch a front handed over (on the event loop) through the one ingress, and answers
        the front once the writer settled it. The front names the key it checked the signature
        with; a batch it could not check, or checked with another key than this book's, is
        authenticated here."""
        _, n, header, body, public = message
        extra: dict[str, Any] = {}
        try:
            receipt = asyncio.ensure_future(self.ingress(header or None, body, public, extra))  # (a future stays itself: no task)
        except Exception as exc:  # noqa: BLE001 - the front must get an answer
            _answer_front(link, n, extra, exc)
            return
        receipt.add_done_callback(functools.partial(_answered, link, n, extra))

    def _checked_source(self, header: str, public: bytes | None) -> ledger_sources.Source | None:
        """Returns the source of a batch the front checked with the key this book holds for it, else None."""
        source = self.writer.book.sources.get(header.strip().partition(" ")[0]) if public else None
        return source if source is not None and source.verifier.public == public else None

    def _tell_fronts_source(self, name: str) -> None:
        """Sends the fronts the one source that changed (never the whole book: issue 33)."""
        message = source_message(self.writer.book.sources[name])
        for front in self.fronts:
            front.link.send(message)

    async def _stop_fronts(self) -> None:
        self.closing_fronts = True
        for front in self.fronts:
            front.link.send(["stop"])
        for front in self.fronts:
            try:
                await asyncio.wait_for(front.proc.wait(), 30)
            except asyncio.TimeoutError:
                front.proc.kill()


@contextmanager
def starting(phase: str) -> Iterator[None]:
    """Names the phase of start-up in a system error raised in it (a full disk says when, the error's file where).

    :raises OSError: the error, its message led by the phase.
    """
    try:
        yield
    except OSError as exc:
        if exc.errno is None:
            raise
        raise OSError(exc.errno, f"服务启动失败 / start-up, {phase}: {exc.strerror}", exc.filename) from None


def warm_up(live: bool) -> None:
    """Does before the first batch what the first batch would otherwise pay for while every table
    waits, each holding the interpreter lock: the event decoders' build (~25 ms) and, for the live
    audit's folds, the engines' imports."""
    from schemas import codec

    codec.warm()
    if live:
        from replay.registry import GAMES, engine

        for game in GAMES:
            engine(game)


def _log_receipt(log: dict[str, Any], done: asyncio.Future[ledger_api.Receipt]) -> None:
    """Names a committed batch's entries in its request's log line (a future's callback)."""
    if not done.cancelled() and done.exception() is None:
        receipt = done.result()
        log["entries"] = [receipt.entries[0].index, receipt.entries[-1].index] if receipt.entries else []


def _answered(link: Any, n: int, extra: dict[str, Any], done: asyncio.Future[ledger_api.Receipt]) -> None:
    """Answers a front's batch once the writer settled it (a future's callback, on the event loop)."""
    outcome: Any = Refusal(500, "internal-error", "the commit was cancelled") if done.cancelled() else done.exception() or done.result()
    _answer_front(link, n, extra, outcome)


def _answer_front(link: Any, n: int, extra: dict[str, Any], outcome: Any) -> None:
    """Sends a front the answer to its batch `n`: the receipt, the refusal, or a 500 for anything else."""
    if isinstance(outcome, Refusal):
        extra["error"] = outcome.reason
        link.send(["answer", n, outcome.status, error_body(outcome), outcome.retry_after, extra])
    elif isinstance(outcome, BaseException):
        failure = Refusal(500, "internal-error", f"{type(outcome).__name__}: {outcome}")
        link.send(["answer", n, 500, error_body(failure), 0, {"error": failure.reason}])
    else:
        link.send(["answer", n, 200, msgspec.json.encode(outcome), 0, extra])


class _FrontEnd:
    """The writer's end of one front process: its link, its process, whether it is ready."""

    def __init__(self, service: Service, stop: asyncio.Event) -> None:
        self.service, self.stop = service, stop
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.link: Any = None
        self.proc: Any = None

    def message(self, message: list[Any]) -> None:
        if message[0] == "batch":
            self.service.forward(self.link, message)
        elif message[0] == "ready" and not self.ready.done():
            self.ready.set_result(None)

    def lost(self) -> None:
        """The front's socket closed: as it started, it failed to; later, it exited, and another is started in its place."""
        if not self.ready.done():
            self.ready.set_exception(RuntimeError("a front process exited as it started (its error is on stderr)"))
        elif not self.service.closing_fronts and self in self.service.fronts:
            self.service.fronts.remove(self)
            asyncio.get_running_loop().create_task(self.service._respawn(self))


FRONT_RESTARTS = 5
"""Fronts started again within a minute before the service gives up and stops (a front that crashes at once would loop)."""
PRIVATE_PREFIX = "matchledger-serve-"
"""The private directory of a service with fronts: this prefix, the writer's pid, a random part."""


def _remove_stale_private_dirs() -> None:
    """Removes the private directories that services killed without a chance to clean up (SIGKILL)
    left behind: this user's own, named for a process that no longer runs. Links and other users'
    directories are left alone."""
    import shutil
    import tempfile

    for path in Path(tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}*-*"):
        pid = path.name[len(PRIVATE_PREFIX):].partition("-")[0]
        try:
            info = path.lstat()
            if not pid.isdigit() or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or _running(int(pid)):
                continue
            shutil.rmtree(path)
        except OSError:  # gone meanwhile, or not ours to remove
            continue


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _since(request: web.Request) -> int | None:
    text = request.headers.get("Last-Event-ID") or request.query.get("since") or "0"
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 0 else None


def _log_signature(header: str | None) -> tuple[str, bytes, bytes]:
    try:
        return ledger_sources.parse_signature(header)
    except ledger_sources.SourceRefused as exc:
        raise refusal_of(exc) from None


class _SourceChange(msgspec.Struct, forbid_unknown_fields=True):
    action: str
    name: str
    key: str | None = None
    tournaments: list[str] = []
    streams: list[str] = []
    reason: str = ""


def _source_change(body: bytes) -> Change:
    """Reads a registry change: `{"action": "register", "name", "key", "tournaments", "streams"}` or
    `{"action": "revoke", "name", "reason"}`.

    :raises Refusal: 400 when it is neither.
    """
    try:
        change = msgspec.json.decode(body, type=_SourceChange)
        if change.action == "register":
            key = ledger_api.Verifier.parse(change.key or "")
            return Change(lambda book, ledger: ledger_sources.registration(book, ledger, change.name, key, change.tournaments, change.streams))
        if change.action == "revoke":
            return Change(lambda book, ledger: ledger_sources.revocation(book, ledger, change.name, change.reason))
    except (msgspec.DecodeError, ledger_api.LedgerError) as exc:
        raise Refusal(400, "malformed-body", f"not a source change: {exc}") from None
    raise Refusal(400, "malformed-body", f"unknown action {change.action!r}: register or revoke")


def serve(config: ServeConfig, ready: Callable[[str], None] | None = None) -> None:
    """Runs the service until it is stopped (SIGTERM, SIGINT).

    :raises LedgerLocked: when another writer (a `serve` or a `record`) holds the ledger.
    """
    log = json_log()
    raise_file_limit()
    service = Service(config, log)
    try:
        run_loop(service.run(ready))
    finally:
        log.flush()  # the last lines, logged as the loop ended


def raise_file_limit() -> int:
    """Raises the soft open-file limit to the hard one (each connection is an open file; a default
    soft limit of 1,024 would let some idle connections refuse the batches); returns the limit now.
    The fronts, started later, inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):  # an unlimited hard limit above the kernel's nr_open: keep the soft one
            return soft
    return hard
