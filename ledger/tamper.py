"""Deliberate damage for drills: the simulator's `bad-byte` fault, which the audit must catch."""

from __future__ import annotations

import random
from pathlib import Path

from ledger.checkpoints import newest_size
from ledger.layout import SEGMENTS
from ledger.segments import HEADER, iter_frames, list_segments


def flip_byte(root: Path, rng: random.Random) -> int:
    """Flips one byte inside an entry covered by a checkpoint; returns that entry's index."""
    covered = newest_size(root)
    first, path = list_segments(root / SEGMENTS)[0]
    data = bytearray(path.read_bytes())
    frames = [(i, off, p.nbytes) for i, off, p, _ in iter_frames(bytes(data), first) if i < covered]
    index, offset, length = frames[rng.randrange(len(frames))]
    data[offset + HEADER.size + rng.randrange(length)] ^= 0x04
    path.write_bytes(bytes(data))
    return index
