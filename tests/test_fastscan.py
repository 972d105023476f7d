"""The C accelerator and the pure-Python reference agree on good, torn and damaged segments:
leaf hashes, payloads, commit marks and the first fault."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import zlib
from array import array
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger import fastscan, merkle, segments
from ledger.notes import Signer, Verifier

pytestmark = pytest.mark.skipif(not fastscan.ACCELERATED, reason="C accelerator not built")

ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


def _segment(rng: random.Random, n: int) -> bytes:
    out, index = [], 0
    while index < n:
        size = rng.randint(1, 5)
        out.append(segments.frame_batch(index, [rng.randbytes(rng.randint(0, 300)) for _ in range(size)]))
        index += size
    return b"".join(out)


def _frames_until_damage(data: bytes, first: int) -> list[tuple[int, int, memoryview, bool]]:
    frames = []
    try:
        for frame in segments.iter_frames(data, first):
            frames.append(frame)
    except segments.FrameError:
        pass
    return frames


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
        base = rng.choice([0, 12345])
        fast_packed = fastscan.segment_packed(bytes(data), 7 * (trial % 2), base, accelerated=True)
        assert fast_packed == fastscan.segment_packed(bytes(data), 7 * (trial % 2), base, accelerated=False), trial
        assert fast_packed.last_commit == fast.last_commit
        assert fast_packed.payloads() == [bytes(p) for _, _, p, _ in _frames_until_damage(bytes(data), 7 * (trial % 2))]
        for accelerated in (True, False):  # written into a shared buffer at `base` instead
            into = bytearray(b"\xee" * (base + len(data) + 3))
            placed = fastscan.segment_packed(bytes(data), 7 * (trial % 2), base, into, accelerated=accelerated)
            assert placed._replace(data=bytes(placed.data)) == fast_packed, trial
            assert into[:base] == b"\xee" * base and into[base:base + len(fast_packed.data)] == fast_packed.data


def test_packed_refuses_an_output_buffer_without_room() -> None:
    """The payloads of a segment go into a shared buffer only where the segment's bytes fit."""
    data = segments.frame_batch(0, [b"x" * 40])
    for accelerated in (True, False):
        with pytest.raises(ValueError, match="no room"):
            fastscan.segment_packed(data, 0, 10, bytearray(len(data) + 9), accelerated=accelerated)


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


def test_crc32_agrees_with_zlib_at_every_length() -> None:
    """The scanner folds runs of 16 bytes with carry-less multiplication where the CPU has it."""
    rng = random.Random(7)
    for n in [*range(0, 300), 1023, 4096, 65_537, 1_000_003]:
        data, start = rng.randbytes(n), rng.getrandbits(32) if n % 2 else 0
        assert fastscan._fastscan.crc32(data, start) == zlib.crc32(data, start), n


def test_extend_roots_gives_the_root_at_each_cut() -> None:
    rng = random.Random(5)
    leaves = [rng.randbytes(32) for _ in range(600)]
    for cut in (0, 1, 2, 3, 7, 64, 333):
        cuts = sorted([*rng.sample(range(cut, 601), 30), cut, 600, 600])  # repeated sizes too
        roots = {}
        for accelerated in (True, False):
            tree = merkle.CompactRange()
            fastscan.extend(tree, b"".join(leaves[:cut]), accelerated=accelerated)
            roots[accelerated] = fastscan.extend_roots(tree, memoryview(b"".join(leaves[cut:])), cuts, accelerated=accelerated)
            assert (tree.size, tree.root()) == (600, merkle.root_of(leaves))
        assert roots[True] == roots[False] == b"".join(merkle.root_of(leaves[:c]) for c in cuts), cut


@pytest.mark.parametrize("accelerated", [True, False])
@pytest.mark.parametrize("cuts", [[10, 11], [3, 2], [0], [11]])
def test_extend_roots_refuses_cuts_outside_the_run(accelerated: bool, cuts: list[int]) -> None:
    tree = merkle.CompactRange()
    fastscan.extend(tree, bytes(32), accelerated=accelerated)
    with pytest.raises(ValueError):
        fastscan.extend_roots(tree, bytes(32 * 9), cuts, accelerated=accelerated)


def test_signature_checks_agree() -> None:
    """The C batch (libsodium where the machine has it, OpenSSL on what it refuses, with the GIL
    released) and `cryptography` accept the same signatures."""
    rng = random.Random(3)
    signer = Signer.generate("log.example/a")
    messages = [rng.randbytes(rng.randint(0, 200)) for _ in range(64)]
    signatures = [signer._key.sign(m) for m in messages]
    for i in range(1, 64, 3):  # damage a third: a flipped bit, a cut or lengthened signature, another message
        how = i % 4
        if how == 0:
            signatures[i] = bytes(b ^ (1 << (i % 8)) if j == i % 64 else b for j, b in enumerate(signatures[i]))
        elif how == 1:
            signatures[i] = signatures[i][: i % 64]
        elif how == 2:
            signatures[i] += b"\0"
        else:
            messages[i] += b"x"
    signatures[6] = signatures[6][:32] + (int.from_bytes(signatures[6][32:], "little") + ED25519_ORDER).to_bytes(32, "little")
    fast = fastscan.verify_signatures(signer.verifier, messages, signatures, accelerated=True)
    slow = fastscan.verify_signatures(signer.verifier, messages, signatures, accelerated=False)
    assert fast == slow
    assert [i for i, ok in enumerate(fast) if not ok] == sorted([6, *range(1, 64, 3)]) and len(fast) == 64
    assert fastscan.verify_signatures(Signer.generate("log.example/a").verifier, messages[:1], signatures[:1]) == b"\0"


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_signature_checks_of_many_keys_agree(threads: int) -> None:
    """`verify_each` (a key per message, split over the accelerator's threads) gives each message
    `cryptography`'s verdict under its own key: damaged signatures, another key's signature, the
    small-order key of the test below and the S + L malleation among them, in any split."""
    rng = random.Random(5)
    signers = [Signer.generate(f"log.example/k{n}") for n in range(5)]
    verifiers, messages, signatures = [], [], []
    for i in range(41):
        signer = signers[i % 5]
        message = rng.randbytes(rng.randint(0, 120))
        signature = signer._key.sign(message)
        if i % 7 == 3:  # a flipped bit
            signature = bytes([signature[0] ^ 4]) + signature[1:]
        if i % 7 == 5:  # signed by the next key
            signature = signers[(i + 1) % 5]._key.sign(message)
        verifiers.append(signer.verifier)
        messages.append(message)
        signatures.append(signature)
    signatures[9] = signatures[9][:32] + (int.from_bytes(signatures[9][32:], "little") + ED25519_ORDER).to_bytes(32, "little")
    identity = b"\x01" + bytes(31)
    verifiers.append(_UncheckedVerifier("log.example/weak", identity))
    messages.append(b"any")
    signatures.append(identity + bytes(32))
    slow = fastscan.verify_each(verifiers, messages, signatures, threads, accelerated=False)
    assert fastscan.verify_each(verifiers, messages, signatures, threads, accelerated=True) == slow
    assert [i for i, ok in enumerate(slow) if not ok] == sorted([9, *(i for i in range(41) if i % 7 in (3, 5))])
    assert slow[41] == 1  # OpenSSL's verdict on the small-order key, which libsodium refuses
    assert fastscan.verify_each([], [], [], threads) == b""


class _UncheckedVerifier(Verifier):
    """A verifier built without the small-order check, to reach the signature layer with such a key."""

    def __init__(self, name: str, public: bytes) -> None:
        self.name, self.public = name, public
        self._key = Ed25519PublicKey.from_public_bytes(public)


def test_signature_checks_agree_on_a_small_order_key() -> None:
    """With the identity point as the key, R the identity and S = 0 verify for any message under
    OpenSSL's (and so `cryptography`'s) rules; libsodium refuses them, and the batch then takes
    OpenSSL's verdict: the same answer either way. (Verifier refuses such keys before any note is
    read, tests/test_ed25519_keys.py; this checks the signature layer beneath it on its own.)"""
    identity = b"\x01" + bytes(31)
    verifier = _UncheckedVerifier("log.example/weak", identity)
    messages, signatures = [b"any", b"other"], [identity + bytes(32), identity + b"\x01" + bytes(31)]
    slow = fastscan.verify_signatures(verifier, messages, signatures, accelerated=False)
    assert fastscan.verify_signatures(verifier, messages, signatures, accelerated=True) == slow


def test_leaf_hashes_agree_with_hashlib_at_every_length() -> None:
    """Leaves are hashed two at a time (SHA extensions) or one by one; every padding case agrees."""
    rng = random.Random(8)
    payloads = [rng.randbytes(n) for n in [*range(0, 300), 1000, 4096, 65_535]]
    rng.shuffle(payloads)
    for group in (payloads, payloads[1:], payloads[:1], []):
        assert fastscan._fastscan.sha256_leaves(group) == b"".join(merkle.leaf_hash(p) for p in group)


def test_frame_batch_agrees_with_the_reference() -> None:
    """The writer's C framer gives the bytes of ledger/segments.py's, which the scanner reads back."""
    rng = random.Random(20261201)
    for n in (1, 2, 3, 17, 256):
        payloads = [rng.randbytes(rng.choice([0, 1, 15, 16, 17, 64, 300, 5000])) for _ in range(n)]
        first = rng.randrange(1 << 40)
        framed = fastscan.frame_batch(first, payloads, accelerated=True)
        assert framed == segments.frame_batch(first, payloads)
        assert [bytes(p) for _, _, p, _ in segments.iter_frames(framed, first)] == payloads
        piece = fastscan.frame_batch(first, payloads, False, accelerated=True)  # a batch going on in the next segment
        assert piece == segments.frame_batch(first, payloads, commit=False)
        assert not any(commit for *_, commit in segments.iter_frames(piece, first))
    with pytest.raises(TypeError):
        fastscan.frame_batch(0, ["text"], accelerated=True)  # type: ignore[list-item]


def test_roots_at_cuts_across_chunks() -> None:
    """The tree is hashed in aligned chunks of 256 leaves; roots inside, at and across their edges."""
    rng = random.Random(12)
    leaves = [rng.randbytes(32) for _ in range(1500)]
    prefix, tree = [merkle.EMPTY_ROOT], merkle.CompactRange()
    for leaf in leaves:
        tree.append(leaf)
        prefix.append(tree.root())
    for trial in range(60):
        start = rng.choice([0, 1, 255, 256, 257, 511, 512, rng.randrange(1500)])
        stop = rng.randrange(start, 1501)
        cuts = sorted(rng.sample(range(start, stop + 1), min(stop - start + 1, rng.randint(0, 40))))
        tree = merkle.CompactRange()
        fastscan.extend(tree, b"".join(leaves[:start]))
        roots = fastscan.extend_roots(tree, b"".join(leaves[start:stop]), cuts)
        assert (tree.size, tree.root()) == (stop, prefix[stop]), trial
        assert roots == b"".join(prefix[c] for c in cuts), trial


def test_portable_build_agrees(tmp_path: Path) -> None:
    """Without the CPU's carry-less multiply or libsodium (forced by an environment variable) the
    module falls back on zlib and OpenSSL: same leaves, CRCs, roots and signature verdicts."""
    rng = random.Random(21)
    data = tmp_path / "segment"
    data.write_bytes(_segment(rng, 700))
    probe = (
        "import sys, hashlib; from pathlib import Path; from ledger import _fastscan as f; from ledger.notes import Signer; "
        "d = Path(sys.argv[1]).read_bytes(); s = f.scan(d, 0); st = []; k = Signer.generate('x'); "
        "m = [d[i:i + 50] for i in range(0, 5000, 50)]; g = [k._key.sign(x) for x in m]; g[3] = g[4]; "
        "v = f.verify_ed25519(k.verifier.public, m, g); assert v.count(1) == 99, v; "
        "print(hashlib.sha256(repr((s, f.crc32(d), f.extend_roots(st, 0, s[0], list(range(0, s[1] + 1, 7))), st, v)).encode()).hexdigest())"
    )
    digests = {
        env: subprocess.run([sys.executable, "-c", probe, str(data)], capture_output=True, text=True, check=True,
                            env={**os.environ, **({"MATCHLEDGER_FASTSCAN_PORTABLE": "1"} if env else {})}).stdout
        for env in (False, True)
    }
    assert digests[False] == digests[True] and len(digests[True]) == 65


def test_scan_file_in_chunks_agrees_with_the_reference(tmp_path: Path) -> None:
    """A segment file scanned a chunk at a time, frames cut at chunk edges and frames longer than a
    chunk included, gives what the Python reference gives on the whole file."""
    rng = random.Random(5)
    path = tmp_path / "segment"
    for trial in range(200):
        out, index = [], 0
        while index < rng.randint(0, 60):
            size = rng.randint(1, 5)
            out.append(segments.frame_batch(index, [rng.randbytes(rng.choice([rng.randint(0, 300), rng.randint(0, 3000)]))
                                                    for _ in range(size)]))
            index += size
        data = bytearray(b"".join(out))
        if data and trial % 3:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        if data and trial % 5 == 0:
            del data[rng.randrange(len(data)):]
        path.write_bytes(bytes(data))
        reference = fastscan.scan_leaves(bytes(data), 3, accelerated=False)
        for chunk in (64, 257, 4096, fastscan.CHUNK):
            buffer = bytearray(rng.choice([0, 10, chunk]))
            assert fastscan.scan_file(path, 3, buffer, chunk=chunk) == reference, (trial, chunk)
        assert fastscan.scan_file(path, 3, accelerated=False) == reference


def test_gather_agrees_with_the_reference() -> None:
    """Chosen entries of a packed buffer joined into one JSON array, in the order asked, repeats
    allowed; an index without an entry is refused both ways."""
    rng = random.Random(29)
    payloads = [rng.randbytes(rng.randint(0, 50)) for _ in range(200)]
    ends = array("q", itertools.accumulate(map(len, payloads), initial=0))
    data = b"".join(payloads)
    for _ in range(100):
        indexes = array("q", [rng.randrange(len(payloads)) for _ in range(rng.randint(0, 30))])
        expected = b"[" + b",".join(payloads[i] for i in indexes) + b"]"
        assert fastscan.gather(data, ends, indexes, accelerated=True) == expected
        assert fastscan.gather(data, ends, indexes, accelerated=False) == expected
    for bad in (-1, len(payloads)):
        for accelerated in (True, False):
            with pytest.raises(IndexError):
                fastscan.gather(data, ends, array("q", [0, bad]), accelerated=accelerated)
