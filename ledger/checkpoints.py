"""Checkpoints: C2SP signed notes of (origin, tree size, root), with their history kept."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import LedgerCorrupt, SignatureError
from ledger.layout import CHECKPOINTS, LATEST, WITNESSES, write_atomic
from ledger.notes import Signer, Verifier, add_signature, sign_note, split_note, verify_note


@dataclass(frozen=True)
class Checkpoint:
    """A signed statement that the log of `origin` had `size` entries with Merkle root `root`."""

    origin: str
    size: int
    root: bytes
    note: str

    @property
    def body(self) -> str:
        return checkpoint_body(self.origin, self.size, self.root)


def checkpoint_body(origin: str, size: int, root: bytes) -> str:
    """Returns the note text of a checkpoint: origin, size and base64 root, one per line."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"


def parse_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """Verifies a checkpoint note's signature and reads it.

    :raises SignatureError: when the signature or the body is bad.
    """
    body = verify_note(note, verifier)
    lines = body.split("\n")
    try:
        origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True)
    except (IndexError, ValueError):
        raise SignatureError("malformed checkpoint body") from None
    if origin != verifier.name or len(root) != 32 or size < 0:
        raise SignatureError(f"checkpoint body does not name origin {verifier.name!r} with a 32-byte root")
    return Checkpoint(origin, size, root, note)


def checkpoint_path(root: Path, size: int) -> Path:
    """Returns where the checkpoint of a given tree size is kept."""
    return root / CHECKPOINTS / f"{size:020d}.note"


def list_checkpoint_files(root: Path) -> list[tuple[int, Path]]:
    """Returns the stored checkpoints as (size, path), smallest first."""
    return sorted((int(p.stem), p) for p in (root / CHECKPOINTS).glob("*.note") if p.stem.isdigit())


def write_checkpoint(root: Path, signer: Signer, size: int, tree_root: bytes) -> Checkpoint:
    """Signs and stores a checkpoint, kept in the history and as the latest."""
    note = sign_note(checkpoint_body(signer.name, size, tree_root), signer)
    write_atomic(checkpoint_path(root, size), note.encode())
    write_atomic(root / LATEST, note.encode())
    return Checkpoint(signer.name, size, tree_root, note)


def cosign(root: Path, signer: Signer, size: int | None = None) -> Checkpoint:
    """Adds an arbiter's signature to a stored checkpoint (the latest one by default).

    :raises LedgerCorrupt: when there is no checkpoint of that size.
    """
    files = dict(list_checkpoint_files(root))
    size = max(files) if size is None else size
    if size not in files:
        raise LedgerCorrupt(None, f"no checkpoint of size {size}")
    note = add_signature(files[size].read_text(), signer)
    witness = root / WITNESSES / f"{signer.name}.pub"
    witness.parent.mkdir(exist_ok=True)
    write_atomic(witness, (str(signer.verifier) + "\n").encode())
    write_atomic(files[size], note.encode())
    if max(files) == size:
        write_atomic(root / LATEST, note.encode())
    body, _ = split_note(note)
    lines = body.split("\n")
    return Checkpoint(lines[0], size, base64.b64decode(lines[2]), note)


def load_witnesses(root: Path) -> list[Verifier]:
    """Returns the verifier keys of the arbiters who have co-signed checkpoints of this ledger."""
    return [Verifier.parse(p.read_text()) for p in sorted((root / WITNESSES).glob("*.pub"))]


def latest_checkpoint(root: Path, verifier: Verifier) -> Checkpoint | None:
    """Returns the largest stored checkpoint, verified.

    :raises LedgerCorrupt: when its signature does not verify.
    """
    files = list_checkpoint_files(root)
    if not files:
        return None
    size, path = files[-1]
    try:
        return parse_checkpoint(path.read_text(), verifier)
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"checkpoint {path.name}: {exc}") from None
