"""Parquet export of the projection, Hive-partitioned by game and tournament, with a manifest of
every file's SHA-256, row count and entry range and the checkpoint it was made from."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from audit.projection import SCHEMAS, Projection
from ledger import PRIVATE_KEY, SignatureError, Signer, Verifier, load_verifier, newest_checkpoint, sign_note, verify_note

MANIFEST = "manifest.json"
MANIFEST_NOTE = "manifest.note"
MANIFEST_FORMAT = "matchledger-parquet/1"
PARTITIONS = ("game", "tournament")


class ExportError(ValueError):
    """An export is incomplete, unsigned, or does not match its manifest."""


class ManifestFile(msgspec.Struct, frozen=True):
    """One Parquet file of an export: its path under the export, SHA-256, rows and entry range."""

    path: str
    sha256: str
    rows: int
    entry_min: int | None
    entry_max: int | None


class Manifest(msgspec.Struct, frozen=True):
    """What an export holds; `manifest.note` (signed by the ledger's key) commits to its bytes."""

    format: str
    tables: list[str]
    checkpoint: dict[str, Any] | None
    files: list[ManifestFile]


def export_parquet(root: Path, projection: Projection, out: Path) -> dict[str, Any]:
    """Writes every projection table under `out/<table>/game=…/tournament=…/` and the manifest."""
    checkpoint = newest_checkpoint(root, load_verifier(root))
    games = {g["stream"]: (g["game"], g["tournament"]) for g in projection.games}
    kinds = {t["tournament"]: t["game"] for t in projection.tournaments}
    files = []
    for name, table in projection.tables().items():
        table = _with_partitions(table, games, kinds)
        ds.write_dataset(table, out / name, format="parquet", partitioning=list(PARTITIONS), partitioning_flavor="hive",
                         existing_data_behavior="delete_matching")
        files += [_describe(out, path) for path in sorted((out / name).rglob("*.parquet"))]
    manifest = {"format": "matchledger-parquet/1", "tables": sorted(projection.tables()),
                "checkpoint": {"size": checkpoint.size, "root": checkpoint.root.hex(), "note": checkpoint.note} if checkpoint else None,
                "files": files}
    data = msgspec.json.format(msgspec.json.encode(manifest)) + b"\n"
    (out / MANIFEST).write_bytes(data)
    signer = Signer.load(root / PRIVATE_KEY)
    (out / MANIFEST_NOTE).write_text(sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))
    return manifest


def _with_partitions(table: pa.Table, games: dict[str, tuple[str, str | None]], kinds: dict[str, str]) -> pa.Table:
    """Adds the game and tournament columns a table lacks, from its stream."""
    streams = table.column("stream").to_pylist() if "stream" in table.column_names else None
    if "tournament" not in table.column_names:
        values = [games.get(s, (None, s if s in kinds else None))[1] for s in streams] if streams else [None] * len(table)
        table = table.append_column("tournament", pa.array(values, pa.string()))
    if "game" not in table.column_names:
        tours = table.column("tournament").to_pylist()
        values = [games[s][0] if streams and s in games else kinds.get(t) for s, t in zip(streams or [None] * len(table), tours)]
        table = table.append_column("game", pa.array(values, pa.string()))
    return table


def _describe(out: Path, path: Path) -> dict[str, Any]:
    table = ds.dataset(path, format="parquet").to_table()
    entries = table.column("entry") if "entry" in table.column_names else None
    return {"path": str(path.relative_to(out)), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": table.num_rows,
            "entry_min": pc.min(entries).as_py() if entries is not None else None,
            "entry_max": pc.max(entries).as_py() if entries is not None else None}


def load_parquet(out: Path, verifier: Verifier) -> dict[str, pa.Table]:
    """Reads an export back after checking the manifest's signature by the ledger's key and every
    file against the manifest; nothing outside the export is read.

    :raises ExportError: when the manifest is unsigned, malformed or names a path outside the
        export, or a file is missing, extra, changed, or of another schema.
    """
    manifest = _signed_manifest(out, verifier)
    base = out.resolve()
    listed = {f.path: f for f in manifest.files}
    for table in manifest.tables:
        if table not in SCHEMAS:
            raise ExportError(f"the manifest names table {table!r}, which no export has")
    for path in listed:
        if not (base / path).resolve().is_relative_to(base) or not path.endswith(".parquet"):
            raise ExportError(f"the manifest names {path!r}, outside the export or not a Parquet file")
    present = {str(p.relative_to(out)) for p in out.rglob("*.parquet")}
    if present != set(listed):
        raise ExportError(f"export files differ from the manifest: extra {sorted(present - set(listed))}, missing {sorted(set(listed) - present)}")
    for path, meta in listed.items():
        if hashlib.sha256((out / path).read_bytes()).hexdigest() != meta.sha256:
            raise ExportError(f"{path}: sha256 differs from the manifest")
    partitioning = ds.partitioning(pa.schema([(p, pa.string()) for p in PARTITIONS]), flavor="hive")
    tables = {name: ds.dataset(out / name, format="parquet", partitioning=partitioning).to_table()
              if (out / name).exists() else _empty(name) for name in manifest.tables}
    for name, table in tables.items():
        missing = set(SCHEMAS[name].names) - set(table.column_names)
        if missing:
            raise ExportError(f"table {name} lacks columns {sorted(missing)}: not this version's export")
    return tables


def _signed_manifest(out: Path, verifier: Verifier) -> Manifest:
    """Returns the manifest once its note verifies and commits to its bytes."""
    try:
        data = (out / MANIFEST).read_bytes()
        note = (out / MANIFEST_NOTE).read_text()
    except FileNotFoundError as exc:
        raise ExportError(f"{out} has no {Path(exc.filename).name}: not a signed matchledger export") from None
    try:
        body = verify_note(note, verifier)
    except (SignatureError, UnicodeDecodeError) as exc:
        raise ExportError(f"{MANIFEST_NOTE}: {exc}") from None
    if body != f"{verifier.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n":
        raise ExportError(f"{MANIFEST_NOTE} is not the signature of this {MANIFEST}: the manifest was changed")
    try:
        return msgspec.json.decode(data, type=Manifest)
    except msgspec.DecodeError as exc:
        raise ExportError(f"{MANIFEST} is malformed: {exc}") from None


def _empty(name: str) -> pa.Table:
    """Returns a table with no rows (no file was written for it) and its full schema."""
    schema = SCHEMAS[name]
    for column in PARTITIONS:
        if column not in schema.names:
            schema = schema.append(pa.field(column, pa.string()))
    return schema.empty_table()
