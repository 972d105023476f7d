"""Issue 28 (points 2, 9, 10, 12) and issue 29 (Build 2): a source's events are data, never
authority. Each attack is replayed as an insider source would make it (over HTTP against the real
`matchledger serve`, or through the group commit's API) and shown refused, with the log
byte-identical (and so the standings, which are derived from it); and the group commit plans with
the ledger's one set of append rules."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import msgspec
import pytest

import ledger as ledger_api
from audit.service.serve import parse_body
from audit.simulator.client import Client
from audit.simulator.live import make_tables
from ledger import Ledger, LedgerError, Pending, Receipt, Signer, record
from ledger import sources as ledger_sources
from ledger.errors import SequenceError
from ledger.group_commit import Batch, Refusal, Writer, digest_of
from ledger.sources import SCHEME, load_source_book, old_message
from schemas import ContractError, decode, decode_line, encode
from schemas.log import BATCHES_STREAM, SOURCES_STREAM, BatchReceived, SourceRegistered
from tests.ledger_support import cli, event_line, snapshot
from tests.serve_support import LOG_ORIGIN as ORIGIN  # the origin of conftest's `ledger_dir`
from tests.serve_support import Server, get, lines, make_source, post, signed


def forged_record(stream: str, seq: int, victim: str, body: bytes, streams: list[str]) -> bytes:
    """A `source.batch` record as a source would forge it: naming another source and its next body."""
    return encode(BatchReceived(stream=stream, seq=seq, ts=1, source=victim, signature="x", digest=hashlib.sha256(body).hexdigest(),
                                entries=[(0, 1)], streams=streams, canonical=True))


def game_started(stream: str, tournament: str | None) -> bytes:
    """A valid `game.started` (a checkers table of the simulator) moved to `stream`, naming `tournament`."""
    _, tables = make_tables("checkers", 1, 5)
    return encode(msgspec.structs.replace(tables[0].events[0], stream=stream, tournament=tournament))


# -- 29.2: one set of append rules ------------------------------------------------------------------

def test_the_group_commit_refuses_with_the_ledgers_own_append_rules(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 29, Build 2 (one set of append rules): a group of three batches in one commit, the
    middle one with a gap, is planned by the ledger's `BatchPlan`: the gap is refused with the very
    message `record` gives for the same event, the refused batch leaves the plan as it was (the
    third batch, which goes on the first one's stream, is committed), and an identical re-sent event
    names its earlier entry."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    first = lines(event_line("g", 0), event_line("h", 0))
    gap = lines(event_line("g", 1), event_line("k", 5))
    third = lines(event_line("h", 0), event_line("g", 1))  # h/0 re-sent, g/1 fresh
    with pytest.raises(SequenceError) as recorded:
        record(ledger_dir, [event_line("k", 5)])
    assert recorded.value.reason == "seq-gap"

    async def run() -> list[object]:
        writer = Writer(ledger_dir)
        try:
            source = writer.book.sources["venue"]
            futures = [writer.submit(Batch(source, signed(venue, body)[ledger_sources.HEADER], digest_of(body),
                                           parse_body(body, 1 << 20), True)) for body in (first, gap, third)]
            return list(await asyncio.gather(*futures, return_exceptions=True))
        finally:
            await writer.stop()

    ok, refused, later = asyncio.run(run())
    assert isinstance(refused, Refusal) and (refused.status, refused.reason, refused.line) == (409, "seq-gap", 2)
    assert str(refused) == "第 2 行 line 2: " + str(recorded.value).removeprefix("第 1 行 line 1: ")
    # entry 0: the registration; 1, 2: the first batch; 3: its record; 4: the third batch's fresh g/1
    assert isinstance(ok, Receipt) and isinstance(later, Receipt)
    assert [e.index for e in ok.entries] == [1, 2]
    assert [e.index for e in later.entries] == [2, 4]
    assert not hasattr(__import__("audit"), "writer") and not (Path(__file__).parents[1] / "audit" / "writer.py").exists()


# -- 28.2: the log's own kinds and streams ------------------------------------------------------------

@pytest.fixture(params=["accelerated", "pure"])
def service_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The service run on its accelerators and on the pure-Python path (`MATCHLEDGER_NO_ACCEL=1`)."""
    if request.param == "pure":
        monkeypatch.setenv("MATCHLEDGER_NO_ACCEL", "1")
    return str(request.param)


def test_a_source_can_write_none_of_the_logs_own_kinds_nor_streams(ledger_dir: Path, tmp_path: Path, service_path: str) -> None:
    """Issue 28.2 (only the writer writes the log's own records): a source sending `source.batch`,
    `source.registered`, `source.revoked`, `log.witness_added` or `arbiter.registered` in its own
    stream, or anything in a `log.*` stream, is refused 403 and nothing is appended (on both paths)."""
    attacker = make_source(tmp_path, ledger_dir, "attacker", streams=["mine/"])
    make_source(tmp_path, ledger_dir, "victim", streams=["theirs/"])
    key = str(Signer.generate("evil").verifier)
    with Server(ledger_dir, "--no-live") as server:
        assert post(server.url, lines(event_line("mine/g", 0)), signed(attacker, lines(event_line("mine/g", 0))))[0] == 200
        before = snapshot(ledger_dir)
        cases = {
            "source.batch": forged_record("mine/g", 1, "victim", b"x", ["log.sources", "theirs/g"]),
            "source.registered": event_line("mine/g", 1, "source.registered", name="evil", key=key),
            "source.revoked": event_line("mine/g", 1, "source.revoked", name="victim"),
            "log.witness_added": event_line("mine/g", 1, "log.witness_added", verifier=key, size=1),
            "arbiter.registered": event_line("mine/g", 1, "arbiter.registered", verifier=key, role="chief_referee"),
            "log.sources": event_line(SOURCES_STREAM, 9, "source.registered", name="evil", key=key),
            "log.batches": forged_record(BATCHES_STREAM, 9, "victim", b"x", ["theirs/g"]),
            "log.anything": event_line("log.anything", 0),
        }
        for name, event in cases.items():
            status, _, data = post(server.url, lines(event), signed(attacker, lines(event)))
            answer = json.loads(data)
            assert (status, answer["error"]) in ((403, "log-kind"), (403, "log-stream")), f"{name}: {status} {answer}"
            assert snapshot(ledger_dir) == before, f"{name}: the log changed"
    book = _book(ledger_dir)
    assert set(book.sources) == {"attacker", "victim"} and not book.sources["victim"].revoked
    assert not any(list(ledger_api.LogReader(ledger_dir).events(s)) for s in ("log.witnesses", "log.arbiters"))


def test_a_forged_batch_record_never_answers_another_sources_batch(ledger_dir: Path, tmp_path: Path, service_path: str) -> None:
    """Issue 28.2 (a 200 means appended, synced and signed): a `source.batch` naming the victim's
    next body is refused, so the victim's batch is appended for real: its 200 carries a receipt of
    its own new entries, which checks against the events sent (on both paths)."""
    attacker = make_source(tmp_path, ledger_dir, "attacker", streams=["mine/"])
    victim = make_source(tmp_path, ledger_dir, "victim", streams=["theirs/"])
    canonical = decode_line(event_line("theirs/g", 0), 1)[1]
    next_body = canonical + b"\n"
    forged = lines(forged_record("mine/g", 0, "victim", next_body, ["theirs/g"]))
    with Server(ledger_dir, "--no-live") as server:
        assert post(server.url, forged, signed(attacker, forged))[0] == 403
        size = int(get(server.url, "/checkpoint")[1].split(b"\n")[1])
        status, _, data = post(server.url, next_body, signed(victim, next_body))
        assert status == 200
        receipt = msgspec.json.decode(data, type=ledger_api.Receipt)
        checkpoint = ledger_api.check_receipt(receipt, ledger_api.load_verifier(ledger_dir), [canonical])
        assert receipt.entries[0].index >= size and checkpoint.size > receipt.batch.index > receipt.entries[0].index


def test_only_the_writers_records_are_folded_and_a_receipt_needs_one_in_log_batches(ledger_dir: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28.2 (fold only records the writer created; a receipt is valid only for a
    `BatchReceived` in `log.batches`): a log an earlier version let a source poison (a batch record
    in a game stream, one in `log.batches` naming `log.sources`, a registration in `log.batches`)
    gives no source ownership of a log stream, no batch and no registration; a receipt built on the
    game stream's record is refused by `check_receipt` and by `check-proof`."""
    import ledger.batch

    make_source(tmp_path, ledger_dir, "victim", streams=["theirs/"])
    body = lines(event_line("theirs/g", 0))
    key = str(Signer.generate("evil").verifier)
    monkeypatch.setattr(ledger.batch, "check_authority", lambda p: None)  # the old rules, which let a source write them
    with Ledger.open(ledger_dir) as led:
        events = [decode(forged_record("mine/g", 0, "victim", body, ["theirs/g"])),
                  decode(forged_record(BATCHES_STREAM, led.next_seq(BATCHES_STREAM), "attacker", b"y", [SOURCES_STREAM])),
                  SourceRegistered(stream=BATCHES_STREAM, seq=led.next_seq(BATCHES_STREAM) + 1, ts=1, name="evil", key=key)]
        led.append([Pending(n, e, encode(e)) for n, e in enumerate(events, 1)])
        led.checkpoint()
        book = load_source_book(led)
        record_entry = led.entry_of("mine/g", 0)
        assert book.batch_record("victim", digest_of(body), [decode_line(event_line("theirs/g", 0), 1)]) is None
    monkeypatch.undo()
    assert "evil" not in book.sources and SOURCES_STREAM not in book.owners

    from ledger.checkpoints import newest_checkpoint
    from ledger.receipts import KeptNodes, Subtrees, build_receipt

    checkpoint = newest_checkpoint(ledger_dir, ledger_api.load_verifier(ledger_dir))
    assert checkpoint is not None
    reader = ledger_api.LogReader(ledger_dir)
    _, data = next(reader.entries(record_entry, 1))
    theirs = list(reader.entries(0, 1))
    receipt = build_receipt(ledger_dir, checkpoint, "victim", digest_of(body), (record_entry, data), theirs,
                            Subtrees(KeptNodes(ledger_dir, checkpoint.size)))
    with pytest.raises(ledger_api.BundleError, match="not a batch record of the log's stream 'log.batches'"):
        ledger_api.check_receipt(receipt, ledger_api.load_verifier(ledger_dir))
    path = tmp_path / "receipt.json"
    path.write_bytes(msgspec.json.encode(receipt))
    checked = cli("check-proof", str(path), "--key", str(ledger_dir / "signer.pub"))
    assert checked.exit_code == 1 and "log.batches" in checked.stderr


def test_record_refuses_the_logs_own_kinds_and_the_operators_commands_still_write_them(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 28.2 (the operator's `record` file is a sender too): the log's own kinds and `log.*`
    streams in a file are refused naming the line and field, nothing appended; `source add`,
    `appeal register` and `cosign` (the ledger's own commands) still write theirs."""
    key = str(Signer.generate("evil").verifier)
    cases = [event_line("g", 1, "arbiter.registered", verifier=key, role="chief_referee"),
             event_line("log.arbiters", 0, "arbiter.registered", verifier=key, role="chief_referee"),
             event_line("log.sources", 0, "source.registered", name="evil", key=key),
             event_line("log.notes", 0)]
    record(ledger_dir, [])  # (a first open writes the empty index and segment)
    before = snapshot(ledger_dir)
    for n, line in enumerate(cases):
        path = tmp_path / f"in{n}.jsonl"
        path.write_bytes(lines(event_line("g", 0), line))
        result = cli("record", "--ledger", str(ledger_dir), str(path))
        assert result.exit_code == 1 and "line 2: 字段 `" in result.stderr and "field `" in result.stderr and "log" in result.stderr, result.stderr
        assert snapshot(ledger_dir) == before
    with pytest.raises(SequenceError, match="belongs in log.arbiters, not 'log.sources'"):  # the own commands' kinds: only in their stream
        record(ledger_dir, [event_line("log.sources", 0, "arbiter.registered", verifier=key, role="chief_referee")], own=True)
    assert snapshot(ledger_dir) == before
    (tmp_path / "k").mkdir()
    assert cli("keygen", "--name", "zhang", "--out", str(tmp_path / "k" / "zhang.key")).exit_code == 0
    assert cli("appeal", "register", "--ledger", str(ledger_dir), "--pub", str(tmp_path / "k" / "zhang.pub"),
               "--role", "chief_referee", "--at", "1").exit_code == 0
    assert cli("source", "add", "--ledger", str(ledger_dir), "--name", "zhang", "--key", str(tmp_path / "k" / "zhang.pub")).exit_code == 0
    assert cli("cosign", "--ledger", str(ledger_dir), "--key", str(tmp_path / "k" / "zhang.key")).exit_code == 0
    assert [e.kind for e in ledger_api.LogReader(ledger_dir).events()] == ["arbiter.registered", "source.registered", "log.witness_added"]
    assert ledger_api.verify(ledger_dir).ok


# -- 28.9: stream squatting ---------------------------------------------------------------------------

def test_a_source_opens_games_only_under_its_granted_tournaments(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 28.9 (stream squatting): a source granted `cup-B` cannot open `cup-C/r1/t1/g1` through
    its own `game.started` naming `cup-C`, nor a game under `cup-B/` that claims `cup-C`: 403, the log
    unchanged; the rightful source then opens its game, and `cup-B`'s own games open as before."""
    squatter = make_source(tmp_path, ledger_dir, "venue-b", tournaments=["cup-B"])
    rightful = make_source(tmp_path, ledger_dir, "venue-c", tournaments=["cup-C"])
    with Server(ledger_dir, "--no-live") as server:
        before = snapshot(ledger_dir)
        for stream in ("cup-C/r1/t1/g1", "cup-B/r1/t1/g1"):
            body = lines(game_started(stream, "cup-C"))
            status, _, data = post(server.url, body, signed(squatter, body))
            assert (status, json.loads(data)["error"]) == (403, "forbidden-stream"), data
            assert snapshot(ledger_dir) == before
        body = lines(game_started("cup-C/r1/t1/g1", "cup-C"))
        assert post(server.url, body, signed(rightful, body))[0] == 200
        body = lines(game_started("cup-B/r1/t1/g1", "cup-B"))
        assert post(server.url, body, signed(squatter, body))[0] == 200


# -- 28.10: batches bound to the log ------------------------------------------------------------------

def test_a_batch_signed_for_another_log_or_the_old_scheme_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 28.10 (batches replay across logs): the same source key registered in a staging and a
    production log; a batch accepted by staging is refused by production (401 `bad-signature`),
    and one signed under the old scheme, which named no log, is refused as `old-signature` with
    a message that says so; the log unchanged. The client signs for the log it talks to."""
    staging = tmp_path / "S"
    ledger_api.init(staging, "trust.test/staging")
    venue = make_source(tmp_path, staging, "venue", streams=["g/"])
    ledger_sources.change_sources(ledger_dir, lambda book, led: ledger_sources.registration(book, led, "venue", venue.verifier, (), ["g/"]))
    body = lines(event_line("g/1", 0))
    header = signed(venue, body)  # for the log it was registered in: staging (its origin and key id)
    with Server(staging, "--no-live") as server:
        assert post(server.url, body, header)[0] == 200
    with Server(ledger_dir, "--no-live") as server:
        before = snapshot(ledger_dir)
        status, _, data = post(server.url, body, header)
        assert (status, json.loads(data)["error"]) == (401, "bad-signature") and ORIGIN in json.loads(data)["message"]
        old = {ledger_sources.HEADER: venue.sign_line(old_message("venue", body)).removeprefix("— ").strip()}
        status, _, data = post(server.url, body, old)
        answer = json.loads(data)
        assert (status, answer["error"]) == (401, "old-signature") and SCHEME in answer["message"] and ORIGIN in answer["message"]
        assert snapshot(ledger_dir) == before

        event, canonical = decode_line(event_line("g/1", 0), 1)

        async def send() -> ledger_api.Receipt:
            async with Client(server.url, venue) as client:  # no log key: the origin of the service's checkpoint
                return await client.send([event])

        assert asyncio.run(send()).entries[0].entry.encode() == canonical


# -- 28.12: stream ids ---------------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["g1\n", "cup/../other/g1", "cup/..", "cup/./g1"])
def test_a_stream_id_may_not_end_in_a_newline_nor_hold_dot_segments(stream: str, ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 28.12 (stream ids): a stream id ending in a line break (which `$` let through) or with a
    `.`/`..` segment is refused by the contract, naming the line and field, in `record` and in a
    source's grant; nothing is appended."""
    line = json.dumps({"kind": "game.move_time", "stream": stream, "seq": 0, "ts": 1, "seat": 0, "ms": 5}).encode()
    with pytest.raises(ContractError, match=r"^第 3 行 line 3: Expected a stream id.* - at `\$\.stream`$"):
        decode_line(line, 3)
    record(ledger_dir, [])  # (a first open writes the empty index and segment)
    before = snapshot(ledger_dir)
    with pytest.raises(ContractError):
        record(ledger_dir, [event_line("ok", 0), line])
    with pytest.raises(LedgerError, match="source registration"):
        ledger_sources.change_sources(ledger_dir, lambda book, led: ledger_sources.registration(
            book, led, "venue", Signer.generate("venue").verifier, (), [stream]))
    assert snapshot(ledger_dir) == before


def _book(root: Path) -> ledger_sources.SourceBook:
    with Ledger.open(root) as led:
        return load_source_book(led)
