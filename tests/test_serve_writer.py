"""The live service's writer process off the acknowledgements' path (issue 14, Measure: the ack
p99): what start-up made is out of the cyclic garbage collector's reach (`settle_heap`), and the
garbage start-up left is collected first, not frozen."""

from __future__ import annotations

import gc
import weakref

from audit.service.process import settle_heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_settle_heap_collects_start_up_garbage_then_freezes_the_rest() -> None:
    """A cycle dropped before settling is collected; what is alive is frozen (the collector's
    permanent generation), so a later full collection does not scan it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    dropped = weakref.ref(a)
    kept = _Node()
    kept.other = kept
    del a, b
    gc.disable()  # no collection but the one settle_heap makes
    try:
        settle_heap()
        assert dropped() is None, "a cycle of start-up garbage was frozen instead of collected"
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for g in range(3) for o in gc.get_objects(g)), "a live object is still scanned by full collections"
    finally:
        gc.unfreeze()
        gc.enable()


def test_warm_up_builds_the_decoders_and_imports_the_engines_before_the_first_batch() -> None:
    """What a first batch would pay for with every table waiting is done at start-up: the event
    decoders are built and every game's engine imported (the live audit folds with them)."""
    import subprocess
    import sys

    probe = ("import sys; from schemas import codec; from audit.service.serve import warm_up; warm_up(live=True); "
             "print(codec._decoder.cache_info().currsize, codec._batch_decoder.cache_info().currsize, "
             "all(f'replay.{g}' in sys.modules for g in ('checkers', 'junqi', 'paohuzi')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "1", "True"], out


# -- the periodic index work beside the commits ------------------------------------------------------

def _tables(n: int, moves: int) -> tuple[str, list]:
    from audit.simulator.live import make_tables

    tag, tables = make_tables("checkers", n, 5)
    for t in tables:
        t.events = t.events[:moves]
    return tag, tables


def _register(root, tag: str, tables: list) -> None:
    from ledger import sources as ledger_sources

    for n, t in enumerate(tables, start=1):
        ledger_sources.change_sources(root, lambda book, led, t=t, n=n: ledger_sources.registration(  # type: ignore[misc]
            book, led, t.signer.name, t.signer.verifier, (), [f"{tag}/t{n}"]))


def _head_size(root) -> int:
    from ledger.index import read_head

    head = read_head(root)
    assert head is not None
    return head.size


def _served_size(root) -> int:
    return int((root / "checkpoint").read_text().split("\n")[1])


def test_index_job_runs_beside_appends_and_leaves_a_durable_head(tmp_path) -> None:
    """The stream index, partial tiles, served checkpoint and index head of a size are made durable
    by a job run while later batches are appended and checkpointed (without `index`): afterwards
    the head, the served note and every stream's index file reach that size, a copy of the ledger
    taken there (a crash) opens and verifies, and no full checkpoint is taken while the job is out."""
    import shutil

    import pytest

    from ledger import Ledger, LedgerError, Pending, init, verify
    from ledger.index import iter_records, load_stream, read_head
    from schemas import encode

    root = tmp_path / "ledger"
    init(root)
    _, tables = _tables(8, 12)
    with Ledger.open(root) as led:
        def commit(moves: range) -> None:
            led.append([Pending(0, e, encode(e)) for t in tables for e in t.events[moves.start:moves.stop]], checkpoint=False)
            led.checkpoint(index=False)

        commit(range(0, 4))
        head_before = read_head(root)
        job = led.start_index()
        size = job.head.size
        assert size == led.size and head_before is not None and head_before.size < size
        with pytest.raises(LedgerError):
            led.checkpoint(index=True)  # no full checkpoint while a job is out
        with pytest.raises(LedgerError):
            led.start_index()  # one job at a time
        commit(range(4, 8))  # appends go on before the job runs …
        job.run()
        commit(range(8, 12))  # … and after, before it is taken back
        assert job.error is None
        assert _head_size(root) == size and _served_size(root) == size
        for t in tables:
            stream = t.events[0].stream
            index = load_stream(root, stream)
            assert [e for e, _ in iter_records(index) if e < size] == [e for e, _ in iter_records(led._stream(stream)) if e < size]
        crashed = tmp_path / "crashed"
        shutil.copytree(root, crashed)
        led.finish_index(job)
        led.checkpoint(index=True)
        assert _head_size(root) == led.size
    assert verify(root).ok
    (crashed / "lock").unlink(missing_ok=True)
    with Ledger.open(crashed) as reopened:
        assert reopened.size == 8 * 12
    assert verify(crashed).ok


def test_the_service_writer_indexes_beside_its_commits(tmp_path, monkeypatch) -> None:
    """With the index due at every commit, the writer's index jobs move the head while batches are
    committed (each answered with a receipt that checks), and the log verifies after the stop."""
    import asyncio

    import ledger.group_commit as writer_module
    from audit.service.serve import parse_body
    from audit.simulator.client import batch_body
    from ledger import check_receipt, init, load_verifier, verify
    from ledger.group_commit import Batch, Writer, digest_of
    from ledger.sources import sign_batch

    monkeypatch.setattr(writer_module, "INDEX_EVERY_S", 0.0)
    root = tmp_path / "ledger"
    init(root)
    tag, tables = _tables(4, 10)
    _register(root, tag, tables)
    heads: set[int] = set()

    async def run() -> int:
        writer = Writer(root)
        size = writer.checkpoint.size
        try:
            for move in range(10):
                waiting = []
                for t in tables:
                    body = batch_body([t.events[move]])
                    header = sign_batch(t.signer, body, writer.book.origin)
                    source = writer.book.sources[t.signer.name]
                    waiting.append(writer.submit(Batch(source, header, digest_of(body), parse_body(body, 1 << 20), True)))
                for receipt in await asyncio.gather(*waiting):
                    check_receipt(receipt, load_verifier(root))
                if writer._indexing is not None:
                    await asyncio.wrap_future(writer._indexing[1])
                heads.add(_head_size(root))
        finally:
            await writer.stop()
        return size

    start = asyncio.run(run())
    final = _head_size(root)
    assert final == start + 10 * 2 * len(tables)  # each event and its batch record
    assert any(start < h < final for h in heads), f"no index job moved the head between commits: {sorted(heads)}"
    assert verify(root).ok


def test_receipt_proofs_from_the_appends_leaf_hashes_are_the_tiles_proofs(tmp_path) -> None:
    """RFC 6962 inclusion proofs (receipts): the kept nodes fed the leaf hashes each append returns
    give, for every entry, the very proof the stored tiles give (checked at several tree sizes,
    across tile boundaries), and the leaf hashes are those of the stored bytes."""
    import base64
    import random

    from ledger import Ledger, LogReader, Pending, init
    from ledger.merkle import inclusion_proof, leaf_hash
    from ledger.receipts import KeptNodes, Subtrees
    from ledger.tiles import TileReader
    from schemas import encode

    root = tmp_path / "ledger"
    init(root)
    _, tables = _tables(6, 120)
    events = [e for t in tables for e in t.events]
    rng = random.Random(14)
    print("seed 14")
    with Ledger.open(root) as led:
        kept = KeptNodes(root, led.size)
        at = 0
        while at < len(events):
            n = rng.randint(1, 90)
            result = led.append([Pending(0, e, encode(e)) for e in events[at:at + n]], checkpoint=False)
            checkpoint = led.checkpoint(index=False)
            at += n
            assert len(result.leaves) == 32 * result.appended
            kept.add_leaves(result.leaves)
            size = checkpoint.size
            assert kept.subtree(0, size) == checkpoint.root
            picked = sorted(rng.sample(range(size), min(size, 40)))
            mine = Subtrees(kept)
            mine.prepare(picked, size)
            tiles = TileReader(root)
            for i in picked:
                assert mine.path(i, size) == [base64.b64encode(h).decode() for h in inclusion_proof(i, size, tiles.subtree)]
        stored = [data for _, data in LogReader(root).entries(0, led.size)]
        assert b"".join(map(leaf_hash, stored[-result.appended:])) == result.leaves


def test_the_live_state_names_the_root_the_commit_signed(tmp_path) -> None:
    """The live audit's saved state binds its files to the log's Merkle root at its size: the
    root of the checkpoint the commit handed over is the one written (a restart accepts it); a
    root noted for another size is not used; a wrong one would be refused at the restart."""
    from audit.live.store import LiveStore, open_auditor
    from ledger import Ledger, Pending, init
    from ledger.derived import tree_root
    from schemas import encode

    root = tmp_path / "ledger"
    init(root)
    _, tables = _tables(3, 20)
    with Ledger.open(root) as led:
        led.append([Pending(0, e, encode(e)) for t in tables for e in t.events], checkpoint=False)
        checkpoint = led.checkpoint(index=False)
    auditor, _ = open_auditor(root, checkpoint.size)
    store = auditor.book
    assert isinstance(store, LiveStore)
    store.known_root(checkpoint.size - 1, b"\0" * 32)  # another size: not used
    auditor.catch_up(checkpoint.size)
    store.save(auditor)
    state = LiveStore(root).resume(checkpoint.size)
    assert not isinstance(state, str), state
    store.known_root(checkpoint.size, checkpoint.root)
    store.save(auditor)
    assert checkpoint.root == tree_root(root, checkpoint.size)
    assert not isinstance(LiveStore(root).resume(checkpoint.size), str)
    store.known_root(checkpoint.size, b"\1" * 32)  # what a wrong root would do: the restart rebuilds
    store.save(auditor)
    refused = LiveStore(root).resume(checkpoint.size)
    assert isinstance(refused, str) and "root" in refused
