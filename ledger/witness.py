"""Client-side checks that a log only grows: consistency proofs as files checked offline, and a
witness's memory of the last checkpoint it saw (as `rekor-cli loginfo` keeps one).

A consistency file holds the two tree sizes and the RFC 6962 proof between them; the two
checkpoints are the signed notes themselves (kept by a witness, served at `/checkpoint`, stored
in a ledger's `checkpoints/`), so that nothing in the file has to be trusted.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ledger.bundle import BundleError, check_consistency, prove_consistency
from ledger.checkpoints import Checkpoint, parse_checkpoint
from ledger.errors import SignatureError
from ledger.layout import write_atomic
from ledger.merkle import ProofError, consistency_proof, verify_consistency
from ledger.notes import Verifier
from ledger.store import load_verifier
from ledger.tiles import HASH, WIDTH, TileReader, index_path, level_count

CONSISTENCY_FORMAT = "matchledger-consistency/1"
ProofSource = Callable[[int, int], "ConsistencyFile"]
"""Fetches the consistency proof between two tree sizes (from a ledger, or from a log's URL)."""


TileFetch = Callable[[str], bytes]
"""Fetches one file of a tlog-tiles layout by its path (`tile/0/x001/234.p/17`), e.g. over HTTP."""


class WitnessError(BundleError):
    """A checkpoint does not extend the one seen before, or a proof or a state file is unusable."""


class ConsistencyFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An RFC 6962 consistency proof from tree size `old` to tree size `new`, base64 hashes."""

    format: str
    old: int
    new: int
    proof: list[str]


def consistency_file(root: Path, old: int, new: int | None = None) -> ConsistencyFile:
    """Returns the consistency proof between two stored checkpoints of a ledger (the latest by default).

    :raises LedgerError: when either size has no stored checkpoint.
    """
    item = prove_consistency(root, old, new)
    first, last = check_consistency(item, load_verifier(root))
    return ConsistencyFile(CONSISTENCY_FORMAT, first.size, last.size, item.proof)


def encode_consistency(item: ConsistencyFile) -> bytes:
    """Returns the file's bytes: formatted JSON and a newline."""
    return msgspec.json.format(msgspec.json.encode(item)) + b"\n"


def decode_consistency(data: bytes, where: str) -> ConsistencyFile:
    """Reads a consistency file.

    :raises WitnessError: naming the file when it is not one.
    """
    try:
        item = msgspec.json.decode(data, type=ConsistencyFile)
    except msgspec.DecodeError as exc:
        raise WitnessError(f"{where}: not a consistency proof ({CONSISTENCY_FORMAT} JSON): {exc}") from None
    if item.format != CONSISTENCY_FORMAT:
        raise WitnessError(f"{where}: unknown format {item.format!r}, expected {CONSISTENCY_FORMAT}")
    return item


def read_checkpoint_note(note: str, verifier: Verifier, where: str) -> Checkpoint:
    """Verifies a checkpoint note by the log's key.

    :raises WitnessError: naming where the note came from.
    """
    try:
        return parse_checkpoint(note, verifier)
    except SignatureError as exc:
        raise WitnessError(f"{where}: {exc}") from None


def check_growth(old: Checkpoint, new: Checkpoint, proof: ConsistencyFile | None) -> None:
    """Checks that the log at `new` extends the log at `old`: same origin, no smaller, the same
    root at the same size, and otherwise a consistency proof between them.

    :raises WitnessError: naming what is wrong (a shrunk log, a fork, a proof of other sizes or that fails).
    """
    if old.origin != new.origin:
        raise WitnessError(f"the checkpoints are of two logs: {old.origin!r} and {new.origin!r}")
    if new.size < old.size:
        raise WitnessError(f"the log shrank: a checkpoint of size {old.size} was seen before, now {new.size} (a rollback)")
    if new.size == old.size or old.size == 0:
        if new.size == old.size and new.root != old.root:
            raise WitnessError(f"two different roots for size {new.size}: {old.root.hex()} and {new.root.hex()} (a fork)")
        return
    if proof is None:
        raise WitnessError(f"no consistency proof from size {old.size} to size {new.size}")
    if (proof.old, proof.new) != (old.size, new.size):
        raise WitnessError(f"the consistency proof is from size {proof.old} to {proof.new}, the checkpoints are of "
                           f"sizes {old.size} and {new.size}")
    try:
        verify_consistency(old.size, new.size, old.root, new.root, [base64.b64decode(h, validate=True) for h in proof.proof])
    except (ProofError, ValueError) as exc:
        raise WitnessError(f"consistency from size {old.size} to {new.size}: {exc}") from None


@dataclass(frozen=True)
class Observation:
    """What a witness run saw: the checkpoint remembered before (None on the first run) and the new one."""

    before: Checkpoint | None
    now: Checkpoint


def load_state(path: Path, verifier: Verifier) -> Checkpoint | None:
    """Returns the checkpoint a witness remembers, verified; None when it has none yet.

    :raises WitnessError: when the state file is unreadable or not a checkpoint signed by the key.
    """
    try:
        note = path.read_bytes().decode()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise WitnessError(f"state file {path}: cannot read the remembered checkpoint: {exc}") from None
    return read_checkpoint_note(note, verifier, f"state file {path}")


def observe(state: Path, verifier: Verifier, note: str, proof_for: ProofSource) -> Observation:
    """Checks a newly fetched checkpoint against the one remembered in `state` and, when it
    extends it, remembers the new one (a first run remembers it as it is: trust on first use).

    :raises WitnessError: when the new checkpoint does not extend the remembered one; the state is then kept.
    """
    before = load_state(state, verifier)
    now = read_checkpoint_note(note, verifier, "the fetched checkpoint")
    if before is not None:
        grown = 0 < before.size < now.size
        check_growth(before, now, proof_for(before.size, now.size) if grown else None)
    if before is None or before.note != now.note:
        write_atomic(state, now.note.encode())
    return Observation(before, now)


class _RemoteTiles(TileReader):
    """The hash tiles of one signed tree size as a tlog-tiles client fetches them: the full tiles
    and that size's own partial tiles, by their paths, nothing listed or computed from entries."""

    def __init__(self, fetch: TileFetch, size: int) -> None:
        super().__init__(Path("."))
        self._fetch = fetch
        self._size = size

    def _load(self, level: int, n: int, width: int) -> bytes:
        count = level_count(self._size, level)
        stored = WIDTH if n < count // WIDTH else count % WIDTH  # the only partial tile a client may ask for
        path = f"tile/{level}/{index_path(n)}" + ("" if stored == WIDTH else f".p/{stored}")
        try:
            data = self._fetch(path)
        except OSError as exc:  # a tile the server does not have: the proof cannot be made, which is a failure, not misuse
            raise WitnessError(f"无法读取哈希瓦片 / the tile {path} of the tree of size {self._size} cannot be read: {exc}") from None
        if width > stored or len(data) != stored * HASH:
            raise WitnessError(f"哈希瓦片长度不符 / tile {path} holds {len(data)} bytes, not the {stored * HASH} of the tree of size {self._size}")
        return data


def consistency_from_tiles(fetch: TileFetch, new: Checkpoint, old: int) -> ConsistencyFile:
    """Computes the consistency proof from size `old` to the signed checkpoint `new` out of the tree's
    hash tiles, as tlog-tiles clients do where no proof is served (a static `export --tiles`
    directory). The tiles are checked first: their tree of `new.size` must have the signed root, so a
    wrong tile is named as such and never taken for a fork.

    :raises WitnessError: when a tile is missing or short, or the tiles do not give the signed root.
    """
    tiles = _RemoteTiles(fetch, new.size)
    if tiles.subtree(0, new.size) != new.root:
        raise WitnessError(f"哈希瓦片与签名根不符 / the hash tiles of size {new.size} do not give the signed root {new.root.hex()}: "
                           "they are not this log's")
    proof = consistency_proof(old, new.size, tiles.subtree) if 0 < old < new.size else []
    return ConsistencyFile(CONSISTENCY_FORMAT, old, new.size, [base64.b64encode(h).decode() for h in proof])

