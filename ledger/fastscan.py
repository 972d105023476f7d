"""Frame checking and leaf hashing of a whole segment, growing the tree, and batches of signature
checks, in C when the accelerator is built.

`scan_leaves`, `frame_batch`, `leaf_hashes`, `segment_packed`, `gather`, `extend`, `extend_roots`,
`verify_signatures` and `verify_each` each have one meaning; `_fastscan` (C) and the Python code
below are two implementations of it, and tests/test_fastscan.py holds them to the same answers.
"""

from __future__ import annotations

import mmap
import os
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ledger.merkle import CompactRange, leaf_hash
from ledger.segments import LENGTH_MASK, OVERHEAD, FrameError, iter_frames
from ledger.segments import frame_batch as segment_frames

try:
    from ledger import _fastscan  # type: ignore[attr-defined]
except ImportError:  # no compiler at install time: the pure-Python path serves
    _fastscan = None  # type: ignore[assignment]
if os.environ.get("MATCHLEDGER_NO_ACCEL"):  # CI runs the ledger tests once more on the pure-Python path
    _fastscan = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ledger.notes import Verifier

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


def frame_batch(first_index: int, payloads: Sequence[bytes], commit: bool = True, accelerated: bool | None = None) -> bytes:
    """Returns the framed bytes of a batch, the commit mark on its last frame unless `commit` is
    false (see ledger/segments.py)."""
    if ACCELERATED if accelerated is None else accelerated:
        return _fastscan.frame_batch(first_index, payloads, commit)  # type: ignore[no-any-return]
    return segment_frames(first_index, list(payloads), commit)


def leaf_hashes(payloads: Sequence[bytes], accelerated: bool | None = None) -> bytes:
    """Returns the RFC 6962 leaf hashes of entries, 32 bytes each: the writer hashes each batch
    in one call (two SHA-256 chains interleaved in C)."""
    if ACCELERATED if accelerated is None else accelerated:
        return _fastscan.sha256_leaves(payloads)  # type: ignore[no-any-return]
    return b"".join(map(leaf_hash, payloads))


CHUNK = 4 << 20
"""How much of a segment file `scan_file` reads at a time: small enough that the bytes are still in
the cache when they are scanned (about a tenth faster than reading a 64 MB segment whole)."""


def scan_file(path: Path, first_index: int, buffer: bytearray | None = None, chunk: int = CHUNK,
              accelerated: bool | None = None) -> SegmentScan:
    """Checks every frame of a segment file and returns their leaf hashes, as
    `scan_leaves(path.read_bytes(), first_index)` does, reading the file `chunk` bytes at a time
    into `buffer` (a caller's to reuse; it grows to hold a frame longer than a chunk)."""
    if not (ACCELERATED if accelerated is None else accelerated):
        return scan_leaves(path.read_bytes(), first_index, accelerated=False)
    chunk = max(chunk, 64)
    buffer = bytearray(chunk) if buffer is None else buffer
    if len(buffer) < chunk:
        buffer.extend(bytes(chunk - len(buffer)))
    parts: list[bytes] = []
    frames = last_commit = commit_end = 0
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        base = held = 0  # the file offset of buffer[0]; how many bytes the buffer holds from there
        while True:
            with memoryview(buffer) as view:
                while held < len(buffer) and base + held < size:
                    got = f.readinto(view[held:min(len(buffer), size - base)])
                    if not got:  # the file was cut short meanwhile
                        size = base + held
                        break
                    held += got
                final = base + held >= size
                leaves, count, commit, end, error_offset, error, consumed = _fastscan.scan_part(view[:held], first_index + frames, final)
            parts.append(leaves)
            if commit:
                last_commit, commit_end = frames + commit, base + end
            frames += count
            if error is not None or final:
                return SegmentScan(b"".join(parts), frames, last_commit, commit_end,
                                   -1 if error is None else base + error_offset, error)
            buffer[:held - consumed] = buffer[consumed:held]  # the frame cut short goes first
            base, held = base + consumed, held - consumed
            if held == len(buffer):  # a frame longer than the buffer
                length = int.from_bytes(buffer[:4], "little") & LENGTH_MASK
                buffer.extend(bytes(min(OVERHEAD + length, size - base) - len(buffer)))


class SegmentPacked(NamedTuple):
    """The payloads of a segment's well-formed frames back to back, their boundaries, where its
    last batch ends, and the first fault."""

    data: bytes | memoryview
    ends: array  # count + 1 int64 offsets from `base`: payload k is data[ends[k] - base:ends[k+1] - base]
    last_commit: int
    error_offset: int  # -1 when every frame is well formed
    error: str | None

    @property
    def frames(self) -> int:
        """Returns how many well-formed frames the segment holds."""
        return len(self.ends) - 1

    def payloads(self, stop: int | None = None) -> list[bytes]:
        """Returns the payloads of the first `stop` frames (all by default), one bytes object each."""
        ends, data, base = self.ends, self.data, self.ends[0]
        return [bytes(data[ends[k] - base:ends[k + 1] - base]) for k in range(self.frames if stop is None else stop)]


def segment_packed(data: bytes | memoryview, first_index: int, base: int = 0, into: bytearray | mmap.mmap | None = None,
                   accelerated: bool | None = None) -> SegmentPacked:
    """Checks every frame of a segment's bytes and returns their payloads back to back, with
    their boundaries counted from `base`. Given `into`, with room for the segment's bytes after
    `base`, the payloads are written there at offset `base`, and `data` is a read-only view of them.

    :raises ValueError: when `into` has no room for the segment.
    """
    if into is not None and not 0 <= base <= len(into) - len(data):
        raise ValueError("no room for the segment in the output buffer")
    if ACCELERATED if accelerated is None else accelerated:
        payloads, ends, last_commit, error_offset, error = _fastscan.packed(data, first_index, base, into)
        bounds = array("q")
        bounds.frombytes(ends)
    else:
        payloads, bounds, last_commit, error_offset, error = _packed_reference(data, first_index, base)
        if into is not None:
            into[base:base + len(payloads)] = payloads
    if into is not None:
        payloads = memoryview(into).toreadonly()[base:bounds[-1]]
    return SegmentPacked(payloads, bounds, last_commit, error_offset, error)


def _packed_reference(data: bytes | memoryview, first_index: int, base: int) -> tuple[bytes, array, int, int, str | None]:
    parts: list[bytes] = []
    bounds = array("q", [base])
    last_commit = 0
    try:
        for _, _, payload, commit in iter_frames(data, first_index):
            parts.append(bytes(payload))
            bounds.append(bounds[-1] + len(payload))
            if commit:
                last_commit = len(parts)
    except FrameError as exc:
        return b"".join(parts), bounds, last_commit, exc.offset, str(exc)
    return b"".join(parts), bounds, last_commit, -1, None


def gather(data: bytes | memoryview, ends: array, indexes: array, accelerated: bool | None = None) -> bytes:
    """Returns the JSON array `[p_a,p_b,…]` of the payloads data[ends[i]:ends[i+1]] for each i of
    `indexes` (int64 arrays both).

    :raises IndexError: when an index has no payload in the buffer.
    """
    if ACCELERATED if accelerated is None else accelerated:
        return _fastscan.gather(data, ends, indexes)  # type: ignore[no-any-return]
    parts = []
    for i in indexes:
        if not 0 <= i < len(ends) - 1:
            raise IndexError(f"entry {i} is not in the buffer")
        parts.append(data[ends[i]:ends[i + 1]])
    return b"[" + b",".join(parts) + b"]"


def extend(tree: CompactRange, leaves: bytes | memoryview, accelerated: bool | None = None) -> None:
    """Appends a run of 32-byte leaf hashes to a compact range."""
    if ACCELERATED if accelerated is None else accelerated:
        tree.size = _fastscan.extend(tree._stack, tree.size, leaves)
        return
    for i in range(0, len(leaves), 32):
        tree.append(bytes(leaves[i:i + 32]))


def extend_roots(tree: CompactRange, leaves: bytes | memoryview, cuts: Sequence[int], accelerated: bool | None = None) -> bytes:
    """Appends a run of 32-byte leaf hashes to a compact range and returns the root of the tree at
    each size of `cuts` (ascending, between the sizes before and after), 32 bytes each.

    :raises ValueError: when a cut lies outside the sizes the tree passes through.
    """
    if ACCELERATED if accelerated is None else accelerated:
        tree.size, roots = _fastscan.extend_roots(tree._stack, tree.size, leaves, cuts)
        return roots
    if len(leaves) % 32:
        raise ValueError("leaves are 32-byte hashes")
    start, top = tree.size, tree.size + len(leaves) // 32
    if any(not low <= cut <= top for low, cut in zip((start, *cuts), cuts)):
        raise ValueError("cuts must ascend within the sizes the leaves reach")
    roots = []
    for cut in (*cuts, top):
        extend(tree, leaves[32 * (tree.size - start):32 * (cut - start)], accelerated=False)
        roots.append(tree.root())
    return b"".join(roots[:-1])


def verify_signatures(verifier: Verifier, messages: Sequence[bytes], signatures: Sequence[bytes],
                      accelerated: bool | None = None) -> bytes:
    """Checks Ed25519 signatures of one key: one byte per message, 1 where its signature verifies.

    The C accelerator releases the GIL and asks libsodium where the machine has it, then OpenSSL
    about what libsodium refuses (libsodium refuses a few things OpenSSL accepts, never the
    reverse), so its verdicts are OpenSSL's; the reference asks `cryptography`, OpenSSL too.
    """
    if ACCELERATED if accelerated is None else accelerated:
        return _fastscan.verify_ed25519(verifier.public, messages, signatures)
    return bytes(verifier.verifies(m, s) for m, s in zip(messages, signatures, strict=True))


def verify_each(verifiers: Sequence[Verifier], messages: Sequence[bytes], signatures: Sequence[bytes],
                threads: int = 1, accelerated: bool | None = None) -> bytes:
    """Checks Ed25519 signatures each under its own key: one byte per message, 1 where its
    signature verifies under its verifier. The accelerator splits them over `threads` threads of its
    own, with the GIL released (as `verify_signatures`, OpenSSL's verdicts)."""
    if ACCELERATED if accelerated is None else accelerated:
        return _fastscan.verify_ed25519([v.public for v in verifiers], messages, signatures, threads)
    return bytes(v.verifies(m, s) for v, m, s in zip(verifiers, messages, signatures, strict=True))
