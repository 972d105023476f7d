"""Follows a live audit over Server-Sent Events (`GET /live` of `matchledger serve`): each finding as
it is published, resumed after the last one seen (`Last-Event-ID`) whenever the connection drops.

A terminal command that blocks on one stream needs no asynchronous stack: the standard library's
`http.client` reads it, so the package's one HTTP stack stays aiohttp (the service and `send`)."""

from __future__ import annotations

import http.client
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass

import msgspec

from audit.live.auditor import LiveFinding

KEEPALIVE_S = 15.0
"""The service sends a `: keepalive` comment this often (interface of /live)."""
SILENCE_S = 3 * KEEPALIVE_S
"""A stream silent for this long, keepalives included, is taken for dead and reopened."""
RETRY_S = 1.0
"""The first wait before reconnecting, until the service sets another with a `retry:` field."""
MAX_RETRY_S = 30.0
_decode = msgspec.json.Decoder(LiveFinding).decode


class WatchError(Exception):
    """The service refused the stream (a client error, or not an event stream): retrying cannot help."""


@dataclass
class Message:
    """One Server-Sent Events message: its type, id and data."""

    event: str
    id: str | None
    data: str


def live_url(url: str) -> str:
    """Returns the URL of a service's live stream: `URL/live`, or the URL itself when it names it."""
    url = url.rstrip("/")
    return url if url.endswith("/live") else f"{url}/live"


def follow(url: str, since: int = 0, on_retry: Callable[[str, float], None] | None = None) -> Iterator[LiveFinding]:
    """Yields every finding numbered after `since` as the service publishes it, each once, reconnecting
    after a dropped connection with the last id seen; it ends only when the caller stops.

    :raises WatchError: when the service answers with a client error or something that is not an event stream.
    """
    target = live_url(url)
    link = _Link(last=since)
    failures = 0
    while True:
        link.opened, wait = False, 0.0
        try:
            for finding in _stream(target, link):
                if finding.id > link.last:
                    link.last = finding.id
                    yield finding
            reason = "the service closed the stream"
        except _RetryLater as exc:
            reason, wait = str(exc), exc.wait
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out (silent too long), cut short
            reason = f"connection to {target} lost ({exc or type(exc).__name__})"
        # a stream that opened waits the base delay before reopening; failures back off
        failures = 0 if link.opened else failures + 1
        wait = max(wait, min(link.retry * 2 ** max(failures - 1, 0), MAX_RETRY_S))
        if on_retry is not None:
            on_retry(reason, wait)
        time.sleep(wait)


@dataclass
class _Link:
    """What outlives one connection: the last finding seen, the service's reconnection delay, and
    whether the current connection opened."""

    last: int
    retry: float = RETRY_S
    opened: bool = False


class _RetryLater(Exception):
    """The service is busy or unavailable (429, 5xx): try again after `wait` seconds."""

    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        self.wait = wait


def _stream(target: str, link: _Link) -> Iterator[LiveFinding]:
    """Opens the stream after the last finding seen and yields its findings."""
    parts = urllib.parse.urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WatchError(f"{target}: not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    headers = {"Accept": "text/event-stream", "Last-Event-ID": str(link.last), "Cache-Control": "no-cache"}
    with closing(kind(parts.hostname, parts.port, timeout=10.0)) as connection:
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers)
        response = connection.getresponse()
        _check_response(response, target)
        if connection.sock is not None:  # open: a stream silent this long (keepalives included) is taken for dead
            connection.sock.settimeout(SILENCE_S)
        link.opened = True
        lines = (raw.decode("utf-8", "replace").rstrip("\r\n") for raw in response)
        for message in messages(lines, link):
            if message.event == "finding":
                yield _decode(message.data)


def _check_response(response: http.client.HTTPResponse, target: str) -> None:
    status = response.status
    if status == 429 or status >= 500:
        wait = response.getheader("Retry-After", "")
        raise _RetryLater(f"GET {target}: {status} {response.reason}", float(wait) if wait.isdigit() else RETRY_S)
    if status != 200:
        text = response.read(200).decode("utf-8", "replace")
        raise WatchError(f"GET {target}: {status} {response.reason}: {text}")
    kind = response.getheader("Content-Type", "")
    if not kind.startswith("text/event-stream"):
        raise WatchError(f"GET {target}: answered {kind or 'no content type'}, not text/event-stream")


def messages(lines: Iterator[str], link: _Link) -> Iterator[Message]:
    """Parses an event stream (WHATWG HTML, Server-sent events): a message per blank-line-ended block
    with data; comments (`: keepalive`) are skipped, and a `retry:` field sets the link's delay."""
    event, last_id = "message", None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield Message(event, last_id, "\n".join(data))
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value.isdigit():
            link.retry = int(value) / 1000
