"""`matchledger send`: a JSONL file sent to the service as signed batches, each receipt checked."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import msgspec

from audit.simulator.client import Client, SendError
from ledger import Receipt, Signer, Verifier, check_output, write_output
from ledger.sources import read_verifier_key
from schemas.codec import DEFAULT_MAX_ENTRY_BYTES, decode_line


def read_events(path: Path, max_bytes: int = DEFAULT_MAX_ENTRY_BYTES) -> list[tuple[int, bytes]]:
    """Returns each non-blank line's number and canonical event bytes, checked against the contract first.

    :raises ContractError: naming the first line and field that break it.
    """
    lines = path.read_bytes().split(b"\n")
    return [(n, decode_line(line.strip(), n, max_bytes)[1]) for n, line in enumerate(lines, 1) if line.strip()]


def send_file(url: str, key: Path, path: Path, batch: int, log_key: Path | None, receipts: Path | None) -> dict[str, Any]:
    """Sends a file's events in batches of `batch`, in order; returns what was recorded. The
    receipts of the batches acknowledged are written to `receipts` (one a line), also when a later
    batch is refused.

    :raises SendError: at the first batch the service refuses, saying which batches were
        acknowledged before it and naming the file's line where the service names one.
    """
    if receipts is not None:
        check_output(receipts)
    events = read_events(path)
    verifier: Verifier | None = read_verifier_key(log_key) if log_key else None
    batches = [events[i:i + batch] for i in range(0, len(events), batch)]
    got, refused = asyncio.run(_send(url, Signer.load(key), verifier, [[data for _, data in b] for b in batches]))
    if receipts is not None and got:
        write_output(receipts, b"".join(msgspec.json.encode(r) + b"\n" for r in got))
    if refused is not None:
        raise _in_file(refused, path, batches, len(got), receipts)
    indexes = [e.index for r in got for e in r.entries]
    size = msgspec.json.decode(got[-1].checkpoint.split("\n")[1]) if got else 0
    return {"events": len(events), "batches": len(got), "first": min(indexes, default=None), "last": max(indexes, default=None),
            "size": size, "signature_checked": verifier is not None}


async def _send(url: str, signer: Signer, verifier: Verifier | None, batches: list[list[bytes]]) -> tuple[list[Receipt], SendError | None]:
    """Sends the batches in order; returns the receipts got and the refusal that stopped it, if one did."""
    got: list[Receipt] = []
    async with Client(url, signer, verifier) as client:
        for body in batches:
            try:
                got.append(await client.send(body))
            except SendError as exc:
                return got, exc
    return got, None


def _in_file(refused: SendError, path: Path, batches: list[list[tuple[int, bytes]]], acknowledged: int, receipts: Path | None) -> SendError:
    """Returns the refusal of batch `acknowledged` told in the file's terms: its lines, the line the
    service named (in the file, not in the batch), and the batches acknowledged before it."""
    lines = batches[acknowledged]
    message = re.sub(r"^(?:第 \d+ 行 )?line \d+: ", "", refused.message)  # the body line, told again as the file line
    line = lines[refused.line - 1][0] if refused.line is not None and 0 < refused.line <= len(lines) else None
    where = f"{path} line {line}" if line is not None else f"{path} lines {lines[0][0]}–{lines[-1][0]}"
    if acknowledged:
        done = batches[acknowledged - 1][-1][0]
        kept = f"; their receipts are in {receipts}" if receipts is not None else ""
        before = f"batches 1–{acknowledged} (lines {batches[0][0][0]}–{done}) were acknowledged{kept}"
    else:
        before = "no batch was acknowledged"
    return SendError(refused.status, refused.reason, f"第 {acknowledged + 1} 批被拒 / batch {acknowledged + 1} of {len(batches)} "
                     f"refused at {where}: {message} ({before})", line)
