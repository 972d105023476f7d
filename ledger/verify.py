"""Full verification (fsck) of a ledger, streaming one segment at a time.

Re-reads every frame, checks its CRC, length and position, recomputes every leaf and the tree,
and compares the root at every stored checkpoint after checking its signature. Sequence numbers
are the writer's to enforce; the signed roots cover them.
Successive checkpoints are consistent exactly when each one's root is the root of a prefix of
the same leaves, which this recomputation establishes.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ledger.checkpoints import Checkpoint, list_checkpoint_files, load_witnesses, parse_checkpoint
from ledger.errors import SignatureError
from ledger.fastscan import SegmentScan, extend, scan_leaves
from ledger.layout import SEGMENTS, load_config
from ledger.merkle import CompactRange
from ledger.notes import cosigners
from ledger.scan import frame_follows
from ledger.segments import list_segments
from ledger.store import load_verifier

WORKERS = min(os.cpu_count() or 1, 4)


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
        checkpoints = _load_checkpoints(root, notes)
        _check_entries(root, tree, checkpoints, notes)
    except _Failed as exc:
        return VerifyReport(False, tree.size, tree.root().hex(), len(checkpoints), exc.index, str(exc), notes)
    return VerifyReport(True, tree.size, tree.root().hex(), len(checkpoints), notes=notes)


def _load_checkpoints(root: Path, notes: list[str]) -> list[Checkpoint]:
    verifier, witnesses = load_verifier(root), load_witnesses(root)
    loaded = []
    for size, path in list_checkpoint_files(root):
        try:
            cp = parse_checkpoint(path.read_text(), verifier)
            signed = cosigners(cp.note, witnesses)
        except SignatureError as exc:
            raise _Failed(None, f"checkpoint of size {size} ({path.name}): {exc}") from None
        if signed:
            notes.append(f"checkpoint of size {size} co-signed by {', '.join(signed)}")
        if cp.size != size:
            raise _Failed(None, f"checkpoint file {path.name} holds a checkpoint of size {cp.size}")
        loaded.append(cp)
    return loaded


def _check_entries(root: Path, tree: CompactRange, checkpoints: list[Checkpoint], notes: list[str]) -> None:
    walk = _Walk(tree, checkpoints)
    covered = checkpoints[-1].size if checkpoints else 0
    walk.reach_checkpoints()
    found = list_segments(root / SEGMENTS)
    for n, ((first, path), part) in enumerate(zip(found, _scanned(found))):
        later = len(found) - n - 1
        if first != tree.size:
            raise _Failed(tree.size, f"segment {path.name} starts at entry {first}, expected {tree.size}")
        limit = min(part.frames, max(covered - first, part.last_commit))  # beyond the checkpoints, only committed frames count
        walk.leaves(part.leaves[: 32 * limit])
        if part.error is not None and (first + part.frames < covered or later
                                       or frame_follows(path.read_bytes(), part.error_offset, first + part.frames + 1)):
            raise _Failed(first + part.frames, f"{part.error} (segment {path.name}, offset {part.error_offset})")
        if later and part.last_commit < part.frames:
            raise _Failed(first + part.last_commit, f"unfinished batch in {path.name} before a later segment")
        if part.error is not None or limit < part.frames:
            notes.append(f"unacknowledged tail after entry {tree.size - 1} ({part.error or 'no commit mark'}); the next writer drops it")
    if tree.size < covered:
        raise _Failed(tree.size, f"log ends after {tree.size} entries, but a checkpoint covers {covered}: entries were removed")


def _scan_segment(first: int, path: Path) -> SegmentScan:
    return scan_leaves(path.read_bytes(), first)


def _scanned(found: list[tuple[int, Path]], ahead: int = WORKERS) -> Iterator[SegmentScan]:
    """Yields each segment's scan in order, scanning up to `ahead` segments at once in threads (the
    C scanner releases the GIL); memory stays bounded by `ahead` segments."""
    with ThreadPoolExecutor(max_workers=ahead) as pool:
        pending: deque[Future[SegmentScan]] = deque()
        for first, path in found:
            pending.append(pool.submit(_scan_segment, first, path))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


class _Walk:
    """Feeds leaf hashes into the tree, comparing the root at every checkpoint on the way."""

    def __init__(self, tree: CompactRange, checkpoints: list[Checkpoint]) -> None:
        self.tree = tree
        self.pending = list(reversed(checkpoints))  # smallest last, popped as the tree reaches it
        self.proven = 0  # entries below this index are covered by a matching checkpoint

    def leaves(self, blob: bytes) -> None:
        while blob:
            take = len(blob) // 32
            if self.pending:  # stop at the next checkpoint to compare its root
                take = min(take, self.pending[-1].size - self.tree.size)
            extend(self.tree, blob[: 32 * take])
            blob = blob[32 * take:]
            self.reach_checkpoints()

    def reach_checkpoints(self) -> None:
        while self.pending and self.pending[-1].size == self.tree.size:
            cp = self.pending.pop()
            if cp.root != self.tree.root():
                raise _Failed(self.proven, f"entries {self.proven}–{cp.size - 1} do not match checkpoint {cp.size}: "
                              f"it has root {cp.root.hex()}, the entries give {self.tree.root().hex()}")
            self.proven = cp.size
