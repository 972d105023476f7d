"""Reads the frames of a ledger's segments in log order, one segment in memory at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ledger.layout import SEGMENTS
from ledger.segments import OVERHEAD, FrameError, iter_frames, list_segments


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


@dataclass
class SegmentFrames:
    """The committed frames of one segment, with what follows them uncommitted."""

    first_index: int
    path: Path
    offsets: list[int]
    payloads: list[memoryview]
    end: int  # byte offset after the last committed frame


def scan(root: Path) -> Iterator[SegmentFrames | Damage]:
    """Yields each segment's committed frames in order; a `Damage` last if reading stopped early.

    Frames after the last commit mark belong to a batch that was never acknowledged; they are
    left out, and reported as damage only when something follows them.
    """
    segments = list_segments(root / SEGMENTS)
    expected = 0
    for n, (first, path) in enumerate(segments):
        data = path.read_bytes()
        if first != expected:
            yield Damage(expected, path, 0, f"segment {path.name} starts at entry {first}, expected {expected}", len(segments) - n - 1)
            return
        offsets: list[int] = []
        payloads: list[memoryview] = []
        committed, end = 0, 0
        try:
            for index, offset, payload, commit in iter_frames(data, first):
                offsets.append(offset)
                payloads.append(payload)
                if commit:
                    committed, end = len(offsets), offset + payload.nbytes + OVERHEAD
        except FrameError as exc:
            yield SegmentFrames(first, path, offsets[:committed], payloads[:committed], end)
            yield Damage(first + committed, path, end, str(exc), len(segments) - n - 1)
            return
        yield SegmentFrames(first, path, offsets[:committed], payloads[:committed], end)
        expected = first + committed
        if end != len(data):
            yield Damage(expected, path, end, f"{len(data) - end} bytes of an unfinished batch", len(segments) - n - 1)
            return


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
