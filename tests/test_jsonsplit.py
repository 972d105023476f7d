"""The projection's JSON splitter: C (audit/query/_jsonsplit.c) and the reference give the same answers."""

from __future__ import annotations

import itertools
import random
from array import array

import msgspec
import pytest

from audit.query import jsonsplit
from ledger import fastscan

pytestmark = pytest.mark.skipif(not jsonsplit.ACCELERATED, reason="C splitter not built")


def _random_json(rng: random.Random, depth: int = 0) -> object:
    """A JSON value with the characters that could fool a splitter: quotes, backslashes, brackets
    and commas inside strings, nesting, non-ASCII text."""
    pick = rng.randrange(8 if depth < 3 else 5)
    if pick == 0:
        return rng.choice([None, True, False])
    if pick == 1:
        return rng.randint(-10**12, 10**12)
    if pick == 2:
        return rng.random() * 1e6
    if pick < 5:
        return "".join(rng.choice(['"', "\\", "[", "]", "{", "}", ",", " ", "a", "连", "\n"]) for _ in range(rng.randint(0, 12)))
    if pick < 7:
        return {f"k{i}": _random_json(rng, depth + 1) for i in range(rng.randint(0, 4))}
    return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_split_agrees_with_the_reference() -> None:
    """A JSON array split into its elements is the inverse of gather, both ways, on random values
    whose strings hold quotes, escapes, brackets and commas; what is not an array, or does not end,
    or has an empty element is refused both ways."""
    rng = random.Random(31)
    for _ in range(300):
        values = [_random_json(rng) for _ in range(rng.randint(0, 20))]
        encoded = [msgspec.json.encode(v) for v in values]
        for accelerated in (True, False):
            data, ends = jsonsplit.split(msgspec.json.encode(values), accelerated=accelerated)
            assert ends == array("q", itertools.accumulate(map(len, encoded), initial=0))
            assert data == b"".join(encoded)
            assert fastscan.gather(data, ends, array("q", range(len(values)))) == msgspec.json.encode(values)
    spaced = b' [ 1 , {"a" : [2, 3]} ,"x" ] '
    expected = (b'1{"a" : [2, 3]}"x"', array("q", [0, 1, 15, 18]))
    assert jsonsplit.split(spaced, accelerated=True) == jsonsplit.split(spaced, accelerated=False) == expected
    for bad in (b"", b"{}", b"[1,", b"[1,]", b"[,1]", b'["abc]', b"[1"):
        for accelerated in (True, False):
            with pytest.raises(ValueError):
                jsonsplit.split(bad, accelerated=accelerated)
