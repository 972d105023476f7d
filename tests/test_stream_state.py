"""Every checkpoint signs the state of all streams; a reader proves a stream's newest records with it
(issue 32's trust mend; DESIGN.md "Nothing unsigned counts": a result shown is a result verified).

Readers (`show --game`, `replay --game`, `report --game`) find a stream's entries through the stream
index, which nobody signs. The stream commitment of the checkpoint that first covers the last entry
the index names proves the stream complete *as it was then*; an index file cut back to an earlier
checkpoint's boundary therefore used to show a shorter game as whole. The signed state (the heads
of all streams, hashed per index directory, in an extension line of every note; `ledger/state.py`)
closes that: the reader recomputes the stream's directory from the files and checks the signed line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from ledger import BundleError, Ledger, LogReader, Pending, check_bundle, init, prove
from ledger.checkpoints import newest_checkpoint, parse_checkpoint
from ledger.commitments import open_history
from ledger.errors import LedgerCorrupt
from ledger.index import HEAD, INDEX, RECORD, count_below, load_stream, read_head, stream_path
from ledger.repair import repair
from ledger.state import decode_digests, read_state_line, slot_of, state_line
from ledger.store import load_verifier
from ledger.verify import verify
from schemas import encode
from schemas.common import MoveTimeUsed
from tests.ledger_support import cli, flat

GAME = "t1/g1"


def _timing(stream: str, seq: int, ms: int = 500) -> Pending:
    event = MoveTimeUsed(stream=stream, seq=seq, ts=1_000 + seq, seat=0, ms=ms)
    return Pending(0, event, encode(event))


def _neighbour() -> str:
    """A stream whose index file shares GAME's directory (a planted or deleted file there counts)."""
    return next(s for s in (f"t1/n{n}" for n in range(10_000)) if slot_of(s) == slot_of(GAME))


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[Path, bytes]:
    """A ledger whose game `t1/g1` holds seqs 0–3 over two checkpoints beside other streams, and
    the game's index file as it was after the first checkpoint."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 0), _timing(GAME, 1), _timing("t1/g2", 0), _timing(_neighbour(), 0)])
        led.checkpoint()
    old = stream_path(root, GAME).read_bytes()
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 2), _timing(GAME, 3), _timing("t1/g3", 0)])
        led.checkpoint()
    return root, old


def _shown(root: Path) -> list[int]:
    events, _ = LogReader(root).checked_events(GAME)
    return [e.seq for e in events]


def test_each_note_signs_the_state_and_the_head_carries_it(ledger: tuple[Path, bytes]) -> None:
    """The newest note has a state line; the index head holds the 256 digests and the note of its
    size that signs them; `verify` re-derives the state from the entries and agrees."""
    root, _ = ledger
    newest = newest_checkpoint(root, load_verifier(root))
    assert newest is not None
    line = read_state_line(newest.extensions)
    assert line is not None
    head = read_head(root)
    assert head is not None and head.size == newest.size
    digests = decode_digests(head.state)
    assert digests is not None and state_line(digests) == line
    assert parse_checkpoint(head.state_note, load_verifier(root)).size == head.size
    assert _shown(root) == [0, 1, 2, 3]
    assert verify(root).ok


def test_a_game_finished_earlier_is_named_as_of_the_newest_checkpoint(ledger: tuple[Path, bytes]) -> None:
    """A result shown says to which size it is verified: `t1/g2` ended in the first checkpoint (size
    4); the state signed at the newest (size 7) shows it has no later entry, and the tiles prove size
    4 a prefix of 7, so the reader names 7, not the older note its entries were proved against."""
    root, _ = ledger
    events, checkpoint = LogReader(root).checked_events("t1/g2")
    assert [e.seq for e in events] == [0] and checkpoint.size == 7


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-round checkers tournament from `matchledger simulate` (round 1's games end before round 2's notes)."""
    root = tmp_path_factory.mktemp("cup") / "ledger"
    made = cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "2", "--games-per-round", "1",
               "--seed", "3", "--ledger", str(root), "--json")
    assert made.exit_code == 0, made.output
    return root


def test_the_cli_shows_a_round_one_game_as_of_the_newest_size_and_refuses_it_cut_back(cup: Path, tmp_path: Path) -> None:
    """`matchledger show --game` of a first-round game names the newest signed size; with the game's
    index file cut back to the checkpoint before it ended it exits non-zero naming the directory,
    instead of saying there is no such game (or printing its opening moves as the whole game)."""
    root = tmp_path / "ledger"
    shutil.copytree(cup, root)
    game = "checkers-cup-3/r1/t1/g1"
    newest = LogReader(root).signed().size
    shown = cli("show", "--game", game, "--ledger", str(root))
    assert shown.exit_code == 0, shown.output
    assert f"size {newest}" in flat(shown.output)
    index = load_stream(root, game)
    with open_history(root) as history:  # the newest checkpoint before the game's last move (simulate signs at game end: before its first)
        assert history is not None
        kept = max(k for k in (count_below(index, history.size(n)) for n in range(len(history))) if k < len(index))
    path = stream_path(root, game)
    path.write_bytes(path.read_bytes()[:2 + len(game.encode()) + RECORD.size * kept])
    result = cli("show", "--game", game, "--ledger", str(root))
    assert result.exit_code != 0, result.output
    assert "streams/" in flat(result.output)


def _rolled_back(path: Path, old: bytes) -> None:
    path.write_bytes(old)  # GAME as the writer left it after the first checkpoint: a prefix the old check believed


def _deleted(path: Path, _old: bytes) -> None:
    path.unlink()


def _planted(path: Path, _old: bytes) -> None:
    other = stream_path(path.parents[3], "t1/g9")  # a stream the log does not hold, in the same directory or not
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_bytes(len(b"t1/g9").to_bytes(2, "little") + b"t1/g9" + RECORD.pack(0, 0))
    neighbour = stream_path(path.parents[3], _neighbour())
    neighbour.unlink()  # and GAME's neighbour's file gone: the directory changed, GAME's own file not


@pytest.mark.parametrize("tamper", [_rolled_back, _deleted, _planted], ids=["rolled-back", "deleted", "neighbour-deleted"])
def test_a_reader_refuses_a_stream_whose_index_is_not_the_signed_state(
        ledger: tuple[Path, bytes], tamper: Callable[[Path, bytes], None]) -> None:
    """Signed state of all streams: a game read through an index file rolled back to an earlier
    checkpoint (which showed seqs 0–1 as the whole game before), deleted (which showed no game), or
    whose directory was changed, is refused, not shown; after `repair` it reads whole again."""
    root, old = ledger
    tamper(stream_path(root, GAME), old)
    with pytest.raises(LedgerCorrupt, match="signed state|签名状态"):
        _shown(root)
    report = repair(root)
    assert report.refused is None and report.verified is not None and report.verified.ok
    assert _shown(root) == [0, 1, 2, 3]


@pytest.mark.parametrize("edit", ["other-digest", "no-state", "older-note"])
def test_a_reader_refuses_a_head_whose_state_is_not_signed(ledger: tuple[Path, bytes], edit: str) -> None:
    """The head's digests are believed only as far as the note they come with signs them: an edited
    digest, a head stripped of its state, or a note of another size is refused, naming `repair`
    (the writer builds the state again from the files it has sealed)."""
    root, _ = ledger
    head = read_head(root)
    assert head is not None
    raw = bytearray(head.state.encode())
    raw[0:4] = b"AAAA" if raw[0:4] != b"AAAA" else b"BBBB"
    older = next(p for p in sorted((root / "checkpoints").iterdir()) if p.name.endswith(".note") and int(p.stem) < head.size)
    changed = {"other-digest": {"state": raw.decode()}, "no-state": {"state": "", "state_note": ""},
               "older-note": {"state_note": older.read_text()}}[edit]
    (root / INDEX / HEAD).write_bytes(msgspec.json.encode(msgspec.structs.replace(head, **changed)))
    with pytest.raises(LedgerCorrupt, match="repair|verify"):
        _shown(root)
    with Ledger.open(root) as led:  # the writer's own head (MAC), its state rebuilt: readers are served again
        led.append([_timing(GAME, 4)])
        led.checkpoint()
    assert _shown(root) == [0, 1, 2, 3, 4]


def test_the_live_services_commits_and_index_job_keep_the_state(tmp_path: Path) -> None:
    """Group commits sign a note per commit without the index (each with the state at its size);
    the index job writes the head with the newest state; a reader checks against it and reads the
    commits after the head from the log."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 0)])
        led.checkpoint()
        for seq in range(1, 4):
            led.append([_timing(GAME, seq), _timing(f"t1/x{seq}", 0)])
            led.checkpoint(index=False)
        job = led.start_index()
        job.run()
        led.finish_index(job)
        led.append([_timing(GAME, 4)])
        led.checkpoint(index=False)
        assert _shown(root) == [0, 1, 2, 3, 4]  # 0–3 through the index at the head, 4 from the log after it
        head = read_head(root)
        assert head is not None and head.size == 7 and head.state
    assert verify(root).ok


def test_a_ledger_signed_before_states_gains_one_at_its_next_record(tmp_path: Path) -> None:
    """Upgrade: a head without a state (written before states) is built once from the sealed index
    files at the next checkpoint; until then the newest note has no state line and readers are as before."""
    root = tmp_path / "ledger"
    init(root)
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 0), _timing("t1/g2", 0)])
        led.checkpoint()
    head = read_head(root)
    assert head is not None
    (root / INDEX / HEAD).write_bytes(msgspec.json.encode(msgspec.structs.replace(head, state="", state_note="")))
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 1)])
        led.checkpoint()
    head = read_head(root)
    assert head is not None and head.state and _shown(root) == [0, 1]
    assert os.path.exists(root / INDEX / HEAD) and verify(root).ok


def test_an_evidence_bundle_proves_a_finished_stream_whole_as_of_the_heads_size(ledger: tuple[Path, bytes], tmp_path: Path) -> None:
    """`prove` adds the state proof (format 3): `check-proof`, with the public key alone, says `t1/g2`
    had exactly one entry in the log of size 7, not only at size 4 where its entry was proved; a
    proof whose heads were edited, or a bundle of a cut index, does not verify."""
    root, old = ledger
    bundle = prove(root, "t1/g2")
    assert bundle.format == "matchledger-evidence/3" and bundle.state is not None
    checked = check_bundle(bundle, load_verifier(root))
    assert checked.complete and checked.checkpoint.size == 4 and checked.as_of is not None and checked.as_of.size == 7
    assert "exactly 1 entry" in checked.statement(bundle) and "size 7" in checked.statement(bundle)
    out = tmp_path / "g2.json"
    assert cli("prove", "--ledger", str(root), "--stream", "t1/g2", "--out", str(out)).exit_code == 0
    said = cli("check-proof", str(out), "--key", str(root / "signer.pub"))
    assert said.exit_code == 0 and "size 7" in flat(said.output), said.output
    state = bundle.state
    edited = msgspec.structs.replace(bundle, state=msgspec.structs.replace(
        state, heads=[msgspec.structs.replace(h, count=h.count + 1) if h.stream == "t1/g2" else h for h in state.heads]))
    with pytest.raises(BundleError, match="state"):
        check_bundle(edited, load_verifier(root))
    stream_path(root, GAME).write_bytes(old)  # GAME cut back to the first checkpoint: its bundle carries the state that says so
    with pytest.raises(BundleError, match="do not give the state signed at size 7"):
        check_bundle(prove(root, GAME), load_verifier(root))


_CRASHED_SERVICE = """
import os, sys
from pathlib import Path
from ledger import Ledger, Pending
from schemas import encode
from schemas.common import MoveTimeUsed

def timing(stream, seq):
    event = MoveTimeUsed(stream=stream, seq=seq, ts=1_000 + seq, seat=0, ms=5)
    return Pending(0, event, encode(event))

led = Ledger.open(Path(sys.argv[1]))
led.append([timing("a", 0)]); led.checkpoint()
led.append([timing("b", 0), timing("c", 0)]); led.checkpoint(index=False)
led.append([timing("a", 1)]); led.checkpoint(index=False)
os._exit(0)  # killed: the index head stays at the full checkpoint, the commits after it signed
"""


def test_the_state_after_a_crash_beyond_the_head_is_the_entries(tmp_path: Path) -> None:
    """Recovery: the commits a killed service signed after its last full checkpoint are indexed
    again at the next open (their index files written before the head moves); the next note's state
    is that of all three streams, as `verify` re-derives it (it once counted only the head's one)."""
    root = tmp_path / "ledger"
    init(root)
    subprocess.run([sys.executable, "-c", _CRASHED_SERVICE, str(root)], check=True, cwd=Path(__file__).parents[1])
    with Ledger.open(root) as led:
        led.append([_timing("a", 2)])
        led.checkpoint()
    assert verify(root).ok
    assert [e.seq for e in LogReader(root).checked_events("b")[0]] == [0]


def test_verify_and_the_audit_refuse_a_note_signing_a_state_its_entries_do_not_give(ledger: tuple[Path, bytes],
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer holding the key but signing a wrong state (a defect, not a forgery): `verify` and
    the audit's own index check (`audit` verifies beside its replay) both re-derive the newest
    note's state from the entries and fail on it, the same check by the same path."""
    from audit.query.session import open_verified_session
    from ledger.state import StreamState

    root, _ = ledger
    monkeypatch.setattr(StreamState, "line", lambda self, current, check: state_line([bytes(32)] * 256))
    with Ledger.open(root) as led:
        led.append([_timing(GAME, 4)])
        led.checkpoint()
    monkeypatch.undo()
    report = verify(root)
    assert not report.ok and "signs a state of all streams" in (report.error or "")
    audited, session = open_verified_session(root)
    assert not audited.ok and "signs a state of all streams" in (audited.error or "") and session is not None


@pytest.mark.parametrize("window", [1, 3])
def test_the_stream_commitments_checked_a_window_at_a_time_give_the_same_verdicts(ledger: tuple[Path, bytes], window: int,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_heads` groups whole checkpoint intervals a window of entries at a time (a season's groups
    are never held at once): with windows of one entry or three, every commitment and the state still
    check out, and a commitment the entries do not give is still found."""
    from ledger import commitments
    from ledger.frames import stream_codes

    root, _ = ledger
    monkeypatch.setattr(commitments, "HEADS_WINDOW", window)
    assert verify(root).ok
    signed = verify(root, index=False).commitments
    coded, _ = stream_codes(root, signed[-1][0])
    size, committed = signed[-1]
    assert committed is not None
    count, top = committed
    assert commitments.check_heads(coded, signed) is None
    assert "do not give" in (commitments.check_heads(coded, [*signed[:-1], (size, (count + 1, top))]) or "")
