"""Reads a ledger's entries back as events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ledger.frames import iter_entries
from schemas import decode
from schemas.envelope import Event


def read_events(root: Path) -> Iterator[Event]:
    """Yields every committed entry of a ledger, decoded, in log order."""
    for _, data in iter_entries(root):
        yield decode(data)
