"""Frame checking and leaf hashing of a whole segment, in C when the accelerator is built.

`scan_leaves` and `extend` have one meaning; `_fastscan` (C) and the Python code below are two
implementations of it, and tests/test_fastscan.py holds them to the same answers.
"""

from __future__ import annotations

from typing import NamedTuple

from ledger.merkle import CompactRange, leaf_hash
from ledger.segments import OVERHEAD, FrameError, iter_frames

try:
    from ledger import _fastscan  # type: ignore[attr-defined]
except ImportError:  # no compiler at install time: the pure-Python path serves
    _fastscan = None  # type: ignore[assignment]

ACCELERATED = _fastscan is not None


class SegmentScan(NamedTuple):
    """Leaf hashes of a segment's well-formed frames, where its last batch ends, and the first fault."""

    leaves: bytes  # 32 bytes per frame
    frames: int
    last_commit: int
    commit_end: int
    error_offset: int  # -1 when every frame is well formed
    error: str | None


def scan_leaves(data: bytes, first_index: int, accelerated: bool | None = None) -> SegmentScan:
    """Checks every frame of a segment's bytes and returns their leaf hashes."""
    if ACCELERATED if accelerated is None else accelerated:
        return SegmentScan(*_fastscan.scan(data, first_index))
    leaves, count, last_commit, commit_end = [], 0, 0, 0
    try:
        for _, offset, payload, commit in iter_frames(data, first_index):
            leaves.append(leaf_hash(payload))
            count += 1
            if commit:
                last_commit, commit_end = count, offset + payload.nbytes + OVERHEAD
    except FrameError as exc:
        return SegmentScan(b"".join(leaves), count, last_commit, commit_end, exc.offset, str(exc))
    return SegmentScan(b"".join(leaves), count, last_commit, commit_end, -1, None)


class SegmentPayloads(NamedTuple):
    """The payloads of a segment's well-formed frames, where its last batch ends, and the first fault."""

    payloads: list[bytes]
    last_commit: int
    error_offset: int  # -1 when every frame is well formed
    error: str | None


def segment_payloads(data: bytes, first_index: int, accelerated: bool | None = None) -> SegmentPayloads:
    """Checks every frame of a segment's bytes and returns their payloads."""
    if ACCELERATED if accelerated is None else accelerated:
        return SegmentPayloads(*_fastscan.payloads(data, first_index))
    payloads: list[bytes] = []
    last_commit = 0
    try:
        for _, _, payload, commit in iter_frames(data, first_index):
            payloads.append(bytes(payload))
            if commit:
                last_commit = len(payloads)
    except FrameError as exc:
        return SegmentPayloads(payloads, last_commit, exc.offset, str(exc))
    return SegmentPayloads(payloads, last_commit, -1, None)


def extend(tree: CompactRange, leaves: bytes, accelerated: bool | None = None) -> None:
    """Appends a run of 32-byte leaf hashes to a compact range."""
    if ACCELERATED if accelerated is None else accelerated:
        tree.size = _fastscan.extend(tree._stack, tree.size, leaves)
        return
    for i in range(0, len(leaves), 32):
        tree.append(leaves[i:i + 32])
