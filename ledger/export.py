"""Exports of the log."""

from __future__ import annotations

from pathlib import Path

from ledger.frames import iter_entries


def export_jsonl(root: Path, out: Path) -> int:
    """Writes every entry exactly as stored, one per line; returns how many."""
    count = 0
    with open(out, "wb") as f:
        for _, data in iter_entries(root):
            f.write(data + b"\n")
            count += 1
    return count
