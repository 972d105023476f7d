"""RFC 6962 / RFC 9162 Merkle tree hashing, proofs and their verification."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
_sha256 = hashlib.sha256


class ProofError(ValueError):
    """A Merkle proof does not verify; the message shows what was expected and computed."""


def leaf_hash(entry: bytes | memoryview) -> bytes:
    """Returns SHA-256(0x00 ‖ entry)."""
    return _sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Returns SHA-256(0x01 ‖ left ‖ right)."""
    return _sha256(b"\x01" + left + right).digest()


class CompactRange:
    """The right frontier of a growing tree: O(log n) hashes give the root of every prefix."""

    __slots__ = ("size", "_stack")

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []

    def append(self, leaf: bytes) -> None:
        """Adds one leaf hash, merging completed subtrees."""
        stack, node, n = self._stack, leaf, self.size
        while n & 1:
            node = _sha256(b"\x01" + stack.pop() + node).digest()
            n >>= 1
        stack.append(node)
        self.size += 1

    def root(self) -> bytes:
        """Returns the root of the tree of all leaves appended so far."""
        if not self._stack:
            return EMPTY_ROOT
        node = self._stack[-1]
        for left in reversed(self._stack[:-1]):
            node = _sha256(b"\x01" + left + node).digest()
        return node


def root_of(leaves: Sequence[bytes]) -> bytes:
    """Returns the root of a tree over the given leaf hashes."""
    cr = CompactRange()
    for leaf in leaves:
        cr.append(leaf)
    return cr.root()


def split_point(n: int) -> int:
    """Returns the largest power of two smaller than n (n ≥ 2): where RFC 6962 splits D[0:n]."""
    return 1 << ((n - 1).bit_length() - 1)


class SubtreeHasher:
    """Hashes subtrees of a list of leaf hashes, memoising the complete subtrees it has seen."""

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self.leaves = leaves
        self._memo: dict[tuple[int, int], bytes] = {}

    def __call__(self, lo: int, hi: int) -> bytes:
        if hi - lo == 1:
            return self.leaves[lo]
        key = (lo, hi)
        if key not in self._memo:
            k = split_point(hi - lo)
            self._memo[key] = node_hash(self(lo, lo + k), self(lo + k, hi))
        return self._memo[key]


def inclusion_proof(index: int, size: int, subtree: Callable[[int, int], bytes]) -> list[bytes]:
    """Returns PATH(index, D[0:size]) of RFC 6962 §2.1.1, bottom-up."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = split_point(hi - lo)
        if index < lo + k:
            path.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k))
            lo = lo + k
    return path[::-1]


def consistency_proof(size1: int, size2: int, subtree: Callable[[int, int], bytes]) -> list[bytes]:
    """Returns PROOF(size1, D[0:size2]) of RFC 6962 §2.1.2."""
    if not 0 < size1 <= size2:
        raise ProofError(f"no consistency proof from size {size1} to size {size2}")
    return _subproof(size1, 0, size2, True, subtree)


def _subproof(m: int, lo: int, hi: int, complete: bool, subtree: Callable[[int, int], bytes]) -> list[bytes]:
    n = hi - lo
    if m == n:
        return [] if complete else [subtree(lo, hi)]
    k = split_point(n)
    if m <= k:
        return _subproof(m, lo, lo + k, complete, subtree) + [subtree(lo + k, hi)]
    return _subproof(m - k, lo + k, hi, False, subtree) + [subtree(lo, lo + k)]


def _check_hash(name: str, value: bytes) -> None:
    if len(value) != HASH_SIZE:
        raise ProofError(f"{name} is {len(value)} bytes, not {HASH_SIZE}")


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes) -> None:
    """Checks an inclusion proof as RFC 9162 §2.1.3.2.

    :raises ProofError: with the expected and the computed root.
    """
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    for name, value in (("leaf hash", leaf), ("root", root), *(("proof hash", p) for p in proof)):
        _check_hash(name, value)
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError(f"proof has {len(proof)} hashes, too many for index {index} of size {size}")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError(f"proof has {len(proof)} hashes, too few for index {index} of size {size}")
    if r != root:
        raise ProofError(f"inclusion proof gives root {r.hex()}, expected {root.hex()}")


def verify_consistency(size1: int, size2: int, root1: bytes, root2: bytes, proof: Sequence[bytes]) -> None:
    """Checks a consistency proof as RFC 9162 §2.1.4.2.

    :raises ProofError: with the expected and the computed roots.
    """
    if size1 < 1 or size2 < size1:
        raise ProofError(f"no consistency proof from size {size1} to size {size2}")
    if size1 == size2:
        if proof or root1 != root2:
            raise ProofError(f"equal sizes {size1} need an empty proof and equal roots")
        return
    for name, value in (("root1", root1), ("root2", root2), *(("proof hash", p) for p in proof)):
        _check_hash(name, value)
    if not proof:
        raise ProofError(f"empty consistency proof from size {size1} to size {size2}")
    path = [root1, *proof] if size1 & (size1 - 1) == 0 else list(proof)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError(f"consistency proof has too many hashes for sizes {size1}→{size2}")
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError(f"consistency proof has too few hashes for sizes {size1}→{size2}")
    if fr != root1:
        raise ProofError(f"consistency proof gives old root {fr.hex()}, expected {root1.hex()}")
    if sr != root2:
        raise ProofError(f"consistency proof gives new root {sr.hex()}, expected {root2.hex()}")
