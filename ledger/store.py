"""The ledger: one append-only, tamper-evident log with a single writer.

Appends are atomic batches, acknowledged once their bytes are synced (group commit). Each
stream's events must arrive with the next expected sequence number; an identical re-send is
acknowledged without a second copy, and a different event at a used number is a conflict.
"""

from __future__ import annotations

import bisect
import fcntl
import os
import uuid
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ledger.checkpoints import Checkpoint, latest_checkpoint, list_checkpoint_files, write_checkpoint
from ledger.errors import DiskError, LedgerCorrupt, LedgerError, LedgerLocked, SequenceError
from ledger.fastscan import SegmentPacked, gather, segment_packed
from ledger.layout import CHECKPOINTS, CONFIG, LOCK, PRIVATE_KEY, PUBLIC_KEY, SEGMENTS, LedgerConfig, load_config, write_atomic
from ledger.merkle import CompactRange, leaf_hash
from ledger.notes import Signer, Verifier
from ledger.scan import Damage, KeyDecodeError, SegmentFrames, decode_keys_exact, scan
from ledger.segments import OVERHEAD, FileOps, SegmentWriter, frame_batch, list_segments, segment_path
from schemas.envelope import Event

CHECKPOINT_KINDS = frozenset({"game.ended", "tournament.round_closed"})


@dataclass(frozen=True)
class Pending:
    """One validated input event waiting to be appended: its input line, the event, its canonical bytes."""

    line: int
    event: Event
    data: bytes


@dataclass(frozen=True)
class AppendResult:
    """What an append did: events appended, identical re-sends acknowledged, the new tree size,
    and the recovery the writer made when it opened the ledger, if any."""

    appended: int
    duplicates: int
    size: int
    recovered: str | None = None


def init(root: Path, origin: str | None = None, **settings: int) -> Path:
    """Creates an empty ledger with a fresh Ed25519 key pair; returns the verifier key's path.
    `settings` override the defaults of `LedgerConfig` (max_entry_bytes, segment_bytes, checkpoint_interval).

    :raises LedgerError: when `root` already holds a ledger or a setting is out of range.
    """
    if (root / CONFIG).exists():
        raise LedgerError(f"{root} already holds a ledger")
    try:
        config = msgspec.convert({"origin": origin or f"matchledger.local/{uuid.uuid4().hex[:12]}", **settings}, LedgerConfig)
    except msgspec.ValidationError as exc:
        raise LedgerError(f"ledger settings: {exc}") from None
    root.mkdir(parents=True, exist_ok=True)
    (root / SEGMENTS).mkdir(exist_ok=True)
    (root / CHECKPOINTS).mkdir(exist_ok=True)
    signer = Signer.generate(config.origin)
    signer.save(root / PRIVATE_KEY)
    write_atomic(root / PUBLIC_KEY, (str(signer.verifier) + "\n").encode())
    write_atomic(root / CONFIG, msgspec.json.format(msgspec.json.encode(config)) + b"\n")
    write_checkpoint(root, signer, 0, CompactRange().root())
    return root / PUBLIC_KEY


def load_verifier(root: Path) -> Verifier:
    """Reads a ledger's public verifier key."""
    return Verifier.parse((root / PUBLIC_KEY).read_text())


class Ledger:
    """The single writer of a ledger directory; use `Ledger.open` as a context manager."""

    def __init__(self, root: Path, ops: FileOps | None = None) -> None:
        self.root = root
        self.config = load_config(root)
        self._lock_fd = _lock(root)
        self._ops = ops or FileOps()
        self.signer = Signer.load(root / PRIVATE_KEY)
        self.recovered: str | None = None
        self._tree = CompactRange()
        self._streams: dict[str, array[int]] = {}
        self._segment_starts: list[int] = []
        self._offsets: array[int] = array("Q")
        self._writer: SegmentWriter | None = None
        self._checkpoint: Checkpoint | None = latest_checkpoint(root, self.signer.verifier)
        self._load()

    @classmethod
    def open(cls, root: Path, ops: FileOps | None = None) -> Ledger:
        """Opens a ledger for writing: takes the lock and recovers a torn tail.

        :raises LedgerLocked: when another writer holds it.
        :raises LedgerCorrupt: when damage lies inside the checkpointed range.
        """
        return cls(root, ops)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def size(self) -> int:
        """Returns the number of entries in the log."""
        return self._tree.size

    def root_hash(self) -> bytes:
        """Returns the Merkle root of the whole log."""
        return self._tree.root()

    @property
    def checkpoint_size(self) -> int:
        """Returns the tree size of the latest checkpoint."""
        return self._checkpoint.size if self._checkpoint else 0

    def next_seq(self, stream: str) -> int:
        """Returns the sequence number the stream expects next."""
        return len(self._streams.get(stream, ()))

    # -- loading and recovery -------------------------------------------------------------

    def _load(self) -> None:
        last: SegmentFrames | None = None
        damage: Damage | None = None
        for part in scan(self.root):
            if isinstance(part, Damage):
                damage = part
                break
            last = part
            self._segment_starts.append(part.first_index)
            self._index(part.first_index, part.offsets[:part.last_commit], part.payloads[:part.last_commit])
        if self.size < self.checkpoint_size:
            found = damage.index if damage else (last.end_index if last else 0)
            why = f": {damage.reason}" if damage else ""
            raise LedgerCorrupt(found, f"log holds {found} entries but checkpoint {self.checkpoint_size} covers more{why}")
        if last is not None and (damage is not None or last.last_commit < len(last.payloads)):
            self._truncate_tail(last, damage)
        elif damage is not None:
            raise LedgerCorrupt(damage.index, damage.reason)
        self._open_writer()

    def _index(self, first: int, offsets: list[int], payloads: list[memoryview]) -> None:
        try:
            keys = decode_keys_exact(payloads)
        except KeyDecodeError as exc:
            raise LedgerCorrupt(first + exc.position, str(exc)) from None
        for offset, payload, key in zip(offsets, payloads, keys):
            seqs = self._streams.setdefault(key.stream, array("Q"))
            if key.seq != len(seqs):
                raise LedgerCorrupt(self.size, f"stream {key.stream!r} has seq {key.seq} where {len(seqs)} was due")
            seqs.append(self.size)
            self._offsets.append(offset)
            self._tree.append(leaf_hash(payload))

    def _truncate_tail(self, last: SegmentFrames, damage: Damage | None) -> None:
        """Drops what follows the last commit mark: a batch that was never acknowledged."""
        if damage is not None and (damage.trailing_segments or damage.segment != last.path):
            raise LedgerCorrupt(damage.index, f"{damage.reason} in {damage.segment.name}, with later segments after it")
        if damage is not None and damage.followed:
            raise LedgerCorrupt(damage.index, f"{damage.reason}, and acknowledged entries follow it: damage, not a torn tail")
        dropped = last.path.stat().st_size - last.commit_end
        with open(last.path, "r+b") as f:
            f.truncate(last.commit_end)
            os.fsync(f.fileno())
        why = damage.reason if damage else "frames without a commit mark"
        self.recovered = f"recovered: dropped an unacknowledged tail of {dropped} bytes after entry {self.size - 1} ({why})"

    def _open_writer(self) -> None:
        if not self._segment_starts:
            self._segment_starts.append(0)
        first = self._segment_starts[-1]
        path = segment_path(self.root / SEGMENTS, first)
        self._writer = SegmentWriter(path, self._ops, path.stat().st_size if path.exists() else 0)

    # -- appending -------------------------------------------------------------------------

    def append(self, batch: Sequence[Pending]) -> AppendResult:
        """Appends a batch atomically after checking every sequence number; signs a checkpoint
        when the batch ends a game or a round, or the checkpoint interval has passed.

        :raises SequenceError: on a gap or a conflict, naming the input line; nothing is appended.
        :raises DiskError: when the batch cannot be made durable; nothing is acknowledged.
        """
        fresh, duplicates = self._plan(batch)
        if fresh:
            self._commit(fresh)
            if any(p.event.kind in CHECKPOINT_KINDS for p in fresh) or \
                    self.size - self.checkpoint_size >= self.config.checkpoint_interval:
                self.checkpoint()
        return AppendResult(len(fresh), duplicates, self.size, self.recovered)

    def _plan(self, batch: Sequence[Pending]) -> tuple[list[Pending], int]:
        fresh: list[Pending] = []
        in_batch: dict[tuple[str, int], bytes] = {}
        next_seq: dict[str, int] = {}
        duplicates = 0
        for p in batch:
            stream, seq = p.event.stream, p.event.seq
            due = next_seq.get(stream, self.next_seq(stream))
            if seq > due:
                raise SequenceError(p.line, f"field `seq`: stream {stream!r} expects seq {due}, got {seq} (gap)")
            if seq < due:
                stored = in_batch.get((stream, seq)) or self.read_stream_entry(stream, seq)
                if stored != p.data:
                    raise SequenceError(p.line, f"field `seq`: stream {stream!r} already holds a different event at seq {seq} (conflict)")
                duplicates += 1
                continue
            if len(p.data) > self.config.max_entry_bytes:
                raise SequenceError(p.line, f"event is {len(p.data)} bytes, over the limit of {self.config.max_entry_bytes}")
            next_seq[stream] = seq + 1
            in_batch[(stream, seq)] = p.data
            fresh.append(p)
        return fresh, duplicates

    def _commit(self, fresh: list[Pending]) -> None:
        assert self._writer is not None
        if self._writer.size >= self.config.segment_bytes:
            self._roll_segment()
        first = self.size
        data = frame_batch(first, [p.data for p in fresh])
        offset = self._writer.size
        try:
            self._writer.append(data)
        except OSError as exc:
            raise DiskError(f"batch of {len(fresh)} events not appended ({os.strerror(exc.errno or 0)}); nothing was acknowledged") from None
        for p in fresh:
            self._streams.setdefault(p.event.stream, array("Q")).append(self.size)
            self._offsets.append(offset)
            offset += len(p.data) + OVERHEAD
            self._tree.append(leaf_hash(p.data))

    def _roll_segment(self) -> None:
        assert self._writer is not None
        self._writer.close()
        self._segment_starts.append(self.size)
        self._writer = SegmentWriter(segment_path(self.root / SEGMENTS, self.size), self._ops, 0)

    def checkpoint(self) -> Checkpoint:
        """Signs a checkpoint of the current tree unless the latest already covers it."""
        if self._checkpoint is None or self._checkpoint.size != self.size:
            self._checkpoint = write_checkpoint(self.root, self.signer, self.size, self.root_hash())
        return self._checkpoint

    # -- reading ---------------------------------------------------------------------------

    def read_stream_entry(self, stream: str, seq: int) -> bytes:
        """Returns the stored bytes of one event of a stream."""
        return self.read_entry(self._streams[stream][seq])

    def read_entry(self, index: int) -> bytes:
        """Returns the stored bytes of the entry at `index`."""
        n = bisect.bisect_right(self._segment_starts, index) - 1
        path = segment_path(self.root / SEGMENTS, self._segment_starts[n])
        with open(path, "rb") as f:
            f.seek(self._offsets[index])
            head = f.read(16)
            length = int.from_bytes(head[:4], "little") & 0x7FFF_FFFF
            return f.read(length)

    def close(self) -> None:
        """Releases the writer lock."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None  # type: ignore[assignment]


def _lock(root: Path) -> int:
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LedgerLocked(f"ledger {root} is locked by another writer (pid {holder})") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def iter_entries(root: Path, start: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yields (index, stored bytes) of every committed entry from `start`, without taking the lock.

    :raises LedgerCorrupt: when a damaged frame stops the reading before the last checkpoint.
    """
    for first, payloads in iter_payloads(root):
        for i in range(max(0, start - first), len(payloads)):
            yield first + i, payloads[i]


def iter_payloads(root: Path) -> Iterator[tuple[int, list[bytes]]]:
    """Yields (first index, stored bytes of its committed entries) one segment at a time.

    :raises LedgerCorrupt: when a damaged frame stops the reading before the last checkpoint.
    """
    for first, part in iter_packed(root):
        yield first, part.payloads(part.last_commit)


@dataclass(frozen=True)
class StoredEntries:
    """Every committed entry of a log back to back in one buffer: entry i is data[ends[i]:ends[i+1]]."""

    data: bytes | memoryview
    ends: array

    def __len__(self) -> int:
        return len(self.ends) - 1

    def json_array(self, indexes: array) -> bytes:
        """Returns the stored bytes of some entries (an int64 array of indexes) as one JSON array.

        :raises IndexError: when an index is not an entry.
        """
        return gather(self.data, self.ends, indexes)


def read_entries(root: Path) -> StoredEntries:
    """Reads every committed entry of a ledger into one buffer.

    :raises LedgerCorrupt: when a damaged frame stops the reading before the last checkpoint.
    """
    # One buffer with room for every segment's bytes, which are more than their payloads: each
    # segment's payloads land right after the last's, with no join afterwards.
    load_config(root)
    segments = _segment_sizes(root)  # read no further than these sizes, whatever a writer adds meanwhile
    into = bytearray(sum(size for _, _, size in segments))
    ends = array("q", [0])
    for _, part in _iter_packed(root, segments, 0, into):
        ends += part.ends[1:part.last_commit + 1]
    return StoredEntries(memoryview(into).toreadonly()[:ends[-1]], ends)


def _segment_sizes(root: Path) -> list[tuple[int, Path, int]]:
    """Returns (first index, path, size in bytes) of every segment, in order."""
    return [(first, path, path.stat().st_size) for first, path in list_segments(root / SEGMENTS)]


def _read_into(path: Path, buffer: memoryview) -> memoryview:
    """Reads a file's first bytes into a buffer (reused from segment to segment: fresh pages cost
    more than the reading); returns the part read, shorter when the file is."""
    held = 0
    with path.open("rb", buffering=0) as f:
        while held < len(buffer) and (got := f.readinto(buffer[held:])):
            held += got
    return buffer[:held]


def iter_packed(root: Path, base: int = 0) -> Iterator[tuple[int, SegmentPacked]]:
    """Yields (first index, its entries back to back) one segment at a time; only the entries up
    to the segment's `last_commit` are committed. Offsets count from `base` and go on from one
    segment's committed entries to the next, as if their buffers were joined.

    :raises LedgerCorrupt: when a damaged frame stops the reading before the last checkpoint.
    """
    load_config(root)
    return _iter_packed(root, _segment_sizes(root), base, None)


def _iter_packed(root: Path, segments: list[tuple[int, Path, int]], base: int,
                 into: bytearray | None) -> Iterator[tuple[int, SegmentPacked]]:
    """As iter_packed, over the segments listed (each read up to its listed size); given `into`,
    with room for their bytes, the entries are written there at their offsets."""
    checkpointed = max((size for size, _ in list_checkpoint_files(root)), default=0)
    expected = 0
    scratch = bytearray(max((size for _, _, size in segments), default=0))
    for first, path, size in segments:
        if first != expected:
            raise LedgerCorrupt(expected, f"segment {path.name} starts at entry {first}, expected {expected}")
        part = segment_packed(_read_into(path, memoryview(scratch)[:size]), first, base, into)
        yield first, part
        expected, base = first + part.last_commit, part.ends[part.last_commit]
        if part.error is not None or part.last_commit < part.frames:
            if expected < checkpointed:
                why = part.error or "an unfinished batch"
                raise LedgerCorrupt(first + part.frames, f"{why} inside the checkpointed range (size {checkpointed})")
            return
