"""Stream commitments: what lets an evidence bundle prove it holds a whole stream, not just some of
its entries.

Inclusion proofs show that entries are in the log; they cannot show that a stream has no other
entries. So every checkpoint also signs, in an extension line, the Merkle root of the *heads* of
the streams that gained entries since the previous checkpoint: (stream, entry count, index of its
last entry), sorted by stream name. A bundle of stream S, proved against the checkpoint that first
covers S's last entry, carries S's head and its inclusion proof under that root; the verifier
checks that the head's count and last entry are exactly the bundle's entries. Removing, adding or
renaming anything then fails with the public key alone.

The writer finds that checkpoint and the entries before it through `index/checkpoints`, one
fixed-size record per signed checkpoint: its size and where its last entry ends (segment, byte
offset), so the heads of any checkpoint can be re-derived from the frames of its interval.
"""

from __future__ import annotations

import base64
import os
import struct
from array import array
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

import msgspec

from ledger.errors import LedgerCorrupt
from ledger.index import INDEX
from ledger.merkle import CompactRange, ProofError, SubtreeHasher, inclusion_proof, leaf_hash, root_of, verify_inclusion

if TYPE_CHECKING:
    import pyarrow as pa

HEADS_LINE = "matchledger-streams "
"""The checkpoint extension line: `matchledger-streams <count> <base64 root>`."""
HISTORY = "checkpoints"
RECORD = struct.Struct("<QQQ")
UNKNOWN = (1 << 64) - 1
"""Position recorded for checkpoints signed before commitments existed (never needed: they have no heads line)."""


class StreamHead(msgspec.Struct, frozen=True, array_like=True):
    """A stream at a checkpoint: its name, how many entries it has, and the log index of its last one."""

    stream: str
    count: int
    last: int


def head_leaf(head: StreamHead) -> bytes:
    """Returns the RFC 6962 leaf hash of a stream head (its canonical JSON array)."""
    return leaf_hash(msgspec.json.encode(head))


def heads_line(heads: list[StreamHead]) -> str:
    """Returns the extension line committing to these heads (sorted here, by stream name): the
    leaves hashed and the tree grown in one call each (a live service signs this per commit)."""
    from ledger.fastscan import extend, leaf_hashes  # (fastscan's C path; it imports the tree from merkle, as this module)

    ordered = sorted(heads, key=lambda h: h.stream.encode())
    tree = CompactRange()
    extend(tree, leaf_hashes([msgspec.json.encode(h) for h in ordered]))
    return f"{HEADS_LINE}{len(ordered)} {base64.b64encode(tree.root()).decode()}"


def read_heads_line(extensions: tuple[str, ...]) -> tuple[int, bytes] | None:
    """Returns (number of heads, root) of a checkpoint's commitment, or None when it has none."""
    for line in extensions:
        if line.startswith(HEADS_LINE):
            count, root = line[len(HEADS_LINE):].split(" ")
            return int(count), base64.b64decode(root)
    return None


class HeadProof(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stream's head and its inclusion proof under a checkpoint's stream commitment."""

    count: int
    last: int
    index: int
    proof: list[str]


def prove_head(heads: list[StreamHead], stream: str, committed: tuple[int, bytes]) -> HeadProof:
    """Proves one stream's head among the heads of a checkpoint, after checking they give its signed root.

    :raises LedgerCorrupt: when the re-derived heads do not give the signed commitment.
    """
    ordered = sorted(heads, key=lambda h: h.stream.encode())
    leaves = [head_leaf(h) for h in ordered]
    if (len(leaves), root_of(leaves)) != committed:
        raise LedgerCorrupt(None, f"检查点之前的条目与其签名的流承诺（{committed[0]} 个流头）不符 / "
                            f"the entries before the checkpoint do not give its signed stream commitment ({committed[0]} heads)")
    at = next(i for i, h in enumerate(ordered) if h.stream == stream)
    path = inclusion_proof(at, len(leaves), SubtreeHasher(leaves))
    return HeadProof(ordered[at].count, ordered[at].last, at, [base64.b64encode(h).decode() for h in path])


def check_head(proof: HeadProof, stream: str, committed: tuple[int, bytes]) -> None:
    """Checks a stream head's inclusion proof against a checkpoint's commitment.

    :raises ProofError: when it does not verify.
    """
    count, root = committed
    leaf = head_leaf(StreamHead(stream, proof.count, proof.last))
    try:
        verify_inclusion(leaf, proof.index, count, [base64.b64decode(p) for p in proof.proof], root)
    except (ValueError, ProofError) as exc:
        raise ProofError(f"stream head: {exc}") from None


# -- where each checkpoint ends ------------------------------------------------------------------

class History:
    """The records of `index/checkpoints`, read by position (a binary search reads O(log n) of
    them): the signed checkpoints' sizes, smallest first, and where each one's last entry ends.
    A torn last record (a crash during its append) is not counted."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.count = os.fstat(fd).st_size // RECORD.size

    def __len__(self) -> int:
        return self.count

    def position(self, n: int) -> tuple[int, int, int]:
        """Returns (size, segment, offset) of the n-th record."""
        return RECORD.unpack(os.pread(self._fd, RECORD.size, n * RECORD.size))

    def size(self, n: int) -> int:
        return self.position(n)[0]

    def first_above(self, entry: int, hi: int | None = None) -> int:
        """Returns the number of records whose size is at most `entry` (the first record above it)."""
        lo, hi = 0, self.count if hi is None else hi
        while lo < hi:
            mid = (lo + hi) // 2
            if self.size(mid) <= entry:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def upto(self, size: int) -> int | None:
        """Returns the number of records up to the one of `size`, or None when there is none; looks
        at the end first, where the newest checkpoint's record is unless a crash left one after it."""
        n = self.count
        while n and self.size(n - 1) > size:
            n -= 1
            if self.count - n > 2:
                n = self.first_above(size, n)
                break
        return n if n and self.size(n - 1) == size else None


@contextmanager
def open_history(root: Path) -> Iterator[History | None]:
    """Opens the checkpoint history for reading; None for a ledger written before it existed."""
    try:
        fd = os.open(history_path(root), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        yield None
        return
    try:
        yield History(fd)
    finally:
        os.close(fd)


def history_path(root: Path) -> Path:
    return root / INDEX / HISTORY


def append_history(root: Path, records: list[tuple[int, int, int]], keep: int | None = None) -> None:
    """Appends records (after cutting the file to `keep` records, when given) and syncs them."""
    path = history_path(root)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        end = os.fstat(fd).st_size
        end = min(end - end % RECORD.size, RECORD.size * keep) if keep is not None else end - end % RECORD.size
        os.ftruncate(fd, end)
        os.pwrite(fd, b"".join(RECORD.pack(*r) for r in records), end)
        os.fsync(fd)
    finally:
        os.close(fd)


class HistoryWriter:
    """Appends the writer's records to `index/checkpoints` through one descriptor kept open (a live
    service appends one per commit); the writer's lock makes it the only one changing the file."""

    def __init__(self, root: Path) -> None:
        self._path = history_path(root)
        self._fd: int | None = None
        self._end = 0

    def append(self, records: list[tuple[int, int, int]], keep: int) -> None:
        """Appends records after cutting the file to `keep` records (what a crash left beyond the
        newest note), and syncs them."""
        if self._fd is None:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            self._end = os.fstat(self._fd).st_size
        end = min(self._end - self._end % RECORD.size, RECORD.size * keep)
        if end != self._end:
            os.ftruncate(self._fd, end)
        data = b"".join(RECORD.pack(*r) for r in records)
        os.pwrite(self._fd, data, end)
        os.fdatasync(self._fd)
        self._end = end + len(data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# -- verification ----------------------------------------------------------------------------------

Commitment = tuple[int, "tuple[int, bytes] | None"]
"""A checkpoint's size and its stream commitment (number of heads, root), None where it has none."""


class Signed(Protocol):
    """What `commitments` reads of a checkpoint (`ledger.checkpoints.Checkpoint`; no import: that
    module reads the history this one keeps)."""

    @property
    def size(self) -> int: ...

    @property
    def extensions(self) -> tuple[str, ...]: ...


def commitments(checkpoints: Sequence[Signed]) -> list[Commitment]:
    """Returns each checkpoint's size and stream commitment."""
    return [(c.size, read_heads_line(c.extensions)) for c in checkpoints]


HEADS_WINDOW = 1 << 20
"""Entries grouped at a time by `check_heads` (whole checkpoint intervals): what it holds is a
window's groups, not a season's."""


def check_heads(coded: pa.DictionaryArray, signed: list[Commitment], final: dict[str, tuple[int, int]] | None = None) -> str | None:
    """Re-derives every checkpoint's stream commitment from the streams of the entries (in log
    order, dictionary-coded) and compares it with the signed one; returns the first difference.
    The entries are grouped by (checkpoint interval, stream) in Arrow, a window of whole intervals
    at a time, so the Python work is per stream and interval, not per entry. Given `final`, it is
    filled with every stream's (count, last entry) at the newest size: the state that checkpoint
    signs (`ledger.state.check_state`)."""
    sizes = [size for size, _ in signed]
    count = sizes[-1] if sizes else 0
    codes = coded.slice(0, count).indices
    names = coded.dictionary.to_pylist()
    bounds = [0, *sizes]  # interval j holds entries bounds[j]…bounds[j + 1] − 1; the first, before any note, signs nothing
    seen: dict[int, tuple[int, int]] = {}
    first = 0
    while first < len(sizes):
        end = first + 1
        while end < len(sizes) and bounds[end + 1] - bounds[first] <= HEADS_WINDOW:
            end += 1
        problem = _check_window(codes, names, bounds, signed, first, end, seen)
        if problem:
            return problem
        first = end
    if final is not None:
        final.update((names[code], head) for code, head in seen.items())
    return None


def _check_window(codes: pa.Array, names: list[str], bounds: list[int], signed: list[Commitment], first: int, end: int,
                  seen: dict[int, tuple[int, int]]) -> str | None:
    """Checks intervals first…end − 1, carrying every stream's (count, last entry) on in `seen`."""
    import pyarrow as pa

    lo, hi = bounds[first], bounds[end]
    interval = b"".join(struct.pack("<i", j) * (bounds[j + 1] - bounds[j]) for j in range(first, end))
    table = pa.table({
        "j": pa.Array.from_buffers(pa.int32(), hi - lo, [None, pa.py_buffer(interval)]),
        "code": codes.slice(lo, hi - lo),
        "i": pa.Array.from_buffers(pa.int64(), hi - lo, [None, pa.py_buffer(array("q", range(lo, hi)))]),
    })
    groups = table.group_by(["j", "code"]).aggregate([("i", "max"), ("i", "count")]).sort_by([("j", "ascending")])
    heads: dict[int, list[StreamHead]] = {}
    for j, code, last, n in zip(*(groups.column(c).to_pylist() for c in ("j", "code", "i_max", "i_count"))):
        total = seen.get(code, (0, -1))[0] + n
        seen[code] = (total, last)
        heads.setdefault(j, []).append(StreamHead(names[code], total, last))
    for j in range(max(first, 1), end):
        size, committed = signed[j]
        if committed is None:
            continue
        ordered = sorted(heads.get(j, []), key=lambda h: h.stream.encode())
        if (len(ordered), root_of([head_leaf(h) for h in ordered])) != committed:
            return (f"检查点 {size} 所签的流承诺（{committed[0]} 个流）与第 {bounds[j]}–{size - 1} 号条目的 {len(ordered)} 个流不符 / "
                    f"checkpoint {size} signs a commitment to {committed[0]} stream heads that the "
                    f"{len(ordered)} streams of entries {bounds[j]}–{size - 1} do not give")
    return None


def check_history(root: Path, sizes: list[int], starts: list[int]) -> str | None:
    """Checks `index/checkpoints` against the checkpoint notes' sizes, and each known position
    against the frames (the checkpoint's last entry ends there); returns the first difference.
    `starts` are the segments' first entries."""
    from ledger.frames import check_frame_ends, open_regular
    from ledger.segments import segment_path

    with open_history(root) as history:
        if history is None:
            return None
        records = [history.position(n) for n in range(len(history))]
    have = [r[0] for r in records][:len(sizes)]
    if have != sizes:
        at = next((k for k, (a, b) in enumerate(zip(have, sizes)) if a != b), min(len(have), len(sizes)))
        return f"index/checkpoints: record {at} gives size {have[at] if at < len(have) else 'none'}, the notes {sizes[at]}"
    with ExitStack() as stack:
        opened: dict[int, BinaryIO] = {}  # one open a segment, not one per checkpoint (ten thousand in a season's event)
        for size, segment, offset in records[:len(sizes)]:
            if segment == UNKNOWN or not size:
                continue
            path = segment_path(root / "segments", segment)
            try:
                if segment not in starts:
                    raise LedgerCorrupt(None, "没有这个段文件 / no such segment")
                if segment not in opened:
                    opened[segment] = stack.enter_context(open_regular(path))
                committed = check_frame_ends(path, offset, size - 1, opened[segment])
            except LedgerCorrupt:
                return f"index/checkpoints: checkpoint {size} does not end at byte {offset} of segment {segment}"
            if not committed:
                return (f"检查点所签最后条目缺少提交标记 / the frame of entry {size - 1}, the last checkpoint {size} signs, carries no "
                        f"commit mark (byte {offset} of segment {segment}): a note always follows a commit")
    return None
