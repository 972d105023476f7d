"""Segment files of framed records.

A frame is `word ‖ crc32 ‖ index ‖ payload ‖ word`: `word` (u32) is the payload length with bit
31 set on the last frame of a batch (the commit mark), `index` (u64) is the entry's position in
the log, and the CRC-32 covers word, index and payload. The length at both ends lets a reader
detect a torn tail; the commit mark lets it drop a batch that was cut short, so a batch is all or
nothing; the index makes a deleted, swapped or inserted frame show at its position.

Each commit mark has a proof of origin beside it: before a batch's last frame is written, the
writer appends (first entry, count, HMAC-SHA256 over that range and the batch's leaf hashes) to
the append-only file `origin` at the ledger's root, synced, keyed by a key derived from
`signer.key`. A writer that finds committed entries after the newest signed note signs only the
batches whose proof verifies (its own crash tail): nobody without the key can make one.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

HEADER = struct.Struct("<IIQ")
TRAILER = struct.Struct("<I")
OVERHEAD = HEADER.size + TRAILER.size
_HEAD = struct.Struct("<IQ")  # what the CRC covers besides the payload
COMMIT = 0x8000_0000
LENGTH_MASK = 0x7FFF_FFFF
SUFFIX = ".seg"


def frame(index: int, payload: bytes, commit: bool) -> bytes:
    """Returns the framed bytes of one entry."""
    word = len(payload) | (COMMIT if commit else 0)
    head = _HEAD.pack(word, index)
    crc = zlib.crc32(payload, zlib.crc32(head))
    return HEADER.pack(word, crc, index) + payload + TRAILER.pack(word)


def frame_batch(first_index: int, payloads: list[bytes], commit: bool = True) -> bytes:
    """Returns the framed bytes of a batch, the commit mark on its last frame (unless `commit` is
    false: a piece of a batch that goes on after it)."""
    out = bytearray()
    pack_head, pack_header, pack_trailer, crc32 = _HEAD.pack, HEADER.pack, TRAILER.pack, zlib.crc32
    last = len(payloads) - 1
    for i, payload in enumerate(payloads, first_index):
        word = len(payload) | (COMMIT if commit and i - first_index == last else 0)
        out += pack_header(word, crc32(payload, crc32(pack_head(word, i))), i)
        out += payload
        out += pack_trailer(word)
    return bytes(out)


ORIGIN = "origin"
"""The file of proofs of origin, at the ledger's root: one `PROOF` record per committed batch."""
PROOF = struct.Struct("<QQ32s")  # first entry, count, HMAC-SHA256
_RANGE = struct.Struct("<QQ")
_PROOF_DOMAIN = b"matchledger proof of origin v1\0"
Leaves = bytes | bytearray | memoryview
"""A batch's RFC 6962 leaf hashes, 32 bytes each."""


def origin_mac(key: bytes, first: int, leaves: Leaves) -> bytes:
    """Returns a batch's proof of origin: HMAC-SHA256 over its entry range and its leaf hashes."""
    mac = hmac.new(key, _PROOF_DOMAIN + _RANGE.pack(first, len(leaves) // 32), hashlib.sha256)
    mac.update(leaves)
    return mac.digest()


class OriginProofs:
    """The writer's append-only file of proofs of origin (plain system calls, not `FileOps`).

    A proof is written before its batch's commit mark and synced together with the batch's last
    segment bytes (`sync`, on another thread while the segment syncs: one sync's wait, not two), and
    the batch is acknowledged only once both are durable. So a kill leaves both in the page cache; a
    power loss may keep a proof without its batch (harmless, cut at open) or a committed batch without
    its proof: never acknowledged, it is then moved aside as evidence like foreign frames."""

    def __init__(self, root: Path, key: bytes) -> None:
        self.path = root / ORIGIN
        self._key = key
        self._fd: int | None = None

    def append(self, first: int, leaves: Leaves) -> None:
        """Appends the proof of the batch of entries `first`… with these leaf hashes (`sync` makes
        it durable).

        :raises OSError: when it cannot be written.
        """
        fd = self._open() if self._fd is None else self._fd
        record = PROOF.pack(first, len(leaves) // 32, origin_mac(self._key, first, leaves))
        if os.write(fd, record) != len(record):
            raise OSError(errno.EIO, "short write of a proof of origin")

    def sync(self) -> None:
        """Makes the proofs written durable.

        :raises OSError: when the sync fails.
        """
        if self._fd is not None:
            os.fdatasync(self._fd)

    def _open(self) -> int:
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o640)
        if created:
            fsync_dir(self.path.parent)
        return self._fd

    def cut_beyond(self, size: int) -> None:
        """Drops the proofs of batches that never committed (they reach past the log's `size`: a
        failed or torn batch's, or a record a crash cut short), so the file holds the log's batches only.

        :raises OSError: when the file cannot be cut.
        """
        if self._fd is None and not self.path.exists():
            return
        fd = self._open() if self._fd is None else self._fd
        length = os.fstat(fd).st_size
        end = length - length % PROOF.size
        while end:
            first, count, _ = PROOF.unpack(os.pread(fd, PROOF.size, end - PROOF.size))
            if first + count <= size:
                break
            end -= PROOF.size
        if end != length:
            os.ftruncate(fd, end)
            os.fdatasync(fd)

    def first_unproven(self, batches: Sequence[tuple[int, Leaves]], since: int) -> int | None:
        """Returns the first entry of the first of these batches (first entry, leaf hashes) whose
        proof of origin is not kept, or None when every one is proven (`since`: where they begin)."""
        kept = read_proofs(self.path, since)
        for first, leaves in batches:
            want = origin_mac(self._key, first, leaves)
            if not any(hmac.compare_digest(want, mac) for mac in kept.get((first, len(leaves) // 32), [])):
                return first
        return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_proofs(path: Path, since: int) -> dict[tuple[int, int], list[bytes]]:
    """Returns the proofs of origin of the batches that end after entry `since`, by (first, count),
    reading the file backwards from its end (records go up with the log: a failed batch's proof
    is followed by the next batch's, from the same entry)."""
    found: dict[tuple[int, int], list[bytes]] = {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return found
    try:
        end = os.fstat(fd).st_size // PROOF.size * PROOF.size
        while end > 0:
            start = max(0, end - 4096 * PROOF.size)
            block = os.pread(fd, end - start, start)
            for at in range(len(block) - PROOF.size, -1, -PROOF.size):
                first, count, mac = PROOF.unpack_from(block, at)
                if first + count <= since:
                    return found
                found.setdefault((first, count), []).append(mac)
            end = start
    finally:
        os.close(fd)
    return found


def segment_path(directory: Path, first_index: int) -> Path:
    """Returns the path of the segment whose first entry is `first_index`."""
    return directory / f"{first_index:020d}{SUFFIX}"


def list_segments(directory: Path) -> list[tuple[int, Path]]:
    """Returns the segments of a directory as (first index, path), in log order.

    :raises OSError: when a segment is not a regular file (a FIFO or a directory would hang or
        break every reader).
    """
    found = [(int(p.stem), p) for p in directory.glob(f"*{SUFFIX}") if p.stem.isdigit()]
    for _, path in found:
        if path.is_symlink() or not path.is_file():
            raise OSError(f"segment {path} is not a regular file")
    return sorted(found)


class FrameError(ValueError):
    """A frame is damaged or out of place; `offset` is where it starts in its segment."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset


def iter_frames(data: bytes | memoryview, first_index: int) -> Iterator[tuple[int, int, memoryview, bool]]:
    """Yields (index, offset, payload, committed) for each frame of a segment's bytes.

    :raises FrameError: at the first frame that is torn, damaged or out of place.
    """
    view = memoryview(data)
    offset, expected, end = 0, first_index, len(view)
    unpack_header, unpack_trailer, crc32 = HEADER.unpack_from, TRAILER.unpack_from, zlib.crc32
    while offset < end:
        if end - offset < OVERHEAD:
            raise FrameError(offset, f"torn frame: {end - offset} bytes left, a frame needs at least {OVERHEAD}")
        word, crc, index = unpack_header(view, offset)
        length = word & LENGTH_MASK
        stop = offset + HEADER.size + length
        if stop + TRAILER.size > end:
            raise FrameError(offset, f"torn frame: header says {length} payload bytes, only {end - offset - OVERHEAD} follow")
        payload = view[offset + HEADER.size:stop]
        if crc32(payload, crc32(view[offset:offset + 4].tobytes() + view[offset + 8:offset + 16].tobytes())) != crc:
            raise FrameError(offset, "CRC mismatch: the frame's bytes were changed")
        if unpack_trailer(view, stop)[0] != word:
            raise FrameError(offset, "trailing length differs from the header")
        if index != expected:
            raise FrameError(offset, f"frame says it holds entry {index}, expected entry {expected} here")
        yield index, offset, payload, bool(word & COMMIT)
        offset = stop + TRAILER.size
        expected += 1


class FileOps:
    """The system calls a segment writer makes; tests substitute a faulty double."""

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def sync(self, fd: int) -> None:
        os.fdatasync(fd)

    def truncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)


def fsync_dir(path: Path) -> None:
    """Makes a directory entry (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path, mode: int = 0o750) -> list[Path]:
    """Creates a directory and its missing parents; returns those it created, outermost first
    (each new one's parent must be synced for it to last)."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir(mode=mode, exist_ok=True)
    return list(reversed(missing))


def sync_file(path: Path) -> None:
    """Makes a file's content durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentWriter:
    """Appends frames to one segment file; a batch is acknowledged once its last piece is synced."""

    def __init__(self, path: Path, ops: FileOps, size: int) -> None:
        self.path = path
        self.size = size
        self.synced = size
        self._ops = ops
        created = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o640)
        if created:
            fsync_dir(path.parent)

    def append(self, data: bytes) -> None:
        """Writes and syncs a batch; on any failure the file is cut back to its size before.

        :raises OSError: when the write or the sync fails.
        """
        start = self.size
        try:
            self.write(data)
            self.sync()
        except OSError:
            self.cut(start)
            raise

    def write(self, data: bytes) -> None:
        """Writes bytes at the end of the file, not yet synced.

        :raises OSError: when the write fails.
        """
        view = memoryview(data)
        while view:
            written = self._ops.write(self._fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "short write")
            self.size += written
            view = view[written:]

    def sync(self) -> None:
        """Makes everything written durable.

        :raises OSError: when the sync fails.
        """
        self._ops.sync(self._fd)
        self.synced = self.size

    def cut(self, size: int) -> None:
        """Cuts the file back to `size` bytes, durably (what a failed batch left is never acknowledged);
        when that fails too, the reopened ledger drops the uncommitted tail anyway."""
        try:
            self._ops.truncate(self._fd, size)
            self._ops.sync(self._fd)
        except OSError:
            pass
        self.size = self.synced = size

    def close(self) -> None:
        os.close(self._fd)
