"""The live recording service (issue 14), tested as a user runs it: the real `matchledger serve` in a
subprocess on a loopback port, signed batches from several sources at once, receipts checked offline,
every refusal with its status and reason and the log byte-identical, the read API followed as a
witness would, a stalled client that cannot hold the writer, and live findings."""

from __future__ import annotations

import asyncio
import base64
import json
import select
import socket
import time
from collections.abc import Generator
from pathlib import Path

import msgspec
import pytest

import ledger as ledger_api
from audit.simulator.client import Client, SendError, batch_body
from ledger import Signer
from ledger import bundle as ledger_bundle
from ledger import receipts as ledger_receipts
from ledger import sources as ledger_sources
from ledger import tiles as ledger_tiles
from schemas.log import SourceRegistered
from tests.ledger_support import cli, event_line, snapshot
from tests.serve_support import Server, get, make_source, post, signed


def lines_body(*lines: bytes) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def test_concurrent_sources_get_receipts_that_verify_offline(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 3 and 4: concurrent signed batches from three sources share commits; each
    receipt names its entries, proves them against a signed checkpoint, and checks offline with the
    log's public key (the client function and `matchledger check-proof`); an identical re-send gets
    the same receipt."""
    sources = [make_source(tmp_path, ledger_dir, f"venue-{n}", streams=[f"v{n}/"]) for n in range(3)]
    verifier = ledger_api.load_verifier(ledger_dir)
    with Server(ledger_dir) as server:
        async def table(signer: Signer, n: int) -> list[ledger_api.Receipt]:
            async with Client(server.url, signer, verifier) as client:
                return [await client.send([event_line(f"v{n}/g{g}", seq) for g in range(2)]) for seq in range(8)]

        async def run() -> list[list[ledger_api.Receipt]]:
            return await asyncio.gather(*(table(s, n) for n, s in enumerate(sources)))

        receipts = asyncio.run(run())
        again = post(server.url, lines_body(*[msgspec.json.encode(msgspec.json.decode(e.entry)) for e in receipts[1][3].entries]),
                     signed(sources[1], b"".join(e.entry.encode() + b"\n" for e in receipts[1][3].entries)))
        assert again[0] == 200
        assert msgspec.json.decode(again[2], type=ledger_api.Receipt) == receipts[1][3], "an identical re-send gets the same receipt"
        out = tmp_path / "receipt.json"
        out.write_bytes(msgspec.json.encode(receipts[2][5]))
    assert server.proc.returncode == 0
    indexes = [e.index for rs in receipts for r in rs for e in r.entries]
    assert len(indexes) == len(set(indexes)) == 3 * 8 * 2
    for n, rs in enumerate(receipts):
        for seq, receipt in enumerate(rs):
            assert receipt.source == f"venue-{n}"
            assert [json.loads(e.entry)["seq"] for e in receipt.entries] == [seq, seq]
            ledger_api.check_receipt(receipt, verifier)
    result = cli("check-proof", str(out), "--key", str(ledger_dir / "signer.pub"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["entries"] == 2
    tampered = msgspec.json.decode(out.read_bytes())
    tampered["entries"][0]["entry"] = tampered["entries"][0]["entry"].replace('"ms":', '"ms":1')
    out.write_bytes(msgspec.json.encode(tampered))
    assert cli("check-proof", str(out), "--key", str(ledger_dir / "signer.pub")).exit_code == 1
    assert ledger_api.verify(ledger_dir).ok


def test_prove_bundle_names_who_sent_each_event(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 2: the source and its signature are stored with the entries, so a `prove`
    bundle shows who sent each event, and the signature re-checks from the bundle alone."""
    venue = make_source(tmp_path, ledger_dir, "venue-a")
    with Server(ledger_dir) as server:
        body = batch_body([event_line("ga", 0), event_line("ga", 1)])  # canonical, as the client sends
        assert post(server.url, body, signed(venue, body))[0] == 200
        other = lines_body(event_line("ga", 2))  # not canonical: the record names the sender, the bundle cannot re-check it
        assert post(server.url, other, signed(venue, other))[0] == 200
    bundle = ledger_api.prove(ledger_dir, "ga")
    ledger_api.check_bundle(bundle, ledger_api.load_verifier(ledger_dir))
    assert [json.loads(s.entry)["source"] for s in bundle.senders] == ["venue-a", "venue-a"]
    assert ledger_bundle.verify_senders(bundle, {"venue-a": venue.verifier}) == {0: "venue-a", 1: "venue-a"}


REFUSALS = [
    # name, status, reason, how the request is made (source, body, headers)
    ("missing signature", 401, "missing-signature"),
    ("bad signature", 401, "bad-signature"),
    ("unknown source", 401, "unknown-source"),
    ("revoked source", 403, "revoked-source"),
    ("another source's stream", 403, "forbidden-stream"),
    ("stream outside the grant", 403, "forbidden-stream"),
    ("the log's own stream", 403, "log-stream"),
    ("oversize", 413, "body-too-large"),
    ("malformed body", 400, "malformed-body"),
    ("contract violation", 400, "malformed-body"),
    ("seq gap", 409, "seq-gap"),
    ("seq conflict", 409, "seq-conflict"),
]


def settled(root: Path) -> dict[str, str]:
    """Returns the ledger's snapshot once the live audit is done with what was accepted: its thread
    folds a commit after the 200 and may then write its state (once a second)."""
    before = snapshot(root)
    while True:
        time.sleep(0.3)
        now = snapshot(root)
        if now == before:
            return now
        before = now


def test_every_refusal_has_its_status_and_reason_and_leaves_the_log_unchanged(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Show: bad signature, unknown or revoked source, another source's stream, oversize,
    malformed body, seq gap (and the rest of the refusals): each refused with its status and a JSON
    reason, and the log byte-identical."""
    owner = make_source(tmp_path, ledger_dir, "owner")
    cup = make_source(tmp_path, ledger_dir, "cup-venue", tournaments=["cup"])
    revoked = make_source(tmp_path, ledger_dir, "gone")
    ledger_sources.change_sources(ledger_dir, lambda book, led: ledger_sources.revocation(book, led, "gone", "key leaked"))
    stranger = Signer.generate("stranger")
    with Server(ledger_dir, "--max-body", "4096") as server:
        body = lines_body(event_line("owned", 0), event_line("owned", 1))
        assert post(server.url, body, signed(owner, body))[0] == 200
        before = settled(ledger_dir)
        ok_body = lines_body(event_line("owned", 2))
        cases = {
            "missing signature": (ok_body, {}),
            "bad signature": (ok_body, signed(owner, ok_body + b"\n")),
            "unknown source": (ok_body, signed(stranger, ok_body)),
            "revoked source": (ok_body, signed(revoked, ok_body)),
            "another source's stream": (lines_body(event_line("owned", 2)), signed(cup, lines_body(event_line("owned", 2)))),
            "stream outside the grant": (lines_body(event_line("other", 0)), signed(cup, lines_body(event_line("other", 0)))),
            "the log's own stream": (lines_body(event_line("log.sources", 9)), signed(owner, lines_body(event_line("log.sources", 9)))),
            "oversize": (b" " * 5000 + ok_body, signed(owner, b" " * 5000 + ok_body)),
            "malformed body": (b"{not json\n", signed(owner, b"{not json\n")),
            "contract violation": (lines_body(event_line("owned", 2, seat=9)), signed(owner, lines_body(event_line("owned", 2, seat=9)))),
            "seq gap": (lines_body(event_line("owned", 5)), signed(owner, lines_body(event_line("owned", 5)))),
            "seq conflict": (lines_body(event_line("owned", 1, ms=1)), signed(owner, lines_body(event_line("owned", 1, ms=1)))),
        }
        for name, status, reason in REFUSALS:
            got, _, data = post(server.url, *cases[name])
            answer = json.loads(data)
            assert (got, answer["error"]) == (status, reason), f"{name}: {got} {answer}"
            assert answer["message"], name
            assert snapshot(ledger_dir) == before, f"{name}: the log changed"
        contract = json.loads(post(server.url, *cases["contract violation"])[2])
        assert contract["line"] == 1 and "seat" in contract["message"]
        logged = [r for r in server.lines if r.get("at") == "request" and r["path"] == "/batches"]
        assert [r["status"] for r in logged[1:1 + len(REFUSALS)]] == [s for _, s, _ in REFUSALS]
        assert all(r.get("error") for r in logged[1:1 + len(REFUSALS)]), "each refusal's log line names its reason"


def test_rate_limit_answers_429_with_retry_after(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 4: a per-source rate limit, 429 with Retry-After; another source is not slowed."""
    fast = make_source(tmp_path, ledger_dir, "fast")
    other = make_source(tmp_path, ledger_dir, "other")
    with Server(ledger_dir, "--rate", "1", "--burst", "2") as server:
        statuses = []
        for seq in range(4):
            body = lines_body(event_line("fast-g", seq))
            status, headers, _ = post(server.url, body, signed(fast, body))
            statuses.append(status)
            if status == 429:
                assert int(headers["Retry-After"]) >= 1
        assert statuses[:2] == [200, 200] and 429 in statuses[2:]
        body = lines_body(event_line("other-g", 0))
        assert post(server.url, body, signed(other, body))[0] == 200


def test_a_stalled_client_cannot_hold_the_writer(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 4: a client that sends half a body and stalls holds nothing: others are
    acknowledged meanwhile, and the stalled one gets 408 when its time is up."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    with Server(ledger_dir, "--read-timeout", "4") as server:
        host, port = server.url.removeprefix("http://").split(":")
        stalled = socket.create_connection((host, int(port)))
        stalled.sendall(b"POST /batches HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nMatchledger-Signature: venue AAAA\r\n\r\n{\"kind\"")
        for seq in range(3):
            body = lines_body(event_line("g", seq))
            assert post(server.url, body, signed(venue, body))[0] == 200
        assert select.select([stalled], [], [], 0)[0] == [], "the stalled client was answered before the others: they waited"
        stalled.settimeout(30)
        answer = stalled.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert b"body-timeout" in answer
        stalled.close()
        assert json.loads(get(server.url, "/healthz")[1])["size"] > 0


def test_read_api_lets_a_witness_follow_the_log(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 6: /checkpoint verifies with the log's key; the tiles and entry bundles under
    /tile/ give that checkpoint's root; /proof/{index} and /consistency?old=N verify; /streams/{id}
    lists a stream's entries; /healthz reports."""
    from ledger.merkle import CompactRange, leaf_hash

    venue = make_source(tmp_path, ledger_dir, "venue")
    verifier = ledger_api.load_verifier(ledger_dir)
    with Server(ledger_dir) as server:
        status, note = get(server.url, "/checkpoint")
        old = ledger_bundle.check_consistency(ledger_bundle.ConsistencyProof(note.decode(), note.decode(), []), verifier)[0]
        for seq in range(0, 300, 60):
            body = lines_body(*[event_line("g", s) for s in range(seq, seq + 60)])
            assert post(server.url, body, signed(venue, body))[0] == 200
        status, note = get(server.url, "/checkpoint")
        checkpoint = ledger_bundle.check_consistency(ledger_bundle.ConsistencyProof(note.decode(), note.decode(), []), verifier)[1]
        size = checkpoint.size
        assert size > 256
        full = get(server.url, "/tile/entries/000")[1]
        part = get(server.url, f"/tile/entries/001.p/{size - 256}")[1]
        entries, data = [], full + part
        while data:
            n = int.from_bytes(data[:2], "big")
            entries.append(data[2:2 + n])
            data = data[2 + n:]
        assert len(entries) == size
        tree = CompactRange()
        for entry in entries:
            tree.append(leaf_hash(entry))
        assert tree.root() == checkpoint.root, "the entry bundles give the signed root"
        hashes = get(server.url, "/tile/0/000")[1] + get(server.url, f"/tile/0/001.p/{size - 256}")[1]
        assert hashes == b"".join(leaf_hash(e) for e in entries)
        assert get(server.url, f"/tile/0/001.p/{size - 255}")[0] == 404
        assert get(server.url, "/tile/0/../../signer.key")[0] == 404
        proof = json.loads(get(server.url, "/proof/7")[1])
        from ledger.merkle import verify_inclusion

        verify_inclusion(leaf_hash(proof["entry"].encode()), 7, size, [base64.b64decode(p) for p in proof["proof"]], checkpoint.root)
        consistency = json.loads(get(server.url, f"/consistency?old={old.size}")[1])
        ledger_bundle.check_consistency(ledger_bundle.ConsistencyProof(**consistency), verifier)
        stream = json.loads(get(server.url, "/streams/g")[1])
        assert [e["seq"] for e in stream["entries"]] == list(range(300))
        assert get(server.url, "/streams/nothing")[0] == 404
        health = json.loads(get(server.url, "/healthz")[1])
        assert health["ok"] and health["size"] == size


def test_one_writer_a_second_serve_or_record_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 1: the service holds the writer lock; `record` and a second `serve` are refused
    with a clear message; SIGTERM stops it cleanly (exit 0) and logs the stop."""
    with Server(ledger_dir) as server:
        events = tmp_path / "e.jsonl"
        events.write_bytes(lines_body(event_line("g", 0)))
        result = cli("record", str(events), "--ledger", str(ledger_dir))
        assert result.exit_code == 1 and "locked by another writer" in result.output
        with pytest.raises(RuntimeError, match="locked by another writer"):
            Server(ledger_dir)
        assert server.stop() == 0
        assert server.wait_for(lambda r: r.get("at") == "stopped")


def test_send_command_and_source_commands(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 2 and 7: `keygen`, `source add`, `send --key --log-key` with receipts checked,
    `source revoke --url` on the running service, after which `send` is refused (exit 1)."""
    key = tmp_path / "venue.key"
    assert cli("keygen", "--name", "venue", "--out", str(key)).exit_code == 0
    added = cli("source", "add", "--ledger", str(ledger_dir), "--name", "venue", "--key", str(tmp_path / "venue.pub"),
                "--tournament", "cup", "--json")
    assert added.exit_code == 0, added.output
    assert json.loads(added.output)["tournaments"] == ["cup"]
    events = tmp_path / "events.jsonl"
    events.write_bytes(lines_body(*[event_line("cup/r1/t1", seq) for seq in range(7)]))
    with Server(ledger_dir) as server:
        sent = cli("send", str(events), "--url", server.url, "--key", str(key), "--log-key", str(ledger_dir / "signer.pub"),
                   "--batch", "3", "--receipts", str(tmp_path / "receipts.jsonl"), "--json")
        assert sent.exit_code == 0, sent.output
        summary = json.loads(sent.output)
        assert (summary["events"], summary["batches"], summary["signature_checked"]) == (7, 3, True)
        assert len((tmp_path / "receipts.jsonl").read_bytes().splitlines()) == 3
        again = cli("send", str(events), "--url", server.url, "--key", str(key), "--json")
        assert again.exit_code == 0 and json.loads(again.output)["last"] == summary["last"], "a re-send lands nothing twice"
        revoked = cli("source", "revoke", "--url", server.url, "--admin-key", str(ledger_dir / "signer.key"), "--name", "venue")
        assert revoked.exit_code == 0, revoked.output
        events.write_bytes(lines_body(event_line("cup/r1/t1", 7)))
        refused = cli("send", str(events), "--url", server.url, "--key", str(key))
        assert refused.exit_code == 1 and "revoked-source" in refused.output
    assert [e.seq for e in list(ledger_api.LogReader(ledger_dir).events("cup/r1/t1"))] == list(range(7))


def test_client_refusal_is_raised_not_retried(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 14, Build 7: the client retries only what is safe and useful to repeat; a refusal is raised at once."""
    venue = make_source(tmp_path, ledger_dir, "venue")
    with Server(ledger_dir) as server:
        async def run() -> None:
            async with Client(server.url, venue) as client:
                with pytest.raises(SendError) as caught:
                    await client.send([event_line("g", 3)])
                assert caught.value.status == 409 and caught.value.reason == "seq-gap"

        asyncio.run(run())
    posts = [r for r in server.lines if r.get("path") == "/batches"]
    assert len(posts) == 1


def test_live_findings_of_a_planted_illegal_move_and_a_false_claim(ledger_dir: Path) -> None:
    """Issue 14, Show: tables playing at once against the service, each its own source; a planted
    illegal move (checkers.M01, out of turn) and a false `game.ended` claim
    (checkers.E01) appear on the live stream (SSE, /live) and on /findings with their rule codes
    and articles; the clean tables produce none. A subscriber resuming with Last-Event-ID gets only later ones."""
    import itertools

    import aiohttp

    from audit.live.watch import follow
    from audit.simulator.live import make_tables, play, register

    admin = Signer.load(ledger_dir / "signer.key")
    groups = [make_tables("checkers", 3, 5, tag="clean"), make_tables("checkers", 1, 6, "illegal-move", tag="illegal"),
              make_tables("checkers", 1, 7, "false-result", tag="claim")]
    with Server(ledger_dir) as server:
        async def run() -> list[dict]:
            seen: list[dict] = []

            async def listen() -> None:
                async with aiohttp.ClientSession() as session, session.get(server.url + "/live") as response:
                    assert response.headers["Content-Type"].startswith("text/event-stream")
                    async for raw in response.content:
                        if raw.startswith(b"data: "):
                            seen.append(json.loads(raw[6:]))

            listener = asyncio.ensure_future(listen())
            for tag, tables in groups:
                await register(server.url, admin, tag, tables)
            await asyncio.gather(*(play(server.url, tables, 2, admin.verifier) for _, tables in groups))
            for _ in range(200):
                if {f["stream"].split("/")[0] for f in seen} >= {"illegal", "claim"}:
                    break
                await asyncio.sleep(0.05)
            listener.cancel()
            return seen

        seen = asyncio.run(run())
        codes = {(f["stream"].split("/")[0], f["code"]) for f in seen}
        assert ("illegal", "checkers.M01") in codes and ("claim", "checkers.E01") in codes, codes
        assert not [f for f in seen if f["stream"].startswith("clean/")], "a clean table produced a finding"
        assert all(f["article"] for f in seen if f["code"] in ("checkers.M01", "checkers.E01"))
        listed = json.loads(get(server.url, "/findings?since=0")[1])
        assert listed["findings"] == seen and listed["last"] == seen[-1]["id"]
        assert [f["id"] for f in seen] == list(range(1, len(seen) + 1))
        status, later = get(server.url, f"/findings?since={seen[0]['id']}")
        assert json.loads(later)["findings"] == seen[1:]
    with Server(ledger_dir) as server:  # after a restart the same findings under the same ids
        assert json.loads(get(server.url, "/findings?since=0")[1])["findings"] == seen
        watching = follow(server.url)  # what `matchledger watch` reads, off the service's chunked stream
        assert isinstance(watching, Generator)
        try:
            assert [msgspec.to_builtins(f) for f in itertools.islice(watching, len(seen))] == seen
        finally:
            watching.close()


def test_simulate_drives_a_live_event_in_one_command(ledger_dir: Path) -> None:
    """Issue 14, Build 7: `matchledger simulate GAME --url URL --tables N` plays N tables at once, each
    its own source registered with the log's key; every event lands, each table's game in its stream."""
    with Server(ledger_dir) as server:
        result = cli("simulate", "paohuzi", "--url", server.url, "--tables", "3", "--admin-key", str(ledger_dir / "signer.key"),
                     "--per-batch", "3", "--seed", "4", "--json")
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output)
        health = json.loads(get(server.url, "/healthz")[1])
    assert summary["tables"] == 3 and health["size"] == summary["size"]
    sent = sum(len(list(ledger_api.LogReader(ledger_dir).events(s))) for s in summary["streams"])
    assert sent == summary["events"]
    sources = list(ledger_api.LogReader(ledger_dir).events("log.sources"))
    registered = [e for e in sources if isinstance(e, SourceRegistered)]
    assert registered == sources
    assert [e.name for e in registered] == [f"{summary['tag']}-t{n}" for n in (1, 2, 3)]
    assert ledger_api.verify(ledger_dir).ok


def _started_line() -> bytes:
    from audit.simulator.live import make_tables

    _, tables = make_tables("checkers", 1, 7, tag="fast")
    return batch_body(tables[0].events[:1]).strip()


FAST_PATH_VECTORS = [
    # name, how the canonical game.started line is changed (None: kept), the max bytes
    ("canonical", None, 1 << 16),
    ("not canonical (spaces)", (b'"seq":0', b'"seq": 0'), 1 << 16),
    ("a key twice at the top", (b'"seq":0', b'"seq":0,"seq":0'), 1 << 16),
    ("a key twice in a nested object", (b'"goal_lock":"off"', b'"goal_lock":"off","goal_lock":"off"'), 1 << 16),
    ("an integer past int64", (b'"table":1', b'"table":9223372036854775808'), 1 << 16),
    ("an integer past uint64", (b'"table":1', b'"table":18446744073709551616'), 1 << 16),
    ("a byte order mark", (b'{"kind"', b'\xef\xbb\xbf{"kind"'), 1 << 16),
    ("over the entry limit", None, 512),
    ("malformed JSON", (b'"seq":0', b'"seq":0,'), 1 << 16),
]


@pytest.mark.parametrize(("name", "change", "max_bytes"), FAST_PATH_VECTORS, ids=[v[0] for v in FAST_PATH_VECTORS])
def test_the_short_way_for_canonical_lines_keeps_every_contract_check(name: str, change: tuple[bytes, bytes] | None, max_bytes: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`decode_line`'s short way for a line that is its own canonical encoding (issue 14, Measure:
    the service's batches, `send`'s and the client's lines) accepts and refuses exactly what the
    full check does (a key given twice, an integer outside int64, a BOM, the entry limit: DESIGN's
    event contract), with the same canonical bytes or the same message."""
    from schemas import codec

    line = _started_line()
    if change is not None:
        assert change[0] in line
        line = line.replace(change[0], change[1], 1)

    def outcome() -> tuple[str, object]:
        try:
            return "ok", codec.decode_line(line, 3, max_bytes)[1]
        except codec.ContractError as exc:
            return "refused", str(exc)

    short = outcome()
    monkeypatch.setattr(codec, "_LONG_NUMBER", b"")  # found in every line: the full check always
    assert short == outcome()


def test_kept_nodes_prove_as_the_tiles_do_at_every_size(ledger_dir: Path) -> None:
    """Receipts (issue 14, Build 3) take their tree nodes from one KeptNodes kept across commits,
    the tiles up to where it began and the leaves the commits add after that: at every signed size,
    including tiles that fill and tree levels that appear, each entry's inclusion proof equals the
    one read afresh from the tiles, and verifies against the root."""
    from ledger.merkle import leaf_hash, verify_inclusion
    from schemas import decode, encode

    led = ledger_api.Ledger.open(ledger_dir)
    kept = [ledger_receipts.KeptNodes(ledger_dir, 0)]
    try:
        seq = 0
        for chunk in (1, 2, 5, 60, 190, 1, 255, 3, 300):  # crosses 256, 512 and 768 entries
            events = [decode(event_line("kept", seq + i)) for i in range(chunk)]
            led.append([ledger_api.Pending(n, event, encode(event)) for n, event in enumerate(events, 1)])
            seq += chunk
            checkpoint = led.checkpoint()
            data = [d for _, d in ledger_api.LogReader(ledger_dir).entries(0, checkpoint.size)]
            if chunk == 5:  # from here on, one that began with tiles under it
                kept.append(ledger_receipts.KeptNodes(ledger_dir, checkpoint.size - chunk))
            for nodes in kept:
                nodes.add(data[nodes.end:checkpoint.size])
                assert nodes.subtree(0, checkpoint.size) == checkpoint.root
            for index in sorted({0, 1, checkpoint.size // 2, checkpoint.size - chunk, checkpoint.size - 1} & set(range(checkpoint.size))):
                fresh = ledger_receipts.prove_entry(ledger_tiles.TileReader(ledger_dir), checkpoint, index, data[index])
                for nodes in kept:
                    assert ledger_receipts.prove_entry(ledger_receipts.Subtrees(nodes), checkpoint, index, data[index]) == fresh
                verify_inclusion(leaf_hash(data[index]), index, checkpoint.size, [base64.b64decode(p) for p in fresh.proof],
                                 checkpoint.root)
            tiles = ledger_tiles.TileReader(ledger_dir)
            commit = [0, *range(checkpoint.size - chunk, checkpoint.size)]  # the writer prepares a commit's proofs in one walk
            for nodes in kept:
                prepared = ledger_receipts.Subtrees(nodes)
                prepared.prepare(commit, checkpoint.size)
                for index in commit:
                    assert prepared.path(index, checkpoint.size) == ledger_receipts.prove_entry(tiles, checkpoint, index, data[index]).proof
    finally:
        led.close()


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_signatures_checked_together_each_get_their_own_verdict(threads: int) -> None:
    """The service checks the signatures asked for in one loop turn together, in one call that lets
    go of the GIL, split over the accelerator's threads (issue 14, Build 2 and Measure): batches of three sources in one turn, a forged
    one and one signed by another source's key among them, each get exactly their own verdict, in
    any order of keys."""
    from audit.service.process import SignatureChecker

    signers = [Signer.generate(f"venue-{n}") for n in range(3)]
    bodies = [event_line(f"v{n}/g", seq) + b"\n" for n in range(3) for seq in range(3)]
    asked, expected = [], []
    for k, body in enumerate(bodies):
        owner = signers[k % 3]
        message = ledger_sources.signed_message(owner.name, body, "test.local/log")
        _, _, signature = ledger_sources.parse_signature(ledger_sources.sign_batch(owner, body, "test.local/log"))
        if k == 4:  # forged: a bit of the signature flipped
            signature = bytes([signature[0] ^ 1]) + signature[1:]
        if k == 7:  # signed by another source's key
            _, _, signature = ledger_sources.parse_signature(ledger_sources.sign_batch(signers[(k + 1) % 3], body, "test.local/log"))
        asked.append((owner.verifier, message, signature))
        expected.append(k not in (4, 7))

    async def run() -> list[bool]:
        checker = SignatureChecker(threads)
        return list(await asyncio.gather(*(checker.check(*a) for a in asked)))  # all in one turn

    assert asyncio.run(run()) == expected


def test_log_lines_of_one_turn_are_written_together_and_never_held(tmp_path: Path) -> None:
    """Issue 14, Build 8 (one JSON line per request): on the event loop the lines logged in one turn
    reach the stream together once the turn ends, each a JSON object with its timestamp; off the
    loop a line is written at once."""
    import io

    from audit.service.process import json_log

    out = io.StringIO()
    log = json_log(out)
    log({"at": "outside"})
    assert json.loads(out.getvalue())["at"] == "outside"

    async def turn() -> tuple[str, str]:
        log({"at": "request", "n": 1})
        log({"at": "request", "n": 2})
        during = out.getvalue()
        await asyncio.sleep(0)
        return during, out.getvalue()

    during, after = asyncio.run(turn())
    assert during.count("\n") == 1, "held until the turn ends"
    lines = [json.loads(line) for line in after.splitlines()]
    assert [line.get("n") for line in lines] == [None, 1, 2]
    assert all(line["ts"].endswith("Z") and len(line["ts"]) == 24 for line in lines)
