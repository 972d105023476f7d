"""The HTTP front of `matchledger serve`: a process of its own that takes the service's HTTP
connections, so that HTTP parsing, the signature check and the access log do not share the
writer's interpreter lock.

Why a process: in one process the service is bound by its interpreter lock, not by the disk. Each
batch costs the event loop about 200 µs of aiohttp's request handling before any ledger work, and
the writer's thread (appends, syncs, the checkpoint) waits for the lock at every system call it
returns from. Here the writer's process (`audit/service/serve.py`) keeps the ledger, its lock, the group
commit, the receipts and the live audit; the front reads each request whole (size and time limits:
`audit/service/http1.py`, its lean HTTP/1.1 server), checks the batch's signature against the sources it
was sent, and hands the batch over a socket pair as one framed message. The writer answers with
the HTTP status and body (the receipt once committed: a 200 still means durable). Every other
request (the read API, `/live`, source changes) is passed through to the writer's own aiohttp
application on a private Unix socket, in one of three pools of its own (issue 28, point 8): `/live`
streams (at most `max_streams`; one more is answered 503 with Retry-After at once), the operator's
changes (`POST /sources`: never queued behind readers) and the other reads, each with its own time
limit, so that unread streams or slow readers cannot hold what the others need.

The writer's process stays the authority: it takes a batch the front verified only when the front
used the key the writer's book holds for that source, and authenticates anything else itself, so a
front whose copy of the sources is behind can neither let a revoked key through nor refuse a new one.

The front lives only as long as the writer's process: it asks the kernel for SIGKILL when its
parent dies (and exits when the socket pair closes), so a killed service leaves no process holding
the port. It ignores SIGINT (Ctrl-C reaches the whole process group; the writer's process runs the
graceful shutdown and then tells the front to stop).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from typing import Any

from audit.service.http1 import RESERVED_FILES, Answer, Refused, Request, Server, connection_limit
from audit.service.process import Link, SignatureChecker, error_body, json_log, run_loop, settle_heap, too_many_streams
from ledger import Verifier
from ledger import sources as ledger_sources
from ledger.group_commit import Refusal
from ledger.sources import Source, SourceBook

PASSED_HEADERS = ("Content-Type", "Cache-Control", "Retry-After")
"""Response headers the front passes on from the writer's application."""
SIGNATURE_NAME = ledger_sources.HEADER.lower().encode()
READS = 64
"""Read requests (`/checkpoint`, `/proof/…`, `/tile/…` …) a front passes to the writer at once."""
READ_WAIT = 10.0
"""Seconds a read waits for a place among READS before it is answered 503 (Retry-After)."""
READ_TIMEOUT = 60.0
"""Seconds a passed-through read or change may take, answer included (504 after)."""
ADMIN = 4
"""The operator's changes (`POST /sources`) passed at once, in a pool no reader uses."""
HOP_HEADERS = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "expect", "te", "trailer"})
"""Request headers not passed through: the connection's own, which the front has already acted on."""


class Pool:
    """Connections of their own to the writer's application for one kind of request: at most
    `most` requests at once (one more waits `wait` seconds for a place, then is refused), each
    answered within `timeout` seconds (None: a stream, as long as it lasts)."""

    def __init__(self, internal: str, most: int, wait: float, timeout: float | None) -> None:
        import aiohttp

        self.most, self.wait = most, wait
        self.places = asyncio.Semaphore(most)
        self.session = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=internal, limit=most), auto_decompress=False,
                                             timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=30))

    async def take(self) -> bool:
        """Takes a place (waiting at most `wait` seconds); tells whether it got one."""
        if not self.places.locked():
            await self.places.acquire()  # a free place: taken at once
            return True
        if self.wait <= 0:
            return False
        try:
            await asyncio.wait_for(self.places.acquire(), self.wait)
        except TimeoutError:
            return False
        return True


class Front:
    """One front process: POST /batches checked and handed to the writer; all else passed through."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.log = json_log()
        self.book = SourceBook()
        self.signatures = SignatureChecker()
        self._asked: dict[int, asyncio.Future[list[Any]]] = {}
        self._next = 0
        self.stopping = asyncio.Event()
        self.link: Link | None = None
        internal = settings["internal"]
        self.streams = Pool(internal, settings["max_streams"], 0.0, None)
        self.admin = Pool(internal, ADMIN, READ_TIMEOUT, READ_TIMEOUT)
        self.reads = Pool(internal, READS, READ_WAIT, READ_TIMEOUT)
        self.error_body = error_body
        self.http = Server(self.handle, error_body, self.log, settings["max_body"], settings["read_timeout"],
                           max_per_peer=settings["max_per_peer"],
                           max_connections=connection_limit(RESERVED_FILES + settings["max_streams"] + ADMIN + READS))

    # -- the link to the writer ------------------------------------------------------------------

    def _message(self, message: list[Any]) -> None:
        kind = message[0]
        if kind == "answer":
            asked = self._asked.pop(message[1], None)
            if asked is not None and not asked.done():
                asked.set_result(message)
        elif kind == "sources":
            self.book.sources = dict(map(_front_source, message[1]))
            self.book.origin = message[2]
        elif kind == "source":
            name, source = _front_source(message[1])
            self.book.sources[name] = source
        elif kind == "stop":
            self.stopping.set()

    def _lost(self) -> None:
        """The writer's process is gone: nothing more can be acknowledged, so the front goes at once."""
        self.log.flush()
        os._exit(0 if self.stopping.is_set() else 70)

    # -- requests --------------------------------------------------------------------------------

    async def handle(self, request: Request, answer: Answer) -> None:
        if request.method == "POST" and request.path == "/batches":
            await self.post_batch(request, answer)
        elif not request.target.startswith("/"):  # an absolute or authority form: this is no proxy
            self._refuse(request, answer, Refused(400, "malformed-request", "the request target must be a path"))
        else:
            await self.pass_through(request, answer)

    async def post_batch(self, request: Request, answer: Answer) -> None:
        """Checks a batch's signature, hands the batch to the writer, answers with what the writer answers."""
        body = request.body
        header = request.header(SIGNATURE_NAME)
        public = b""
        try:
            source, message, signature = self.book.identify(header, body)
        except ledger_sources.SourceRefused:
            pass  # the writer's process refuses it with the reason, from its own book
        else:
            if await self.signatures.check(source.verifier, message, signature):
                public = source.verifier.public
        n = self._next = self._next + 1
        asked = self._asked[n] = asyncio.get_running_loop().create_future()
        assert self.link is not None
        self.link.send(["batch", n, header or "", body, public])
        _, _, status, data, retry_after, extra = await asked
        request.log.update(extra)
        headers = [("Content-Type", "application/json")]
        if retry_after:
            headers.append(("Retry-After", str(retry_after)))
        answer.send(status, data, headers)

    async def pass_through(self, request: Request, answer: Answer) -> None:
        """Passes a request to the writer's application, in its pool, and its answer back (streamed
        for `/live`); a full pool is answered 503 with Retry-After, a pass-through over its time 504."""
        pool = self.streams if request.path == "/live" else self.reads if request.method in ("GET", "HEAD") else self.admin
        if not await pool.take():
            self._refuse(request, answer, too_many_streams(pool.most) if pool is self.streams else Refused(
                503, "busy", f"服务繁忙 / the service passes {pool.most} requests of this kind at once, all it may: send again later",
                retry_after=1))
            return
        try:
            await self._passed(pool, request, answer)
        except TimeoutError:
            if answer.status:  # a stream that had begun: it ends here
                raise ConnectionResetError("the pass-through timed out") from None
            self._refuse(request, answer, Refused(504, "upstream-timeout", f"应答超时 / the answer took over {READ_TIMEOUT:g} s"))
        finally:
            pool.places.release()

    async def _passed(self, pool: Pool, request: Request, answer: Answer) -> None:
        from yarl import URL

        headers = {k: v for k, v in request.headers.items() if k not in HOP_HEADERS}
        async with pool.session.request(request.method, URL("http://writer" + request.target, encoded=True),
                                        data=request.body or None, headers=headers, allow_redirects=False) as upstream:
            passed = [(k, upstream.headers[k]) for k in PASSED_HEADERS if k in upstream.headers]
            if upstream.headers.get("Content-Type", "").startswith("text/event-stream"):
                answer.start(upstream.status, passed)
                async for chunk in upstream.content.iter_any():
                    await answer.write(chunk)
                answer.end()
                return
            data = await upstream.read()
        if request.method == "HEAD" and "Content-Length" in upstream.headers:
            passed.append(("Content-Length", upstream.headers["Content-Length"]))
        if upstream.status >= 400 and upstream.headers.get("Content-Type", "").startswith("application/json"):
            try:
                request.log["error"] = json.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                pass
        answer.send(upstream.status, data, passed)

    def _refuse(self, request: Request, answer: Answer, refused: Refused | Refusal) -> None:
        """Answers the front's own refusal of a request (its JSON error, Retry-After when it has one)."""
        headers = [("Content-Type", "application/json")]
        if refused.retry_after:
            headers.append(("Retry-After", str(refused.retry_after)))
        answer.send(refused.status, self.error_body(refused), headers)
        request.log["error"] = refused.reason

    # -- running ---------------------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        link_socket = socket.socket(fileno=self.settings["link"])
        _, self.link = await loop.connect_accepted_socket(lambda: Link(self._message, self._lost), link_socket)
        await self.http.start(socket.socket(fileno=self.settings["listen"]))
        settle_heap()  # as the writer's process does: start-up's objects out of the collector's scans
        self.link.send(["ready"])
        await self.stopping.wait()
        await self.http.stop()  # no new connections; the answers in flight were all given before "stop"
        for pool in (self.streams, self.admin, self.reads):
            await pool.session.close()
        self.log.flush()


def _front_source(row: list[Any]) -> tuple[str, Any]:
    """Returns a source as a front keeps it (its name, key and whether it was revoked) from a row of `sources_message`."""
    name, key_name, public, revoked = row
    return name, Source(name, Verifier(key_name, public), (), (), revoked)


def _die_with_parent(parent: int) -> None:
    """Asks Linux for SIGKILL when the writer's process dies (PR_SET_PDEATHSIG), so that a killed
    service leaves no front holding its port."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere: the front still exits when the socket pair closes
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(70)


def main() -> None:
    """Runs one front process (started by `audit.service.serve` with its settings as JSON in argv[1])."""
    settings = json.loads(sys.argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(settings["parent"])
    async def run() -> None:
        await Front(settings).run()

    run_loop(run())
