"""Nothing unsigned counts (issue 28, points 1 and 7; DESIGN.md "Nothing unsigned counts").

An insider who can write the ledger's files but holds no `signer.key` appends committed frames
with valid CRCs after the newest signed note (in the last segment, or as a whole new segment
file): two `arbiter.registered` for keys made with keygen, an `appeal.filed`, an `appeal.decided`
and a `game.ruling` `result_override` signed by those keys. Verify and audit must call them
unsigned and certify only the signed size; the standings must not move; a writer (record, cosign,
repair: they share `Ledger`'s open) must refuse to sign them and move them aside as evidence. A
genuine crash tail (committed by the writer, not yet signed) is signed and reported. A rollback of
the bookkeeping to an older note, with the log rewritten after it, must never get a second root
signed for a size already signed. Run once more with MATCHLEDGER_NO_ACCEL=1 (the pure-Python path).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from audit.certification.certify import certify
from audit.query.session import movement_ranking, open_session
from audit.query.standings import standings
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import Ledger, LogReader, Pending, init
from ledger.checkpoints import checkpoint_path, write_checkpoint
from ledger.errors import ForeignEntries, LedgerCorrupt
from ledger.fastscan import frame_batch
from ledger.frames import REPAIRED
from ledger.layout import CHECKPOINTS, LATEST, SEGMENTS
from ledger.notes import Signer
from ledger.segments import list_segments, segment_path
from ledger.verify import verify
from schemas import encode
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
from tests.ledger_support import cli, committed_entries, flat, snapshot

SEED = 5
T = f"checkers-cup-{SEED}"
HOUR = 3_600_000


def _run(root: Path, *args: str) -> dict:
    result = cli(*args, "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    return msgspec.json.decode(result.output.splitlines()[-1])


def _rows(root: Path) -> list[dict]:
    return standings(open_session(root), T).rows


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """A signed tournament, and the entries of a forged arbitration an insider appends after it:
    made on a scratch copy by the ordinary commands, so every byte is what the commands write."""
    base = tmp_path_factory.mktemp("trust")
    root, scratch, keys = base / "ledger", base / "scratch", base / "keys"
    init(root)
    simulate_tournament(root, TournamentPlan("checkers", players=4, rounds=2, games_per_round=1, seed=SEED), movement_ranking)
    keys.mkdir()
    for name in ("mallory", "eve"):
        assert cli("keygen", "--name", name, "--out", str(keys / f"{name}.key")).exit_code == 0
    shutil.copytree(root, scratch)
    size = _committed(root)
    game = sorted(e.stream for e in _events(root) if isinstance(e, GameStarted))[-1]
    claim = [e for e in list(LogReader(root).events(game)) if isinstance(e, GameEnded)][-1]
    player = next(e for e in list(LogReader(root).events(game)) if isinstance(e, GameStarted)).seats[0].holder
    _run(scratch, "appeal", "register", "--pub", str(keys / "mallory.pub"), "--role", "chief_referee", "--name", "Mallory", "--at", "1")
    _run(scratch, "appeal", "register", "--pub", str(keys / "eve.pub"), "--role", "committee", "--name", "Eve", "--at", "1")
    filed = claim.ts + 6 * HOUR
    appeal = _run(scratch, "appeal", "file", "--tournament", T, "--game", game, "--player", player, "--grounds", "the clock failed",
                  "--at", str(filed))["seq"]
    decided = _run(scratch, "appeal", "decide", "--tournament", T, "--appeal", str(appeal), "--decision", "upheld",
                   "--vote=eve=uphold", "--vote=a=uphold", "--vote=b=reject", "--text", "upheld", "--key", str(keys / "eve.key"),
                   "--at", str(filed + HOUR))["seq"]
    _run(scratch, "appeal", "rule", "--stream", game, "--kind", "result_override", "--corrects", str(claim.seq),
         "--winners", "1" if claim.winners == [0] else "0", "--text", "overridden", "--carries-out", f"{T}#{decided}",
         "--key", str(keys / "mallory.key"), "--at", str(filed + 2 * HOUR))
    forged = [data for i, data in committed_entries(scratch) if i >= size]
    kinds = [json.loads(d)["kind"] for d in forged]
    assert kinds.count("arbiter.registered") == 2 and {"appeal.filed", "appeal.decided", "game.ruling"} <= set(kinds), kinds
    assert _rows(scratch) != _rows(root), "the forged arbitration, were it signed, changes the standings"
    return root, forged


def _events(root: Path) -> list:
    return list(LogReader(root).events())


def _committed(root: Path) -> int:
    signed, unsigned = LogReader(root).extent()
    return signed + unsigned


@pytest.fixture()
def victim(genuine: tuple[Path, list[bytes]], tmp_path: Path) -> tuple[Path, list[bytes]]:
    root, forged = genuine
    copy = tmp_path / "ledger"
    shutil.copytree(root, copy)
    return copy, forged


def _append_frames(root: Path, payloads: list[bytes], new_segment: bool = False) -> None:
    """The insider's forgery: committed frames with valid CRCs after the last entry, written with
    the framing code anyone can run (no key)."""
    first = _committed(root)
    data = frame_batch(first, payloads, True)
    segments = root / SEGMENTS
    path = segment_path(segments, first) if new_segment else list_segments(segments)[-1][1]
    with open(path, "ab") as f:
        f.write(data)


@pytest.mark.parametrize("new_segment", [False, True], ids=["last-segment", "extra-segment"])
def test_verify_and_audit_call_a_forged_tail_unsigned_and_standings_ignore_it(victim: tuple[Path, list[bytes]],
                                                                              new_segment: bool) -> None:
    """Nothing unsigned counts: verify and audit certify only up to the newest signed note and say
    how many entries after it are unsigned; standings read only the signed entries."""
    root, forged = victim
    before, signed = _rows(root), _committed(root)
    _append_frames(root, forged, new_segment)
    report = verify(root)
    assert report.ok and report.size == signed and report.unsigned == len(forged)
    assert any(f"{len(forged)} unsigned entries after the newest signed checkpoint (size {signed})" in n for n in report.notes)
    out = _run(root, "verify")
    assert (out["size"], out["unsigned"]) == (signed, len(forged))
    cert = certify(root)
    assert cert.log.size == signed and cert.log.unsigned == len(forged)
    assert f"log verified to size {signed}" in cert.verdict() and f"{len(forged)} unsigned entries" in cert.verdict()
    assert _rows(root) == before
    assert len(_events(root)) == signed
    for command in (["standings", "--tournament", T], ["replay"], ["appeals"]):
        result = cli(*command, "--ledger", str(root))
        assert f"verified against the signed checkpoint of size {signed}" in flat(result.output), (command, result.output)
        assert f"the {len(forged)} unsigned entries after the newest signed checkpoint are not shown" in flat(result.output), command


@pytest.mark.parametrize("new_segment", [False, True], ids=["last-segment", "extra-segment"])
@pytest.mark.parametrize("command", ["record", "cosign", "repair"])
def test_a_writer_refuses_to_sign_a_forged_tail_and_moves_it_aside(victim: tuple[Path, list[bytes]], tmp_path: Path,
                                                                   command: str, new_segment: bool) -> None:
    """A writer never signs entries it cannot show it wrote: no proof of origin, so the frames go
    to repaired/<time>/ as evidence, the command exits non-zero, and the signed log is unchanged."""
    root, forged = victim
    before, signed = _rows(root), _committed(root)
    notes = snapshot(root / CHECKPOINTS)
    _append_frames(root, forged, new_segment)
    if command == "record":
        (tmp_path / "empty.jsonl").write_bytes(b"")
        result = cli("record", str(tmp_path / "empty.jsonl"), "--ledger", str(root))
    elif command == "cosign":
        assert cli("keygen", "--name", "witness", "--out", str(tmp_path / "witness.key")).exit_code == 0
        result = cli("cosign", "--key", str(tmp_path / "witness.key"), "--ledger", str(root))
    else:
        result = cli("repair", "--ledger", str(root))
    assert result.exit_code == 1, result.output
    assert f"entries {signed}–{signed + len(forged) - 1} ({len(forged)}) after the newest signed checkpoint (size {signed}) " \
           f"carry no proof of origin by this writer" in " ".join(result.output.split())
    assert snapshot(root / CHECKPOINTS) == notes
    kept = list((root / REPAIRED).glob(f"*/{SEGMENTS}/*"))
    assert len(kept) == 1 and kept[0].read_bytes() == frame_batch(signed, forged, True)
    report = verify(root)
    assert report.ok and report.size == signed and report.unsigned == 0
    assert _rows(root) == before
    assert cli("record", "-", "--ledger", str(root), input=b"").exit_code == 0  # the evidence is aside: the log goes on
    assert verify(root).size == signed


@pytest.mark.parametrize("writer", ["serve", "source-add"])
def test_the_service_and_source_registry_refuse_a_forged_tail_too(victim: tuple[Path, list[bytes]], writer: str) -> None:
    """`serve` (its Writer) and `source add` open the log through the same `Ledger` open: no signature
    over frames without a proof of origin, the frames moved aside, the signed notes unchanged."""
    from ledger.group_commit import Writer
    from ledger.sources import change_sources

    root, forged = victim
    notes = snapshot(root / CHECKPOINTS)
    _append_frames(root, forged)
    with pytest.raises(ForeignEntries, match="carry no proof of origin by this writer"):
        if writer == "serve":
            Writer(root)
        else:
            change_sources(root, lambda book, led: pytest.fail("nothing may be registered over a forged tail"))
    assert snapshot(root / CHECKPOINTS) == notes
    assert len(list((root / REPAIRED).glob(f"*/{SEGMENTS}/*"))) == 1


def test_a_forged_batch_after_the_writers_own_crash_tail_keeps_the_own_part(victim: tuple[Path, list[bytes]]) -> None:
    """A crash tail is the writer's own up to the first batch without a proof of origin: the own
    part stays (and is signed at the next open), the forged part is moved aside."""
    root, forged = victim
    signed = _committed(root)
    with Ledger.open(root) as led:
        led.append([_timing(led, "extra/g1", 0)], checkpoint=False)  # committed, then the process dies before the note
    _append_frames(root, forged)
    with pytest.raises(ForeignEntries, match=rf" / entries {signed + 1}–{signed + len(forged)} \({len(forged)}\) after the newest signed "
                                             rf"checkpoint \(size {signed}\) .* the 1 entries before them are this writer's and are "
                                             r"signed at the next open$"):
        Ledger.open(root)
    with Ledger.open(root) as led:
        assert led.checkpoint_size == led.size == signed + 1
        assert "each batch carries this writer's proof of origin" in (led.recovered or "")


def _timing(led: Ledger, stream: str, seq: int) -> Pending:
    event = MoveTimeUsed(stream=stream, seq=seq, ts=1_000 + seq, seat=0, ms=500)
    return Pending(0, event, encode(event))


def test_a_genuine_crash_tail_is_signed_and_reported(victim: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    """The writer's own committed but unsigned batches (a crash between commit and note) carry its
    proof of origin: the next `record` signs them and says so in `recovered`."""
    root, _ = victim
    signed = _committed(root)
    with Ledger.open(root) as led:
        led.append([_timing(led, "extra/g1", 0), _timing(led, "extra/g2", 0)], checkpoint=False)
        led.append([_timing(led, "extra/g1", 1)], checkpoint=False)
    assert verify(root).unsigned == 3
    (tmp_path / "empty.jsonl").write_bytes(b"")
    out = _run(root, "record", str(tmp_path / "empty.jsonl"))
    assert out["size"] == signed + 3
    assert f"signed the 3 entries after the newest checkpoint (size {signed}) that a crash left unsigned" in out["recovered"]
    report = verify(root)
    assert report.ok and report.size == signed + 3 and report.unsigned == 0


def test_a_deleted_proof_file_makes_the_tail_foreign_not_signed(victim: tuple[Path, list[bytes]]) -> None:
    """Proofs of origin are the only claim to a tail: without them the writer signs nothing."""
    root, _ = victim
    with Ledger.open(root) as led:
        led.append([_timing(led, "extra/g1", 0)], checkpoint=False)
    (root / "origin").unlink()
    with pytest.raises(ForeignEntries):
        Ledger.open(root)


def test_the_writers_own_unsigned_tail_edited_keeps_no_proof(victim: tuple[Path, list[bytes]]) -> None:
    """The proof of origin covers the batch's leaf hashes and range: an insider who swaps the entries
    of the writer's unsigned batch for others of the same count (its proof record left in place, or
    copied to another range) gets nothing signed."""
    root, forged = victim
    signed = _committed(root)
    with Ledger.open(root) as led:
        led.append([_timing(led, "extra/g1", 0), _timing(led, "extra/g1", 1)], checkpoint=False)
    segment = list_segments(root / SEGMENTS)[-1][1]
    data = segment.read_bytes()
    genuine = frame_batch(signed, [d for i, d in committed_entries(root) if i >= signed], True)
    assert data.endswith(genuine)
    segment.write_bytes(data[:len(data) - len(genuine)] + frame_batch(signed, forged[:2], True))
    with pytest.raises(ForeignEntries, match=rf"entries {signed}–{signed + 1} \(2\) after the newest signed checkpoint"):
        Ledger.open(root)
    assert verify(root).size == signed


def _rollback(root: Path, to: int, rewrite: list[bytes]) -> None:
    """The insider cuts the unsigned bookkeeping (served note, index head and history) back to the
    note of size `to`, cuts the entries after it, and appends `rewrite` as committed frames."""
    (root / LATEST).write_bytes(checkpoint_path(root, to).read_bytes())
    shutil.rmtree(root / "index")
    shutil.rmtree(root / "tile", ignore_errors=True)
    end = 0
    for first, path in list_segments(root / SEGMENTS):
        if first >= to and first > 0:
            path.unlink()
            continue
        data, offset, index = path.read_bytes(), 0, first
        while index < to and offset < len(data):
            offset += 16 + int.from_bytes(data[offset:offset + 4], "little") % (1 << 31) + 4
            index += 1
        end = offset
        path.write_bytes(data[:end])
    if rewrite:
        _append_frames(root, rewrite)


@pytest.mark.parametrize("rewrite", [False, True], ids=["cut", "cut-and-rewrite"])
def test_rollback_never_signs_a_second_root_for_a_size(victim: tuple[Path, list[bytes]], tmp_path: Path, rewrite: bool) -> None:
    """Issue 28 point 7: after the bookkeeping is cut back to an older note (and the entries after it
    rewritten), no writer signs another root at a size already signed: the kept notes stay as they were."""
    root, forged = victim
    with Ledger.open(root) as led:
        older = led.checkpoint_size
        led.append([_timing(led, "extra/g1", 0), _timing(led, "extra/g1", 1)])
        newer = led.checkpoint().size
    assert newer > older
    notes = snapshot(root / CHECKPOINTS)
    _rollback(root, older, forged[:newer - older] if rewrite else [])
    lines = b"\n".join(encode(MoveTimeUsed(stream="extra/g2", seq=s, ts=1, seat=0, ms=1)) for s in range(2)) + b"\n"
    result = cli("record", "-", "--ledger", str(root), input=lines)
    assert result.exit_code == 1, result.output
    assert f"keeps a note of size {newer}, newer than the newest checkpoint the log serves (size {older})" in " ".join(result.output.split())
    assert snapshot(root / CHECKPOINTS) == notes
    report = verify(root)
    assert not report.ok and "was rolled back" in (report.error or "")


def test_a_kept_note_is_never_overwritten_with_another_root(victim: tuple[Path, list[bytes]]) -> None:
    """What was signed is append-only: signing a size again gives back the kept note when the root
    agrees and refuses when it differs (even with every other check bypassed)."""
    root, _ = victim
    signer = Signer.load(root / "signer.key")
    size = _committed(root)
    kept = checkpoint_path(root, size).read_bytes()
    with Ledger.open(root) as led:
        root_hash = led.root_hash()
    assert write_checkpoint(root, signer, size, root_hash, "x").note.encode() == kept
    with pytest.raises(LedgerCorrupt, match=rf"checkpoint {size} was signed with root {root_hash.hex()}, the entries now give "
                                            rf"{bytes(32).hex()}: a second root is never signed for a size"):
        write_checkpoint(root, signer, size, bytes(32), "x")
    assert checkpoint_path(root, size).read_bytes() == kept
