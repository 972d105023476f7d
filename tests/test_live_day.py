"""A tournament day on the live service (issue 33): registering a source costs the same at any
number of sources and pauses no batch, start-up reads no history, `prove --ledger` beside a
running service answers from what is committed."""

from __future__ import annotations

import random
import types
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import ledger as ledger_api
from ledger.ed25519 import P, SMALL_ORDER_Y, _add, _decode, has_small_order

SEED = 20261203


# -- point 1: the small-order check is a set lookup, exact -----------------------------------------


def _decompressed_small_order(public: bytes) -> bool:
    """The reference: decodes as a lenient decoder does (y read mod p, the sign of x = 0 ignored,
    as ref10 in OpenSSL), then doubles three times (RFC 8032 §5.1.3, §5.1.4)."""
    if len(public) != 32:
        return False
    value = int.from_bytes(public, "little")
    y = (value & ((1 << 255) - 1)) % P
    point = _decode((y | (value >> 255) << 255).to_bytes(32, "little")) or _decode(y.to_bytes(32, "little"))
    if point is None:
        return False
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


def _strict_small_order(public: bytes) -> bool | None:
    """The check as it was (strict RFC 8032 decoding, then three doublings); None when the key does not decode."""
    point = _decode(public)
    if point is None:
        return None
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


def _crafted_keys(rng: random.Random) -> list[bytes]:
    """Every small-order y with either sign bit, every non-canonical y (p … 2²⁵⁵ − 1) with either
    sign bit, their neighbours, the base point, real keys and random bytes."""
    ys = [int.from_bytes(e, "little") for e in SMALL_ORDER_Y] + [P + k for k in range(19)]
    ys += [y + d for y in list(ys) for d in (-1, 1) if 0 <= y + d < 2**255]
    ys.append(4 * pow(5, P - 2, P) % P)  # the base point's y
    keys = [(y | sign << 255).to_bytes(32, "little") for y in ys for sign in (0, 1)]
    keys += [Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) for _ in range(50)]
    return keys + [rng.randbytes(32) for _ in range(2000)]


def test_the_small_order_set_agrees_with_point_decompression() -> None:
    """Issue 33 point 1 (threat: a small-order key lets anyone forge its signatures): the set
    lookup gives the decompression's answer for random and crafted keys, refuses every encoding of
    the eight torsion points a lenient decoder accepts (non-canonical y, the sign bit on x = 0),
    and differs from the strict check only on those."""
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    refused_more = set()
    for key in _crafted_keys(rng):
        assert has_small_order(key) == _decompressed_small_order(key), key.hex()
        strict = _strict_small_order(key)
        if strict is not None:
            assert has_small_order(key) == strict, key.hex()
        elif has_small_order(key):
            refused_more.add(key)
    assert len(refused_more) == 2 + 2 * 2  # y = 1 and y = −1 with the sign bit; y = p and p + 1 with either
    assert not has_small_order(bytes(31)) and not has_small_order(bytes(33))


def test_the_set_is_the_eight_torsion_points() -> None:
    """Issue 33 point 1: the seven y encodings are those of the points of order 1, 2, 4 and 8 (L·Q
    for random Q lies in the torsion), canonical and not, and nothing else."""
    order = 2**252 + 27742317777372353535851937790883648493
    rng = random.Random(SEED)
    torsion: set[int] = set()
    while len(torsion) < 5:  # five y values: 1, −1, 0 and two of order 8
        q = _decode(rng.randbytes(32))
        if q is None:
            continue
        result, point, n = (0, 1), q, order
        while n:
            if n & 1:
                result = _add(result, point)
            point, n = _add(point, point), n >> 1
        torsion.add(result[1])
    canonical = {y.to_bytes(32, "little") for y in torsion}
    non_canonical = {(y + P).to_bytes(32, "little") for y in torsion if y + P < 2**255}
    assert SMALL_ORDER_Y == canonical | non_canonical


# -- point 1: the front updates one source, not the whole book ------------------------------------


def test_a_registration_builds_one_verifier_in_the_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 point 1 (a registration stalled every table): the writer sends the front only the
    source that changed, and the front builds that one verifier and leaves the others as they
    were, at 300 sources as at 1; a revocation reaches the front the same way."""
    from audit import front

    signers = [ledger_api.Signer.generate(f"s{i}") for i in range(301)]
    book = ledger_api.SourceBook(origin="day.test/log")
    for signer in signers[:300]:
        book.sources[signer.name] = ledger_api.Source(signer.name, signer.verifier, (), ())
    fake = types.SimpleNamespace(book=ledger_api.SourceBook())
    front.Front._message(fake, front.sources_message(book))  # type: ignore[arg-type]
    before = dict(fake.book.sources)
    built: list[str] = []
    original = ledger_api.Verifier.__init__

    def counting(self: ledger_api.Verifier, name: str, public: bytes) -> None:
        built.append(name)
        original(self, name, public)

    monkeypatch.setattr(ledger_api.Verifier, "__init__", counting)
    added = ledger_api.Source("s300", signers[300].verifier, (), ())
    message = front.source_message(added)
    assert len(message[1]) == 4  # one source's row, whatever the book's size
    front.Front._message(fake, message)  # type: ignore[arg-type]
    revoked = ledger_api.Source("s7", signers[7].verifier, (), (), revoked=True)
    front.Front._message(fake, front.source_message(revoked))  # type: ignore[arg-type]
    assert built == ["s300", "s7"]
    assert all(fake.book.sources[name] is before[name] for name in before if name != "s7")
    assert fake.book.sources["s7"].revoked and fake.book.sources["s300"].verifier.public == signers[300].verifier.public
    with pytest.raises(ledger_api.SourceRefused, match="revoked"):
        fake.book.identify(ledger_api.sign_batch(signers[7], b"x", "day.test/log"), b"x")
