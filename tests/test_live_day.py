"""A tournament day on the live service (issue 33): registering a source costs the same at any
number of sources and pauses no batch, start-up reads no history, `prove --ledger` beside a
running service answers from what is committed."""

from __future__ import annotations

import hashlib
import json
import random
import types
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import ledger as ledger_api
from audit.service.serve import parse_body
from ledger import group_commit as ledger_group_commit
from ledger import sources as ledger_sources
from ledger.ed25519 import SMALL_ORDER_Y, P, _add, _decode, has_small_order
from ledger.index import book_head, read_head
from ledger.sources import load_source_book
from schemas.log import BATCHES_STREAM
from tests.ledger_support import cli, event_line
from tests.serve_support import Server, make_source, post, signed

SEED = 20261203


# -- point 1: the small-order check is a set lookup, exact -----------------------------------------


def _decompressed_small_order(public: bytes) -> bool:
    """The reference: decodes as a lenient decoder does (y read mod p, the sign of x = 0 ignored,
    as ref10 in OpenSSL), then doubles three times (RFC 8032 §5.1.3, §5.1.4)."""
    if len(public) != 32:
        return False
    value = int.from_bytes(public, "little")
    y = (value & ((1 << 255) - 1)) % P
    point = _decode((y | (value >> 255) << 255).to_bytes(32, "little")) or _decode(y.to_bytes(32, "little"))
    if point is None:
        return False
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


def _strict_small_order(public: bytes) -> bool | None:
    """The check as it was (strict RFC 8032 decoding, then three doublings); None when the key does not decode."""
    point = _decode(public)
    if point is None:
        return None
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


def _crafted_keys(rng: random.Random) -> list[bytes]:
    """Every small-order y with either sign bit, every non-canonical y (p … 2²⁵⁵ − 1) with either
    sign bit, their neighbours, the base point, real keys and random bytes."""
    ys = [int.from_bytes(e, "little") for e in SMALL_ORDER_Y] + [P + k for k in range(19)]
    ys += [y + d for y in list(ys) for d in (-1, 1) if 0 <= y + d < 2**255]
    ys.append(4 * pow(5, P - 2, P) % P)  # the base point's y
    keys = [(y | sign << 255).to_bytes(32, "little") for y in ys for sign in (0, 1)]
    keys += [Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) for _ in range(50)]
    return keys + [rng.randbytes(32) for _ in range(2000)]


def test_the_small_order_set_agrees_with_point_decompression() -> None:
    """Issue 33 point 1 (threat: a small-order key lets anyone forge its signatures): the set
    lookup gives the decompression's answer for random and crafted keys, refuses every encoding of
    the eight torsion points a lenient decoder accepts (non-canonical y, the sign bit on x = 0),
    and differs from the strict check only on those."""
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    refused_more = set()
    for key in _crafted_keys(rng):
        assert has_small_order(key) == _decompressed_small_order(key), key.hex()
        strict = _strict_small_order(key)
        if strict is not None:
            assert has_small_order(key) == strict, key.hex()
        elif has_small_order(key):
            refused_more.add(key)
    assert len(refused_more) == 2 + 2 * 2  # y = 1 and y = −1 with the sign bit; y = p and p + 1 with either
    assert not has_small_order(bytes(31)) and not has_small_order(bytes(33))


def test_the_set_is_the_eight_torsion_points() -> None:
    """Issue 33 point 1: the seven y encodings are those of the points of order 1, 2, 4 and 8 (L·Q
    for random Q lies in the torsion), canonical and not, and nothing else."""
    order = 2**252 + 27742317777372353535851937790883648493
    rng = random.Random(SEED)
    torsion: set[int] = set()
    while len(torsion) < 5:  # five y values: 1, −1, 0 and two of order 8
        q = _decode(rng.randbytes(32))
        if q is None:
            continue
        result, point, n = (0, 1), q, order
        while n:
            if n & 1:
                result = _add(result, point)
            point, n = _add(point, point), n >> 1
        torsion.add(result[1])
    canonical = {y.to_bytes(32, "little") for y in torsion}
    non_canonical = {(y + P).to_bytes(32, "little") for y in torsion if y + P < 2**255}
    assert SMALL_ORDER_Y == canonical | non_canonical


# -- point 1: the front updates one source, not the whole book ------------------------------------


def test_a_registration_builds_one_verifier_in_the_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 1 (a registration stalled every table): the writer sends the front only the
    source that changed, and the front builds that one verifier and leaves the others as they
    were, at 300 sources as at 1; a revocation reaches the front the same way."""
    from audit.service import front
    from audit.service.process import source_message, sources_message

    signers = [ledger_api.Signer.generate(f"s{i}") for i in range(301)]
    book = ledger_sources.SourceBook(origin="day.test/log")
    for signer in signers[:300]:
        book.sources[signer.name] = ledger_sources.Source(signer.name, signer.verifier, (), ())
    fake = types.SimpleNamespace(book=ledger_sources.SourceBook())
    front.Front._message(fake, sources_message(book))  # type: ignore[arg-type]
    before = dict(fake.book.sources)
    built: list[str] = []
    original = ledger_api.Verifier.__init__

    def counting(self: ledger_api.Verifier, name: str, public: bytes) -> None:
        built.append(name)
        original(self, name, public)

    monkeypatch.setattr(ledger_api.Verifier, "__init__", counting)
    added = ledger_sources.Source("s300", signers[300].verifier, (), ())
    message = source_message(added)
    assert len(message[1]) == 4  # one source's row, whatever the book's size
    front.Front._message(fake, message)  # type: ignore[arg-type]
    revoked = ledger_sources.Source("s7", signers[7].verifier, (), (), revoked=True)
    front.Front._message(fake, source_message(revoked))  # type: ignore[arg-type]
    assert built == ["s300", "s7"]
    assert all(fake.book.sources[name] is before[name] for name in before if name != "s7")
    assert fake.book.sources["s7"].revoked and fake.book.sources["s300"].verifier.public == signers[300].verifier.public
    with pytest.raises(ledger_sources.SourceRefused, match="revoked"):
        fake.book.identify(ledger_sources.sign_batch(signers[7], b"x", "day.test/log"), b"x")


def test_a_registration_waits_for_no_index_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 1 (a registration must not pause batches): the service's writer commits a
    registration as it commits a batch, with a note and no full checkpoint, so it is answered
    while the stream index is still being made durable on the index thread (before, it waited for
    that job, and every table's batches waited behind it)."""
    import asyncio
    import threading

    from ledger.group_commit import Batch, Change, Writer
    from ledger.store import IndexJob

    root = tmp_path / "L"
    ledger_api.init(root, "day.test/log")
    make_source(tmp_path, root, "venue", streams=["t/"])
    release = threading.Event()
    run = IndexJob.run
    monkeypatch.setattr(IndexJob, "run", lambda job: (release.wait(30), run(job))[1])

    async def play() -> None:
        writer = Writer(root)
        try:
            writer._index_at = 0.0  # the next commit starts an index job
            body = event_line("t/g", 0) + b"\n"
            batch = Batch(writer.book.sources["venue"], "venue x", ledger_group_commit.digest_of(body), parse_body(body, 1 << 20), True)
            await writer.submit(batch)
            assert writer._indexing is not None and not writer._indexing[1].done()
            late = ledger_api.Signer.generate("late")
            change = Change(lambda book, led: ledger_sources.registration(book, led, "late", late.verifier))
            event = await asyncio.wait_for(writer.submit(change), 20)
            assert event.name == "late" and not writer._indexing[1].done()
            assert writer.checkpoint.size == writer.ledger.size  # signed at once
        finally:
            release.set()
            await writer.stop()

    asyncio.run(play())
    assert "late" in _sources_of(root)


def _sources_of(root: Path) -> set[str]:
    with ledger_api.Ledger.open(root) as led:
        return set(load_source_book(led, batches=False).sources)


# -- point 2: start-up reads no batch record when the book's index is current ----------------------


@pytest.fixture()
def ledger_dir(tmp_path: Path) -> Path:
    root = tmp_path / "L"
    ledger_api.init(root, "day.test/log")
    return root


def _count_record_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the `log.batches` entries the ledger reads from now on (a spy on its one stream read)."""
    reads: list[int] = []
    original = ledger_api.Ledger.read_stream_entry

    def spy(self: ledger_api.Ledger, stream: str, seq: int) -> bytes:
        if stream == BATCHES_STREAM:
            reads.append(seq)
        return original(self, stream, seq)

    monkeypatch.setattr(ledger_api.Ledger, "read_stream_entry", spy)
    return reads


def _answers(root: Path, bodies: list[bytes], reads: list[int]) -> tuple[dict[str, str], dict[int, list[int]], list[int | None], int]:
    """Opens the writer's book; returns its owners, its records of batches that brought no new
    event, the record each body (source `venue`) is known by, and how many records the open read."""
    reads.clear()
    with ledger_api.Ledger.open(root) as led:
        book = load_source_book(led)
        opened = len(reads)
        known = [book.batch_record("venue", ledger_group_commit.digest_of(b), parse_body(b, 1 << 20)) for b in bodies]
        return dict(book.owners), {k: list(v) for k, v in book.resent.items()}, known, opened


def _play(root: Path, tmp_path: Path) -> tuple[Any, list[bytes]]:
    """Sends 40 one-move batches to two games and one batch that brings no new event (the same two
    events as a JSON array), through the service; stops it gracefully."""
    venue = make_source(tmp_path, root, "venue", streams=["t/"])
    bodies = [event_line(f"t/g{i % 2}", i // 2) + b"\n" for i in range(40)]
    bodies.append(b"[" + event_line("t/g0", 0) + b"," + event_line("t/g1", 0) + b"]")
    with Server(root, "--no-live") as server:
        for body in bodies:
            assert post(server.url, body, signed(venue, body))[0] == 200
    return venue, bodies


def test_start_up_reads_no_batch_record_and_keeps_nothing_per_batch(ledger_dir: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 2 (start-up and memory grew with every batch ever received): after a clean
    stop the book's index is current, so opening reads no `source.batch` entry; the book holds an
    owner per stream and a record per batch that brought no new event, nothing per batch; and it
    knows every batch again (a re-send after the restart gets the first receipt)."""
    venue, bodies = _play(ledger_dir, tmp_path)
    owners, resent, known, opened = _answers(ledger_dir, bodies, _count_record_reads(monkeypatch))
    assert opened == 0
    assert owners == {"t/g0": "venue", "t/g1": "venue"} and len(resent) == 1
    assert all(isinstance(k, int) for k in known) and len(set(known)) == 41
    assert (ledger_dir / "index" / "book").read_bytes().count(b"\n") == 3
    with Server(ledger_dir, "--no-live") as server:
        first = json.loads(post(server.url, bodies[-1], signed(venue, bodies[-1]))[2])
        again = json.loads(post(server.url, bodies[5], signed(venue, bodies[5]))[2])
    assert (first["batch"]["index"], again["batch"]["index"]) == (known[-1], known[5])


@pytest.mark.parametrize("damage", ["deleted", "cut", "edited", "head of another key"])
def test_a_damaged_book_index_is_rebuilt_from_the_records(ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          damage: str) -> None:
    """Issue 33 point 2 (the log is the source of truth; the index is never believed blindly): an
    index deleted, cut short, edited with its head re-hashed, or headed by someone without the
    writer's key is rebuilt from every `source.batch` record and gives the same answers; the
    next open reads none again."""
    _, bodies = _play(ledger_dir, tmp_path)
    reads = _count_record_reads(monkeypatch)
    *expected, opened = _answers(ledger_dir, bodies, reads)
    assert opened == 0
    book, head = ledger_dir / "index" / "book", ledger_dir / "index" / "book.head"
    if damage == "deleted":
        book.unlink()
    elif damage == "cut":
        book.write_bytes(book.read_bytes()[:-5])
    else:  # an owner changed, the head's hash made to match: only the MAC tells
        data = book.read_bytes().replace(b'"venue"', b'"thief"', 1)
        book.write_bytes(data)
        key = b"k" * 32 if damage == "head of another key" else None
        stored = msgspec.json.decode(head.read_bytes())
        fields = (stored["size"], len(data), hashlib.sha256(data).hexdigest(), stored["root"])
        head.write_bytes(msgspec.json.encode(book_head(key, *fields) if key else {**stored, "length": fields[1], "sha256": fields[2]}))
    *answers, opened = _answers(ledger_dir, bodies, reads)
    assert answers == expected and opened == 41  # every record read: the index was rebuilt
    with Server(ledger_dir, "--no-live"):
        pass  # a clean stop writes the rebuilt index
    assert list(_answers(ledger_dir, bodies, reads)) == [*expected, 0]


def test_after_a_kill_start_up_reads_only_the_records_since_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 2 (start-up in seconds at any size, also after a SIGKILL): the writer writes
    the book's index with each index job; a writer that stops without its clean close leaves it
    behind by the last few commits, and the next open reads those records only, and knows what
    a full rebuild knows."""
    import asyncio

    from ledger.group_commit import Batch, Writer

    root = tmp_path / "L"
    ledger_api.init(root, "day.test/log")
    make_source(tmp_path, root, "venue", streams=["t/"])
    bodies = [event_line("t/g", seq) + b"\n" for seq in range(6)]

    async def play() -> None:
        writer = Writer(root)
        for seq, body in enumerate(bodies):
            writer._index_at = 0.0 if seq == 3 else float("inf")  # one index job, before the fourth batch's append
            batch = Batch(writer.book.sources["venue"], "venue x", ledger_group_commit.digest_of(body), parse_body(body, 1 << 20), True)
            await writer.submit(batch)
        writer._finish_index(wait=True)  # then no clean close: as after SIGKILL
        writer.ledger.close()
        writer._thread.shutdown()
        writer._indexer.shutdown()

    asyncio.run(play())
    reads = _count_record_reads(monkeypatch)
    *answers, opened = _answers(root, bodies, reads)
    assert opened == 3  # the records of the last three batches, after the index job
    (root / "index" / "book").unlink()
    assert list(_answers(root, bodies, reads)) == [*answers, 6]


def test_offline_source_add_reads_no_batch_record(ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 2 (offline `source add` paid the whole scan): a registration reads the
    registry only, and a name already taken is still refused."""
    _play(ledger_dir, tmp_path)
    reads = _count_record_reads(monkeypatch)
    make_source(tmp_path, ledger_dir, "late")
    with pytest.raises(ledger_api.LedgerError, match="already registered"):
        make_source(tmp_path, ledger_dir, "venue")
    assert reads == []


# -- point 6: `prove --ledger` beside a running service ----------------------------------------------


def test_prove_beside_a_running_service_answers_from_what_is_committed(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 33 point 6 (nothing unsigned counts, and nothing signed is hidden): while the service
    runs and its stream index on disk lags the log, `prove --ledger` reads the frames past the
    index head (without the writer's lock) and proves every signed entry of the stream, with the
    batch records that name who sent them; the bundle checks offline as complete."""
    venue = make_source(tmp_path, ledger_dir, "venue", streams=["t/"])
    with Server(ledger_dir, "--no-live") as server:
        for seq in range(3):
            body = event_line("t/g", seq) + b"\n"
            assert post(server.url, body, signed(venue, body))[0] == 200
        head = read_head(ledger_dir)
        assert head is not None and head.size <= min(e for e in _signed_entries(ledger_dir, "t/g"))  # the index lags
        out = tmp_path / "g.json"
        proved = cli("prove", "--stream", "t/g", "--out", str(out), "--ledger", str(ledger_dir))
        assert proved.exit_code == 0, proved.output
        assert server.proc.poll() is None
    bundle = msgspec.json.decode(out.read_bytes(), type=ledger_api.EvidenceBundle)
    assert [json.loads(e.entry)["seq"] for e in bundle.entries] == [0, 1, 2] and len(bundle.senders) == 3
    assert ledger_api.check_bundle(bundle, ledger_api.load_verifier(ledger_dir)).complete
    checked = cli("check-proof", str(out), "--key", str(ledger_dir / "signer.pub"))
    assert checked.exit_code == 0, checked.output


def _signed_entries(root: Path, stream: str) -> list[int]:
    """The entries of a stream, found by reading the whole signed log (the reference)."""
    return [i for i, e in enumerate(ledger_api.LogReader(root).events()) if e.stream == stream]


# -- point 8: a front that dies is started again ---------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the front through Linux's /proc")
def test_a_killed_front_is_started_again_and_the_service_answers(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 33 point 8 (a front crash took the whole service down): SIGKILL of the front process,
    twice; each time the writer's process logs it, starts another front on the same listening
    socket, and the service goes on answering batches and reads at the same URL."""
    import os
    import signal
    import time

    from bench.serve import children

    venue = make_source(tmp_path, ledger_dir, "venue", streams=["t/"])
    with Server(ledger_dir, "--no-live") as server:
        for seq in range(3):
            front = children(server.proc.pid)
            assert len(front) == 1, front
            os.kill(front[0], signal.SIGKILL)
            server.wait_for(lambda r, n=seq: r.get("at") == "front-started" and len(
                [x for x in server.lines if x.get("at") == "front-started"]) == n + 1, timeout=60)
            body = event_line("t/g", seq) + b"\n"
            deadline = time.monotonic() + 30
            while (status := _post_or_none(server.url, body, signed(venue, body))) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert status == 200
            assert children(server.proc.pid) != front and server.proc.poll() is None
        exited = [r for r in server.lines if r.get("at") == "front-exited"]
        assert len(exited) == 3 and all(r["code"] == -signal.SIGKILL and "error" not in r for r in exited)
    assert server.proc.returncode == 0
    assert [e.seq for e in list(ledger_api.LogReader(ledger_dir).events("t/g"))] == [0, 1, 2]


def _post_or_none(url: str, body: bytes, headers: dict[str, str]) -> int | None:
    try:
        return post(url, body, headers)[0]
    except OSError:  # the connection the killed front held, or none yet
        return None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the front through Linux's /proc")
def test_a_front_that_keeps_dying_stops_the_service(ledger_dir: Path) -> None:
    """Issue 33 point 8 (a crash loop is no service): fronts exiting more than FRONT_RESTARTS
    times within a minute stop the service with exit 1 and a log line that says why, and the port
    is left free for a supervisor's restart."""
    import os
    import signal
    import socket
    import time

    from audit.service.serve import FRONT_RESTARTS
    from bench.serve import children

    server = Server(ledger_dir, "--no-live")
    try:
        deadline = time.monotonic() + 120
        while server.proc.poll() is None and time.monotonic() < deadline:
            started = len([r for r in server.lines if r.get("at") in ("front-started", "started")])
            for pid in children(server.proc.pid):
                os.kill(pid, signal.SIGKILL)
            while (server.proc.poll() is None and time.monotonic() < deadline and
                   len([r for r in server.lines if r.get("at") in ("front-started", "started")]) == started):
                time.sleep(0.05)
        assert server.proc.wait(30) == 1
    finally:
        if server.proc.poll() is None:
            server.kill()
    exited = [r for r in server.lines if r.get("at") == "front-exited"]
    assert len([r for r in exited if "code" in r]) == FRONT_RESTARTS + 1
    assert "within a minute; the service stops" in exited[-1]["error"]
    host, port = server.url.removeprefix("http://").split(":")
    deadline = time.monotonic() + 10  # the last front exits as the stop message (or its parent's death) reaches it
    while True:
        try:
            socket.create_server((host, int(port))).close()  # free for the supervisor's restart
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
