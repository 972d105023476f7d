"""`matchledger repair`: what the entries determine (hash tiles, stream index, index head) is
rebuilt after someone with write access but no key deleted or changed it, so that no such change
breaks the audit for good (the charter's attacker view; DESIGN.md ledger/). The rebuild is held to
the signed checkpoints, the old files are kept as evidence, and entries and notes are never touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import ledger
from ledger import repair as ledger_repair
from ledger import store
from ledger.errors import LedgerError, LedgerLocked
from ledger.recorder import validate_lines
from tests.ledger_support import cli, game_lines, snapshot


def _ledger(root: Path) -> Path:
    """A ledger of 630 entries over 30 streams (two full tiles of level 0), under three checkpoints."""
    store.init(root, origin="test.local/repair")
    with store.Ledger.open(root) as led:
        for part in range(3):
            led.append(validate_lines(game_lines(30, 20 // 3 + 1, start=part * (20 // 3 + 1)), led.config.max_entry_bytes))
            led.checkpoint()
    assert ledger.verify(root).ok
    return root


def _one_stream_file(root: Path) -> Path:
    return sorted(p for p in (root / "index" / "streams").rglob("*") if p.is_file())[3]


def _flip(path: Path, at: int = 40) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["full tile deleted", "full tile changed", "stream index file deleted",
                                    "stream index file changed", "stream index offset changed", "index head deleted"])
def test_a_deleted_or_changed_derived_file_is_rebuilt_from_the_entries(tmp_path: Path, damage: str) -> None:
    root = _ledger(tmp_path / "L")
    before = snapshot(root)
    tile, stream_file = root / "tile" / "0" / "001", _one_stream_file(root)
    name = str((tile if "tile" in damage else stream_file).relative_to(root))
    if damage == "full tile deleted":
        tile.unlink()
    elif damage == "full tile changed":
        _flip(tile)
    elif damage == "stream index file deleted":
        stream_file.unlink()
    elif damage == "stream index file changed":  # the first record's entry index (after the 2-byte length and the name)
        _flip(stream_file, 2 + stream_file.read_bytes()[0])
    elif damage == "stream index offset changed":  # the last record's frame offset: verify names it too
        _flip(stream_file, -8)
        assert "the index gives offset" in str(ledger.verify(root).error)
    else:
        (root / "index" / "head").unlink()
    if damage != "index head deleted":  # (a missing head reads as a ledger from before the index: a note, not damage)
        assert not ledger.verify(root).ok

    result = cli("repair", "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["ok"] and out["entries"] == 630 and out["refused"] is None
    if "deleted" in damage and damage != "index head deleted":
        assert out["missing"] == [name] and out["differed"] == []
    elif "changed" in damage:
        assert out["differed"] == [name] and out["missing"] == []
    kept = Path(out["kept"])
    assert kept.parent == root / "repaired" and ((kept / name).exists() or "deleted" in damage)
    after = {k: v for k, v in snapshot(root).items() if not k.startswith("repaired/") and k != "lock"}
    assert {k: v for k, v in after.items() if ".p/" not in k} == {k: v for k, v in before.items() if ".p/" not in k and k != "lock"}
    assert ledger.verify(root).ok
    with store.Ledger.open(root) as led:  # the writer opens and goes on
        led.append(validate_lines(game_lines(2, 2, start=21), led.config.max_entry_bytes))
        led.checkpoint()
    assert ledger.verify(root).ok


def test_changed_entries_are_not_repaired_and_nothing_is_touched(tmp_path: Path) -> None:
    """Entries that do not match the signed checkpoints cannot be re-derived from: every file is
    left as it was (the derived ones put back), no `repaired/` is left behind, exit 1."""
    root = _ledger(tmp_path / "L")
    segment = sorted((root / "segments").iterdir())[0]
    data = bytearray(segment.read_bytes())
    at = data.index(b'"seq":2')
    data[at + 6] = ord("7")
    segment.write_bytes(bytes(data))
    (root / "tile" / "0" / "000").unlink()
    before = snapshot(root)
    result = cli("repair", "--ledger", str(root), "--json")
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert not out["ok"] and out["refused"] and out["error"]
    assert {k: v for k, v in snapshot(root).items() if k != "lock"} == {k: v for k, v in before.items() if k != "lock"}
    assert not (root / "repaired").exists()


def test_repair_takes_the_writer_lock_and_keeps_old_files_only_inside_the_ledger(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "L")
    with store.Ledger.open(root), pytest.raises(LedgerLocked):
        ledger_repair.repair(root)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, root / "repaired")
    with pytest.raises(LedgerError, match="symbolic link"):
        ledger_repair.repair(root)
    assert not any(outside.iterdir()) and ledger.verify(root).ok
    (root / "repaired").unlink()
    first, second = ledger_repair.repair(root), ledger_repair.repair(root)  # two in the same second keep both
    assert first.kept != second.kept and first.kept and second.kept and first.kept.exists() and second.kept.exists()
