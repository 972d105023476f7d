"""Recording: every input line checked against the contract and appended, all of a file as one batch."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, cast

from ledger.batch import Pending
from ledger.store import AppendResult, Ledger
from schemas.codec import ContractError, decode_line


def read_lines(source: BinaryIO, max_bytes: int) -> Iterator[bytes]:
    """Yields the lines of a file, refusing a line longer than the contract could ever accept
    before reading the rest of it (a 300 MB line never sits in memory).

    :raises ContractError: naming the line that is too long.
    """
    limit = 4 * max_bytes + 2  # decode_line's own limit on the raw line, and its line break
    for number in itertools.count(1):
        line = source.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            raise ContractError(number, f"line is longer than {limit} bytes, over the limit of {max_bytes} for one event")
        yield line


def pending_lines(lines: Iterable[bytes], max_bytes: int, own: bool = False) -> Iterator[Pending]:
    """Decodes each non-blank line (1-based numbering) into a pending event, one at a time (`own`:
    made by the ledger's own command, see `Pending`).

    :raises schemas.ContractError: at the first line that breaks the contract.
    """
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped:
            event, data = decode_line(stripped, number, max_bytes)
            yield Pending(number, event, data, own)


def validate_lines(lines: Iterable[bytes], max_bytes: int) -> list[Pending]:
    """Decodes every non-blank line into a pending event (a batch held whole, for callers that
    want one).

    :raises schemas.ContractError: at the first line that breaks the contract.
    """
    return list(pending_lines(lines, max_bytes))


def record(root: Path, source: BinaryIO | Iterable[bytes], own: bool = False) -> AppendResult:
    """Records a file (read line by line, each bounded) or a list of lines of JSON events,
    all-or-nothing, and signs a checkpoint at the end. The lines are checked and written a
    piece at a time, so memory stays bounded whatever the size of the file. A file is a sender's:
    the log's own kinds and `log.*` streams are refused in it; only the ledger's own commands
    (`appeal register`) pass `own`.

    :raises schemas.ContractError: on a line that breaks the contract; nothing is appended.
    :raises ledger.errors.SequenceError: on a gap, a conflict or a log's own kind or stream; nothing is appended.
    """
    with Ledger.open(root) as ledger:
        limit = ledger.config.max_entry_bytes
        lines = read_lines(cast(BinaryIO, source), limit) if hasattr(source, "readline") else source
        result = ledger.append(pending_lines(lines, limit, own))
        ledger.checkpoint()
        return result
