"""Full verification (fsck) of a ledger, streaming one segment at a time.

Re-reads every frame, checks its CRC, position and sequence number, recomputes every leaf and
the tree, and compares the root at every stored checkpoint after checking its signature.
Successive checkpoints are consistent exactly when each one's root is the root of a prefix of
the same leaves, which this recomputation establishes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ledger.checkpoints import Checkpoint, list_checkpoint_files, parse_checkpoint
from ledger.errors import SignatureError
from ledger.layout import load_config
from ledger.merkle import CompactRange
from ledger.scan import Damage, KeyDecodeError, SegmentFrames, decode_keys_exact, scan
from ledger.store import load_verifier


@dataclass
class VerifyReport:
    """The verdict of a full verification; `index` names the first bad entry when there is one."""

    ok: bool
    size: int
    root: str
    checkpoints: int
    index: int | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class _Failed(Exception):
    def __init__(self, index: int | None, message: str) -> None:
        super().__init__(message)
        self.index = index


def verify(root: Path) -> VerifyReport:
    """Verifies a whole ledger and reports the first problem found."""
    load_config(root)
    tree = CompactRange()
    checkpoints: list[Checkpoint] = []
    notes: list[str] = []
    try:
        checkpoints = _load_checkpoints(root)
        _check_entries(root, tree, checkpoints, notes)
    except _Failed as exc:
        return VerifyReport(False, tree.size, tree.root().hex(), len(checkpoints), exc.index, str(exc), notes)
    return VerifyReport(True, tree.size, tree.root().hex(), len(checkpoints), notes=notes)


def _load_checkpoints(root: Path) -> list[Checkpoint]:
    verifier = load_verifier(root)
    loaded = []
    for size, path in list_checkpoint_files(root):
        try:
            cp = parse_checkpoint(path.read_text(), verifier)
        except SignatureError as exc:
            raise _Failed(None, f"checkpoint of size {size} ({path.name}): {exc}") from None
        if cp.size != size:
            raise _Failed(None, f"checkpoint file {path.name} holds a checkpoint of size {cp.size}")
        loaded.append(cp)
    return loaded


def _check_entries(root: Path, tree: CompactRange, checkpoints: list[Checkpoint], notes: list[str]) -> None:
    walk = _Walk(tree, checkpoints)
    covered = checkpoints[-1].size if checkpoints else 0
    walk.reach_checkpoints()
    for part in scan(root):
        if isinstance(part, Damage):
            if part.index < covered or part.trailing_segments:
                raise _Failed(part.index, f"{part.reason} (segment {part.segment.name}, offset {part.offset})")
            notes.append(f"unacknowledged tail after entry {part.index - 1}: {part.reason}; the next writer drops it")
            break
        limit = max(covered - part.first_index, part.last_commit)  # beyond the checkpoints, only committed frames count
        walk.segment(part, limit)
        if limit < len(part.payloads):
            notes.append(f"unacknowledged tail of {len(part.payloads) - limit} frames after entry {tree.size - 1}; the next writer drops it")
    if tree.size < covered:
        raise _Failed(tree.size, f"log ends after {tree.size} entries, but a checkpoint covers {covered}: entries were removed")


class _Walk:
    """The running state of a verification: the tree, the checkpoints ahead, each stream's next seq."""

    def __init__(self, tree: CompactRange, checkpoints: list[Checkpoint]) -> None:
        self.tree = tree
        self.pending = list(reversed(checkpoints))  # smallest last, popped as the tree reaches it
        self.next_seq: dict[str, int] = {}
        self.proven = 0  # entries below this index are covered by a matching checkpoint

    def segment(self, part: SegmentFrames, limit: int) -> None:
        payloads = part.payloads[:limit]
        try:
            keys = decode_keys_exact(payloads)
        except KeyDecodeError as exc:
            raise _Failed(part.first_index + exc.position, str(exc)) from None
        sha256, append, next_seq = hashlib.sha256, self.tree.append, self.next_seq
        target = self.pending[-1].size if self.pending else -1
        for i, (payload, key) in enumerate(zip(payloads, keys)):
            due = next_seq.get(key.stream, 0)
            if key.seq != due:
                raise _Failed(part.first_index + i, f"stream {key.stream!r} has seq {key.seq} where {due} was due")
            next_seq[key.stream] = due + 1
            append(sha256(b"\x00" + payload).digest())
            if self.tree.size == target:
                self.reach_checkpoints()
                target = self.pending[-1].size if self.pending else -1

    def reach_checkpoints(self) -> None:
        while self.pending and self.pending[-1].size == self.tree.size:
            cp = self.pending.pop()
            if cp.root != self.tree.root():
                raise _Failed(self.proven, f"entries {self.proven}–{cp.size - 1} do not match checkpoint {cp.size}: "
                              f"it has root {cp.root.hex()}, the entries give {self.tree.root().hex()}")
            self.proven = cp.size
