"""The HTTP/1.1 server of the service's fronts (`audit/service/http1.py`, issue 14, Build 4: a slow or
stalled client cannot hold the writer; request size limit, 413): each limit refused with its
status and the JSON error, pipelined requests answered in order, chunked bodies, `Expect:
100-continue`, HEAD, streamed answers, keep-alive and `Connection: close`, one log line a request.
The server runs on a loopback port on its own thread; the tests speak raw HTTP to it."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from audit.service.http1 import MAX_HEAD, Answer, Refused, Request, Server


def error_body(refused: Refused) -> bytes:
    return msgspec.json.encode({"error": refused.reason, "message": str(refused)})


async def handler(request: Request, answer: Answer) -> None:
    """Echoes what it was asked; /slow answers after a while, /stream streams three chunks."""
    if request.path == "/slow":
        await asyncio.sleep(0.3)
    if request.path == "/stream":
        answer.start(200, [("Content-Type", "text/event-stream")])
        for n in range(3):
            await answer.write(b"data: %d\n\n" % n)
        answer.end()
        return
    if request.path == "/forever":
        answer.start(200, [("Content-Type", "text/event-stream")])
        while True:
            await answer.write(b": still here\n\n")
            await asyncio.sleep(0.05)
    if request.path == "/boom":
        raise RuntimeError("a handler's bug")
    request.log["seen"] = len(request.body)
    body = msgspec.json.encode({"method": request.method, "target": request.target, "body": request.body.decode(),
                                "signature": request.headers.get("matchledger-signature")})
    answer.send(200, body, [("Content-Type", "application/json")])


class Running:
    """The server on its own thread and loop, with the log lines it wrote."""

    def __init__(self, max_body: int = 1000, read_timeout: float = 2.0, idle_timeout: float = 75.0) -> None:
        self.lines: list[dict[str, Any]] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        self.server = Server(handler, error_body, self.lines.append, max_body, read_timeout, idle_timeout)
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.start(self.sock))
            started.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        started.wait(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(1.0), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def connect(self) -> socket.socket:
        conn = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        return conn


@pytest.fixture()
def server() -> Iterator[Running]:
    running = Running()
    yield running
    running.stop()


def read_answers(conn: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """Reads `count` answers (Content-Length or chunked) off a connection."""
    data = b""
    answers: list[Any] = []
    while len(answers) < count:
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                raise ConnectionError(f"closed after {len(answers)} answers: {data!r}")
            data += more
        head, _, data = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if status == 100:
            continue
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while True:
                while b"\r\n" not in data:
                    data += conn.recv(65536)
                size_line, _, data = data.partition(b"\r\n")
                size = int(size_line, 16)
                while len(data) < size + 2:
                    data += conn.recv(65536)
                body, data = body + data[:size], data[size + 2:]
                if size == 0:
                    break
        else:
            length = int(headers.get("content-length", "0"))
            while len(data) < length:
                data += conn.recv(65536)
            body, data = data[:length], data[length:]
        answers.append((status, headers, body))
    return answers


def closed(conn: socket.socket) -> bool:
    conn.settimeout(5)
    try:
        return conn.recv(1) == b""
    except ConnectionResetError:
        return True


def post(target: str, body: bytes, *headers: str) -> bytes:
    extra = "".join(h + "\r\n" for h in headers)
    return f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def test_pipelined_requests_are_answered_in_order(server: Running) -> None:
    """Three requests sent at once, the first slow: the answers come in the order asked."""
    conn = server.connect()
    conn.sendall(post("/slow", b"one") + post("/a?x=1", b"two", "Matchledger-Signature: k c2ln") + post("/b", b"three"))
    answers = read_answers(conn, 3)
    assert [json.loads(b)["body"] for _, _, b in answers] == ["one", "two", "three"]
    assert json.loads(answers[1][2])["target"] == "/a?x=1" and json.loads(answers[1][2])["signature"] == "k c2ln"
    assert all(h["content-type"] == "application/json" and "date" in h for _, h, _ in answers)
    conn.close()
    deadline = time.monotonic() + 5  # a request's line is logged just after its answer is written
    while len(server.lines) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    logged = [r for r in server.lines if r["at"] == "request"]
    assert [(r["method"], r["path"], r["status"], r["seen"]) for r in logged] == [
        ("POST", "/slow", 200, 3), ("POST", "/a?x=1", 200, 3), ("POST", "/b", 200, 5)]
    assert all(r["remote"] == "127.0.0.1" and r["ms"] >= 0 for r in logged)


def test_a_long_pipeline_pauses_reading_and_loses_nothing(server: Running) -> None:
    """Twelve pipelined requests behind a slow one: reading pauses after a few (the memory one
    connection can hold is bounded) and resumes; every request is answered, in order."""
    conn = server.connect()
    conn.sendall(post("/slow", b"0") + b"".join(post(f"/n{n}", str(n).encode()) for n in range(1, 12)))
    answers = read_answers(conn, 12)
    assert [json.loads(b)["body"] for _, _, b in answers] == [str(n) for n in range(12)]
    conn.close()


def test_a_body_over_the_limit_is_refused_413_before_it_is_read(server: Running) -> None:
    """Issue 14, Build 4 (request size limit): Content-Length over the limit gets 413 and the connection closes."""
    conn = server.connect()
    conn.sendall(b"POST /batches HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
    [(status, headers, body)] = read_answers(conn, 1)
    assert (status, json.loads(body)["error"]) == (413, "body-too-large")
    assert headers["connection"] == "close" and closed(conn)
    assert server.lines and server.lines[-1]["status"] == 413 and server.lines[-1]["error"] == "body-too-large"


def test_a_chunked_body_is_read_and_refused_as_it_passes_the_limit(server: Running) -> None:
    """Chunked bodies are joined; one that grows past the limit gets 413 (issue 14, Build 4)."""
    conn = server.connect()
    conn.sendall(b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
    [(status, _, body)] = read_answers(conn, 1)
    assert status == 200 and json.loads(body)["body"] == "abcde"
    conn.sendall(b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + b"200\r\n" + b"x" * 512 + b"\r\n" * 1
                 + b"200\r\n" + b"x" * 512 + b"\r\n")
    [(status, _, body)] = read_answers(conn, 1)
    assert (status, json.loads(body)["error"]) == (413, "body-too-large")
    assert closed(conn)


def test_a_head_over_the_limit_is_refused_431(server: Running) -> None:
    conn = server.connect()
    conn.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEAD + 10) + b"\r\n\r\n")
    [(status, _, body)] = read_answers(conn, 1)
    assert (status, json.loads(body)["error"]) == (431, "head-too-large")
    assert closed(conn)


def test_a_malformed_request_is_refused_400_and_the_connection_closed(server: Running) -> None:
    """Bad framing (both Content-Length and chunked: the request-smuggling shape) gets 400."""
    for raw in (b"NOT HTTP AT ALL\r\n\r\n",
                b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"):
        conn = server.connect()
        conn.sendall(raw)
        [(status, _, body)] = read_answers(conn, 1)
        assert (status, json.loads(body)["error"]) == (400, "malformed-request"), raw
        assert closed(conn)


def test_a_stalled_request_gets_408_and_holds_nothing(server: Running) -> None:
    """Issue 14, Build 4: half a body, then silence: 408 once the read timeout (2 s here) has
    passed, while another connection is answered at once."""
    stalled = server.connect()
    stalled.sendall(b"POST /batches HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf")
    other = server.connect()
    other.sendall(post("/quick", b"x"))
    assert read_answers(other, 1)[0][0] == 200
    assert select.select([stalled], [], [], 0)[0] == [], "the stalled request was answered first: the other waited"
    [(status, _, body)] = read_answers(stalled, 1)
    assert (status, json.loads(body)["error"]) == (408, "body-timeout")
    assert closed(stalled)


def test_expect_continue_head_stream_close_and_a_failing_handler(server: Running) -> None:
    """`Expect: 100-continue` gets its 100 before the body is sent; HEAD gets the head only; a
    streamed answer is chunked; a handler's failure is a 500 with a JSON error, the connection
    kept; `Connection: close` closes after the answer."""
    conn = server.connect()
    conn.sendall(b"POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
    assert conn.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
    conn.sendall(b"ok")
    assert json.loads(read_answers(conn, 1)[0][2])["body"] == "ok"
    conn.sendall(b"HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n")
    conn.settimeout(5)
    head = conn.recv(4096)
    assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"\r\n\r\n") and b"Content-Length: " in head
    conn.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
    [(status, headers, body)] = read_answers(conn, 1)
    assert status == 200 and headers["transfer-encoding"] == "chunked" and body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    conn.sendall(b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
    [(status, _, body)] = read_answers(conn, 1)
    assert (status, json.loads(body)["error"]) == (500, "internal-error")
    conn.sendall(b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    [(status, headers, _)] = read_answers(conn, 1)
    assert status == 200 and headers["connection"] == "close" and closed(conn)


def test_an_idle_connection_is_closed() -> None:
    running = Running(idle_timeout=1.0)
    try:
        conn = running.connect()
        conn.sendall(post("/x", b"1"))
        assert read_answers(conn, 1)[0][0] == 200
        assert closed(conn), "an idle keep-alive connection is closed after the idle timeout"
    finally:
        running.stop()


def test_stopping_ends_a_stream_and_waits_for_an_answer_in_flight() -> None:
    """A graceful stop (issue 14, Build 8) lets the answer being given finish, and ends a `/live`
    stream at once rather than at the stop's deadline."""
    running = Running()
    streaming = running.connect()
    streaming.sendall(b"GET /forever HTTP/1.1\r\nHost: x\r\n\r\n")
    assert streaming.recv(4096).startswith(b"HTTP/1.1 200 OK")
    slow = running.connect()
    slow.sendall(post("/slow", b"last"))
    time.sleep(0.1)  # the slow request is being answered
    stopped = asyncio.run_coroutine_threadsafe(running.server.stop(60.0), running.loop)
    stopped.result(30)  # well before its 60 s deadline: the stream did not hold it
    assert json.loads(read_answers(slow, 1)[0][2])["body"] == "last"
    streaming.settimeout(5)
    while streaming.recv(4096):
        pass
    running.loop.call_soon_threadsafe(running.loop.stop)
    running.thread.join(10)
