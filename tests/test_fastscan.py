"""The C accelerator and the pure-Python reference agree on good, torn and damaged segments:
leaf hashes, payloads, commit marks and the first fault."""

from __future__ import annotations

import random

import pytest

from ledger import fastscan, merkle, segments

pytestmark = pytest.mark.skipif(not fastscan.ACCELERATED, reason="C accelerator not built")


def _segment(rng: random.Random, n: int) -> bytes:
    out, index = [], 0
    while index < n:
        size = rng.randint(1, 5)
        out.append(segments.frame_batch(index, [rng.randbytes(rng.randint(0, 300)) for _ in range(size)]))
        index += size
    return b"".join(out)


def test_scan_agrees_on_random_damage() -> None:
    seed = 1234
    print(f"seed={seed}")
    rng = random.Random(seed)
    for trial in range(300):
        data = bytearray(_segment(rng, rng.randint(0, 40)))
        if data and trial % 3:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        if data and trial % 5 == 0:
            del data[rng.randrange(len(data)):]
        fast = fastscan.scan_leaves(bytes(data), 7 * (trial % 2), accelerated=True)
        slow = fastscan.scan_leaves(bytes(data), 7 * (trial % 2), accelerated=False)
        assert fast == slow, trial
        fast_payloads = fastscan.segment_payloads(bytes(data), 7 * (trial % 2), accelerated=True)
        assert fast_payloads == fastscan.segment_payloads(bytes(data), 7 * (trial % 2), accelerated=False), trial
        assert fast_payloads.last_commit == fast.last_commit


def test_extend_agrees_with_compact_range() -> None:
    rng = random.Random(99)
    leaves = [rng.randbytes(32) for _ in range(300)]
    for cut in (0, 1, 2, 7, 64, 150, 299):
        a, b = merkle.CompactRange(), merkle.CompactRange()
        fastscan.extend(a, b"".join(leaves[:cut]), accelerated=True)
        fastscan.extend(a, b"".join(leaves[cut:]), accelerated=True)
        for leaf in leaves:
            b.append(leaf)
        assert (a.size, a.root()) == (b.size, b.root()) == (300, merkle.root_of(leaves))
