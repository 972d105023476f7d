"""Splits a JSON array (msgspec's compact output) into its elements, back to back: the projection
encodes a task's facts records with one call and splits them, far cheaper than one encoder call
per record. In C when the accelerator is built (`audit/query/_jsonsplit.c`); the reference below gives
the same answers (tests/test_jsonsplit.py); `MATCHLEDGER_NO_ACCEL=1` runs the reference."""

from __future__ import annotations

import itertools
import os
from array import array

import msgspec

try:
    from audit.query import _jsonsplit  # type: ignore[attr-defined]
except ImportError:  # no compiler at install time
    _jsonsplit = None  # type: ignore[assignment]
if os.environ.get("MATCHLEDGER_NO_ACCEL"):
    _jsonsplit = None  # type: ignore[assignment]

ACCELERATED = _jsonsplit is not None
_raw_elements = msgspec.json.Decoder(list[msgspec.Raw])


def split(array_json: bytes, accelerated: bool | None = None) -> tuple[bytes, array]:
    """Returns the elements of a JSON array back to back, and their boundaries: element i is
    data[ends[i]:ends[i + 1]].

    :raises ValueError: when the bytes are not an array (the C code checks no more than that and
        that the array ends; it expects well-formed JSON).
    """
    bounds = array("q")
    if ACCELERATED if accelerated is None else accelerated:
        data, ends = _jsonsplit.split(array_json)
        bounds.frombytes(ends)
        return data, bounds
    try:
        elements = _raw_elements.decode(array_json)
    except msgspec.DecodeError as exc:
        raise ValueError(f"not a JSON array: {exc}") from None
    bounds.extend(itertools.accumulate(map(len, elements), initial=0))
    return b"".join(elements), bounds
