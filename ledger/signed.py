"""What a reader reads, checked against the signed tree: the cheapest check that is sound for each
way of reading (issue 28.6: a reader never shows an entry edited inside the signed range).

- The whole log (`standings`, `query`, `replay`): the leaf hashes of the entries read, up to the
  newest checkpoint, must give its signed root.
- One stream (`show`, `replay --game`, `report --game`): its entries under the newest checkpoint, each with an
  inclusion proof from the stored tiles against a signed checkpoint and the stream's head under its
  commitment (the evidence bundle's check), so only that stream's entries are hashed.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from ledger.bundle import check_bundle, prove
from ledger.checkpoints import Checkpoint, newest_checkpoint
from ledger.errors import LedgerCorrupt, LedgerError
from ledger.fastscan import extend, leaf_hashes
from ledger.frames import StoredEntries, decode_keys, read_entries
from ledger.index import load_stream, read_head
from ledger.merkle import CompactRange
from ledger.store import load_verifier
from ledger.tiles import WIDTH, TileReader
from schemas import decode_stored, decode_stored_array
from schemas.envelope import Event

BATCH = 4096


def newest_signed(root: Path) -> Checkpoint:
    """Returns the newest checkpoint, verified under the log's key (ledger/anchor.py).

    :raises LedgerCorrupt: when there is none, or it does not verify.
    """
    checkpoint = newest_checkpoint(root, load_verifier(root))
    if checkpoint is None:
        raise LedgerCorrupt(None, f"{root} holds no signed checkpoint: nothing it holds can be shown as fact")
    return checkpoint


def check_signed(root: Path, log: StoredEntries) -> Checkpoint:
    """Checks that the entries read give the root of the newest signed checkpoint; returns it.

    :raises LedgerCorrupt: naming the first changed entry when they do not.
    """
    checkpoint = newest_signed(root)
    size = checkpoint.size
    if len(log) < size:
        raise LedgerCorrupt(len(log), f"the log holds {len(log)} entries, but checkpoint {size} signs {size}: entries were removed")
    ends, data = log.ends, log.data
    leaves = leaf_hashes([bytes(data[ends[i]:ends[i + 1]]) for i in range(size)])
    tree = CompactRange()
    extend(tree, leaves)
    if tree.root() != checkpoint.root:
        first = _first_changed(root, leaves, size)
        where = f"entry {first} differs from the hash the tiles hold for it" if first is not None else "an entry was changed"
        raise LedgerCorrupt(first, f"账本已签名部分被改动，拒绝显示 / the signed range was changed: {where}; entries 0–{size - 1} give "
                            f"root {tree.root().hex()}, checkpoint {size} signs {checkpoint.root.hex()} (run `matchledger verify`)")
    return checkpoint


def _first_changed(root: Path, leaves: bytes, size: int) -> int | None:
    """Returns the first entry whose leaf hash is not the stored tiles' (None when the tiles agree or cannot be read)."""
    reader = TileReader(root)
    try:  # tile by tile: `TileReader.hashes` reads within one tile
        stored = b"".join(reader.tile(0, n, min(WIDTH, size - n * WIDTH)) for n in range(-(-size // WIDTH)))
    except (LedgerError, OSError):
        return None
    return next((i for i in range(size) if leaves[32 * i:32 * i + 32] != stored[32 * i:32 * i + 32]), None)


def signed_stream(root: Path, stream: str) -> tuple[list[bytes], Checkpoint]:
    """Returns a stream's entries under the newest signed checkpoint, each proved included in the
    signed tree, and the checkpoint they are proved against (no entries: the newest).

    :raises LedgerCorrupt: when an entry, a tile or the stream's head does not match the signed root.
    """
    if read_head(root) is None:  # a ledger from before the index: its stream is found in the whole log, checked whole
        log = read_entries(root)
        checkpoint = check_signed(root, log)
        found = [bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(checkpoint.size)]
        return [data for data, key in zip(found, decode_keys(found, 0)) if key.stream == stream], checkpoint
    newest = newest_signed(root)
    if not any(e < newest.size for e in load_stream(root, stream).entries):
        return [], newest
    bundle = prove(root, stream)
    try:
        checked = check_bundle(bundle, load_verifier(root))
    except LedgerError as exc:
        raise LedgerCorrupt(None, f"账本已签名部分被改动，拒绝显示 / stream {stream!r} does not match the signed tree: {exc} "
                            f"(run `matchledger verify`)") from None
    return [item.entry.encode() for item in bundle.entries], checked.checkpoint


def signed_events(root: Path, stream: str | None = None) -> tuple[list[Event], Checkpoint]:
    """Returns the events a reader shows, decoded from the very bytes checked against the signed
    tree (one stream's, or the whole log's), and the checkpoint they were checked against.

    :raises LedgerCorrupt: when what was read does not match the signed root.
    """
    if stream is not None:
        entries, checkpoint = signed_stream(root, stream)
        return decode_stored(entries), checkpoint
    log = read_entries(root)
    checkpoint = check_signed(root, log)
    return [event for start in range(0, len(log), BATCH)
            for event in decode_stored_array(log.json_array(array("q", range(start, min(start + BATCH, len(log))))))], checkpoint
