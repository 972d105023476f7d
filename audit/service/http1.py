"""The HTTP/1.1 server of the service's front processes: connections parsed by llhttp (Node.js's
parser, through `httptools`, the one uvicorn runs on), each request read whole under the service's
limits and handed to one handler, the answers given in order.

Why not aiohttp here: the front's work per batch is small (read it, check its signature, hand it
over, answer), and aiohttp's request handling (request and response objects, middleware, the
streams, a task per request) cost the front's loop more than that work itself, about 65 µs a
request of the ~180 it spent (bench/README, issue 14). This server keeps only what a front needs
and what a careful server must do:

- **Limits** (what aiohttp's `client_max_size` and the handlers' `read_body` gave): the head at
  most 16 KiB (431), the body at most `max_body` bytes (413, refused from its Content-Length before
  it is read, or as a chunked body passes the limit), a request that is not whole `read_timeout`
  seconds after it began gets 408 (a slow or stalled client cannot hold anything), an idle
  keep-alive connection is closed after `idle_timeout`. Each of these closes the connection: the
  rest of what it sends cannot be framed any more.
- **Connections** (issue 28, point 8): one that sends no first byte within `read_timeout` is
  closed; one address holds at most `max_per_peer` connections and the server at most
  `max_connections` (its open-file limit less what the process keeps for itself): beyond either a
  new connection is answered 503 with Retry-After and closed, so silent connections cannot take
  the files that answers need. A client that reads nothing of its answers (an unread `/live`
  stream) for `idle_timeout` is cut off.
- **Order**: pipelined requests are read ahead (a few, then reading pauses) and
  answered one at a time, in order, by one task a connection.
- **Framing** is llhttp's: Content-Length or chunked, never both, no obsolete line folding; a
  malformed head is answered 400 and the connection closed. `Expect: 100-continue` is honoured.
- **One access-log line per request**, as the service's other requests have; a request whose client
  left before its answer is logged 499 (`client-gone`), not 500.
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

import httptools

MAX_HEAD = 16 * 1024
"""The largest request head (request line and headers) read, in bytes."""
PIPELINED = 4
"""Requests of one connection read ahead of their answers before reading pauses (so one connection
holds at most about this many bodies of `max_body` bytes: a pipelining client cannot run the front
out of memory)."""
IDLE_TIMEOUT = 75.0
"""Seconds an idle keep-alive connection is kept (aiohttp's default), and a client that reads
nothing of what it is sent (an unread stream) is waited for."""
MAX_PER_PEER = 512
"""Connections one client address may hold at once (a venue's tables behind one NAT stay well under)."""
CLIENT_GONE = 499
"""The status logged for a request whose client left before its answer (nginx's "client closed request")."""
RESERVED_FILES = 64
"""Open files a server keeps free of client connections (its listener, the log, the link to the writer)."""
_REASONS = {s.value: s.phrase.encode() for s in HTTPStatus}


class Request:
    """A whole request: method, target (path and query), headers (names in lower case; the first of
    a repeated name), body, the client's address, and `log`: what the handler adds to its log line."""

    __slots__ = ("method", "target", "raw_headers", "_headers", "body", "remote", "keep_alive", "started", "log")

    def __init__(self, method: str, target: str, raw_headers: list[tuple[bytes, bytes]], body: bytes, remote: str,
                 keep_alive: bool, started: float) -> None:
        self.method, self.target, self.raw_headers, self.body = method, target, raw_headers, body
        self.remote, self.keep_alive, self.started = remote, keep_alive, started
        self._headers: dict[str, str] | None = None
        self.log: dict[str, Any] = {}

    @property
    def headers(self) -> dict[str, str]:
        """The headers by lower-case name (the first of a repeated name), made when first asked for."""
        if self._headers is None:
            self._headers = {}
            for name, value in self.raw_headers:
                self._headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        return self._headers

    def header(self, name: bytes) -> str | None:
        """Returns the first value of a header, by its lower-case name (without making the dict)."""
        for key, value in self.raw_headers:
            if key.lower() == name:
                return value.decode("latin-1")
        return None

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]


class Refused(Exception):
    """A request the server itself refuses (limits, framing): status, reason, message."""

    def __init__(self, status: int, reason: str, message: str, retry_after: int = 0) -> None:
        super().__init__(message)
        self.status, self.reason, self.retry_after = status, reason, retry_after
        self.line = None  # the shape of the service's refusals: no body line to name


class Answer:
    """Where a handler puts its request's answer: `send` a whole one, or `start` a stream (chunked),
    `write` to it and `end` it."""

    def __init__(self, connection: Connection, request: Request) -> None:
        self._connection, self.request = connection, request
        self.status = 0
        self.streaming = False

    def send(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> None:
        """Writes a whole answer (a HEAD request's answer keeps its Content-Length, without the body)."""
        self.status = status
        headers = headers or []
        length = headers_length(headers, len(body))
        head = self._connection.head(status, [h for h in headers if h[0].lower() != "content-length"]
                                     + [("Content-Length", str(length))], self.request.keep_alive)
        self._connection.write(head if self.request.method == "HEAD" else head + body)

    def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        """Starts a streamed answer: its chunks follow, as they come, until `end`."""
        self.status, self.streaming = status, True
        self._connection.streaming = True
        self._connection.write(self._connection.head(status, [*headers, ("Transfer-Encoding", "chunked")], self.request.keep_alive))

    async def write(self, chunk: bytes) -> None:
        """Writes a chunk of a streamed answer, waiting while the client reads slower than it comes."""
        if chunk:
            self._connection.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await self._connection.drained()

    def end(self) -> None:
        self._connection.write(b"0\r\n\r\n")


def headers_length(headers: list[tuple[str, str]], default: int) -> int:
    """Returns the Content-Length the headers name, else `default`."""
    for name, value in headers:
        if name.lower() == "content-length":
            return int(value)
    return default


def connection_limit(reserved: int = RESERVED_FILES) -> int:
    """Returns how many client connections this process can hold: its open-file limit less `reserved`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else max(16, soft - reserved)


Handler = Callable[[Request, Answer], Awaitable[None]]
ErrorBody = Callable[[Refused], bytes]
Log = Callable[[dict[str, Any]], None]


class Server:
    """The connections of one listening socket, served by `handler`. `error_body` gives the body of
    the server's own refusals; `log` gets one record per request."""

    def __init__(self, handler: Handler, error_body: ErrorBody, log: Log, max_body: int, read_timeout: float,
                 idle_timeout: float = IDLE_TIMEOUT, max_per_peer: int = MAX_PER_PEER, max_connections: int | None = None) -> None:
        self.handler, self.error_body, self.log = handler, error_body, log
        self.max_body, self.read_timeout, self.idle_timeout = max_body, read_timeout, idle_timeout
        self.max_per_peer = max_per_peer
        self.max_connections = connection_limit() if max_connections is None else max_connections
        self.connections: set[Connection] = set()
        self.peers: dict[str, int] = {}
        """Connections held by each client address."""
        self._listener: asyncio.AbstractServer | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._date = (0, b"")

    async def start(self, sock: Any) -> None:
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(lambda: Connection(self), sock=sock, backlog=1024)
        self._sweep()

    async def stop(self, timeout: float = 5.0) -> None:
        """Takes no new connections, lets each connection finish the request it is answering, then
        closes them all (the rest after `timeout` seconds)."""
        if self._listener is not None:
            self._listener.close()
        if self._sweeper is not None:
            self._sweeper.cancel()
        for connection in list(self.connections):
            connection.close_when_idle()
        deadline = time.monotonic() + timeout
        while self.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        for connection in list(self.connections):
            connection.abort()

    def date(self) -> bytes:
        """Returns the Date header's value, formatted once a second."""
        second = int(time.time())
        if second != self._date[0]:
            self._date = (second, time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(second)).encode())
        return self._date[1]

    def _sweep(self) -> None:
        """Once a second: times out requests not whole in time, and idle connections (one timer for
        all connections, none per request)."""
        now = time.monotonic()
        for connection in list(self.connections):
            connection.check(now)
        self._sweeper = asyncio.get_running_loop().call_later(1.0, self._sweep)


class Connection(asyncio.Protocol):
    """One client connection: parses its requests, queues them, answers them in order."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.remote = ""
        self.queue: list[Request | Refused] = []
        self._more = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._paused_reading = False
        self._writable: asyncio.Future[None] | None = None
        self.busy = False
        self.streaming = False
        self.requests = 0  # requests begun: before the first, the connection has `read_timeout` to send a byte
        self.idle_since = time.monotonic()
        self._over: Refused | None = None
        self._reset()

    def _reset(self) -> None:
        self._began = 0.0  # when the request being read began (0: none is)
        self._target = bytearray()
        self._headers: list[tuple[bytes, bytes]] = []
        self._head = 0
        self._body = bytearray()

    # -- asyncio ---------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.remote = peer[0] if isinstance(peer, tuple) else ""
        server = self.server
        held = server.peers.get(self.remote, 0)
        server.peers[self.remote] = held + 1
        server.connections.add(self)
        self._task = asyncio.get_running_loop().create_task(self._answer_all())
        if held >= server.max_per_peer:
            self._refuse(Refused(503, "too-many-connections", f"此地址的连接已达上限 / {self.remote} already holds {held} "
                                 "connections, the most one address may: close idle ones, or send again later", retry_after=1))
        elif len(server.connections) > server.max_connections:
            self._refuse(Refused(503, "too-many-connections", f"服务连接已满 / the server holds {server.max_connections} "
                                 "connections, all it can: send again later", retry_after=1))

    def connection_lost(self, exc: Exception | None) -> None:
        if self in self.server.connections:
            held = self.server.peers.pop(self.remote, 1) - 1
            if held:
                self.server.peers[self.remote] = held
        self.server.connections.discard(self)
        self._closing = True
        if self._task is not None:
            self._task.cancel()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._refuse(Refused(400, "malformed-request", "protocol upgrades are not served here"))
        except httptools.HttpParserError as exc:  # a limit of ours (raised by a callback, which stops llhttp) or bad framing
            self._refuse(self._over or Refused(400, "malformed-request", f"not an HTTP/1.1 request: {exc}"))

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    async def drained(self) -> None:
        """Waits while the client reads slower than it is written to; one that reads nothing for
        `idle_timeout` is cut off.

        :raises ConnectionResetError: when the client went away or was cut off.
        """
        if self._writable is not None:
            try:
                await asyncio.wait_for(self._writable, self.server.idle_timeout)
            except TimeoutError:
                self.abort()
                raise ConnectionResetError(f"the client read nothing for {self.server.idle_timeout:g} s") from None
        if self._closing or self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("the client went away")

    # -- llhttp's callbacks (during feed_data) ---------------------------------------------------

    def on_message_begin(self) -> None:
        self._began = time.monotonic()
        self.requests += 1

    def on_url(self, url: bytes) -> None:
        self._target += url
        self._head += len(url)
        if self._head > MAX_HEAD:
            raise self._limit(431, "head-too-large", f"the request's head is over {MAX_HEAD} bytes")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head += len(name) + len(value) + 4
        if self._head > MAX_HEAD:
            raise self._limit(431, "head-too-large", f"the request's head is over {MAX_HEAD} bytes")
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        for name, value in self._headers:
            key = name.lower()
            if key == b"content-length" and int(value) > self.server.max_body:  # llhttp has checked it is a number
                raise self._limit(413, "body-too-large", f"the body is {int(value)} bytes, over the limit of {self.server.max_body}")
            if key == b"expect" and value.lower() == b"100-continue" and not self.queue and not self.busy:
                self.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._body += body
        if len(self._body) > self.server.max_body:
            raise self._limit(413, "body-too-large", f"the body is over the limit of {self.server.max_body} bytes")

    def on_message_complete(self) -> None:
        request = Request(self.parser.get_method().decode("latin-1"), self._target.decode("latin-1"), self._headers,
                          bytes(self._body), self.remote, self.parser.should_keep_alive(), self._began)
        self._reset()
        self._enqueue(request)

    def _limit(self, status: int, reason: str, message: str) -> Refused:
        """Returns a limit's refusal to raise in a callback (llhttp then stops and reports an error)."""
        self._over = Refused(status, reason, message)
        return self._over

    # -- answering -------------------------------------------------------------------------------

    def _enqueue(self, item: Request | Refused) -> None:
        self.queue.append(item)
        self._more.set()
        if len(self.queue) >= PIPELINED and self.transport is not None and not self._paused_reading:
            self._paused_reading = True
            self.transport.pause_reading()

    def _refuse(self, refused: Refused) -> None:
        """Queues the server's own refusal; the connection closes once it is answered."""
        self._closing = True
        self.queue.append(refused)
        self._more.set()
        if self.transport is not None and not self._paused_reading:
            self._paused_reading = True
            self.transport.pause_reading()

    async def _answer_all(self) -> None:
        """Answers the queued requests in order, one at a time, for the connection's life."""
        try:
            while True:
                while not self.queue:
                    if self._closing:
                        self._close()
                        return
                    self._more.clear()
                    self.idle_since = time.monotonic()
                    await self._more.wait()
                item = self.queue.pop(0)
                if self.transport is None or self.transport.is_closing():
                    return  # the client went away: what it sent ahead is not answered
                if self._paused_reading and not self._closing and len(self.queue) < PIPELINED // 2 and self.transport is not None:
                    self._paused_reading = False
                    self.transport.resume_reading()
                if isinstance(item, Refused):
                    self._answer_refusal(item)
                    self._close()
                    return
                self.busy = True
                await self._answer(item)
                self.busy = False
                if self._writable is not None:  # the client does not read its answers: read nothing more of it meanwhile
                    await self.drained()
                if not item.keep_alive:
                    self._closing = True
        except (asyncio.CancelledError, ConnectionResetError):
            pass

    async def _answer(self, request: Request) -> None:
        answer = Answer(self, request)
        try:
            await self.server.handler(request, answer)
        except (ConnectionError, asyncio.CancelledError):
            self._closing = True
            if not answer.status:  # the client left before its answer: no failure of ours, so no 500 in the log
                answer.status = CLIENT_GONE
                request.log["error"] = "client-gone"
            return
        except Exception as exc:  # noqa: BLE001 - the client must get an answer
            refused = Refused(500, "internal-error", f"{type(exc).__name__}: {exc}")
            request.log["error"] = refused.reason
            if not answer.status:
                answer.send(500, self.server.error_body(refused), [("Content-Type", "application/json")])
            elif answer.streaming:
                self._closing = True
        finally:
            self._log(request.method, request.target, answer.status or 500, request.started, request.log)

    def _answer_refusal(self, refused: Refused) -> None:
        """Answers the server's own refusal of the request being read (the connection then closes)."""
        started = self._began or time.monotonic()
        body = self.server.error_body(refused)
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if refused.retry_after:
            headers.append(("Retry-After", str(refused.retry_after)))
        head = self.head(refused.status, headers, False)
        self.write(head + body)
        method = self.parser.get_method().decode("latin-1") if self._began else ""
        self._log(method, self._target.decode("latin-1"), refused.status, started, {"error": refused.reason})

    def _log(self, method: str, target: str, status: int, started: float, extra: dict[str, Any]) -> None:
        self.server.log({"at": "request", "method": method, "path": target, "status": status,
                         "ms": round((time.monotonic() - started) * 1000, 2), "remote": self.remote, **extra})

    def head(self, status: int, headers: list[tuple[str, str]], keep_alive: bool) -> bytes:
        lines = [b"HTTP/1.1 %d %s\r\nDate: %s\r\n" % (status, _REASONS.get(status, b"Unknown"), self.server.date())]
        lines += [b"%s: %s\r\n" % (name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        if not keep_alive or self._closing:
            lines.append(b"Connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    # -- ending ----------------------------------------------------------------------------------

    def check(self, now: float) -> None:
        """Times out a request that is not whole in time (408), a connection that sent no first byte
        in `read_timeout`, or an idle keep-alive connection."""
        if self._closing:
            return
        if self._began and now - self._began > self.server.read_timeout:
            timeout = self.server.read_timeout
            self._refuse(Refused(408, "body-timeout", f"the request did not arrive within {timeout:g} s"))
        elif not self._began and not self.queue and not self.busy:
            idle = self.server.idle_timeout if self.requests else self.server.read_timeout
            if now - self.idle_since > idle:
                self._closing = True
                self._more.set()

    def close_when_idle(self) -> None:
        """Closes once the answer being given is given; a stream (`/live`) is ended now."""
        self._closing = True
        self._more.set()
        if self.streaming and self._task is not None:
            self._task.cancel()

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()
