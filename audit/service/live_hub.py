"""Live findings in the service: the live auditor follows the log on its own thread, its findings
published to `/findings` readers and `/live` subscribers (Server-Sent Events) the moment they exist.

The auditor itself (each game's fold, the tournament checks) is `audit/live/auditor.py`, what it keeps in
the ledger `audit/live/store.py`; this module opens it and moves findings from it, off the event
loop and off the writer. The writer only says that the log grew (the checkpoint that signs the new
size); the auditor reads the committed bytes from its own position (tessera's Follower), each
entry decoded once. Opening reads the games under way and the entries since the
last state; when the kept files must be rebuilt (or many entries came since), the log is folded on
the auditor's thread while the service already takes batches, and findings are published once it
is done (`/healthz` says how far it is).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

KEEPALIVE_S = 15.0
PAGE = 1000
SYNC_TAIL = 16384
"""Entries since the kept state (all of them, when there is none) folded before the service takes
batches, so that /live and /findings answer from the first batch on; more (a crash during a
rebuild, entries recorded while the service was down, a season-sized log without its files) are
folded on the auditor's thread."""


class LiveHub:
    """Tells the live auditor that the log grew, and fans its findings out."""

    def __init__(self, root: Path, log: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.root = root
        self._log = log or (lambda record: None)
        self._count = 0
        """Findings 1 … _count are published to readers (ids are dense from 1)."""
        self._subscribers: set[asyncio.Queue[Any]] = set()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._status = "starting"
        self._auditor: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = asyncio.Event()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Opens the live audit before any batch is taken (from its kept files, folding the entries
        since; or, when they must be rebuilt, on the auditor's thread) and starts that thread."""
        self._loop = loop
        try:
            from audit.live.store import open_auditor
        except ImportError:
            self._status = "live audit is not part of this build (audit/live/store.py is missing)"
            return
        from ledger import load_verifier, newest_checkpoint

        started = time.perf_counter()
        checkpoint = newest_checkpoint(self.root, load_verifier(self.root))
        size = checkpoint.size if checkpoint is not None else 0
        self._auditor, opened = open_auditor(self.root, size)
        if size - opened.size <= SYNC_TAIL:  # a short tail, or a small log to rebuild from: before the first batch
            self._auditor.catch_up(size)
            self._ready(opened, started)
            rebuild = None
        else:
            why = "catching up with the log" if opened.resumed else f"rebuilding the live findings from the log ({opened.reason})"
            self._status = why
            rebuild = (why, opened, started, size)
        self._thread = threading.Thread(target=self._run, args=(rebuild,), name="live-auditor", daemon=True)
        self._thread.start()

    def _ready(self, opened: Any, started: float, threaded: bool = False) -> None:
        from audit.live.store import opened_line

        self._count = len(self._auditor.book)
        self._status = "ready"
        record = opened_line(opened, self._auditor, time.perf_counter() - started)
        if threaded and self._loop is not None:  # the service's log is written on the event loop
            self._loop.call_soon_threadsafe(self._log, record)
        else:
            self._log(record)

    def ready(self) -> bool:
        """Tells whether findings are being published."""
        return self._status == "ready"

    def status(self) -> str:
        """Returns `ready`, or why findings are not published."""
        return self._status

    def grew(self, checkpoint: Any) -> None:
        """Takes note that the log grew to a signed checkpoint's size (called on the writer's thread:
        it only queues the checkpoint; the auditor reads the entries)."""
        if self._auditor is not None:
            self._queue.put(checkpoint)

    def close(self) -> None:
        """Stops the auditor's thread (which writes its state) and ends every `/live` stream."""
        self._queue.put(None)
        if self._thread:
            self._thread.join(timeout=5)
        self._closed.set()

    def _run(self, rebuild: tuple[str, Any, float, int] | None) -> None:
        try:
            if rebuild is not None:
                why, opened, started, size = rebuild
                self._auditor.catch_up(size, lambda n: setattr(self, "_status", f"{why}: {n} of {size} entries"))
                self._ready(opened, started, threaded=True)
            while (checkpoint := self._newest()) is not None:
                # the state saved after this reading names the log's root at its size: known here
                self._auditor.book.known_root(checkpoint.size, checkpoint.root)
                found = self._auditor.catch_up(checkpoint.size)
                if found and self._loop is not None:
                    self._loop.call_soon_threadsafe(self._publish, found)
            self._auditor.book.save(self._auditor)
        except Exception as exc:  # noqa: BLE001 - a fold that breaks must not stop the recording
            self._status = f"the live auditor failed: {type(exc).__name__}: {exc}"

    def _newest(self) -> Any:
        """Waits for the log to grow; returns the newest checkpoint queued (the sizes before it are
        read with it, in one reading), or None once the hub closes."""
        newest = self._queue.get()
        while newest is not None and not self._queue.empty():
            newest = self._queue.get()
        return newest

    def _publish(self, found: list[Any]) -> None:
        self._count = max(self._count, found[-1].id)
        for subscriber in self._subscribers:
            subscriber.put_nowait(found)

    def since(self, n: int, limit: int = PAGE) -> list[Any]:
        """Returns the published findings with id > n, at most `limit` (read from the kept findings)."""
        if n >= self._count:
            return []
        return self._auditor.since(n, min(limit, self._count - n))

    async def stream(self, response: web.StreamResponse, since: int) -> None:
        """Writes findings after `since` as Server-Sent Events until the client leaves or the hub closes."""
        inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._subscribers.add(inbox)
        try:
            sent = since
            while page := self.since(sent):  # what was published before: read back, a page at a time
                for finding in page:
                    await response.write(_event(finding))
                sent = page[-1].id
            backlog: list[Any] | None = await self._next(inbox)
            while backlog is not None:
                if backlog == []:
                    await response.write(b": keepalive\n\n")
                for finding in backlog:
                    if finding.id > sent:
                        await response.write(_event(finding))
                        sent = finding.id
                backlog = await self._next(inbox)
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
