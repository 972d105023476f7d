"""Tamper evidence: every change inside the checkpointed range makes `verify` fail and name the position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger import fastscan, segments, store
from ledger.recorder import validate_lines
from ledger.verify import verify
from tests.ledger_support import cli, game_lines, snapshot

ENTRIES = 24


@pytest.fixture(autouse=True, params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs every tamper case with the C accelerator and with the pure-Python reference."""
    if request.param == "c" and not fastscan.ACCELERATED:
        pytest.skip("C accelerator not built")
    monkeypatch.setattr(fastscan, "ACCELERATED", request.param == "c")


@pytest.fixture()
def ledger(tmp_path: Path) -> Path:
    """A ledger of 24 entries in 4 recorded batches, each ending with a checkpoint."""
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/tamper")
    for batch in range(4):
        with store.Ledger.open(root) as led:
            led.append(validate_lines(game_lines(3, 2, start=2 * batch), led.config.max_entry_bytes))
            led.checkpoint()
    return root


def _segment(root: Path) -> Path:
    return segments.list_segments(root / "segments")[0][1]


def _frames(root: Path) -> list[tuple[int, int]]:
    """Returns (start, end) byte ranges of every frame."""
    data = _segment(root).read_bytes()
    spans = [(offset, offset + payload.nbytes + segments.OVERHEAD) for _, offset, payload, _ in segments.iter_frames(data, 0)]
    assert len(spans) == ENTRIES
    return spans


def _verify(root: Path) -> dict:
    result = cli("verify", "--ledger", str(root), "--json")
    assert result.exit_code == (0 if json.loads(result.stdout).get("ok", True) else 1)
    return json.loads(result.stdout)


def test_intact_ledger_verifies(ledger: Path) -> None:
    assert _verify(ledger)["size"] == ENTRIES


def test_every_flipped_byte_names_its_entry(ledger: Path) -> None:
    seg = _segment(ledger)
    original = seg.read_bytes()
    for index, (start, end) in enumerate(_frames(ledger)):
        for position in (start, start + 5, start + 14, (start + end) // 2, end - 1):
            data = bytearray(original)
            data[position] ^= 0x20
            seg.write_bytes(bytes(data))
            report = _verify(ledger)
            assert report["ok"] is False and report["index"] == index, (position, report)
    seg.write_bytes(original)


def _splice(root: Path, build) -> None:  # noqa: ANN001
    seg = _segment(root)
    data = seg.read_bytes()
    frames = [data[s:e] for s, e in _frames(root)]
    seg.write_bytes(b"".join(build(frames)))


@pytest.mark.parametrize("k", [0, 7, 23])
def test_deleted_entry_is_named(ledger: Path, k: int) -> None:
    _splice(ledger, lambda f: f[:k] + f[k + 1:])
    report = _verify(ledger)
    assert report["ok"] is False and report["index"] == k


@pytest.mark.parametrize("k", [0, 11, 22])
def test_swapped_entries_are_named(ledger: Path, k: int) -> None:
    _splice(ledger, lambda f: f[:k] + [f[k + 1], f[k]] + f[k + 2:])
    assert _verify(ledger)["index"] == k


@pytest.mark.parametrize("k", [1, 12, 23])
def test_inserted_entry_is_named(ledger: Path, k: int) -> None:
    _splice(ledger, lambda f: f[:k] + [f[k - 1]] + f[k:])
    assert _verify(ledger)["index"] == k


@pytest.mark.parametrize("k", [0, 5, 18])
def test_truncation_inside_checkpointed_range_is_named(ledger: Path, k: int) -> None:
    _splice(ledger, lambda f: f[:k])
    report = _verify(ledger)
    assert report["ok"] is False and report["index"] == k and "entries were removed" in report["error"]


def test_rewritten_entry_with_valid_frame_fails_at_its_checkpoint(ledger: Path) -> None:
    """A forger who re-frames a changed entry (valid CRC) is still caught by the checkpoint root."""
    def rewrite(frames: list[bytes]) -> list[bytes]:
        payload = frames[9][16:-4].replace(b'"ms":503', b'"ms":999')
        return frames[:9] + [segments.frame(9, payload, commit=False)] + frames[10:]
    _splice(ledger, rewrite)
    report = _verify(ledger)
    assert report["ok"] is False and report["index"] == 6 and "do not match checkpoint 12" in report["error"]
    assert verify(ledger).size == 12  # the tree as it stood at the checkpoint that failed


def test_forged_checkpoint_signature_is_named(ledger: Path) -> None:
    note = ledger / "checkpoints" / f"{12:020d}.note"
    text = note.read_text()
    sig = text.rstrip("\n").rsplit(" ", 1)[1]
    forged = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
    note.write_text(text.replace(sig, forged))
    report = _verify(ledger)
    assert report["ok"] is False and "checkpoint of size 12" in report["error"]


def test_a_bad_note_is_reported_before_damaged_entries(ledger: Path) -> None:
    """Signatures are checked while the entries are scanned; the verdict is still the sequential one:
    the first bad checkpoint note, and no entries counted."""
    seg = _segment(ledger)
    data = bytearray(seg.read_bytes())
    data[len(data) // 3] ^= 0x20
    seg.write_bytes(bytes(data))
    for size in (18, 12):
        note = ledger / "checkpoints" / f"{size:020d}.note"
        text = note.read_text()
        sig = text.rstrip("\n").rsplit(" ", 1)[1]
        note.write_text(text.replace(sig, sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]))
    report = verify(ledger)
    assert report.ok is False and (report.error or "").startswith("checkpoint of size 12 ")
    assert (report.size, report.checkpoints, report.index) == (0, 0, None)


def test_forged_checkpoint_root_is_refused(ledger: Path) -> None:
    note = ledger / "checkpoints" / f"{18:020d}.note"
    lines = note.read_text().split("\n")
    lines[2] = "A" * 43 + "="
    note.write_text("\n".join(lines))
    assert "checkpoint of size 18" in _verify(ledger)["error"]


def test_writer_refuses_to_open_damaged_checkpointed_range(ledger: Path) -> None:
    """The writer reads only the frame its index head names: a log cut short below it is refused, not repaired."""
    _splice(ledger, lambda f: f[:10])
    before = snapshot(ledger)
    result = cli("record", "--ledger", str(ledger), "-", input=game_lines(1, 1)[0])
    assert result.exit_code == 1 and "entry 23: 00000000000000000000.seg 比索引头记录的短" in result.stderr
    assert "/ 00000000000000000000.seg is shorter than the index head says: entries were removed" in result.stderr
    assert snapshot(ledger) == before


def test_arbiter_cosignature_is_checked(ledger: Path, tmp_path: Path) -> None:
    """Arbiters may co-sign a checkpoint (DESIGN.md ledger/); verify checks every known co-signature."""
    key = tmp_path / "arbiter.key"
    assert cli("keygen", "--name", "arbiter-zhang", "--out", str(key)).exit_code == 0
    assert cli("cosign", "--ledger", str(ledger), "--key", str(key), "--size", "18").exit_code == 0
    report = _verify(ledger)
    assert "大小为 18 的检查点由 arbiter-zhang 联署 / checkpoint of size 18 co-signed by arbiter-zhang" in report["notes"]
    note = ledger / "checkpoints" / f"{18:020d}.note"
    last = note.read_text().rstrip("\n").rsplit("\n", 1)[1]
    sig = last.rsplit(" ", 1)[1]
    note.write_text(note.read_text().replace(sig, sig[:12] + ("B" if sig[12] != "B" else "C") + sig[13:]))
    failed = _verify(ledger)
    assert failed["ok"] is False and "co-signature of 'arbiter-zhang' does not verify" in failed["error"]
