"""A verifier key must not be a small-order Ed25519 point (RFC 8032 §5.1.3 decoding; the eight
torsion points let anyone forge signatures a cofactored check accepts): such keys are refused
wherever a verifier key is read, the ledger's own and the witnesses'."""

from __future__ import annotations

import base64
import random

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledger.ed25519 import P, _add, _decode, has_small_order
from ledger.errors import KeyFileError
from ledger.notes import ALG_ED25519, Verifier

ORDER = 2**252 + 27742317777372353535851937790883648493
"""The order of the prime-order subgroup (RFC 8032 §5.1, L)."""
SEED = 20261129


def _encode(point: tuple[int, int]) -> bytes:
    x, y = point
    return (y | (x & 1) << 255).to_bytes(32, "little")


def _times(n: int, point: tuple[int, int]) -> tuple[int, int]:
    result = (0, 1)
    while n:
        if n & 1:
            result = _add(result, point)
        point, n = _add(point, point), n >> 1
    return result


def _torsion_points() -> set[bytes]:
    """The eight points of order dividing 8, as L·Q for random points Q (L·Q lies in the torsion)."""
    rng = random.Random(SEED)
    found: set[bytes] = set()
    while len(found) < 8:
        q = _decode(rng.randbytes(32))
        if q is not None:
            found.add(_encode(_times(ORDER, q)))
    return found


def _real_key() -> bytes:
    return Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_every_torsion_point_has_small_order() -> None:
    torsion = _torsion_points()
    assert bytes([1]) + bytes(31) in torsion  # the identity
    assert all(has_small_order(key) for key in torsion)


def test_real_keys_and_the_base_point_do_not() -> None:
    base = (4 * pow(5, P - 2, P)) % P  # y of the base point B
    assert not has_small_order(base.to_bytes(32, "little"))
    assert not any(has_small_order(_real_key()) for _ in range(20))
    assert not has_small_order(bytes([0xFF] * 32))  # y ≥ p: no point at all


@pytest.mark.parametrize("key", sorted(_torsion_points()), ids=lambda k: k.hex()[:8])
def test_small_order_verifier_key_is_refused(key: bytes) -> None:
    text = f"evil+00000000+{base64.b64encode(ALG_ED25519 + key).decode()}"
    with pytest.raises(KeyFileError, match="small-order point"):
        Verifier.parse(text)


def test_real_verifier_key_still_parses() -> None:
    verifier = Verifier("ok", _real_key())
    assert Verifier.parse(str(verifier)).public == verifier.public
