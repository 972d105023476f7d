"""Evidence bundles: one stream's entries with inclusion proofs against a signed checkpoint,
verifiable offline with the ledger's public key alone."""

from __future__ import annotations

import base64
import bisect
from pathlib import Path

import msgspec

from ledger.checkpoints import Checkpoint, checkpoint_path, list_checkpoint_names, newest_checkpoint, parse_checkpoint, read_note_file
from ledger.errors import LedgerCorrupt, LedgerError, SignatureError
from ledger.frames import decode_key, stream_entries
from ledger.merkle import ProofError, consistency_proof, inclusion_proof, leaf_hash, verify_consistency, verify_inclusion
from ledger.notes import Verifier
from ledger.store import load_verifier
from ledger.tiles import TileReader

FORMAT = "matchledger-evidence/1"


class BundleEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of a bundle: its log index, its exact stored text and its inclusion proof."""

    index: int
    entry: str
    proof: list[str]


class EvidenceBundle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stream's entries, each with an inclusion proof against the signed checkpoint."""

    format: str
    stream: str
    checkpoint: str
    entries: list[BundleEntry]


class BundleError(LedgerError):
    """An evidence bundle does not verify."""




def prove(root: Path, stream: str) -> EvidenceBundle:
    """Builds the evidence bundle of one stream against the latest checkpoint, reading the
    stream's entries through the index and O(log n) hashes per proof from the tiles.

    :raises LedgerError: when the stream has no entries under the checkpoint.
    """
    checkpoint = newest_checkpoint(root, load_verifier(root))
    if checkpoint is None or checkpoint.size == 0:
        raise LedgerError(f"ledger {root} has no non-empty checkpoint to prove against")
    mine = stream_entries(root, stream, checkpoint.size)
    if not mine:
        raise LedgerError(f"stream {stream!r} has no entries in the first {checkpoint.size} entries of the log")
    tiles = TileReader(root)
    if tiles.edge(checkpoint.size).root() != checkpoint.root:
        raise LedgerCorrupt(None, f"the stored tiles do not give the root of checkpoint {checkpoint.size}")
    entries = [
        BundleEntry(index, data.decode(), [base64.b64encode(h).decode() for h in inclusion_proof(index, checkpoint.size, tiles.subtree)])
        for index, data in mine
    ]
    return EvidenceBundle(FORMAT, stream, checkpoint.note, entries)


def check_bundle(bundle: EvidenceBundle, verifier: Verifier) -> Checkpoint:
    """Verifies a bundle offline: the checkpoint's signature, every inclusion proof, and that the
    entries are the stream's events 0, 1, 2 … in log order.

    :raises BundleError: naming the first entry or part that fails.
    """
    if bundle.format != FORMAT:
        raise BundleError(f"unknown bundle format {bundle.format!r}")
    try:
        checkpoint = parse_checkpoint(bundle.checkpoint, verifier)
    except SignatureError as exc:
        raise BundleError(f"checkpoint: {exc}") from None
    last = -1
    for n, item in enumerate(bundle.entries):
        data = item.entry.encode()
        try:
            key = decode_key(data, item.index)
        except LedgerCorrupt as exc:
            raise BundleError(str(exc)) from None
        if key.stream != bundle.stream or key.seq != n or item.index <= last:
            raise BundleError(f"entry {item.index}: expected seq {n} of stream {bundle.stream!r} after entry {last}")
        try:
            verify_inclusion(leaf_hash(data), item.index, checkpoint.size, [base64.b64decode(p) for p in item.proof], checkpoint.root)
        except ProofError as exc:
            raise BundleError(f"entry {item.index}: {exc}") from None
        last = item.index
    return checkpoint


def load_bundle(path: Path) -> EvidenceBundle:
    """Reads a bundle file.

    :raises BundleError: when it is not a bundle.
    """
    try:
        return msgspec.json.decode(path.read_bytes(), type=EvidenceBundle)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{path}: not an evidence bundle: {exc}") from None


class ConsistencyProof(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A proof that the log at one signed checkpoint is a prefix of the log at a later one."""

    old: str
    new: str
    proof: list[str]


def prove_consistency(root: Path, old: int, new: int | None = None) -> ConsistencyProof:
    """Proves that stored checkpoint `old` is a prefix of stored checkpoint `new` (the latest by
    default), from the stored entries, and checks the proof before returning it.

    :raises LedgerError: when either size has no stored checkpoint.
    """
    verifier = load_verifier(root)
    if new is None:
        newest = newest_checkpoint(root, verifier)
        new = newest.size if newest else 0
    for size in (old, new):
        if not checkpoint_path(root, size).is_file():  # the listing only on this error path: it grows with the log
            sizes = [n for n, _ in list_checkpoint_names(root)]
            at = bisect.bisect_left(sizes, size)
            near = ", ".join(map(str, sizes[max(0, at - 2):at + 2]))
            raise LedgerError(f"no checkpoint of size {size}; {len(sizes)} are stored, the nearest: {near}")
    first, last = (parse_checkpoint(read_note_file(checkpoint_path(root, s)), verifier) for s in (old, new))
    proof = consistency_proof(old, new, TileReader(root).subtree) if 0 < old < new else []
    item = ConsistencyProof(first.note, last.note, [base64.b64encode(h).decode() for h in proof])
    check_consistency(item, verifier)
    return item


def check_consistency(item: ConsistencyProof, verifier: Verifier) -> tuple[Checkpoint, Checkpoint]:
    """Verifies both checkpoints' signatures and the consistency proof between them.

    :raises BundleError: when a signature or the proof fails.
    """
    try:
        old, new = parse_checkpoint(item.old, verifier), parse_checkpoint(item.new, verifier)
        if old.size > 0:
            verify_consistency(old.size, new.size, old.root, new.root, [base64.b64decode(p) for p in item.proof])
    except (SignatureError, ProofError) as exc:
        raise BundleError(f"consistency: {exc}") from None
    return old, new
