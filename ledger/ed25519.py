"""The one question about Ed25519 public keys that the signature libraries leave open: does the
key have small order?

A key whose point P has 8·P = O (the identity and the other seven torsion points) lets anyone
forge signatures that OpenSSL's cofactored check accepts for every message, so such a key cannot
vouch for a log. The eight points are a fixed set: their y coordinates are 1 (the identity, order
1), −1 (order 2), 0 (order 4, two points) and two values of order 8 (two points each). A decoder
that reduces y mod p and ignores the sign of x = 0 (as ref10's, in OpenSSL, does) also reads
y = p and y = p + 1, and either sign bit, as one of them. So the check compares the key's bytes,
sign bit cleared, with those seven y encodings (libsodium's blocklist): exact, and a set lookup
instead of a point decompression (1.5–2.4 ms in Python, which every registration paid on the
front's event loop: issue 33). `_decode` and `_add` (RFC 8032 §5.1.3, §5.1.4) stay as the
reference the set is proven against (tests/test_live_day.py).
"""

from __future__ import annotations

P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

SMALL_ORDER_Y = frozenset(bytes.fromhex(h) for h in (
    "0000000000000000000000000000000000000000000000000000000000000000",  # y = 0: order 4
    "0100000000000000000000000000000000000000000000000000000000000000",  # y = 1: the identity
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p − 1: order 2
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p, read as 0 by a lenient decoder
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p + 1, read as 1
))
"""The encodings of the small-order points' y coordinates, canonical and not, sign bit cleared."""


def has_small_order(public: bytes) -> bool:
    """Tells whether a 32-byte Ed25519 public key encodes a point of order 1, 2, 4 or 8, under
    any decoder: the sign bit set or not, y canonical or read mod p. Other keys, and keys that do
    not decode at all, are not small-order (no signature verifies under them)."""
    return len(public) == 32 and public[:31] + bytes((public[31] & 0x7F,)) in SMALL_ORDER_Y


def _decode(public: bytes) -> tuple[int, int] | None:
    """Returns the affine point of an encoding (RFC 8032 §5.1.3), or None when there is none."""
    if len(public) != 32:
        return None
    value = int.from_bytes(public, "little")
    sign, y = value >> 255, value & ((1 << 255) - 1)
    if y >= P:
        return None
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if (v * x * x - u) % P:
        x = x * SQRT_M1 % P
        if (v * x * x - u) % P:
            return None
    if x == 0 and sign:
        return None
    return (P - x if x & 1 != sign else x), y


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Adds two points of edwards25519 (−x² + y² = 1 + d·x²·y²) in affine coordinates."""
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P
    return x3, y3
