"""An export's entries against the signed tree (ledger/export_tree.py; issue 17, the export checked
before any query): tile roots combine to RFC 6962's root for every size, a real export's entries
hash to its checkpoint, and a changed, missing, repeated or extra entry is named."""

from __future__ import annotations

import hashlib
import json
import random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from ledger.export_tree import TileRoot, TreeMismatch, check_tree, tile_root, tile_roots, tree_root
from tests.ledger_support import cli


def _mth(leaves: list[bytes]) -> bytes:
    """MTH of RFC 6962 §2.1, written from its definition (the reference, not ledger/merkle.py)."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


@pytest.mark.parametrize("size", [1, 2, 255, 256, 257, 511, 512, 513, 768, 1000, 4097])
def test_tile_roots_combine_to_the_rfc_6962_root(size: int) -> None:
    seed = 17 + size
    print(f"seed {seed}")
    rng = random.Random(seed)
    bodies = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) for _ in range(size)]
    events = pa.table({"entry": pa.array(rng.sample(range(size), size), pa.int64())})  # any row order
    events = events.append_column("body", pa.array([bodies[i] for i in events.column("entry").to_pylist()], pa.large_binary()))
    expected = _mth([hashlib.sha256(b"\x00" + body).digest() for body in bodies])
    assert tree_root(tile_roots(events), size) == expected


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[pa.Table, dict]:
    base = tmp_path_factory.mktemp("tree")
    root, out = base / "ledger", base / "pq"
    assert cli("simulate", "checkers", "--ledger", str(root), "--games", "4", "--seed", "5").exit_code == 0
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    events = ds.dataset(out / "events", format="parquet", partitioning=None).to_table(columns=["entry", "body"])
    return events, manifest["checkpoint"]


def test_an_exports_entries_hash_to_its_signed_root(export: tuple[pa.Table, dict]) -> None:
    events, checkpoint = export
    assert events.num_rows == checkpoint["size"] > 256  # every entry is a row, over more than one tile
    check_tree(tile_roots(events), checkpoint)


def test_one_changed_byte_is_refused(export: tuple[pa.Table, dict]) -> None:
    events, checkpoint = export
    bodies = events.column("body").to_pylist()
    bodies[100] = bodies[100].replace('"seq":', '"seq": ', 1)
    changed = events.set_column(1, "body", pa.array(bodies, events.schema.field("body").type))
    with pytest.raises(TreeMismatch, match="an entry's bytes were changed"):
        check_tree(tile_roots(changed), checkpoint)


@pytest.mark.parametrize("case, message", [
    ("missing", r"entry 300 is missing in the export \(tile 1\)"),
    ("repeated", r"entry 300 is repeated in the export \(tile 1\)"),
    ("last missing", r"entry \d+ is missing from the export \(tile \d+ holds \d+ of its \d+ entries\)"),
    ("extra", r"beyond the checkpoint's \d+ entries"),
])
def test_an_incomplete_export_names_the_entry(export: tuple[pa.Table, dict], case: str, message: str) -> None:
    events, checkpoint = export
    entries = events.column("entry").to_pylist()
    keep = list(range(events.num_rows))
    if case == "missing":
        keep.remove(entries.index(300))
    elif case == "repeated":
        keep.append(entries.index(300))
    elif case == "last missing":
        keep.remove(entries.index(max(entries)))
    table = events.take(keep)
    if case == "extra":
        extra = pa.table({"entry": pa.array([checkpoint["size"]], pa.int64()), "body": pa.array(["{}"], events.schema.field("body").type)})
        table = pa.concat_tables([events, extra])
    with pytest.raises(TreeMismatch, match=message):
        check_tree(tile_roots(table), checkpoint)


def test_an_entry_filed_in_another_tile_is_named() -> None:
    with pytest.raises(TreeMismatch, match="entry 256 is filed in tile 0"):
        tile_root(0, [0, 256], [b"a", b"b"])
    with pytest.raises(TreeMismatch, match="entry 0 is missing from the export"):
        tree_root([TileRoot(1, 256, b"\0" * 32)], 300)


def test_blocks_give_the_same_roots_as_one_pass(export: tuple[pa.Table, dict]) -> None:
    """The group-map path (what an engine's executors run per block of entries) agrees with the
    one-process path, and a block's problem reaches the driver."""
    from ledger.export_tree import roots_from_rows, roots_of_block

    events, checkpoint = export
    blocks = [roots_of_block(events.filter(pc.equal(pc.divide(events.column("entry"), 512), block)))
              for block in range(-(-events.num_rows // 512))]
    rows = pa.concat_tables(blocks).to_pylist()
    check_tree(roots_from_rows(rows), checkpoint)
    broken = roots_of_block(events.filter(pc.not_equal(events.column("entry"), 300)))
    with pytest.raises(TreeMismatch, match="entry 300 is missing"):
        roots_from_rows([*rows, *broken.to_pylist()])
