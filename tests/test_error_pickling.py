"""Refusals cross process boundaries whole: the season builder and the projection's workers run in
other processes, and a refusal raised there must reach the user with its line, field and reason,
not as a `BrokenProcessPool` (a `SequenceError` once did: its pickled form lacked its arguments)."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from ledger.errors import ForeignEntries, LedgerCorrupt, SequenceError
from schemas.codec import ContractError

MADE = [
    SequenceError(7, "seq 3 follows seq 1 of stream g", "seq-gap"),
    LedgerCorrupt(12, "frame checksum differs"),
    LedgerCorrupt(None, "segment missing"),
    ForeignEntries("3 entries after the last signed note"),
    ContractError(2, "field `seq`: expected int"),
]


@pytest.mark.parametrize("error", MADE, ids=lambda e: type(e).__name__)
def test_refusal_pickles_whole(error: Exception) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert vars(again) == vars(error)


def _refuse() -> None:
    raise SequenceError(4, "seq 2 conflicts with a recorded event", "seq-conflict")


def test_refusal_raised_in_a_worker_reaches_the_parent() -> None:
    with ProcessPoolExecutor(1) as pool, pytest.raises(SequenceError) as caught:
        pool.submit(_refuse).result()
    assert (caught.value.line, caught.value.reason) == (4, "seq-conflict")
    assert str(caught.value).startswith("第 4 行 line 4:")
