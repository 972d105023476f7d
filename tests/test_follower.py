"""Issue 29, points 2, 3 and 8 (one set of append rules run once, one ingress, the live audit follows
the log): the group commit plans once and the store appends that plan, each entry hashed once; an
event is decoded once on its way from the service into the log; the live auditor reads committed
bytes from its own persisted position, so a restart reads none of what it had folded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ledger as ledger_api
import ledger.batch as batch_module
from audit.service.serve import parse_body
from ledger.derived import indexed_size
from ledger.group_commit import Batch, Refusal, Writer, digest_of
from ledger.sources import HEADER as SIGNATURE_HEADER
from tests.ledger_support import event_line
from tests.serve_support import lines, make_source, signed


def test_the_group_commit_checks_and_hashes_each_entry_once(ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 point 2 (one set of append rules, run once): a group of two batches is checked by
    the append rules once per event and each entry's leaf hashed once; the store appends the group
    commit's own plan (before, `Ledger.append` planned and hashed the group a second time)."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    checked: list[int] = []
    hashed: list[int] = []
    check, hashes = batch_module.BatchPlan._check, batch_module.leaf_hashes

    def counted_check(plan: Any, piece: Any, entries: Any) -> Any:
        checked.append(len(piece))
        return check(plan, piece, entries)

    def counted_hashes(data: Any) -> bytes:
        hashed.append(len(data))
        return hashes(data)

    monkeypatch.setattr(batch_module.BatchPlan, "_check", counted_check)
    monkeypatch.setattr(batch_module, "leaf_hashes", counted_hashes)
    bodies = [lines(event_line("g", 0), event_line("g", 1)), lines(event_line("h", 0), event_line("g", 2), event_line("h", 1))]

    async def run() -> list[Any]:
        writer = Writer(ledger_dir)
        try:
            source = writer.book.sources["venue"]
            checked.clear()  # (opening reads the registry: no append)
            hashed.clear()
            futures = [writer.submit(Batch(source, signed(venue, body)[SIGNATURE_HEADER], digest_of(body),
                                           parse_body(body, 1 << 20), True)) for body in bodies]
            return list(await asyncio.gather(*futures))
        finally:
            await writer.stop()

    first, second = asyncio.run(run())
    appended = 5 + 2  # the events and each batch's `source.batch` record
    assert sum(checked) == appended and sum(hashed) == appended
    assert [e.index for e in first.entries] == [1, 2] and [e.index for e in second.entries] == [4, 5, 6]
    with ledger_api.Ledger.open(ledger_dir) as led:
        assert led.size == 1 + appended


def test_a_plan_made_before_the_log_grew_is_not_appended(ledger_dir: Path) -> None:
    """Issue 29 point 2 (threat: a plan checked against an older log would skip the append rules):
    `append_planned` refuses a plan whose first entry is no longer the log's next, and appends nothing."""
    with ledger_api.Ledger.open(ledger_dir) as led:
        plan = led.plan()
        pending = [ledger_api.Pending(1, *_decoded(event_line("g", 0)))]
        fresh = plan.check(pending)
        led.append([ledger_api.Pending(1, *_decoded(event_line("k", 0)))])
        with pytest.raises(ledger_api.LedgerError, match="cannot be appended to a log of 1 entries"):
            led.append_planned(plan, fresh)
        assert led.size == 1 and led.next_seq("g") == 0


def _decoded(line: bytes) -> tuple[Any, bytes]:
    from schemas import decode_line

    return decode_line(line, 1)


# -- one ingress, one decode ------------------------------------------------------------------------

class _CountingDecoder:
    """A decoder that counts the events it decodes (one a call, or each element of an array)."""

    def __init__(self, inner: Any, counts: list[int]) -> None:
        self.inner, self.counts = inner, counts

    def decode(self, data: Any) -> Any:
        decoded = self.inner.decode(data)
        self.counts.append(len(decoded) if isinstance(decoded, list) else 1)
        return decoded


@pytest.fixture()
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every event decoded by the event contract's decoders from now on."""
    import schemas.codec as codec

    counts: list[int] = []
    single, batch = codec._decoder(), codec._batch_decoder()
    monkeypatch.setattr(codec, "_decoder", lambda: _CountingDecoder(single, counts))
    monkeypatch.setattr(codec, "_batch_decoder", lambda: _CountingDecoder(batch, counts))
    return counts


@pytest.mark.parametrize("via", ["http", "front"])
def test_an_event_is_decoded_once_on_its_way_into_the_log(ledger_dir: Path, tmp_path: Path, decodes: list[int], via: str) -> None:
    """Issue 29 points 2 and 8 (one ingress, one decode): a batch taken by the service's one ingress,
    from its own HTTP server (authenticated there) or from a front (checked there with the book's
    key), is decoded once, event by event, on its way to a receipt: neither the writer, the append
    rules nor the store decode it again (the live audit, off here, reads what was committed)."""
    from audit.service.serve import ServeConfig, Service

    venue = make_source(tmp_path, ledger_dir, "venue")
    body = lines(event_line("g", 0), event_line("g", 1), event_line("h", 0))
    header = signed(venue, body)[SIGNATURE_HEADER]
    service = Service(ServeConfig(ledger_dir, live=False, fronts=0), lambda record: None)

    async def run() -> tuple[Any, dict[str, Any]]:
        log: dict[str, Any] = {}
        try:
            public = service.writer.book.sources["venue"].verifier.public if via == "front" else None
            decodes.clear()
            return await service.ingress(header, body, public, log), log
        finally:
            await service.writer.stop()

    receipt, log = asyncio.run(run())
    assert [e.index for e in receipt.entries] == [1, 2, 3]
    assert sum(decodes) == 3, decodes
    assert log == {"source": "venue", "events": 3, "entries": [1, 3]}


def test_the_ingress_refuses_a_forged_batch_a_front_did_not_check(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 29 point 2 (threat: a batch entering by a path that skips the signature check): through
    the one ingress a batch the front could not check (no key named) is authenticated by the
    writer's process, and a body changed after signing is refused 401 with nothing appended."""
    from audit.service.serve import ServeConfig, Service

    venue = make_source(tmp_path, ledger_dir, "venue")
    body = lines(event_line("g", 0))
    header = signed(venue, body)[SIGNATURE_HEADER]
    service = Service(ServeConfig(ledger_dir, live=False, fronts=0), lambda record: None)

    async def run() -> Any:
        try:
            return await service.ingress(header, lines(event_line("g", 0, ms=1)), None, {})
        except Refusal as refusal:
            return refusal
        finally:
            await service.writer.stop()

    refused = asyncio.run(run())
    assert isinstance(refused, Refusal) and (refused.status, refused.reason) == (401, "bad-signature")
    with ledger_api.Ledger.open(ledger_dir) as led:
        assert led.size == 1  # the registration only


# -- the live audit follows the log ------------------------------------------------------------------

def _game_events() -> list[Any]:
    """The events of two seeded checkers tables of the simulator, an illegal move planted in the first."""
    from audit.simulator.live import make_tables

    _, tables = make_tables("checkers", 2, 5, inject="illegal-move")
    return [event for table in tables for event in table.events]


def _record(root: Path, events: list[Any]) -> int:
    from audit.simulator.simulate import record_events

    with ledger_api.Ledger.open(root) as led:
        record_events(led, events)
        led.checkpoint()
        return led.size


def test_the_live_audit_resumes_from_its_persisted_position(ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 point 3 (tessera's Follower): the live auditor keeps its position beside its derived
    files (`derived/live/state`); after a restart it reads the log from there, never an entry it had
    folded (counted at its reader), and publishes exactly the findings of one audit of the whole log."""
    from audit.live.auditor import LiveAuditor
    from audit.live.follow import CountingReader
    from audit.live.store import open_auditor

    reads: list[tuple[int, int | None]] = []
    entries = CountingReader.entries

    def counted(reader: CountingReader, start: int = 0, limit: int | None = None) -> Any:
        reads.append((start, limit))
        return entries(reader, start, limit)

    monkeypatch.setattr(CountingReader, "entries", counted)
    events = _game_events()
    half = _record(ledger_dir, events[:len(events) // 2])
    auditor, opened = open_auditor(ledger_dir, half)
    assert not opened.resumed
    auditor.catch_up(half)
    auditor.book.save(auditor)  # type: ignore[attr-defined]

    size = _record(ledger_dir, events[len(events) // 2:])
    reads.clear()
    restarted, opened = open_auditor(ledger_dir, size)
    assert opened.resumed and opened.size == half
    restarted.catch_up(size)
    assert reads and min(start for start, _ in reads) >= half  # nothing before its position read again by index
    assert sum(limit or 0 for _, limit in reads) == size - half
    assert restarted.size == size
    reference = LiveAuditor.from_ledger(ledger_dir)
    assert reference.findings and restarted.findings == reference.findings


def test_the_service_tells_the_live_audit_only_that_the_log_grew(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 29 point 3 (the writer only says "the size grew"): the writer hands its follower a
    checkpoint, no events; the live audit reads the committed entries itself and ends where the log
    ends, with the findings of one audit of the whole log."""
    from audit.live.auditor import LiveAuditor
    from audit.service.live_hub import LiveHub
    from schemas import encode

    venue = make_source(tmp_path, ledger_dir, "venue")
    told: list[Any] = []
    events = _game_events()

    async def run() -> int:
        hub = LiveHub(ledger_dir)
        hub.start(asyncio.get_running_loop())

        def grew(checkpoint: Any) -> None:
            told.append(checkpoint)
            hub.grew(checkpoint)

        writer = Writer(ledger_dir, grew)
        try:
            source = writer.book.sources["venue"]
            for at in range(0, len(events), 9):
                body = lines(*(encode(e) for e in events[at:at + 9]))
                await writer.submit(Batch(source, signed(venue, body)[SIGNATURE_HEADER], digest_of(body),
                                          parse_body(body, 1 << 20), True))
            return writer.checkpoint.size
        finally:
            await writer.stop()
            hub.close()
            assert hub.status() == "ready", hub.status()
            assert hub._auditor.size == writer.checkpoint.size
            assert hub._auditor.findings == LiveAuditor.from_ledger(ledger_dir).findings

    size = asyncio.run(run())
    assert told and all(isinstance(c, ledger_api.Checkpoint) for c in told) and told[-1].size == size


def test_the_follower_reader_reads_signed_entries_and_whole_streams(ledger_dir: Path) -> None:
    """Issue 29 point 3 and "Nothing unsigned counts": the follower's reader (`size`, `entries`,
    `stream`, as `ledger/reader.py` will name them) gives the signed size, reads no entry past it
    without a limit, and gives a stream's events from a seq on, those the stream index on disk
    covers and those after it alike, in seq order."""
    from audit.live.follow import CountingReader

    def pending(stream: str, seqs: range) -> list[Any]:
        return [ledger_api.Pending(n, *_decoded(event_line(stream, n))) for n in seqs]

    with ledger_api.Ledger.open(ledger_dir) as led:
        led.append(pending("g", range(0, 3)) + pending("h", range(0, 2)), checkpoint=False)
        led.checkpoint()  # signed, the index on disk covers entries 0 … 4
        led.append(pending("g", range(3, 5)) + pending("h", range(2, 3)), checkpoint=False)
        led.checkpoint(index=False)  # signed, the index lags
        led.append(pending("g", range(5, 6)), checkpoint=False)  # committed, never signed
        reader = CountingReader(ledger_dir)
        assert reader.size() == 8 and indexed_size(ledger_dir) == 5
        assert [i for i, _ in reader.entries()] == list(range(8))
        assert [i for i, _ in reader.entries(6)] == [6, 7]
        assert [i for i, _ in reader.entries(2, 3)] == [2, 3, 4]
        g = list(reader.stream("g", after=1))
        assert [i for i, _ in g] == [1, 2, 5, 6]
        assert [_decoded(data)[0].seq for _, data in g] == [1, 2, 3, 4]
        assert [i for i, _ in reader.stream("h", upto=7)] == [3, 4]
