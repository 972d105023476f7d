"""Evidence bundles prove completeness (security issue, item 5): a bundle with entries removed, a
stream renamed or its head stripped no longer checks, and `check-proof` says what it proved.

Each checkpoint signs a Merkle root over the heads (stream, count, last entry) of the streams that
gained entries since the previous one; the tests re-derive those heads from the exported entries
by their own reading, not through `ledger/commitments.py`'s prover.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import msgspec
import pytest

from ledger import BundleError, check_bundle, load_verifier, prove, store
from ledger import recorder as record_mod
from ledger.bundle import EvidenceBundle
from tests.ledger_support import cli, event_line, game_lines

LEGACY = Path(__file__).parent / "data" / "legacy-ledger"


@pytest.fixture()
def ledger(tmp_path: Path) -> Path:
    """Three record calls: g0–g3 interleaved, then more of g1 and g2, then a new stream."""
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/complete")
    record_mod.record(root, game_lines(4, 5))
    record_mod.record(root, [event_line(f"g{s}", seq) for seq in range(5, 9) for s in (1, 2)])
    record_mod.record(root, [event_line("late", 0), event_line("late", 1)])
    return root


def _mutate(bundle: EvidenceBundle, **changes: object) -> EvidenceBundle:
    data = msgspec.to_builtins(bundle)
    data.update(msgspec.to_builtins(changes))
    return msgspec.convert(data, EvidenceBundle)


def _spec_heads_root(root: Path, before: int, size: int) -> tuple[int, bytes]:
    """The commitment re-derived by this test: RFC 6962 over sorted [stream, count, last] arrays."""
    lines = (root.parent / "all.jsonl").read_bytes().splitlines()
    heads: dict[str, list[object]] = {}
    for index in range(before, size):
        event = json.loads(lines[index])
        heads[event["stream"]] = [event["stream"], event["seq"] + 1, index]
    leaves = [hashlib.sha256(b"\x00" + json.dumps(heads[s], separators=(",", ":"), ensure_ascii=False).encode()).digest()
              for s in sorted(heads, key=str.encode)]

    def mth(xs: list[bytes]) -> bytes:
        if len(xs) == 1:
            return xs[0]
        k = 1 << ((len(xs) - 1).bit_length() - 1)
        return hashlib.sha256(b"\x01" + mth(xs[:k]) + mth(xs[k:])).digest()

    return len(leaves), mth(leaves)


def test_every_checkpoint_commits_to_the_heads_of_the_streams_it_first_covers(ledger: Path) -> None:
    assert cli("export", "--ledger", str(ledger), "--jsonl", str(ledger.parent / "all.jsonl")).exit_code == 0
    notes = sorted((ledger / "checkpoints").glob("*.note"))
    sizes = [int(p.stem) for p in notes]
    assert sizes == [0, 20, 28, 30]
    for before, note in zip(sizes, notes[1:]):
        line = next(x for x in note.read_text().splitlines() if x.startswith("matchledger-streams "))
        count, root = line.split(" ")[1:]
        assert (int(count), base64.b64decode(root)) == _spec_heads_root(ledger, before, int(note.stem))


def test_a_whole_bundle_proves_every_entry_of_its_stream(ledger: Path) -> None:
    verifier = load_verifier(ledger)
    for stream, count, size in (("g0", 5, 20), ("g1", 9, 28), ("g3", 5, 20), ("late", 2, 30)):
        bundle = prove(ledger, stream)
        checked = check_bundle(bundle, verifier)
        assert checked.complete and checked.checkpoint.size == size and len(bundle.entries) == count
        assert f"had exactly {count} entries" in checked.statement(bundle)


@pytest.mark.parametrize("cut", ["last", "first", "all_but_one", "all"])
def test_a_bundle_with_entries_removed_is_refused(ledger: Path, cut: str) -> None:
    bundle = prove(ledger, "g1")
    entries = {"last": bundle.entries[:-1], "first": bundle.entries[1:], "all_but_one": bundle.entries[:1], "all": []}[cut]
    with pytest.raises(BundleError):
        check_bundle(_mutate(bundle, entries=entries), load_verifier(ledger))


def test_a_renamed_stream_or_a_stripped_or_forged_head_is_refused(ledger: Path) -> None:
    bundle, verifier = prove(ledger, "g2"), load_verifier(ledger)
    with pytest.raises(BundleError, match="expected seq 0 of stream 'g9'"):
        check_bundle(_mutate(bundle, stream="g9"), verifier)
    with pytest.raises(BundleError, match="carries no head"):
        check_bundle(_mutate(bundle, head=None), verifier)
    assert bundle.head is not None
    forged = {"count": bundle.head.count - 1, "last": bundle.entries[-2].index, "index": bundle.head.index, "proof": bundle.head.proof}
    with pytest.raises(BundleError, match="does not record stream 'g2' with 8 entries"):
        check_bundle(_mutate(bundle, head=forged, entries=bundle.entries[:-1]), verifier)


def test_check_proof_says_what_it_proved(ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "g1.json"
    assert cli("prove", "--ledger", str(ledger), "--stream", "g1", "--out", str(out)).exit_code == 0
    ok = cli("check-proof", str(out), "--key", str(ledger / "signer.pub"), "--json")
    report = json.loads(ok.stdout)
    assert ok.exit_code == 0 and report["complete"] is True and report["size"] == 28
    data = json.loads(out.read_text())
    data["entries"].pop()
    out.write_text(json.dumps(data))
    bad = cli("check-proof", str(out), "--key", str(ledger / "signer.pub"))
    assert bad.exit_code == 1 and "entries were removed" in bad.stderr


def test_a_migrated_ledger_proves_inclusion_and_then_completeness_for_what_comes_after(tmp_path: Path) -> None:
    root = tmp_path / "legacy"
    shutil.copytree(LEGACY, root)
    (root / "signer.key").chmod(0o600)
    record_mod.record(root, [])  # migrates: tiles, index, checkpoint history
    old = prove(root, "g0")
    checked = check_bundle(old, load_verifier(root))
    assert not checked.complete and "predates stream commitments" in checked.statement(old)
    record_mod.record(root, [event_line("fresh", 0), event_line("fresh", 1)])
    new = prove(root, "fresh")
    assert check_bundle(new, load_verifier(root)).complete


def test_the_history_survives_a_crash_before_the_note(ledger: Path) -> None:
    """A history record written before its note (crash in between) is cut at the next append."""
    history = ledger / "index" / "checkpoints"
    history.write_bytes(history.read_bytes() + (99).to_bytes(8, "little") * 3)
    record_mod.record(ledger, [event_line("after", 0)])
    bundle = prove(ledger, "after")
    assert check_bundle(bundle, load_verifier(ledger)).complete
    assert len(history.read_bytes()) == 24 * 5


def test_verify_and_audit_rederive_every_stream_commitment(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that signed a wrong commitment (here: one head left out) is caught by verify and by
    the audit's index check, which re-derive each checkpoint's heads from the entries."""
    from audit.query.session import open_verified_session
    from ledger import commitments, verify
    from ledger import store as store_mod

    assert verify(ledger).ok
    real = commitments.heads_line
    monkeypatch.setattr(store_mod, "heads_line", lambda heads: real(heads[:-1]))
    record_mod.record(ledger, [event_line("x", 0), event_line("y", 0)])
    report = verify(ledger)
    expected = "checkpoint 32 signs a commitment to 1 stream heads that the 2 streams of entries 30–31 do not give"
    assert not report.ok and expected in (report.error or "")
    audited, _ = open_verified_session(ledger)
    assert not audited.ok and "checkpoint 32 signs a commitment" in (audited.error or "")


def test_verify_names_a_damaged_checkpoint_history(ledger: Path) -> None:
    from ledger import verify

    history = ledger / "index" / "checkpoints"
    data = bytearray(history.read_bytes())
    data[24 + 16] ^= 0x01  # the offset of checkpoint 20's record
    history.write_bytes(bytes(data))
    report = verify(ledger)
    assert not report.ok and "index/checkpoints: checkpoint 20 does not end at byte" in (report.error or "")
    data[24] ^= 0x01  # and its size
    history.write_bytes(bytes(data))
    assert "index/checkpoints: record 1 gives size 21, the notes 20" in (verify(ledger).error or "")


@pytest.mark.parametrize("offset", [0, 3, 2**62])
def test_an_impossible_offset_in_the_history_is_named_not_a_traceback(ledger: Path, offset: int) -> None:
    from ledger import verify

    history = ledger / "index" / "checkpoints"
    data = bytearray(history.read_bytes())
    data[24 + 16:24 + 24] = offset.to_bytes(8, "little")
    history.write_bytes(bytes(data))
    report = verify(ledger)
    assert not report.ok and f"index/checkpoints: checkpoint 20 does not end at byte {offset}" in (report.error or "")
