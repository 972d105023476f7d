"""Receipts: what the live service answers an accepted batch with, verifiable offline with the
log's public key alone.

A receipt names the batch (its source and the SHA-256 of its body), gives each event's log entry
with its stored bytes and inclusion proof, the batch's `source.batch` record with its own proof,
and the signed checkpoint all the proofs are against. Checking it shows that the log, as signed,
holds these events and the record of who sent them.
"""

from __future__ import annotations

import base64
import bisect
from binascii import b2a_base64
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from ledger.bundle import BundleError, EvidenceBundle
from ledger.checkpoints import Checkpoint, parse_checkpoint
from ledger.errors import SignatureError
from ledger.merkle import ProofError, inclusion_proof, leaf_hash, node_hash, split_point, verify_inclusion
from ledger.notes import Verifier
from ledger.sources import expand_runs
from ledger.tiles import HASH, TileReader
from schemas import decode
from schemas.log import BATCHES_STREAM, BatchReceived

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
    """The hashes of a tree's subtrees, read from its tiles and kept, with their base64 text: the
    proofs of one checkpoint's receipts share most of their nodes (the entries of a commit are
    neighbours), so each node is read and encoded once per checkpoint, not once per proof."""

    def __init__(self, tiles: TileReader) -> None:
        self._tiles = tiles
        self._known: dict[tuple[int, int], bytes] = {}
        self._node = tiles.subtree if isinstance(tiles, KeptNodes) else self  # (KeptNodes keeps every node itself)
        self._text: dict[bytes, str] = {}  # each node's base64, by its hash
        self._paths: dict[tuple[int, int], list[str]] = {}  # prepared proofs, by (entry, tree size)

    def __call__(self, lo: int, hi: int) -> bytes:
        node = self._known.get((lo, hi))
        if node is None:
            node = self._known[(lo, hi)] = self._tiles.subtree(lo, hi)
        return node

    def path(self, index: int, size: int) -> list[str]:
        """Returns PATH(index, D[0:size]) of RFC 6962 (as `inclusion_proof`), each hash in base64."""
        known = self._paths.get((index, size))
        if known is not None:
            return known
        text = self._text
        return [text.get(node) or text.setdefault(node, b2a_base64(node, newline=False).decode())
                for node in inclusion_proof(index, size, self)]

    def prepare(self, indexes: Iterable[int], size: int) -> None:
        """Computes PATH(i, D[0:size]) for many entries at once, for `path` to return: one walk down
        the tree for all of them, each node above several of them (a commit's entries are
        neighbours) looked up and encoded once, not once per proof."""
        paths: dict[int, list[str]] = {i: [] for i in indexes if 0 <= i < size}
        text, encode, subtree = self._text, _b64, self._node
        walk = [(0, size, sorted(paths))]
        while walk:
            lo, hi, group = walk.pop()
            if hi - lo < 2:
                continue
            mid = lo + split_point(hi - lo)
            cut = bisect.bisect_left(group, mid)
            for sibling, part in (((mid, hi), group[:cut]), ((lo, mid), group[cut:])):
                if part:
                    node = subtree(*sibling)
                    hashed = text.get(node) or text.setdefault(node, encode(node))
                    for i in part:
                        paths[i].append(hashed)
            if cut:
                walk.append((lo, mid, group[:cut]))
            if cut < len(group):
                walk.append((mid, hi, group[cut:]))
        for i, path in paths.items():
            path.reverse()  # bottom-up, as inclusion_proof
            self._paths[(i, size)] = path


class KeptNodes(TileReader):
    """The tree's nodes, each kept once computed: in an append-only log MTH(D[lo:hi]) never changes
    once its leaves exist, so the proofs of every later checkpoint reuse them, and the right edge
    of each new tree costs only the nodes its new entries add. Nodes over the first `tiled`
    entries (whose tiles are stored) are read from the tiles; beyond them, from the leaf hashes the
    writer adds with each commit (hashed from the bytes it appended), so no commit reads a tile."""

    def __init__(self, root: Path, tiled: int) -> None:
        super().__init__(root)
        self.tiled = tiled
        self._leaves: list[bytes] = []  # the leaf hashes of entries tiled, tiled + 1, …
        self._kept: dict[tuple[int, int], bytes] = {}

    @property
    def end(self) -> int:
        """Returns the number of entries whose nodes this can give."""
        return self.tiled + len(self._leaves)

    def add(self, entries: list[bytes]) -> None:
        """Adds the next entries (their stored bytes)."""
        self._leaves += map(leaf_hash, entries)

    def add_leaves(self, leaves: bytes) -> None:
        """Adds the next entries by their leaf hashes (32 bytes each, as the append computed them)."""
        self._leaves += [leaves[i:i + HASH] for i in range(0, len(leaves), HASH)]

    def subtree(self, lo: int, hi: int) -> bytes:
        """Returns MTH(D[lo:hi]); an uneven range is split through this method, so its parts are kept too."""
        node = self._kept.get((lo, hi))
        if node is None:
            if hi <= self.tiled:
                node = super().subtree(lo, hi)
            elif hi - lo == 1:
                node = self._leaves[lo - self.tiled]
            else:
                k = split_point(hi - lo)
                node = node_hash(self.subtree(lo, lo + k), self.subtree(lo + k, hi))
            self._kept[(lo, hi)] = node
        return node


def _b64(node: bytes) -> str:
    return b2a_base64(node, newline=False).decode()


def prove_entry(tiles: TileReader | Subtrees, checkpoint: Checkpoint, index: int, data: bytes) -> ProvedEntry:
    """Returns an entry with its inclusion proof in the checkpoint's tree (read from the tiles)."""
    if isinstance(tiles, Subtrees):
        return ProvedEntry(index, data.decode(), tiles.path(index, checkpoint.size))
    hashes = inclusion_proof(index, checkpoint.size, tiles.subtree)
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
    if not isinstance(record, BatchReceived) or record.stream != BATCHES_STREAM:  # only the writer's records, in `log.batches`
        raise BundleError(f"entry {receipt.batch.index} is not a batch record of the log's stream {BATCHES_STREAM!r}")
    if (record.source, record.digest) != (receipt.source, receipt.digest):
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


def _receipt_lines(file: Path, data: bytes) -> list[Receipt]:
    """Reads a file of receipts, one a line (blank lines skipped).

    :raises BundleError: naming the file and the line that is not a receipt.
    """
    receipts = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            try:
                receipts.append(msgspec.json.decode(line, type=Receipt))
            except msgspec.DecodeError as exc:
                raise BundleError(f"{file} line {number}: not a receipt: {exc}") from None
    return receipts


class _Format(msgspec.Struct):
    format: str


def _is_receipt(line: bytes) -> bool:
    """Tells whether a line is a JSON object whose `format` is a receipt's."""
    try:
        return msgspec.json.decode(line, type=_Format).format.startswith("matchledger-receipt/")
    except msgspec.DecodeError:
        return False


def load_evidence(file: Path, data: bytes) -> EvidenceBundle | Receipt | list[Receipt]:
    """Reads an evidence bundle, a live service's receipt, or a file of receipts one a line (as
    `send --receipts` writes it; a list), whichever its `format` names: one loader for all.

    :raises BundleError: naming the file (and the line of a file of receipts), when it is none of them.
    """
    try:
        receipt = msgspec.json.decode(data, type=_Format).format.startswith("matchledger-receipt/")
    except msgspec.DecodeError as exc:
        if _is_receipt(next((line for line in data.split(b"\n") if line.strip()), b"")):
            return _receipt_lines(file, data)
        raise BundleError(f"{file}: not an evidence bundle or a receipt: {exc}") from None
    try:
        return msgspec.json.decode(data, type=Receipt) if receipt else msgspec.json.decode(data, type=EvidenceBundle)
    except msgspec.DecodeError as exc:
        raise BundleError(f"{file}: not {'a receipt' if receipt else 'an evidence bundle'}: {exc}") from None
