"""Recording: validate every input line against the contract, then append them as one batch."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ledger.store import AppendResult, Ledger, Pending
from schemas.codec import decode_line


def validate_lines(lines: Iterable[bytes], max_bytes: int) -> list[Pending]:
    """Decodes every non-blank line (1-based numbering) into a pending event.

    :raises schemas.ContractError: at the first line that breaks the contract.
    """
    batch = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped:
            event, data = decode_line(stripped, number, max_bytes)
            batch.append(Pending(number, event, data))
    return batch


def record(root: Path, lines: Iterable[bytes]) -> AppendResult:
    """Records a file of JSON events all-or-nothing and signs a checkpoint at the end.

    :raises schemas.ContractError: on a line that breaks the contract; nothing is appended.
    :raises ledger.errors.SequenceError: on a gap or conflict; nothing is appended.
    """
    with Ledger.open(root) as ledger:
        batch = validate_lines(lines, ledger.config.max_entry_bytes)
        result = ledger.append(batch)
        ledger.checkpoint()
        return result
