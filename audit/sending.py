"""`matchledger send`: a JSONL file sent to the service as signed batches, each receipt checked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec

from audit.client import Client
from ledger import Signer, Verifier, check_output, read_verifier_key, write_output
from schemas.codec import DEFAULT_MAX_ENTRY_BYTES, decode_line


def read_events(path: Path, max_bytes: int = DEFAULT_MAX_ENTRY_BYTES) -> list[bytes]:
    """Returns each non-blank line's canonical event bytes, checked against the contract first.

    :raises ContractError: naming the first line and field that break it.
    """
    lines = path.read_bytes().split(b"\n")
    return [decode_line(line.strip(), n, max_bytes)[1] for n, line in enumerate(lines, 1) if line.strip()]


def send_file(url: str, key: Path, path: Path, batch: int, log_key: Path | None, receipts: Path | None) -> dict[str, Any]:
    """Sends a file's events in batches of `batch`, in order; returns what was recorded.

    :raises SendError: at the first batch the service refuses (earlier batches stay recorded).
    """
    if receipts is not None:
        check_output(receipts)
    events = read_events(path)
    verifier: Verifier | None = read_verifier_key(log_key) if log_key else None
    got = asyncio.run(_send(url, Signer.load(key), verifier, [events[i:i + batch] for i in range(0, len(events), batch)]))
    if receipts is not None:
        write_output(receipts, b"".join(msgspec.json.encode(r) + b"\n" for r in got))
    indexes = [e.index for r in got for e in r.entries]
    size = msgspec.json.decode(got[-1].checkpoint.split("\n")[1]) if got else 0
    return {"events": len(events), "batches": len(got), "first": min(indexes, default=None), "last": max(indexes, default=None),
            "size": size, "signature_checked": verifier is not None}


async def _send(url: str, signer: Signer, verifier: Verifier | None, batches: list[list[bytes]]) -> list[Any]:
    async with Client(url, signer, verifier) as client:
        return [await client.send(b) for b in batches]
