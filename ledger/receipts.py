"""Receipts: what the live service answers an accepted batch with, verifiable offline with the
log's public key alone.

A receipt names the batch (its source and the SHA-256 of its body), gives each event's log entry
with its stored bytes and inclusion proof, the batch's `source.batch` record with its own proof,
and the signed checkpoint all the proofs are against. Checking it shows that the log, as signed,
holds these events and the record of who sent them.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ledger.bundle import BundleError, EvidenceBundle
from ledger.checkpoints import Checkpoint, parse_checkpoint
from ledger.errors import SignatureError
from ledger.merkle import ProofError, inclusion_proof, leaf_hash, verify_inclusion
from ledger.notes import Verifier
from ledger.sources import expand_runs
from ledger.tiles import TileReader
from schemas import decode
from schemas.log import BatchReceived

FORMAT = "matchledger-receipt/1"


class ProvedEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One log entry: its index, its exact stored text and its inclusion proof (base64 hashes)."""

    index: int
    entry: str
    proof: list[str]


class Receipt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The proof that a batch is recorded: its events and its `source.batch` record in the signed log."""

    format: str
    source: str
    digest: str
    checkpoint: str
    batch: ProvedEntry
    entries: list[ProvedEntry]


class Subtrees:
    """The hashes of a tree's subtrees, read from its tiles and kept: the proofs of one checkpoint's
    receipts share most of their nodes (the entries of a commit are neighbours)."""

    def __init__(self, tiles: TileReader) -> None:
        self._tiles = tiles
        self._known: dict[tuple[int, int], bytes] = {}

    def __call__(self, lo: int, hi: int) -> bytes:
        node = self._known.get((lo, hi))
        if node is None:
            node = self._known[(lo, hi)] = self._tiles.subtree(lo, hi)
        return node


def prove_entry(tiles: TileReader | Subtrees, checkpoint: Checkpoint, index: int, data: bytes) -> ProvedEntry:
    """Returns an entry with its inclusion proof in the checkpoint's tree (read from the tiles)."""
    hashes = inclusion_proof(index, checkpoint.size, tiles if isinstance(tiles, Subtrees) else tiles.subtree)
    return ProvedEntry(index, data.decode(), [base64.b64encode(h).decode() for h in hashes])


def build_receipt(root: Path, checkpoint: Checkpoint, source: str, digest: str, record: tuple[int, bytes],
                  entries: Sequence[tuple[int, bytes]], tiles: Subtrees | None = None) -> Receipt:
    """Returns the receipt of a batch whose record and events the checkpoint covers (`tiles`, the
    subtrees of that checkpoint's tree, may be shared by the receipts of one checkpoint)."""
    tiles = tiles or Subtrees(TileReader(root))
    return Receipt(FORMAT, source, digest, checkpoint.note, prove_entry(tiles, checkpoint, *record),
                   [prove_entry(tiles, checkpoint, i, d) for i, d in entries])


def check_receipt(receipt: Receipt, verifier: Verifier | None, sent: Sequence[bytes] | None = None) -> Checkpoint:
    """Verifies a receipt offline: the checkpoint's signature (skipped when `verifier` is None: then
    only the proofs against the root the note states are checked), every inclusion proof, that the
    batch record names the receipt's source, digest and entries, and (given `sent`) that the entries
    are the events sent, in order.

    :raises BundleError: naming the first part that fails.
    """
    if receipt.format != FORMAT:
        raise BundleError(f"unknown receipt format {receipt.format!r}")
    try:
        checkpoint = parse_checkpoint(receipt.checkpoint, verifier) if verifier else _unsigned(receipt.checkpoint)
    except SignatureError as exc:
        raise BundleError(f"checkpoint: {exc}") from None
    for item in (receipt.batch, *receipt.entries):
        try:
            verify_inclusion(leaf_hash(item.entry.encode()), item.index, checkpoint.size,
                             [base64.b64decode(p) for p in item.proof], checkpoint.root)
        except (ProofError, ValueError) as exc:
            raise BundleError(f"entry {item.index}: {exc}") from None
    try:
        record = decode(receipt.batch.entry)
    except msgspec.DecodeError as exc:
        raise BundleError(f"entry {receipt.batch.index}: not a batch record: {exc}") from None
    if not isinstance(record, BatchReceived) or (record.source, record.digest) != (receipt.source, receipt.digest):
        raise BundleError(f"entry {receipt.batch.index} is not the record of a batch of {receipt.source!r} with digest {receipt.digest}")
    if expand_runs(record.entries) != [e.index for e in receipt.entries]:
        raise BundleError(f"the batch record names entries {record.entries}, the receipt others")
    if sent is not None and [e.entry.encode() for e in receipt.entries] != list(sent):
        raise BundleError("the receipt's entries are not the events sent")
    return checkpoint


def _unsigned(note: str) -> Checkpoint:
    """Reads a checkpoint note's body without checking a signature (a client that was given no key)."""
    lines = note.split("\n")
    try:
        return Checkpoint(lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True), note)
    except (IndexError, ValueError) as exc:
        raise BundleError(f"checkpoint: not a checkpoint note: {exc}") from None


class _Format(msgspec.Struct):
    format: str


def load_evidence(file: Path, data: bytes) -> EvidenceBundle | Receipt:
    """Reads an evidence bundle or a live service's receipt (the bytes of `file`), whichever its
    `format` names: one loader for both.

    :raises BundleError: naming the file, when it is neither.
    """
    try:
        receipt = msgspec.json.decode(data, type=_Format).format.startswith("matchledger-receipt/")
    except msgspec.DecodeError as exc:
        raise BundleError(f"{file}: not an evidence bundle or a receipt: {exc}") from None
    try:
        return msgspec.json.decode(data, type=Receipt) if receipt else msgspec.json.decode(data, type=EvidenceBundle)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{file}: not {'a receipt' if receipt else 'an evidence bundle'}: {exc}") from None
