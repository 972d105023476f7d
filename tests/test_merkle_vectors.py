"""RFC 6962 conformance: the transparency-dev vectors in shared/vectors/merkle and known answers."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from ledger import merkle

VECTORS = Path(__file__).resolve().parent / "data" / "merkle"  # a copy of shared/vectors/merkle (Apache-2.0)


def _b64(s: str) -> bytes:
    return base64.b64decode(s)


def _cases(kind: str) -> list[Path]:
    found = sorted((VECTORS / kind).rglob("*.json"))
    assert len(found) > 20, f"conformance vectors missing under {VECTORS / kind}"
    return found


@pytest.mark.parametrize("path", _cases("inclusion"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_inclusion_vector(path: Path) -> None:
    v = json.loads(path.read_text())
    args = (_b64(v["leafHash"]), v["leafIdx"], v["treeSize"], [_b64(p) for p in v["proof"] or []], _b64(v["root"]))
    if v["wantErr"]:
        with pytest.raises(merkle.ProofError):
            merkle.verify_inclusion(*args)
    else:
        merkle.verify_inclusion(*args)


@pytest.mark.parametrize("path", _cases("consistency"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_consistency_vector(path: Path) -> None:
    v = json.loads(path.read_text())
    args = (v["size1"], v["size2"], _b64(v["root1"]), _b64(v["root2"]), [_b64(p) for p in v["proof"] or []])
    if v["wantErr"]:
        with pytest.raises(merkle.ProofError):
            merkle.verify_consistency(*args)
    else:
        merkle.verify_consistency(*args)


def test_known_answers() -> None:
    assert merkle.EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert merkle.leaf_hash(b"").hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    assert merkle.leaf_hash(b"L123456").hex() == "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    assert merkle.node_hash(b"N123", b"N456").hex() == "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"


def test_generated_proofs_verify_for_every_size() -> None:
    seed = 6962
    print(f"seed={seed}")
    rng = random.Random(seed)
    leaves = [merkle.leaf_hash(rng.randbytes(8)) for _ in range(40)]
    hasher = merkle.SubtreeHasher(leaves)
    for size in range(1, len(leaves) + 1):
        root = merkle.root_of(leaves[:size])
        assert hasher(0, size) == root
        for index in range(size):
            merkle.verify_inclusion(leaves[index], index, size, merkle.inclusion_proof(index, size, hasher), root)
        for size1 in range(1, size + 1):
            proof = merkle.consistency_proof(size1, size, hasher)
            merkle.verify_consistency(size1, size, merkle.root_of(leaves[:size1]), root, proof)
