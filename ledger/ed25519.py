"""The one question about Ed25519 public keys that the signature libraries leave open: does the
key have small order?

A key whose point P has 8·P = O (the identity and the other seven torsion points) lets anyone
forge signatures that OpenSSL's cofactored check accepts for every message, so such a key cannot
vouch for a log. RFC 8032 §5.1.3 decodes the point; the addition law of §5.1.4 (complete on
edwards25519) doubles it three times.
"""

from __future__ import annotations

import functools

P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


@functools.lru_cache(maxsize=64)  # a writer meets the same few keys many times per run
def has_small_order(public: bytes) -> bool:
    """Tells whether a 32-byte Ed25519 public key decodes to a point of order 1, 2, 4 or 8. Keys that
    do not decode at all are not small-order (no signature verifies under them)."""
    point = _decode(public)
    if point is None:
        return False
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


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
