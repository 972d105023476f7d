"""The stream index is sealed by the writer's key (issue 32's trust mend; DESIGN.md "Nothing unsigned counts").

The writer learns a stream's next sequence number from the size of its index file, which nobody
signs. An insider without `signer.key` who empties, cuts, deletes, rolls back or plants an index
file would otherwise reset a stream's count, and the writer would append and sign a second event
at a number already used. The seal (a MAC over each file's name and size, folded per directory,
kept in the index head) makes the writer refuse instead, naming `repair`, with the log unchanged;
after `repair` the same event is the conflict it is. A head the writer did not write (edited, or
from before seals) is not believed: its index is moved aside as evidence and built from the entries.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from ledger import Ledger, Pending, init
from ledger import store as ledger_store
from ledger.errors import LedgerCorrupt, SequenceError
from ledger.frames import REPAIRED
from ledger.index import HEAD, INDEX, RECORD, read_head, stream_path
from ledger.repair import repair
from ledger.verify import verify
from schemas import encode
from schemas.common import MoveTimeUsed
from tests.ledger_support import cli, committed_entries

GAME = "t1/g1"


def _timing(stream: str, seq: int, ms: int = 500) -> Pending:
    event = MoveTimeUsed(stream=stream, seq=seq, ts=1_000 + seq, seat=0, ms=ms)
    return Pending(0, event, encode(event))


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A ledger whose game `t1/g1` holds seqs 0–3 (two batches, each signed) beside another stream."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 0), _timing(GAME, 1), _timing("t1/g2", 0)])
        led.checkpoint()
        led.append([_timing(GAME, 2), _timing(GAME, 3)])
        led.checkpoint()
    return root


def _emptied(path: Path, _old: bytes) -> None:
    path.write_bytes(b"")


def _header_only(path: Path, _old: bytes) -> None:
    path.write_bytes(path.read_bytes()[:2 + len(GAME)])


def _last_record_cut(path: Path, _old: bytes) -> None:
    path.write_bytes(path.read_bytes()[:-RECORD.size])


def _deleted(path: Path, _old: bytes) -> None:
    path.unlink()


def _rolled_back(path: Path, old: bytes) -> None:
    path.write_bytes(old)  # the file as the writer itself left it after the first batch


@pytest.mark.parametrize("tamper", [_emptied, _header_only, _last_record_cut, _deleted, _rolled_back],
                         ids=["emptied", "header-only", "last-record-cut", "deleted", "rolled-back"])
def test_an_index_file_changed_without_the_key_never_lets_a_used_seq_be_signed_again(
        tmp_path: Path, tamper: Callable[[Path, bytes], None]) -> None:
    """Append rules (seq-conflict): with the index file of `t1/g1` tampered so that it counts fewer
    events, a different event at a used seq is refused, not appended and signed; the log is unchanged.
    `repair` builds the index again from the entries (the tampered file kept as evidence), and then
    the same event is refused as the conflict it is."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 0), _timing(GAME, 1), _timing("t1/g2", 0)])
        led.checkpoint()
    old = stream_path(root, GAME).read_bytes()
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 2), _timing(GAME, 3)])
        led.checkpoint()
    before = committed_entries(root)
    tamper(stream_path(root, GAME), old)
    with pytest.raises(LedgerCorrupt, match="matchledger repair"), Ledger.open(root) as led:
        led.append([_timing(GAME, 2 if tamper is _rolled_back else 0, ms=999)])
    assert committed_entries(root) == before
    report = repair(root)
    assert report.refused is None and report.verified is not None and report.verified.ok
    kept = [p for p in (root / REPAIRED).rglob(stream_path(root, GAME).name) if p.is_file()]
    assert len(kept) == (tamper is not _deleted)  # the tampered file is evidence
    with Ledger.open(root) as led, pytest.raises(SequenceError) as refused:
        led.append([_timing(GAME, 2, ms=999)])
    assert refused.value.reason == "seq-conflict"
    assert committed_entries(root) == before


def test_an_index_file_changed_while_the_writer_runs_is_refused_when_opened_again(ledger: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer keeps OPEN_INDEXES indexes open and lets the others go; one it opens again is
    checked by its file's size: an insider who cut it meanwhile (the live service runs for days)
    is refused, as at the writer's start."""
    monkeypatch.setattr(ledger_store, "OPEN_INDEXES", 2)
    before = committed_entries(ledger)
    with Ledger.open(ledger) as led:
        others = iter(f"t1/x{n}" for n in range(100))

        def let_go() -> None:
            for stream in (next(others), next(others), next(others)):
                assert led.next_seq(stream) == 0
        assert led.next_seq(GAME) == 4
        let_go()
        assert led.next_seq(GAME) == 4  # opened again as it was
        let_go()
        path = stream_path(ledger, GAME)
        path.write_bytes(path.read_bytes()[:-2 * RECORD.size])
        with pytest.raises(LedgerCorrupt, match="matchledger repair"):
            led.append([_timing(GAME, 2, ms=999)])
    assert committed_entries(ledger) == before


def test_an_index_file_planted_for_a_new_stream_is_refused(ledger: Path) -> None:
    """A file planted for a stream the log does not hold yet (claiming records of it) is not believed."""
    planted = stream_path(ledger, "t1/g9")
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(len(b"t1/g9").to_bytes(2, "little") + b"t1/g9" + RECORD.pack(0, 0))
    with pytest.raises(LedgerCorrupt, match="without its key"), Ledger.open(ledger) as led:
        led.append([_timing("t1/g9", 0)])


def test_the_cli_refuses_to_record_on_a_tampered_index_and_the_log_is_unchanged(ledger: Path, tmp_path: Path) -> None:
    """`matchledger record` exits non-zero naming `repair`; not one byte is appended."""
    stream_path(ledger, GAME).write_bytes(b"")
    before = committed_entries(ledger)
    events = tmp_path / "resend.jsonl"
    events.write_bytes(msgspec.json.encode({"kind": "game.move_time", "stream": GAME, "seq": 0, "ts": 5, "seat": 0, "ms": 1})
                       + b"\n")
    result = cli("record", str(events), "--ledger", str(ledger))
    assert result.exit_code != 0
    assert "matchledger repair" in result.output
    assert committed_entries(ledger) == before


@pytest.mark.parametrize("edit", ["mac", "seal", "size", "pre-seal", "deleted", "garbage"])
def test_a_head_the_writer_did_not_write_is_not_believed(ledger: Path, edit: str) -> None:
    """An index head with a wrong MAC, an edited seal or size, without a seal (a head from before
    seals, or one an insider stripped to make the writer trust the files), deleted or not JSON, makes the
    writer build the index from the entries, moving the old one aside as evidence and saying so."""
    head = read_head(ledger)
    assert head is not None and head.mac and head.seal
    flipped = ("1" if head.seal[0] == "0" else "0") + head.seal[1:]
    edits: dict[str, dict[str, object]] = {"mac": {"mac": "0" * 64}, "seal": {"seal": flipped}, "size": {"size": head.size - 1},
                                           "pre-seal": {"seal": "", "mac": ""}, "deleted": {}, "garbage": {}}
    changed = edits[edit]
    if edit == "deleted":
        (ledger / INDEX / HEAD).unlink()
    elif edit == "garbage":
        (ledger / INDEX / HEAD).write_bytes(b"not a head")
    else:
        (ledger / INDEX / HEAD).write_bytes(msgspec.json.encode(msgspec.structs.replace(head, **changed)))
    stream_path(ledger, GAME).write_bytes(b"")  # what such a head would cover
    with Ledger.open(ledger) as led:
        assert led.recovered is not None and "no seal of this writer's" in led.recovered
        assert led.next_seq(GAME) == 4
        with pytest.raises(SequenceError):
            led.append([_timing(GAME, 0, ms=999)])
    aside = [p for p in (ledger / REPAIRED).rglob("*") if p.is_file()]
    assert any(p.name == HEAD for p in aside) == (edit != "deleted")
    assert any(p.name == stream_path(ledger, GAME).name for p in aside)
    assert verify(ledger).ok
    with Ledger.open(ledger) as led:
        assert led.recovered is None


def test_a_crash_before_the_head_moved_still_opens(ledger: Path) -> None:
    """Recovery is not tampering: records flushed after the head (a crash before the head was
    written) are cut back to the head and re-read from the log, and the seal then holds."""
    head = (ledger / INDEX / HEAD).read_bytes()
    with Ledger.open(ledger) as led:
        led.append([_timing(GAME, 4), _timing("t1/g3", 0)])
        led.checkpoint()
    (ledger / INDEX / HEAD).write_bytes(head)  # the head as before that batch: its records on disk beyond it
    os.sync()
    with Ledger.open(ledger) as led:
        assert led.next_seq(GAME) == 5 and led.next_seq("t1/g3") == 1
        led.append([_timing(GAME, 5)])
    assert verify(ledger).ok


def test_a_copy_of_the_ledger_keeps_its_seal(ledger: Path, tmp_path: Path) -> None:
    """The seal binds names and sizes, not paths or times: a ledger copied elsewhere opens as it was."""
    copy = tmp_path / "copy"
    shutil.copytree(ledger, copy)
    with Ledger.open(copy) as led:
        assert led.recovered is None and led.next_seq(GAME) == 4
