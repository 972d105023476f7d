"""The live service's one writer: a thread that owns the ledger and commits the batches of every
client together (group commit), so concurrent requests share the syncs and a checkpoint.

Handlers hand it complete, authenticated, decoded batches; it checks what needs the log (sequence
numbers, stream ownership, re-sends), appends every acceptable batch of a group with its
`source.batch` record in one atomic append, signs one checkpoint, and answers each batch with
its receipt or its refusal. A client never holds it: it only sees batches whose body was read.
"""

from __future__ import annotations

import bisect
import hashlib
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger import (
    Checkpoint,
    EntryReader,
    Ledger,
    LedgerError,
    Pending,
    Receipt,
    Source,
    SourceBook,
    SourceRefused,
    Subtrees,
    TileReader,
    build_receipt,
    checkpoint_sizes,
    compress_runs,
    expand_runs,
    load_source_book,
    now_ms,
    stored_checkpoint,
)
from schemas import decode, encode
from schemas.envelope import Event
from schemas.log import BATCHES_STREAM, BatchReceived

INDEX_EVERY_S = 1.0
"""How often a commit also makes the stream index durable (a crash re-derives it beyond that)."""
MAX_GROUP_EVENTS = 20_000
"""A group commit takes queued batches up to about this many events (more wait for the next)."""


class Refusal(Exception):
    """A batch refused: the HTTP status, a stable reason code and the message."""

    def __init__(self, status: int, reason: str, message: str, line: int | None = None, retry_after: int = 0) -> None:
        super().__init__(message)
        self.status, self.reason, self.line, self.retry_after = status, reason, line, retry_after


SOURCE_STATUS = {"missing-signature": 401, "malformed-signature": 401, "unknown-source": 401, "bad-signature": 401,
                 "revoked-source": 403, "forbidden-stream": 403, "log-stream": 403}


def refusal_of(exc: SourceRefused) -> Refusal:
    """Returns the HTTP refusal of a source refusal."""
    return Refusal(SOURCE_STATUS[exc.reason], exc.reason, str(exc))


@dataclass
class Batch:
    """An authenticated, decoded batch: its events with their canonical bytes, in body order."""

    source: Source
    signature: str
    digest: str
    events: list[tuple[Event, bytes]]
    canonical: bool
    done: Future = field(default_factory=Future)


@dataclass
class Change:
    """A change of the source registry (a registration or a revocation) made through the service."""

    make: Callable[[SourceBook, Ledger], Event]
    done: Future = field(default_factory=Future)


@dataclass
class _Plan:
    """What a group commit will do with one batch."""

    batch: Batch
    entries: list[int]
    fresh: list[tuple[Event, bytes]]
    opened: list[str]
    record: int = -1


Committed = Callable[[list[tuple[int, Event]]], None]


class Writer:
    """The thread that owns the ledger; `submit` from any thread, `stop` to finish and close."""

    def __init__(self, root: Path, on_commit: Committed | None = None) -> None:
        self.root = root
        self.ledger = Ledger.open(root)
        self.lock = threading.Lock()  # held while the ledger changes; readers of its index take it too
        self.book = load_source_book(self.ledger)
        self.checkpoint: Checkpoint = self.ledger.checkpoint()
        self.entries = EntryReader(root)
        self._signed = checkpoint_sizes(root)
        self._index_at = time.monotonic() + INDEX_EVERY_S
        self._queue: queue.Queue[Batch | Change | None] = queue.Queue()
        self._on_commit = on_commit
        self.error: str | None = None
        self.closing = False
        self.commits = 0
        self._thread = threading.Thread(target=self._run, name="ledger-writer", daemon=True)
        self._thread.start()

    @property
    def recovered(self) -> str | None:
        """Returns what opening the ledger recovered (a torn tail dropped, a checkpoint signed), if anything."""
        return self.ledger.recovered

    def submit(self, item: Batch | Change) -> Future:
        """Queues a batch or a registry change; its future gets a Receipt (or the event) or an exception."""
        if self.closing or self.error:
            item.done.set_exception(Refusal(503, "unavailable", self.error or "the service is shutting down; send again later"))
        else:
            self._queue.put(item)
        return item.done

    def queued(self) -> int:
        """Returns how many batches wait for the next group commit."""
        return self._queue.qsize()

    def stop(self) -> None:
        """Finishes the commit in flight, refuses what is still queued (503: send again), closes the ledger."""
        self.closing = True
        self._queue.put(None)
        self._thread.join()
        with self.lock:
            if self.error is None:
                self.ledger.checkpoint()  # the stream index made durable too
            self.ledger.close()

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                break
            group = [first]
            events = len(first.events) if isinstance(first, Batch) else 0
            stop = False
            while events < MAX_GROUP_EVENTS:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                group.append(item)
                events += len(item.events) if isinstance(item, Batch) else 0
            try:
                self._commit_group(group)
            except Exception as exc:  # noqa: BLE001 - a bug must not leave clients waiting forever
                self.error = f"the writer failed: {type(exc).__name__}: {exc}; restart the service to recover"
                for item in group:
                    if not item.done.done():
                        item.done.set_exception(Refusal(500, "internal-error", self.error))
                break
            if stop:
                break
        self._refuse_queued()

    def _refuse_queued(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                item.done.set_exception(Refusal(503, "unavailable", "the service is shutting down; send again later"))

    def _commit_group(self, group: list[Batch | Change]) -> None:
        batches = [item for item in group if isinstance(item, Batch)]
        for item in group:
            if isinstance(item, Change):
                self._change(item)
        if not batches:
            return
        try:
            with self.lock:
                plans, resent, committed = self._append(batches)
        except LedgerError as exc:  # the disk failed: nothing of the group is acknowledged, and nothing more is taken
            self.error = f"the ledger cannot be written: {exc}; restart the service to recover"
            for batch in batches:
                if not batch.done.done():
                    batch.done.set_exception(Refusal(503, "unavailable", self.error))
            return
        self.commits += 1
        tiles = Subtrees(TileReader(self.root))  # shared by the commit's receipts: their proofs share most nodes
        for plan in plans:
            batch = plan.batch
            record = (plan.record, self._entry_bytes(plan.record, committed))
            entries = [(i, self._entry_bytes(i, committed)) for i in plan.entries]
            batch.done.set_result(build_receipt(self.root, self.checkpoint, batch.source.name, batch.digest, record, entries, tiles))
        for batch, record in resent:
            self._resend(batch, record)
        if committed and self._on_commit:
            self._on_commit([(i, p[0]) for i, p in committed])

    def _append(self, batches: list[Batch]) -> tuple[list[_Plan], list[tuple[Batch, Any]], list[tuple[int, Any]]]:
        """Plans every batch against the log and the batches before it, appends the acceptable ones
        with their records in one append, signs a checkpoint; returns the plans, the identical
        re-sends, and the committed (entry, (event, pending)) pairs."""
        ledger, base = self.ledger, self.ledger.size
        planner = _Planner(ledger, self.book)
        plans: list[_Plan] = []
        resent: list[tuple[Batch, Any]] = []
        pending: list[tuple[Event, Pending]] = []
        record_seq = ledger.next_seq(BATCHES_STREAM)
        for batch in batches:
            known = planner.digests.get((batch.source.name, batch.digest)) or self.book.batch_record(batch.source.name, batch.digest)
            if known is not None:
                resent.append((batch, known))
                continue
            try:
                plan = planner.plan(batch, base + len(pending))
            except Refusal as exc:
                batch.done.set_exception(exc)
                continue
            pending += [(event, Pending(0, event, data)) for event, data in plan.fresh]
            record = BatchReceived(stream=BATCHES_STREAM, seq=record_seq, ts=now_ms(), source=batch.source.name,
                                   signature=batch.signature, digest=batch.digest, entries=compress_runs(plan.entries),
                                   streams=_streams_of(batch), canonical=batch.canonical)
            record_seq += 1
            plan.record = base + len(pending)
            pending.append((record, Pending(0, record, encode(record))))
            planner.digests[(batch.source.name, batch.digest)] = plan
            plans.append(plan)
        if pending:
            result = ledger.append([p for _, p in pending])
            assert result.appended == len(pending), "the planner and the store disagree on what is fresh"
            self.checkpoint = ledger.checkpoint(index=self._index_due())
            self._signed.append(self.checkpoint.size)
            committed = list(enumerate(pending, base))
            for entry, (event, _) in committed:
                if isinstance(event, BatchReceived):
                    self.book.fold(entry, event)
        else:
            committed = []
        return plans, resent, committed

    def _index_due(self) -> bool:
        """Tells whether this commit's checkpoint also makes the stream index durable: once a second
        (its fsyncs, one per stream written, would otherwise dominate a commit of many tables)."""
        now = time.monotonic()
        if now < self._index_at:
            return False
        self._index_at = now + INDEX_EVERY_S
        return True

    def _entry_bytes(self, index: int, committed: list[tuple[int, Any]]) -> bytes:
        if committed and index >= committed[0][0]:
            return committed[index - committed[0][0]][1][1].data
        return self._read_entry(index)

    def _read_entry(self, index: int) -> bytes:
        return self.entries.read(index, 1)[0]

    def _resend(self, batch: Batch, known: Any) -> None:
        """Answers an identical re-send with the receipt the first sending got: the same entries
        against the first checkpoint that covered them."""
        if isinstance(known, _Plan):  # sent twice within one group: the second gets the first's receipt
            batch.done.set_result(known.batch.done.result())
            return
        record = (known, self._read_entry(known))
        entries = [(i, self._read_entry(i)) for i in expand_runs(decode(record[1]).entries)]  # type: ignore[attr-defined]
        size = self._signed[bisect.bisect_right(self._signed, known)]
        checkpoint = stored_checkpoint(self.root, size, self.ledger.signer.verifier)
        batch.done.set_result(build_receipt(self.root, checkpoint, batch.source.name, batch.digest, record, entries))

    def _change(self, change: Change) -> None:
        try:
            with self.lock:
                event = change.make(self.book, self.ledger)
                entry = self.ledger.size
                self.ledger.append([Pending(0, event, encode(event))])
                self.checkpoint = self.ledger.checkpoint()
                self._signed.append(self.checkpoint.size)
                self.book.fold(entry, event)
        except LedgerError as exc:
            change.done.set_exception(Refusal(409, "refused", str(exc)))
            return
        change.done.set_result(event)
        if self._on_commit:
            self._on_commit([(entry, event)])


def _streams_of(batch: Batch) -> list[str]:
    return list(dict.fromkeys(event.stream for event, _ in batch.events))


class _Planner:
    """Checks batches of one group commit against the log and against the batches planned before
    them: sequence numbers (a gap or a conflict refuses the batch), identical re-sent events (named
    by their earlier entry), and the streams each source may write."""

    def __init__(self, ledger: Ledger, book: SourceBook) -> None:
        self.ledger, self.book = ledger, book
        self.next: dict[str, int] = {}
        self.data: dict[tuple[str, int], tuple[bytes, int]] = {}
        self.claimed: dict[str, str] = {}
        self.digests: dict[tuple[str, str], _Plan] = {}

    def plan(self, batch: Batch, first: int) -> _Plan:
        """Returns the plan of a batch whose fresh events would start at entry `first`.

        :raises Refusal: on a revoked source, a stream it may not write, a gap or a conflict.
        """
        if batch.source.revoked:
            raise Refusal(403, "revoked-source", f"source {batch.source.name!r} was revoked; its batches are refused")
        try:
            opened = self.book.check_streams(batch.source, (e for e, _ in batch.events), self.claimed)
        except SourceRefused as exc:
            raise refusal_of(exc) from None
        entries, fresh = [], []
        due: dict[str, int] = {}
        mine: dict[tuple[str, int], tuple[bytes, int]] = {}
        max_bytes = self.ledger.config.max_entry_bytes
        for line, (event, data) in enumerate(batch.events, start=1):
            stream, seq = event.stream, event.seq
            expected = due.get(stream)
            if expected is None:
                expected = self.next.get(stream)
                if expected is None:
                    expected = self.ledger.next_seq(stream)
            if seq > expected:
                raise Refusal(409, "seq-gap", f"line {line}: field `seq`: stream {stream!r} expects seq {expected}, got {seq} (gap)", line)
            if seq < expected:
                stored = mine.get((stream, seq)) or self.data.get((stream, seq))
                held, entry = stored if stored else (self.ledger.read_stream_entry(stream, seq), self.ledger.entry_of(stream, seq))
                if held != data:
                    raise Refusal(409, "seq-conflict", f"line {line}: field `seq`: stream {stream!r} already holds a different "
                                  f"event at seq {seq} (conflict)", line)
                entries.append(entry)
                continue
            if len(data) > max_bytes:
                raise Refusal(413, "event-too-large", f"line {line}: event is {len(data)} bytes, over the limit of {max_bytes}", line)
            entry = first + len(fresh)
            due[stream] = seq + 1
            mine[(stream, seq)] = (data, entry)
            entries.append(entry)
            fresh.append((event, data))
        self.next.update(due)
        self.data.update(mine)
        for stream in opened:
            self.claimed[stream] = batch.source.name
        return _Plan(batch, entries, fresh, opened)


def digest_of(body: bytes) -> str:
    """Returns the hex SHA-256 of a request body (how a batch is known again when re-sent)."""
    return hashlib.sha256(body).hexdigest()


def describe(receipt: Receipt) -> dict[str, Any]:
    """Returns a receipt as JSON-ready builtins."""
    import msgspec

    return msgspec.to_builtins(receipt)
