"""Evidence bundles: one stream's entries with inclusion proofs against a signed checkpoint,
verifiable offline with the ledger's public key alone."""

from __future__ import annotations

import base64
import bisect
import hashlib
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ledger.checkpoints import Checkpoint, checkpoint_sizes, has_note, kept_note, newest_checkpoint, parse_checkpoint
from ledger.commitments import UNKNOWN, HeadProof, StreamHead, check_head, open_history, prove_head, read_heads_line
from ledger.errors import LedgerCorrupt, LedgerError, SignatureError
from ledger.frames import committed_streams, decode_key, interval_keys
from ledger.merkle import ProofError, consistency_proof, inclusion_proof, leaf_hash, verify_consistency, verify_inclusion
from ledger.notes import Verifier, split_note
from ledger.sources import expand_runs, note_identity, old_message, parse_signature, signed_message
from ledger.state import StateError, StateProof, check_state_proof, state_proof
from ledger.store import load_verifier
from ledger.tiles import TileReader
from schemas import decode
from schemas.log import BATCHES_STREAM, BatchReceived

FORMAT = "matchledger-evidence/3"
FORMATS = ("matchledger-evidence/1", "matchledger-evidence/2", FORMAT)
"""Bundles of format 1 carry no stream head: they prove inclusion only; format 2 no state proof."""


class BundleEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of a bundle: its log index, its exact stored text and its inclusion proof."""

    index: int
    entry: str
    proof: list[str]


class Anchor(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """For a bundle proved against a later checkpoint than the one that first covers its stream (one
    an arbiter co-signed, say): that covering checkpoint, whose commitment holds the stream's head,
    and the consistency proof from it to the bundle's checkpoint (base64 hashes)."""

    checkpoint: str
    consistency: list[str]


class EvidenceBundle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stream's entries, each with an inclusion proof against the signed checkpoint; the stream's
    head under the checkpoint's stream commitment, which proves there are no others; and `senders`,
    the `source.batch` records (with their proofs) of the batches that brought them, when the live
    service recorded them: who sent each event, under which signature."""

    format: str
    stream: str
    checkpoint: str
    entries: list[BundleEntry]
    head: HeadProof | None = None
    senders: list[BundleEntry] = []
    anchor: Anchor | None = None
    state: StateProof | None = None
    """The state of all streams signed at the index head's size (`ledger/state.py`): the stream's
    records there, so that a later note than the covering one proves the bundle still whole."""


@dataclass(frozen=True)
class BundleCheck:
    """What a verified bundle proves: its entries are in the log of the checkpoint and, when
    `complete`, they are every entry the stream had at that size."""

    checkpoint: Checkpoint
    complete: bool
    as_of: Checkpoint | None = None
    """A later checkpoint whose signed state shows the stream had these entries and no more (None: none)."""

    def statement(self, bundle: EvidenceBundle) -> str:
        """Says in words what was proved, zh-Hans first, then English."""
        cp, n = self.checkpoint, len(bundle.entries)
        if self.complete and self.as_of is not None and self.as_of.size > cp.size:
            later = self.as_of
            return (f"流 {bundle.stream} 在大小为 {later.size}、由 {later.origin} 签名的日志中恰有 {n} 个条目（第 0–{n - 1} 号），本证明包含全部"
                    f"（条目证明于大小 {cp.size}，其后签名的流状态表明此后没有该流的条目）/ stream {bundle.stream} had exactly {n} "
                    f"{'entry' if n == 1 else 'entries'} (seq 0–{n - 1}) in the log of size {later.size} (root {later.root.hex()}), "
                    f"signed by {later.origin}; the bundle holds {'it' if n == 1 else 'all of them'} (proved included at size "
                    f"{cp.size}; the state signed at {later.size} shows none after). Entries appended after size {later.size} are not covered")
        where_zh = f"大小为 {cp.size}、由 {cp.origin} 签名的日志"
        where = f"the log of size {cp.size} (root {cp.root.hex()}), signed by {cp.origin}"
        if self.complete:
            return (f"流 {bundle.stream} 在{where_zh}中恰有 {n} 个条目（第 0–{n - 1} 号），本证明包含全部；大小 {cp.size} 之后追加的条目不在其内 / "
                    f"stream {bundle.stream} had exactly {n} {'entry' if n == 1 else 'entries'} (seq 0–{n - 1}) in {where}; "
                    f"the bundle holds {'it' if n == 1 else 'all of them'}. "
                    f"Entries appended after size {cp.size} are not covered")
        return (f"{bundle.stream} 的第 0–{n - 1} 号条目按序且无缺口地属于{where_zh}；此检查点早于流承诺，故不能证明该流此后没有条目 / "
                f"seq 0–{n - 1} of {bundle.stream}, in order and without a gap, are entries of {where}; this checkpoint "
                f"predates stream commitments, so the bundle does not prove the stream has no later entries")


class BundleError(LedgerError):
    """An evidence bundle does not verify."""




def prove(root: Path, stream: str, size: int | None = None, cosigned: bool = False) -> EvidenceBundle:
    """Builds the evidence bundle of one stream against the checkpoint that first covers its last
    entry (whose stream commitment holds the stream's head), reading the stream's entries through
    the index, O(log n) hashes per proof from the tiles, and the frames of that checkpoint's interval.
    With `size`, against the kept note of that size instead, and with `cosigned`, against the newest
    kept note that an arbiter co-signed: their co-signatures travel with the bundle (a later note
    than the covering one proves inclusion only: its commitment names other streams' heads).

    :raises LedgerError: when the stream has no entries under the newest checkpoint, or the note
        asked for does not exist or does not cover the stream's last entry.
    """
    verifier = load_verifier(root)
    newest = newest_checkpoint(root, verifier)
    if newest is None or newest.size == 0:
        raise LedgerError(f"ledger {root} has no non-empty checkpoint to prove against")
    committed = committed_streams(root, [stream, BATCHES_STREAM], newest.size)
    if not committed[stream]:
        raise LedgerError(f"stream {stream!r} has no entries in the first {newest.size} entries of the log")
    last = committed[stream][-1][0]
    checkpoint, head = _covering_checkpoint(root, stream, last, newest, verifier)
    chosen = _chosen_checkpoint(root, verifier, last, newest, size, cosigned)
    anchor_of: Checkpoint | None = None
    if chosen is not None and chosen.size != checkpoint.size:
        anchor_of = checkpoint if head is not None else None  # completeness stays proved by the covering commitment
        checkpoint = chosen
    elif chosen is not None:
        checkpoint = chosen  # the covering size's note, with the co-signatures its file holds
    mine = [(i, d) for i, d in committed[stream] if i < checkpoint.size]
    tiles = TileReader(root)
    if tiles.edge(checkpoint.size).root() != checkpoint.root:
        raise LedgerCorrupt(None, f"存储的哈希瓦片算不出大小 {checkpoint.size} 的检查点的根 / "
                            f"the stored tiles do not give the root of checkpoint {checkpoint.size}")
    def proved(index: int, data: bytes) -> BundleEntry:
        return BundleEntry(index, data.decode(), [base64.b64encode(h).decode() for h in inclusion_proof(index, checkpoint.size, tiles.subtree)])

    records = [(i, d) for i, d in committed[BATCHES_STREAM] if i < checkpoint.size]
    senders = [proved(i, d) for i, d in batch_records(records, {i for i, _ in mine})]
    anchor = None
    if anchor_of is not None:
        proof = consistency_proof(anchor_of.size, checkpoint.size, tiles.subtree)
        anchor = Anchor(anchor_of.note, [base64.b64encode(h).decode() for h in proof])
    state = _state_of(root, stream, verifier, newest, checkpoint, tiles)
    return EvidenceBundle(FORMAT, stream, checkpoint.note, [proved(i, d) for i, d in mine], head, senders, anchor, state)


def _state_of(root: Path, stream: str, verifier: Verifier, newest: Checkpoint, checkpoint: Checkpoint, tiles: TileReader) -> StateProof | None:
    """Returns the stream's state proof at the index head's size, with the consistency proof between
    that size and the bundle's checkpoint (None: the ledger's notes predate states)."""
    proved = state_proof(root, stream, verifier, newest)
    if proved is None:
        return None
    proof, size = proved[0], proved[1].size
    low, high = sorted((size, checkpoint.size))
    consistency = consistency_proof(low, high, tiles.subtree) if low != high else []
    return msgspec.structs.replace(proof, consistency=[base64.b64encode(h).decode() for h in consistency])


def _chosen_checkpoint(root: Path, verifier: Verifier, last: int, newest: Checkpoint, size: int | None, cosigned: bool) -> Checkpoint | None:
    """Returns the checkpoint `prove --size` or `--cosigned` asks for (None: the covering one).

    :raises LedgerError: when there is no such kept note, or it does not cover entry `last`.
    """
    if size is None and not cosigned:
        return None
    sizes = [size] if size is not None else [s for s in reversed(checkpoint_sizes(root)) if last < s <= newest.size]
    for candidate in sizes:
        try:
            checkpoint = parse_checkpoint(kept_note(root, candidate), verifier)
        except FileNotFoundError:
            raise LedgerError(f"没有该大小的检查点 / no checkpoint of size {candidate} is kept (sizes signed: checkpoints/)") from None
        if not cosigned or any(name != verifier.name for name, _ in split_note(checkpoint.note)[1]):
            if checkpoint.size <= last:
                raise LedgerError(f"该检查点未涵盖此流的最后条目 / checkpoint {checkpoint.size} does not cover the stream's last entry ({last}): "
                                  f"give a size above {last}")
            return checkpoint
    raise LedgerError(f"没有涵盖此流的联署检查点 / no co-signed checkpoint covers the stream's last entry ({last}): run `matchledger cosign` first")


def _covering_checkpoint(root: Path, stream: str, last: int, newest: Checkpoint, verifier: Verifier) -> tuple[Checkpoint, HeadProof | None]:
    """Returns the first checkpoint after entry `last` and the stream's head under its commitment
    (re-derived from the keys of the entries since the checkpoint before it); the newest checkpoint
    and no head for a ledger whose history or commitment predates them."""
    with open_history(root) as history:
        n = history.first_above(last) if history is not None else 0
        if history is None or n >= len(history):
            return newest, None
        size = history.size(n)
        before, segment, offset = history.position(n - 1)
    checkpoint = newest if size == newest.size else parse_checkpoint(kept_note(root, size), verifier)
    committed = read_heads_line(checkpoint.extensions)
    if committed is None or segment == UNKNOWN:
        return checkpoint, None
    heads: dict[str, StreamHead] = {}
    for entry, key in enumerate(interval_keys(root, segment, offset, before, size - before), before):
        heads[key.stream] = StreamHead(key.stream, key.seq + 1, entry)
    return checkpoint, prove_head(list(heads.values()), stream, committed)


def check_bundle(bundle: EvidenceBundle, verifier: Verifier) -> BundleCheck:
    """Verifies a bundle offline: the checkpoint's signature, every inclusion proof, that the
    entries are the stream's events 0, 1, 2 … in log order and, where the checkpoint commits to
    stream heads, that they are all of the stream's entries at that size.

    :raises BundleError: naming the first entry or part that fails.
    """
    if bundle.format not in FORMATS:
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
    _check_senders(bundle, checkpoint)
    complete = _check_complete(bundle, _anchor(bundle, checkpoint, verifier), last)
    return BundleCheck(checkpoint, complete, _check_state(bundle, checkpoint, verifier))


def _check_state(bundle: EvidenceBundle, checkpoint: Checkpoint, verifier: Verifier) -> Checkpoint | None:
    """Checks the bundle's state proof: its note consistent with the bundle's checkpoint, and the
    stream's records there those of the bundle. Returns that note (None: the bundle has no state).

    :raises BundleError: when the proof fails.
    """
    if bundle.state is None:
        return None
    try:
        note = check_state_proof(bundle.state, bundle.stream, [item.index for item in bundle.entries], verifier)
        (low, low_root), (high, high_root) = sorted(((note.size, note.root), (checkpoint.size, checkpoint.root)))
        verify_consistency(low, high, low_root, high_root, [base64.b64decode(h) for h in bundle.state.consistency])
    except (StateError, ProofError, ValueError) as exc:
        raise BundleError(f"state: {exc}") from None
    return note


def _anchor(bundle: EvidenceBundle, checkpoint: Checkpoint, verifier: Verifier) -> Checkpoint:
    """Returns the checkpoint whose commitment holds the stream's head: the bundle's own, or its
    anchor, once the anchor's signature and its consistency with the bundle's checkpoint check out.

    :raises BundleError: when the anchor does not verify or is not a prefix of the checkpoint.
    """
    if bundle.anchor is None:
        return checkpoint
    try:
        anchor = parse_checkpoint(bundle.anchor.checkpoint, verifier)
        verify_consistency(anchor.size, checkpoint.size, anchor.root, checkpoint.root, [base64.b64decode(h) for h in bundle.anchor.consistency])
    except (SignatureError, ProofError, ValueError) as exc:
        raise BundleError(f"anchor: {exc}") from None
    return anchor


def _check_complete(bundle: EvidenceBundle, checkpoint: Checkpoint, last: int) -> bool:
    """Checks the stream head against the checkpoint's commitment; tells whether completeness is proved.

    :raises BundleError: when the checkpoint commits to stream heads and the bundle's head is
        missing, wrong, or does not match its entries.
    """
    committed = read_heads_line(checkpoint.extensions)
    if committed is None:
        return False
    head = bundle.head
    if head is None:
        raise BundleError(f"the checkpoint of size {checkpoint.size} commits to its streams' heads, but the bundle carries no head "
                          f"for {bundle.stream!r}: it cannot show that it holds every entry")
    try:
        check_head(head, bundle.stream, committed)
    except ProofError as exc:
        raise BundleError(f"{exc}: the checkpoint does not record stream {bundle.stream!r} with {head.count} entries ending at "
                          f"entry {head.last}") from None
    if head.count != len(bundle.entries) or head.last != last:
        raise BundleError(f"the log had {head.count} entries of {bundle.stream!r} at size {checkpoint.size}, the last at entry "
                          f"{head.last}; the bundle holds {len(bundle.entries)}, the last at entry {last}: entries were removed")
    return True


def batch_records(records: list[tuple[int, bytes]], entries: set[int]) -> list[tuple[int, bytes]]:
    """Returns the `source.batch` records (index, stored bytes) among `records` (of `log.batches`)
    that name any of `entries`."""
    found = []
    for index, data in records:
        record = decode(data)
        if isinstance(record, BatchReceived) and entries.intersection(expand_runs(record.entries)):
            found.append((index, data))
    return found


def _check_senders(bundle: EvidenceBundle, checkpoint: Checkpoint) -> None:
    """Checks each sender record's inclusion proof, and that it is a batch record naming entries of the bundle.

    :raises BundleError: naming the first record that fails.
    """
    mine = {item.index for item in bundle.entries}
    for item in bundle.senders:
        try:
            verify_inclusion(leaf_hash(item.entry.encode()), item.index, checkpoint.size, [base64.b64decode(p) for p in item.proof], checkpoint.root)
            record = decode(item.entry)
        except (ProofError, msgspec.DecodeError) as exc:
            raise BundleError(f"sender record {item.index}: {exc}") from None
        if not isinstance(record, BatchReceived) or record.stream != BATCHES_STREAM or not mine.intersection(expand_runs(record.entries)):
            raise BundleError(f"sender record {item.index} is not a batch record of {BATCHES_STREAM!r} naming entries of this bundle")


def verify_senders(bundle: EvidenceBundle, keys: dict[str, Verifier]) -> dict[int, str]:
    """Re-checks the batch signatures a bundle's sender records carry, with the sources' public keys
    (as registered in the log); returns the seq of each event whose sender is so proved, and the
    source. A batch that the service received in canonical form (as the package's client sends it)
    and that wrote only this stream is re-checkable from the bundle alone.

    :raises BundleError: when a checkable signature does not verify, or a source's key is not given.
    """
    try:
        origin = note_identity(bundle.checkpoint)  # the log the batches were signed for: origin and key id
    except SignatureError as exc:
        raise BundleError(str(exc)) from None
    by_index = {item.index: item for item in bundle.entries}
    seq_of = {item.index: n for n, item in enumerate(bundle.entries)}
    proved: dict[int, str] = {}
    for item in bundle.senders:
        record = decode(item.entry)
        assert isinstance(record, BatchReceived)
        indexes = expand_runs(record.entries)
        if not record.canonical or any(i not in by_index for i in indexes):
            continue
        body = b"".join(by_index[i].entry.encode() + b"\n" for i in indexes)
        key = keys.get(record.source)
        if key is None:
            raise BundleError(f"no public key given for source {record.source!r}")
        name, key_id, signature = parse_signature(record.signature)
        if hashlib.sha256(body).hexdigest() != record.digest or name != record.source or key_id != key.key_id \
                or not (key.verifies(signed_message(name, body, origin), signature)
                        or key.verifies(old_message(name, body), signature)):  # a record of a batch sent before the scheme named the log
            raise BundleError(f"sender record {item.index}: the signature of source {record.source!r} does not verify")
        proved.update({seq_of[i]: record.source for i in indexes})
    return proved


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
        if not has_note(root, size):  # the listing only on this error path: it grows with the log
            sizes = checkpoint_sizes(root)
            at = bisect.bisect_left(sizes, size)
            near = ", ".join(map(str, sizes[max(0, at - 2):at + 2]))
            raise LedgerError(f"no checkpoint of size {size}; {len(sizes)} are stored, the nearest: {near}")
    first, last = (parse_checkpoint(kept_note(root, s), verifier) for s in (old, new))
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
