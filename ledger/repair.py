"""Re-deriving what the entries determine: the hash tiles, the stream index and its head.

Someone with write access to the files but no key can delete or change a tile or an index file.
Verify names that (and the writer refuses to open on a changed tile of the newest checkpoint's
right edge). Left alone, the ledger would fail its audit for good, although these files hold
nothing the entries do not. `repair` takes the writer lock and moves them aside. The writer builds them again from the
entries, checked against the newest signed checkpoint as it goes, and then the whole ledger is
verified. The entries, the signed notes and `index/checkpoints` are never touched. When the
entries themselves do not match the signed checkpoints, nothing can be re-derived: the files are
put back as they were, and verify goes on naming the damage.

The files moved aside stay under `repaired/<time>/` in the ledger, because a changed or missing
tile is evidence of tampering. The report names each full tile and stream index file that was
missing or differed from its re-derivation.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ledger.frames import move_derived_aside, new_aside
from ledger.index import HEAD, INDEX, STREAMS
from ledger.store import Ledger, lock_ledger
from ledger.tiles import TILES
from ledger.verify import VerifyReport, verify

DERIVED = (TILES, f"{INDEX}/{HEAD}", f"{INDEX}/{STREAMS}")
"""What the entries determine, relative to the ledger's root."""


@dataclass
class RepairReport:
    """What a repair did: the entries it re-derived from, the files that were missing or differed,
    where the old files are, and the verification afterwards."""

    entries: int
    missing: list[str] = field(default_factory=list)
    differed: list[str] = field(default_factory=list)
    kept: Path | None = None
    verified: VerifyReport | None = None
    refused: str | None = None


def repair(root: Path, step: Callable[[str], object] = lambda _label: None) -> RepairReport:
    """Rebuilds a ledger's tiles, stream index and head from its entries, then verifies it;
    `step` hears each step's name as it starts (a progress display's).

    :raises LedgerLocked: when another writer holds the ledger.
    :raises LedgerError: when `repaired/` is a symbolic link.
    """
    lock = lock_ledger(root)
    try:
        aside = new_aside(root)
        moved = move_derived_aside(root, aside, DERIVED)
        step("rebuilding from the entries")
        try:
            with Ledger(root, lock=lock) as led:
                entries = led.size
        except Exception as exc:  # noqa: BLE001 - the entries disagree with the signed notes: nothing to re-derive
            _put_back(root, aside, moved)
            step("verifying")
            return RepairReport(0, refused=f"{type(exc).__name__}: {exc}", verified=verify(root))
    finally:
        os.close(lock)
    report = RepairReport(entries, kept=aside)
    step("comparing with the old files")
    report.missing, report.differed = _compare(root, aside)
    step("verifying")
    report.verified = verify(root)
    return report


def _put_back(root: Path, aside: Path, moved: list[str]) -> None:
    """Puts the moved files back in place of whatever the failed rebuild wrote."""
    for name in DERIVED:
        target = root / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        if name in moved:
            os.replace(aside / name, target)
    shutil.rmtree(aside)
    if not any(aside.parent.iterdir()):
        aside.parent.rmdir()


def _compare(root: Path, aside: Path) -> tuple[list[str], list[str]]:
    """Returns the full tiles and stream index files the re-derivation wrote that were missing
    before, and those whose old bytes differ (partial tiles and the head depend on when they were
    written, so they are not compared)."""
    missing, differed = [], []
    for base in (TILES, f"{INDEX}/{STREAMS}"):
        for path in sorted((root / base).rglob("*")):
            name = str(path.relative_to(root))
            if not path.is_file() or ".p/" in name:
                continue
            old = aside / name
            if not old.is_file():
                missing.append(name)
            elif old.read_bytes() != path.read_bytes():
                differed.append(name)
    return missing, differed
