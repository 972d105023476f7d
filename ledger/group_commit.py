"""The live service's one writer: it owns the ledger and commits the batches of every client
together (group commit), so concurrent requests share the syncs and a checkpoint. It plans with
the ledger's one set of append rules (`ledger/batch.py` `BatchPlan`, as `Ledger.append`), a
whole group as one plan, a batch at a time.

Handlers hand it complete, authenticated, decoded batches on the event loop and wait there.
Whenever no commit is in flight, every batch waiting becomes the next group: planned on the loop
against the log (sequence numbers, stream ownership, re-sends), appended with each batch's
`source.batch` record in one atomic append, synced and checkpointed on the writer's own thread
(the one place that blocks), then answered on the loop, each batch with its receipt (inclusion
proofs from the tree's nodes kept across commits: KeptNodes) or its refusal. Meanwhile
the next group gathers. A client never holds the writer: it only sees batches whose body was read.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger.batch import BatchPlan, Pending
from ledger.checkpoints import Checkpoint, covering_checkpoint
from ledger.entries import EntryReader
from ledger.errors import LedgerError, SequenceError
from ledger.index import BookHead, write_book_index
from ledger.receipts import KeptNodes, Receipt, Subtrees, build_receipt
from ledger.sources import AlreadyRegistered, Source, SourceBook, SourceRefused, compress_runs, expand_runs, load_source_book, now_ms
from ledger.store import IndexJob, Ledger
from schemas import decode, encode
from schemas.envelope import Event
from schemas.log import BATCHES_STREAM, BatchReceived

INDEX_EVERY_S = 5.0
"""How often the stream index and the partial tiles are made durable and the newest checkpoint
served (a crash re-derives the index beyond that, from the entries: at a live event's pace a few
thousand, a fraction of a second at start-up). Each time costs a write and a sync per stream written
since, 64 at 64 tables: 50-240 ms under load, so it runs on a thread of its own beside the commits
(`Ledger.start_index`), not in one: in a commit it held some 64 acknowledgements that long."""
MAX_GROUP_EVENTS = 20_000
"""A group commit takes queued batches up to about this many events (more wait for the next)."""
KEEP_NODES = 1 << 16
"""The receipts' tree nodes are kept across commits until the log grows by this many entries (a bound on memory)."""


class Refusal(Exception):
    """A batch refused: the HTTP status, a stable reason code and the message."""

    def __init__(self, status: int, reason: str, message: str, line: int | None = None, retry_after: int = 0) -> None:
        super().__init__(message)
        self.status, self.reason, self.line, self.retry_after = status, reason, line, retry_after


SOURCE_STATUS = {"missing-signature": 401, "malformed-signature": 401, "unknown-source": 401, "bad-signature": 401,
                 "old-signature": 401, "revoked-source": 403, "forbidden-stream": 403, "log-stream": 403}
RULE_STATUS = {"seq-gap": 409, "seq-conflict": 409, "event-too-large": 413, "log-kind": 403, "log-stream": 403}
"""The HTTP status of each refusal by the append rules (`SequenceError.reason`)."""


def refusal_of(exc: SourceRefused) -> Refusal:
    """Returns the HTTP refusal of a source refusal."""
    return Refusal(SOURCE_STATUS[exc.reason], exc.reason, str(exc))


def rule_refusal(exc: SequenceError) -> Refusal:
    """Returns the HTTP refusal of a batch the append rules refuse."""
    return Refusal(RULE_STATUS.get(exc.reason, 409), exc.reason, str(exc), exc.line)


@dataclass
class Batch:
    """An authenticated, decoded batch: its events with their canonical bytes, in body order."""

    source: Source
    signature: str
    digest: str
    events: list[tuple[Event, bytes]]
    canonical: bool
    done: asyncio.Future[Receipt] | None = field(default=None, repr=False)


@dataclass
class Change:
    """A change of the source registry (a registration or a revocation) made through the service."""

    make: Callable[[SourceBook, Ledger], Event]
    done: asyncio.Future[Event] | None = field(default=None, repr=False)


@dataclass
class _Plan:
    """What a group commit will do with one batch."""

    batch: Batch
    entries: list[int]
    fresh: list[tuple[Event, Pending]]
    opened: list[str]
    record: int = -1


@dataclass
class _Stage:
    """One group commit on its way: what was planned, the write on the writer's thread, and then
    what it committed, under which checkpoint, and each item's outcome."""

    group: list[Batch | Change]
    outcomes: dict[int, Any] = field(default_factory=dict)
    plans: list[_Plan] = field(default_factory=list)
    resent: list[tuple[Batch, Any]] = field(default_factory=list)
    writing: asyncio.Future[Any] | None = None
    committed: list[tuple[int, Any]] = field(default_factory=list)
    leaves: bytes = b""
    checkpoint: Checkpoint | None = None
    failed: Refusal | None = None


Grew = Callable[[Checkpoint], None]
"""What a commit tells a follower (the live audit): only that the log grew, to the size this
checkpoint signs; the follower reads the entries itself."""
Outcome = Any
"""What a group commit answers an item with: its Receipt (or the registry change's event), or a Refusal."""


class Writer:
    """The ledger's one writer. On the event loop: `submit` a batch or a registry change and await
    what it returns, `await stop()` to finish and close. Commits run on the writer's own thread."""

    def __init__(self, root: Path, on_commit: Grew | None = None) -> None:
        self.root = root
        self.ledger = Ledger.open(root)
        self.lock = threading.Lock()  # held while the ledger changes; readers of its index take it too
        self.book = load_source_book(self.ledger)
        self.checkpoint: Checkpoint = self.ledger.checkpoint()
        self.entries = EntryReader(root)
        self._index_at = time.monotonic() + INDEX_EVERY_S
        self._nodes = KeptNodes(root, self.checkpoint.size)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
        self._indexer = ThreadPoolExecutor(1, thread_name_prefix="ledger-index")
        self._indexing: tuple[IndexJob, Future[None]] | None = None
        self._waiting: list[Batch | Change] = []
        self._committing: asyncio.Task[None] | None = None
        self._on_commit = on_commit
        self.error: str | None = None
        self.closing = False
        self.commits = 0

    @property
    def recovered(self) -> str | None:
        """Returns what opening the ledger recovered (a torn tail dropped, a checkpoint signed), if anything."""
        return self.ledger.recovered

    def submit(self, item: Batch | Change) -> asyncio.Future[Any]:
        """Queues a batch or a registry change (on the event loop); the future gets its Receipt (or
        the change's event) once committed, or the Refusal."""
        loop = asyncio.get_running_loop()
        item.done = loop.create_future()
        if self.closing or self.error:
            item.done.set_exception(Refusal(503, "unavailable", self.error or "the service is shutting down; send again later"))
        else:
            self._waiting.append(item)
            if self._committing is None:
                self._committing = loop.create_task(self._commit_waiting())
        return item.done

    def queued(self) -> int:
        """Returns how many batches wait for the next group commit."""
        return len(self._waiting)

    async def stop(self) -> None:
        """Finishes the commit in flight, refuses what still waits (503: send again), closes the ledger."""
        self.closing = True
        if self._committing is not None:
            await asyncio.shield(self._committing)
        self._refuse_waiting(Refusal(503, "unavailable", "the service is shutting down; send again later"))
        await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        self._thread.shutdown()
        self._indexer.shutdown()

    def _close(self) -> None:
        with self.lock:
            try:
                self._finish_index(wait=True)
                if self.error is None:
                    self.ledger.checkpoint()  # the stream index made durable too
                    _save_book(self.root, self.book.snapshot())  # the next start reads no batch record
            finally:
                self.ledger.close()

    async def _commit_waiting(self) -> None:
        """Commits what waits, one group at a time, until nothing does. The groups overlap by half:
        once a group's write is done the next group is planned and its write starts on the thread,
        and only then are the first group's receipts built and its batches answered, on the loop
        (so the disk and the writer's thread do not wait for the receipts). Meanwhile the group
        after gathers."""
        previous: _Stage | None = None
        try:
            while True:
                stage = None
                if self._waiting and not self.closing and self.error is None:
                    stage = await self._begin(self._next_group())
                if previous is not None:
                    self._finish(previous)
                    previous = None
                if stage is None:
                    if self._waiting and not self.closing and self.error is None:
                        continue  # arrived while the last group was answered
                    break
                await self._written(stage)
                previous = stage
        finally:
            if previous is not None:  # cancelled between a write and its answers
                self._finish(previous)
            self._committing = None
            if self.error is not None:
                self._refuse_waiting(Refusal(503, "unavailable", self.error))

    def _next_group(self) -> list[Batch | Change]:
        """Takes the waiting items, up to about MAX_GROUP_EVENTS events (the rest wait for the next group)."""
        events, n = 0, 0
        for item in self._waiting:
            n += 1
            events += len(item.events) if isinstance(item, Batch) else 0
            if events >= MAX_GROUP_EVENTS:
                break
        group, self._waiting = self._waiting[:n], self._waiting[n:]
        return group

    def _refuse_waiting(self, refusal: Refusal) -> None:
        waiting, self._waiting = self._waiting, []
        for item in waiting:
            _answer(item, refusal)

    async def _begin(self, group: list[Batch | Change]) -> _Stage:
        """Starts committing a group: the registry changes first (on the writer's thread), then its
        batches planned here on the loop (pure Python: no batch costs a hand-over of the GIL between
        threads) and their append, syncs and checkpoint started on the writer's thread."""
        loop = asyncio.get_running_loop()
        stage = _Stage(group)
        try:
            changes = [item for item in group if isinstance(item, Change)]
            if changes:
                for change, outcome in zip(changes, await loop.run_in_executor(self._thread, self._changes, changes)):
                    stage.outcomes[id(change)] = outcome
            batches = [item for item in group if isinstance(item, Batch)]
            if batches:
                stage.plans, stage.resent, rules, pending = self._plan(batches, stage.outcomes)
                if pending:
                    stage.writing = loop.run_in_executor(self._thread, self._write, rules, pending)
            if stage.writing is None:  # re-sends and refusals only: answered against the log as it is now
                stage.checkpoint = self.checkpoint
        except Exception as exc:  # noqa: BLE001 - a bug must not leave clients waiting forever
            self._failed(stage, exc)
        return stage

    async def _written(self, stage: _Stage) -> None:
        """Waits for a group's write; tells the live audit at once that the log grew."""
        if stage.writing is None or stage.failed:
            return
        try:
            stage.committed, stage.checkpoint, stage.leaves = await stage.writing
        except LedgerError as exc:  # the disk failed: nothing of the group is acknowledged, and nothing more is taken
            self.error = f"the ledger cannot be written: {exc}; restart the service to recover"
            stage.failed = Refusal(503, "unavailable", self.error)
            return
        except Exception as exc:  # noqa: BLE001
            self._failed(stage, exc)
            return
        if self._on_commit and stage.checkpoint is not None:  # the live audit reads and folds while the receipts are built
            self._on_commit(stage.checkpoint)

    def _finish(self, stage: _Stage) -> None:
        """Builds a written group's receipts and answers each of its items."""
        if not stage.failed:
            try:
                self._receipts(stage)
            except Exception as exc:  # noqa: BLE001
                self._failed(stage, exc)
        for item in stage.group:  # a failed group: what has no outcome (a receipt, a refusal of its own) gets the failure
            _answer(item, stage.outcomes.get(id(item), stage.failed or Refusal(500, "internal-error", "no outcome")))

    def _failed(self, stage: _Stage, exc: Exception) -> None:
        self.error = f"the writer failed: {type(exc).__name__}: {exc}; restart the service to recover"
        stage.failed = Refusal(500, "internal-error", self.error)

    def _plan(self, batches: list[Batch], outcomes: dict[int, Outcome]) -> tuple[list[_Plan], list[tuple[Batch, Any]], BatchPlan,
                                                                                 list[tuple[Event, Pending]]]:
        """Plans every batch against the log and the batches before it (a refused one gets its
        outcome); returns the plans, the identical re-sends, the group's one `BatchPlan` and what it
        appends: the acceptable batches' fresh events, each batch followed by its record. Runs
        between commits: the log does not change meanwhile, so the append takes the plan as it is."""
        ledger = self.ledger
        planner = _Planner(ledger, self.book)
        plans: list[_Plan] = []
        resent: list[tuple[Batch, Any]] = []
        pending: list[tuple[Event, Pending]] = []
        for batch in batches:
            known = planner.digests.get((batch.source.name, batch.digest)) or self.book.batch_record(batch.source.name, batch.digest,
                                                                                                     batch.events)
            if known is not None:
                resent.append((batch, known))
                continue
            try:
                plan = planner.plan(batch)
            except Refusal as exc:
                outcomes[id(batch)] = exc
                continue
            pending += plan.fresh
            record = BatchReceived(stream=BATCHES_STREAM, seq=ledger.next_seq(BATCHES_STREAM) + len(plans), ts=now_ms(),
                                   source=batch.source.name, signature=batch.signature, digest=batch.digest,
                                   entries=compress_runs(plan.entries), streams=_streams_of(batch), canonical=batch.canonical)
            mark = Pending(0, record, encode(record), own=True)  # the writer's own record: the one kind of BatchReceived folded
            planner.rules.check([mark])
            plan.record = ledger.size + len(pending)
            pending.append((record, mark))
            planner.digests[(batch.source.name, batch.digest)] = plan
            plans.append(plan)
        return plans, resent, planner.rules, pending

    # -- the thread ------------------------------------------------------------------------------

    def _write(self, rules: BatchPlan, pending: list[tuple[Event, Pending]]) -> tuple[list[tuple[int, Any]], Checkpoint, bytes]:
        """Appends a group's events and records as planned, in one append (the rules are not run nor
        the entries hashed again), syncs, signs a checkpoint (on the writer's thread); returns the
        committed (entry, (event, pending)) pairs, the checkpoint and the entries' leaf hashes."""
        with self.lock:
            self._finish_index()
            self._start_index()
            base = self.ledger.size
            result = self.ledger.append_planned(rules, [p for _, p in pending], checkpoint=False)  # (a game's end: the note below)
            self.checkpoint = self.ledger.checkpoint(index=False)
            committed = list(enumerate(pending, base))
            for entry, (event, p) in committed:
                if p.own:  # only the records the writer made: a sender's events are data, never authority
                    self.book.fold(entry, event)
            checkpoint = self.checkpoint
        self.commits += 1
        return committed, checkpoint, result.leaves

    def _changes(self, changes: list[Change]) -> list[Outcome]:
        return [self._change(change) for change in changes]

    # -- receipts --------------------------------------------------------------------------------

    def _receipts(self, stage: _Stage) -> None:
        """Gives each committed batch of a group its receipt, and each identical re-send the first
        sending's. Runs while the next group's write may be under way on the writer's thread: it
        reads only the group's own checkpoint and entries, and entries before them."""
        plans, resent, committed, outcomes = stage.plans, stage.resent, stage.committed, stage.outcomes
        checkpoint = stage.checkpoint or self.checkpoint
        nodes = self._tree_nodes(committed, checkpoint, stage.leaves)
        nodes.prepare([i for plan in plans for i in (plan.record, *plan.entries)], checkpoint.size)
        for plan in plans:
            batch = plan.batch
            record = (plan.record, self._entry_bytes(plan.record, committed))
            entries = [(i, self._entry_bytes(i, committed)) for i in plan.entries]
            outcomes[id(batch)] = build_receipt(self.root, checkpoint, batch.source.name, batch.digest, record, entries, nodes)
        for batch, known in resent:
            outcomes[id(batch)] = outcomes[id(known.batch)] if isinstance(known, _Plan) else self._resend(batch, known, nodes)

    def _tree_nodes(self, committed: list[tuple[int, Any]], checkpoint: Checkpoint, leaves: bytes = b"") -> Subtrees:
        """Returns the tree's nodes for a checkpoint's proofs: those of earlier commits kept, the
        new entries' leaves as the append hashed them (else hashed here from their bytes; see
        KeptNodes), checked against the signed root. They are dropped as the log grows by
        KEEP_NODES entries."""
        size = checkpoint.size
        if size - self._nodes.tiled >= KEEP_NODES:
            self._nodes = KeptNodes(self.root, size)
        elif committed and self._nodes.end == committed[0][0] and self._nodes.end + len(leaves) // 32 == size:
            self._nodes.add_leaves(leaves)  # exactly this commit's entries
        elif self._nodes.end < size:  # this commit's entries (and a registry change's before them)
            self._nodes.add([self._entry_bytes(i, committed) for i in range(self._nodes.end, size)])
        if size and self._nodes.subtree(0, size) != checkpoint.root:  # never expected: then the stored tiles alone
            self._nodes = KeptNodes(self.root, size)
        return Subtrees(self._nodes)

    def _start_index(self) -> None:
        """Every INDEX_EVERY_S, before a commit's append (the last commit's checkpoint covers every
        entry): starts making the stream index durable at that size and serving its checkpoint, on
        the index thread, while this and the next commits go on (`Ledger.start_index`)."""
        now = time.monotonic()
        if self._indexing is not None or now < self._index_at:
            return
        self._index_at = now + INDEX_EVERY_S
        job = self.ledger.start_index()
        book = self.book.snapshot()
        self._indexing = (job, self._indexer.submit(_index_and_save, job, self.root, book))

    def _finish_index(self, wait: bool = False) -> None:
        """Takes back the index job once it ran (`wait`: waits for it), before a commit's append, so
        that a failed job refuses that commit, not one already appended.

        :raises DiskError: when the job could not sync (the service stops taking batches).
        """
        if self._indexing is None or not (wait or self._indexing[1].done()):
            return
        job, done = self._indexing
        self._indexing = None
        done.result()
        self.ledger.finish_index(job)

    def _entry_bytes(self, index: int, committed: list[tuple[int, Any]]) -> bytes:
        if committed and index >= committed[0][0]:
            return committed[index - committed[0][0]][1][1].data
        return self._read_entry(index)

    def _read_entry(self, index: int) -> bytes:
        return self.entries.read(index, 1)[0]

    def _resend(self, batch: Batch, known: int, nodes: Subtrees) -> Receipt:
        """Returns the receipt an identical re-send gets: the one the first sending got, the same
        entries against the first checkpoint that covered them."""
        record = (known, self._read_entry(known))
        entries = [(i, self._read_entry(i)) for i in expand_runs(decode(record[1]).entries)]  # type: ignore[attr-defined]
        checkpoint = covering_checkpoint(self.root, known, self.ledger.signer.verifier)
        return build_receipt(self.root, checkpoint, batch.source.name, batch.digest, record, entries, nodes)

    def _change(self, change: Change) -> Outcome:
        """Appends a registry change as a commit does: one sync and a note, no wait for the stream
        index (a full checkpoint here held every table's batches 50-240 ms: issue 33)."""
        try:
            with self.lock:
                event = change.make(self.book, self.ledger)
                entry = self.ledger.size
                self.ledger.append([Pending(0, event, encode(event), own=True)], checkpoint=False)
                self.checkpoint = self.ledger.checkpoint(index=False)
                self.book.fold(entry, event)
        except AlreadyRegistered as done:  # the same registration again (its answer was lost): the one recorded
            return done.event
        except LedgerError as exc:
            return Refusal(409, "refused", str(exc))
        if self._on_commit:
            self._on_commit(self.checkpoint)
        return event


def _index_and_save(job: IndexJob, root: Path, book: tuple[int, bytes, BookHead]) -> None:
    """Runs an index job, then writes the source book's index as of the same size (the index thread)."""
    job.run()
    _save_book(root, book)


def _save_book(root: Path, book: tuple[int, bytes, BookHead]) -> None:
    """Writes the source book's index; a failure costs only the next start's time (the index is
    derived: found damaged, it is rebuilt from the records), so it never stops the service."""
    try:
        write_book_index(root, *book)
    except OSError:
        pass


def _answer(item: Batch | Change, outcome: Outcome) -> None:
    """Gives a waiting handler its item's outcome (on the event loop), unless it stopped waiting."""
    assert item.done is not None
    if item.done.done():
        return
    if isinstance(outcome, BaseException):
        item.done.set_exception(outcome)
    else:
        item.done.set_result(outcome)


def _streams_of(batch: Batch) -> list[str]:
    if len(batch.events) == 1:  # a move: the common batch
        return [batch.events[0][0].stream]
    return list(dict.fromkeys(event.stream for event, _ in batch.events))


class _Planner:
    """Checks the batches of one group commit against the log and the batches planned before them,
    with the ledger's append rules (one `BatchPlan` for the group: sequence numbers, identical
    re-sent events named by their earlier entry, the size limit, the log's own kinds and streams),
    after the streams each source may write."""

    def __init__(self, ledger: Ledger, book: SourceBook) -> None:
        self.book = book
        self.rules = ledger.plan()
        self.claimed: dict[str, str] = {}
        self.digests: dict[tuple[str, str], _Plan] = {}

    def plan(self, batch: Batch) -> _Plan:
        """Returns the plan of a batch, its fresh events after those of the batches planned before.

        :raises Refusal: on a revoked source, a stream it may not write, or what the append rules refuse.
        """
        if batch.source.revoked:
            raise Refusal(403, "revoked-source", f"source {batch.source.name!r} was revoked; its batches are refused")
        try:
            opened = self.book.check_streams(batch.source, (e for e, _ in batch.events), self.claimed)
        except SourceRefused as exc:
            raise refusal_of(exc) from None
        pairs = [(event, Pending(line, event, data)) for line, (event, data) in enumerate(batch.events, start=1)]
        try:
            fresh, entries = self.rules.check_entries([p for _, p in pairs])
        except SequenceError as exc:
            raise rule_refusal(exc) from None
        for stream in opened:
            self.claimed[stream] = batch.source.name
        new = {id(p) for p in fresh}
        return _Plan(batch, entries, [(event, p) for event, p in pairs if id(p) in new], opened)


def digest_of(body: bytes) -> str:
    """Returns the hex SHA-256 of a request body (how a batch is known again when re-sent)."""
    return hashlib.sha256(body).hexdigest()


def describe(receipt: Receipt) -> dict[str, Any]:
    """Returns a receipt as JSON-ready builtins."""
    import msgspec

    return msgspec.to_builtins(receipt)
