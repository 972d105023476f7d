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
from audit.serve import parse_body
from ledger import Batch, Writer, digest_of
from tests.ledger_support import event_line
from tests.serve_support import make_source, signed

ORIGIN = "follower.test/production"


@pytest.fixture()
def ledger_dir(tmp_path: Path) -> Path:
    root = tmp_path / "L"
    ledger_api.init(root, ORIGIN)
    return root


def lines(*events: bytes) -> bytes:
    return b"".join(e + b"\n" for e in events)


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
            checked.clear(), hashed.clear()  # (opening reads the registry: no append)
            futures = [writer.submit(Batch(source, signed(venue, body)[ledger_api.SIGNATURE_HEADER], digest_of(body),
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
