"""Reads the frames of a ledger's segments in log order, one segment in memory at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ledger.layout import SEGMENTS
from ledger.segments import HEADER, LENGTH_MASK, OVERHEAD, FrameError, iter_frames, list_segments


class EntryKey(msgspec.Struct, frozen=True):
    """The part of an entry the log itself checks: its stream and sequence number."""

    stream: str
    seq: int


KEYS_DECODER = msgspec.json.Decoder(list[EntryKey])


@dataclass
class Damage:
    """Where reading stopped: the first frame that is torn, damaged or out of place."""

    index: int
    segment: Path
    offset: int
    reason: str
    trailing_segments: int
    followed: bool = False
    """A well-formed frame of the next entry follows the damaged one: the damage is not a torn tail."""


@dataclass
class SegmentFrames:
    """The well-formed frames of one segment; those after `last_commit` belong to an unfinished batch."""

    first_index: int
    path: Path
    offsets: list[int]
    payloads: list[memoryview]
    last_commit: int  # frames up to and including the last commit mark
    commit_end: int  # byte offset just after that frame

    @property
    def end_index(self) -> int:
        return self.first_index + len(self.payloads)


def scan(root: Path) -> Iterator[SegmentFrames | Damage]:
    """Yields each segment's well-formed frames in order, then a `Damage` if reading stopped early.

    Only the last segment may end in frames without a commit mark (a batch cut short by a crash).
    """
    segments = list_segments(root / SEGMENTS)
    expected = 0
    for n, (first, path) in enumerate(segments):
        later = len(segments) - n - 1
        if first != expected:
            yield Damage(expected, path, 0, f"segment {path.name} starts at entry {first}, expected {expected}", later)
            return
        part, error = _read_segment(first, path)
        yield part
        if error is not None:
            followed = frame_follows(path.read_bytes(), error.offset, part.end_index + 1)
            yield Damage(part.end_index, path, error.offset, str(error), later, followed)
            return
        if later and part.last_commit < len(part.payloads):
            yield Damage(first + part.last_commit, path, part.commit_end, "unfinished batch before a later segment", later)
            return
        expected = part.end_index


def frame_follows(data: bytes, offset: int, index: int) -> bool:
    """Tells whether a well-formed frame of entry `index` starts where the frame at `offset` says it ends."""
    if len(data) - offset < OVERHEAD:
        return False
    word, _, _ = HEADER.unpack_from(data, offset)
    after = offset + OVERHEAD + (word & LENGTH_MASK)
    try:
        return next(iter_frames(data[after:], index), None) is not None
    except FrameError:
        return False


def _read_segment(first: int, path: Path) -> tuple[SegmentFrames, FrameError | None]:
    part = SegmentFrames(first, path, [], [], 0, 0)
    try:
        for _, offset, payload, commit in iter_frames(path.read_bytes(), first):
            part.offsets.append(offset)
            part.payloads.append(payload)
            if commit:
                part.last_commit, part.commit_end = len(part.offsets), offset + payload.nbytes + OVERHEAD
    except FrameError as exc:
        return part, exc
    return part, None


def decode_keys(payloads: list[memoryview]) -> list[EntryKey]:
    """Decodes the stream and sequence number of many entries in one call."""
    if not payloads:
        return []
    return KEYS_DECODER.decode(b"[" + b",".join(payloads) + b"]")


class KeyDecodeError(ValueError):
    """An entry's bytes do not carry a stream and sequence number."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position


def decode_keys_exact(payloads: list[memoryview]) -> list[EntryKey]:
    """Decodes the keys of many entries, naming the first entry that cannot be read.

    :raises KeyDecodeError: with the position of that entry in `payloads`.
    """
    try:
        return decode_keys(payloads)
    except msgspec.DecodeError:
        pass
    keys = []
    for position, payload in enumerate(payloads):
        try:
            keys.append(msgspec.json.decode(payload, type=EntryKey))
        except msgspec.DecodeError as exc:
            raise KeyDecodeError(position, f"entry is not a readable event: {exc}") from None
    return keys
