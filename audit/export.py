"""Parquet export of the projection, Hive-partitioned by game and tournament, with a manifest of
every file's SHA-256, row count and entry range and the checkpoint it was made from.

Every table of the manifest has at least one file (an empty one when it has no rows), so a reader
never meets a missing table. A row outside any tournament (or any game) is filed under the
partition value `none`, not Hive's null directory, which readers type inconsistently. Beside each
integer timestamp (ms since the epoch) sits the same instant as TIMESTAMP(ms, UTC). The derived
tables and views (`timings`, `seat_times`, `results`, `player_results` …) are exported as they were
computed; `schema.json` and each Parquet field's metadata describe every column (audit/dictionary.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from audit.dictionary import BY_NAME, meaning
from audit.projection import SCHEMAS, Projection
from ledger import PRIVATE_KEY, SignatureError, Signer, Verifier, load_verifier, newest_checkpoint, sign_note, verify_note

if TYPE_CHECKING:
    from audit.db import AuditDB

MANIFEST = "manifest.json"
MANIFEST_NOTE = "manifest.note"
SCHEMA_FILE = "schema.json"
MANIFEST_FORMAT = "matchledger-parquet/1"
PARTITIONS = ("game", "tournament")
NONE = "none"
"""The partition value of a row outside any tournament (or game)."""
TIMESTAMP = pa.timestamp("ms", tz="UTC")


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
    derived: list[str] = []
    """Tables and views computed at load (timings, results …), exported as computed; not read back."""
    schema_sha256: str | None = None
    """SHA-256 of schema.json, the data dictionary of the export."""


def export_parquet(root: Path, projection: Projection, out: Path, db: AuditDB | None = None) -> dict[str, Any]:
    """Writes every projection table, and every table and view derived from it (by `db`, the
    projection's database, loaded here when not given), under `out/<table>/game=…/tournament=…/`,
    then `schema.json`, the manifest and its signed note."""
    from audit.db import AuditDB

    checkpoint = newest_checkpoint(root, load_verifier(root))
    games = {g["stream"]: (g["game"], g["tournament"]) for g in projection.games}
    kinds = {t["tournament"]: t["game"] for t in projection.tournaments}
    base = projection.tables()
    derived = (db or AuditDB(base)).derived_tables()
    files, schema = [], {}
    for name, table in {**base, **derived}.items():
        table = _described(name, _with_timestamps(_with_partitions(table, games, kinds)))
        _write_table(table, out / name)
        files += [_describe(out, path) for path in sorted((out / name).rglob("*.parquet"))]
        schema[name] = _schema_entry(name, table)
    schema_bytes = msgspec.json.format(msgspec.json.encode(schema)) + b"\n"
    (out / SCHEMA_FILE).write_bytes(schema_bytes)
    manifest = {"format": MANIFEST_FORMAT, "tables": sorted(base), "checkpoint":
                {"size": checkpoint.size, "root": checkpoint.root.hex(), "note": checkpoint.note} if checkpoint else None,
                "files": files, "derived": sorted(derived), "schema_sha256": hashlib.sha256(schema_bytes).hexdigest()}
    data = msgspec.json.format(msgspec.json.encode(manifest)) + b"\n"
    (out / MANIFEST).write_bytes(data)
    signer = Signer.load(root / PRIVATE_KEY)
    (out / MANIFEST_NOTE).write_text(sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))
    return manifest


def _write_table(table: pa.Table, directory: Path) -> None:
    """Writes a table's partitions; a table without rows gets one empty file with its full schema."""
    if table.num_rows:
        ds.write_dataset(table, directory, format="parquet", partitioning=list(PARTITIONS), partitioning_flavor="hive",
                         existing_data_behavior="delete_matching")
        return
    empty = directory / f"game={NONE}" / f"tournament={NONE}"
    empty.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.drop_columns(list(PARTITIONS)), empty / "part-0.parquet")


def _with_partitions(table: pa.Table, games: dict[str, tuple[str, str | None]], kinds: dict[str, str]) -> pa.Table:
    """Adds the game and tournament columns a table lacks, from its stream, and files a row outside
    any game or tournament under `none`."""
    streams = table.column("stream").to_pylist() if "stream" in table.column_names else None
    if "tournament" not in table.column_names:
        values = [games.get(s, (None, s if s in kinds else None))[1] for s in streams] if streams else [None] * len(table)
        table = table.append_column("tournament", pa.array(values, pa.string()))
    if "game" not in table.column_names:
        tours = table.column("tournament").to_pylist()
        values = [games[s][0] if streams and s in games else kinds.get(t) for s, t in zip(streams or [None] * len(table), tours)]
        table = table.append_column("game", pa.array(values, pa.string()))
    for column in PARTITIONS:
        at = table.schema.get_field_index(column)
        table = table.set_column(at, pa.field(column, pa.string()), pc.fill_null(table.column(column).cast(pa.string()), NONE))
    return table


def _with_timestamps(table: pa.Table) -> pa.Table:
    """Adds beside each integer timestamp (`ts`, `*_ts`, ms since the epoch) the same instant as
    TIMESTAMP(ms, UTC): `at`, `*_at`."""
    for name in list(table.column_names):
        if (name == "ts" or name.endswith("_ts")) and pa.types.is_integer(table.schema.field(name).type):
            stamped = name[:-2] + "at" if name != "ts" else "at"
            table = table.append_column(pa.field(stamped, TIMESTAMP), table.column(name).cast(pa.int64()).cast(TIMESTAMP))
    return table


def _described(name: str, table: pa.Table) -> pa.Table:
    """Returns the table with each field's description (from the data dictionary) in its metadata."""
    fields = []
    for f in table.schema:
        text = _column_meaning(name, f.name)
        fields.append(f.with_metadata({"description": text}) if text else f)
    return table.cast(pa.schema(fields, metadata={"description": f"one row per {BY_NAME[name].row}"} if name in BY_NAME else None))


def _column_meaning(table: str, column: str) -> str | None:
    if column == "at" or column.endswith("_at"):
        raw = "ts" if column == "at" else column[:-2] + "ts"
        return f"{raw} as TIMESTAMP(ms, UTC)"
    if column in PARTITIONS and meaning(table, column) is not None:
        return f"{meaning(table, column)}; partition value `{NONE}` when there is none"
    return meaning(table, column)


def _schema_entry(name: str, table: pa.Table) -> dict[str, Any]:
    relation = BY_NAME.get(name)
    return {"row": relation.row if relation else None, "kind": relation.kind if relation else "table",
            "columns": [{"name": f.name, "type": str(f.type), "description": _column_meaning(name, f.name)} for f in table.schema]}


def _describe(out: Path, path: Path) -> dict[str, Any]:
    """Returns a written file's manifest row: its hash, rows and entry range, from its bytes and its
    footer (reading each file back whole had doubled the export's reading)."""
    meta = pq.read_metadata(path)
    low, high = _entry_range(meta, path)
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return {"path": str(path.relative_to(out)), "sha256": digest, "rows": meta.num_rows, "entry_min": low, "entry_max": high}


def _entry_range(meta: pq.FileMetaData, path: Path) -> tuple[int | None, int | None]:
    """Returns the least and greatest `entry` of a file from its row groups' statistics (the column
    alone is read when a row group has none); (None, None) when it has no `entry` column or no rows."""
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    if "entry" not in names:
        return None, None
    at = names.index("entry")
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        stats = group.column(at).statistics
        if group.num_rows == 0:
            continue
        if stats is None or not stats.has_min_max:
            column = pq.read_table(path, columns=["entry"]).column("entry")
            return pc.min(column).as_py(), pc.max(column).as_py()
        lows.append(stats.min)
        highs.append(stats.max)
    return (min(lows), max(highs)) if lows else (None, None)


def load_parquet(out: Path, verifier: Verifier) -> dict[str, pa.Table]:
    """Reads an export back after checking it (`verify_export`); nothing outside the export is read.

    :raises ExportError: when the export does not verify, or a table is of another schema.
    """
    manifest = verify_export(out, verifier)
    tables = {name: _read_table(out / name) if (out / name).exists() else _empty(name) for name in manifest.tables}
    for name, table in tables.items():
        missing = set(SCHEMAS[name].names) - set(table.column_names)
        if missing:
            raise ExportError(f"table {name} lacks columns {sorted(missing)}: not this version's export")
    return tables


def verify_export(out: Path, verifier: Verifier) -> Manifest:
    """Returns an export's manifest once its signature by the ledger's key and every file against
    it are checked: what any engine reads an export through, before it reads a row.

    :raises ExportError: when the manifest is unsigned, malformed or names a path outside the
        export, or a file is missing, extra or changed.
    """
    manifest = _signed_manifest(out, verifier)
    base = out.resolve()
    listed = {f.path: f for f in manifest.files}
    for table in [*manifest.tables, *manifest.derived]:
        if table not in SCHEMAS and table not in BY_NAME:
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
    if manifest.schema_sha256 is not None and hashlib.sha256((out / SCHEMA_FILE).read_bytes()).hexdigest() != manifest.schema_sha256:
        raise ExportError(f"{SCHEMA_FILE}: sha256 differs from the manifest")
    return manifest


def _read_table(directory: Path) -> pa.Table:
    """Reads one exported table back as the projection had it: partition value `none` as NULL,
    without the timestamp columns the export added."""
    partitioning = ds.partitioning(pa.schema([(p, pa.string()) for p in PARTITIONS]), flavor="hive")
    table = ds.dataset(directory, format="parquet", partitioning=partitioning).to_table()
    for column in PARTITIONS:
        values = table.column(column)
        table = table.set_column(table.schema.get_field_index(column), column, pc.if_else(pc.equal(values, NONE), None, values))
    added = [c for c in table.column_names if c == "at" or c.endswith("_at")]
    return table.drop_columns(added).replace_schema_metadata(None)


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
