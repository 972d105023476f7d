"""Live findings in the service: the live auditor fed each commit on its own thread, its findings
published to `/findings` readers and `/live` subscribers (Server-Sent Events) the moment they exist.

The auditor itself (each game's fold, the tournament checks) is `audit/live.py`; this module only
moves entries to it and findings from it, off the event loop and off the writer.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

KEEPALIVE_S = 15.0
Entries = list[tuple[int, Any]]


class LiveHub:
    """Feeds committed entries to the live auditor and fans its findings out."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._findings: list[Any] = []  # finding id n is _findings[n - 1] (ids are dense from 1)
        self._subscribers: set[asyncio.Queue[Any]] = set()
        self._queue: queue.Queue[Entries | None] = queue.Queue()
        self._status = "starting"
        self._auditor: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = asyncio.Event()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Folds what the log holds (before any batch is taken) and starts the auditor's thread."""
        self._loop = loop
        try:
            from audit.live import LiveAuditor
        except ImportError:
            self._status = "live audit is not part of this build (audit/live.py is missing)"
            return
        self._auditor = LiveAuditor.from_ledger(self.root)
        self._findings = list(self._auditor.since(0, limit=1 << 62))
        self._status = "ready"
        self._thread = threading.Thread(target=self._run, name="live-auditor", daemon=True)
        self._thread.start()

    def ready(self) -> bool:
        """Tells whether findings are being published."""
        return self._status == "ready"

    def status(self) -> str:
        """Returns `ready`, or why findings are not published."""
        return self._status

    def committed(self, entries: Entries) -> None:
        """Takes the entries of one commit (called on the writer's thread: it only queues them)."""
        if self._auditor is not None:
            self._queue.put(entries)

    def close(self) -> None:
        """Stops the auditor's thread and ends every `/live` stream."""
        self._queue.put(None)
        if self._thread:
            self._thread.join(timeout=5)
        self._closed.set()

    def _run(self) -> None:
        while (entries := self._queue.get()) is not None:
            try:
                found = self._auditor.feed(entries)
            except Exception as exc:  # noqa: BLE001 - a fold that breaks must not stop the recording
                self._status = f"the live auditor failed: {type(exc).__name__}: {exc}"
                return
            if found and self._loop is not None:
                self._loop.call_soon_threadsafe(self._publish, found)

    def _publish(self, found: list[Any]) -> None:
        self._findings += found
        for subscriber in self._subscribers:
            subscriber.put_nowait(found)

    def since(self, n: int, limit: int = 1000) -> list[Any]:
        """Returns the findings with id > n, at most `limit`."""
        return self._findings[n:n + limit]

    async def stream(self, response: web.StreamResponse, since: int) -> None:
        """Writes findings after `since` as Server-Sent Events until the client leaves or the hub closes."""
        inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._subscribers.add(inbox)
        try:
            sent = since
            backlog: list[Any] | None = self._findings[since:]
            while backlog is not None:
                for finding in backlog:
                    if finding.id > sent:
                        await response.write(_event(finding))
                        sent = finding.id
                backlog = await self._next(inbox)
                if backlog == []:
                    await response.write(b": keepalive\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            return
        finally:
            self._subscribers.discard(inbox)

    async def _next(self, inbox: asyncio.Queue[Any]) -> list[Any] | None:
        """Returns the next findings, [] after the keep-alive interval, None once the hub closes."""
        getter = asyncio.ensure_future(inbox.get())
        closer = asyncio.ensure_future(self._closed.wait())
        done, _ = await asyncio.wait({getter, closer}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
        for task in (getter, closer):
            if task not in done:
                task.cancel()
        if closer in done:
            return None
        return getter.result() if getter in done else []


def _event(finding: Any) -> bytes:
    return b"id: %d\nevent: finding\ndata: %s\n\n" % (finding.id, msgspec.json.encode(finding))
