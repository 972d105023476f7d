"""Exports of the log."""

from __future__ import annotations

from pathlib import Path

from ledger.frames import iter_entries
from ledger.outputs import output_file


def export_jsonl(root: Path, out: Path, force: bool = False) -> int:
    """Writes every entry exactly as stored, one per line; returns how many.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    """
    count = 0
    with output_file(out, force) as f:
        for _, data in iter_entries(root):
            f.write(data + b"\n")
            count += 1
    return count
