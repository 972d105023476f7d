"""Verify reads each entry's stream for the index and commitment checks through one vectorised match
over a segment (`ledger.frames._segment_streams`); any entry not in the recorder's field order is
decoded in full. The two readings agree on canonical, reordered, escaped and nested entries."""

from __future__ import annotations

import json
import random

import pytest

from ledger import segments
from ledger.errors import LedgerCorrupt
from ledger.fastscan import segment_packed
from ledger.frames import _segment_streams

SEED = random.randrange(2**32)


def _streams(payloads: list[bytes], first: int = 0) -> list[str | None]:
    part = segment_packed(segments.frame_batch(first, payloads), first, base=17)
    return _segment_streams(part, first, len(payloads)).to_pylist()


def _payload(rng: random.Random) -> bytes:
    stream = rng.choice(["g-1", "junqi cup/r1/t2", "流-七", 'q"uote', "back\\slash", ""])
    body = {"kind": rng.choice(["game.started", "checkers.moved"]), "stream": stream, "seq": rng.randrange(99)}
    if rng.random() < 0.3:
        body["detail"] = {"kind": "x", "stream": "nested-decoy"}
    items = list(body.items())
    if rng.random() < 0.3:
        rng.shuffle(items)  # not the recorder's order: decoded in full
    return json.dumps(dict(items), ensure_ascii=rng.random() < 0.5, separators=(",", ":")).encode()


def test_vectorised_streams_agree_with_full_decoding() -> None:
    print(f"seed {SEED}")
    rng = random.Random(SEED)
    payloads = [_payload(rng) for _ in range(400)]
    assert _streams(payloads, 1000) == [json.loads(p)["stream"] for p in payloads]


def test_unreadable_entry_is_named() -> None:
    good = b'{"kind":"game.started","stream":"s","seq":0}'
    with pytest.raises(LedgerCorrupt) as caught:
        _streams([good, b'{"kind":"game.started","seq":1}'], 40)
    assert caught.value.index == 41
