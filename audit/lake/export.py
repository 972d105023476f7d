"""Parquet export of the projection for a data lake, with a manifest of every file's SHA-256, row count
and entry range and the checkpoint it was made from, and the SQL that registers it in Trino.

The layout (audit/lake/layout.py): each table Hive-partitioned by tournament and round, the partition
columns kept inside the files too, bounded files and row groups; beside each integer timestamp (ms
since the epoch) the same instant as TIMESTAMP(ms, UTC). Every table of the manifest has at least
one file (an empty one when it has no rows), so a reader never meets a missing table. The derived
tables and views (`timings`, `seat_times`, `results`, `player_results` …) are exported as they were
computed; `schema.json` and each Parquet field's metadata describe every column (audit/presentation/dictionary.py),
`trino.sql` registers every table in Trino's Hive connector (audit/lake/trino.py)."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from audit.lake.layout import LAKE, NONE, PARTITIONS, Limits, Places, Written, partitioned, with_timestamps, write_batches
from audit.lake.trino import TRINO_FILE, registration_sql
from audit.presentation.dictionary import BY_NAME, meaning
from audit.query.kept_read import batches as read_batches
from audit.query.projection import SCHEMAS, Projection
from ledger import Checkpoint, LogReader, Signer, Verifier, newest_checkpoint
from ledger.errors import LedgerCorrupt, SignatureError
from ledger.fastscan import extend, leaf_hashes
from ledger.layout import PRIVATE_KEY
from ledger.merkle import CompactRange
from ledger.notes import sign_note, verify_note
from ledger.outputs import output_directory

if TYPE_CHECKING:
    from audit.query.db import AuditDB
    from ledger.outputs import OutputDirectory

MANIFEST = "manifest.json"
MANIFEST_NOTE = "manifest.note"
SCHEMA_FILE = "schema.json"
MANIFEST_FORMAT = "matchledger-parquet/2"
"""/2: partitioned by tournament and round, partition columns in the files, trino.sql (/1: by game and tournament)."""
_FORMAT_PREFIX = "matchledger-parquet/"
_PARTITION_MEANING = {"tournament": "tournament stream id the row belongs to", "round": "tournament round the row belongs to, as text"}


class ExportError(ValueError):
    """An export is incomplete, unsigned, of another format, or does not match its manifest."""


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
    derived: list[str]
    """Tables and views computed at load (timings, results …), exported as computed; not read back."""
    partitioned_by: list[str]
    documents: dict[str, str]
    """SHA-256 of the export's other files: schema.json (the data dictionary) and trino.sql."""


def export_parquet(root: Path, projection: Projection, out: Path, db: AuditDB | None = None, location: str | None = None,
                   limits: Limits = LAKE, force: bool = False) -> dict[str, Any]:
    """Writes every projection table, and every table and view derived from it (by `db`, the
    projection's database, loaded here when not given), under `out/<table>/tournament=…/round=…/`,
    then `schema.json`, `trino.sql` (its tables found at `location`, by default the export's own
    file:// URI), the manifest and its signed note: all into a fresh directory renamed to `out`
    (`output_directory`; with `force` the old export is replaced as a whole, no link in it followed).

    :raises ExportError: when `location` is not a URI.
    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists and is not empty without `force`.
    """
    from audit.query.db import AuditDB

    if location is not None and not urlsplit(location).scheme:
        raise ExportError(f"--location {location!r} is not a URI: give its scheme (s3://…, hdfs://…, file:///…)")
    signer = Signer.load(root / PRIVATE_KEY)  # first: the checkpoint is judged by the key that signs the manifest
    checkpoint = newest_checkpoint(root, signer.verifier)
    places = Places.of(projection.table("games"), projection.table("tournaments"))
    with output_directory(out, force) as tree:
        files, schemas, derived = [], {}, []
        for name, schema, batches in chain(_base(root, projection, checkpoint), _derived(db or AuditDB(projection.tables()))):
            derived += [name] if name not in projection.arrow else []
            shaped = _shaped(name, schema.empty_table(), places).schema
            made = (_shaped(name, pa.Table.from_batches([batch], schema), places).to_batches() for batch in batches)
            files += [_describe(tree, written) for written in write_batches(shaped, chain.from_iterable(made), tree, name, limits)]
            schemas[name] = shaped
        documents = {SCHEMA_FILE: msgspec.json.format(msgspec.json.encode({n: _schema_entry(n, s) for n, s in schemas.items()})) + b"\n",
                     TRINO_FILE: registration_sql(schemas, location or out.resolve().as_uri()).encode()}
        for document, data in documents.items():
            tree.write(document, data)
        manifest = {"format": MANIFEST_FORMAT, "tables": sorted(projection.arrow), "checkpoint":
                    {"size": checkpoint.size, "root": checkpoint.root.hex(), "note": checkpoint.note} if checkpoint else None,
                    "files": files, "derived": sorted(derived), "partitioned_by": list(PARTITIONS),
                    "documents": {document: hashlib.sha256(data).hexdigest() for document, data in documents.items()}}
        data = msgspec.json.format(msgspec.json.encode(manifest)) + b"\n"
        tree.write(MANIFEST, data)
        tree.write(MANIFEST_NOTE, sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer).encode())
    return manifest


def _base(root: Path, projection: Projection, checkpoint: Checkpoint | None) -> Iterator[tuple[str, pa.Schema, Iterator[pa.RecordBatch]]]:
    """Yields each projection table's schema and batches, in `SCHEMAS`' order: a kept table's read
    from its files as they are written (`projection_cache.OnDisk`), never whole; `events` kept
    without `body` gets it from the log batch by batch (`_with_body`)."""
    held = projection.sources()  # a kept table read a batch at a time, one in memory handed over in slices
    order = list(SCHEMAS)
    for name in sorted(held, key=lambda name: order.index(name) if name in order else len(order)):  # one order, however the projection was had
        schema, batches = held[name].schema, read_batches(held[name])
        if name == "events" and "body" not in schema.names:
            schema, batches = schema.append(SCHEMAS["events"].field("body")), _with_body(root, batches, checkpoint)
        yield name, schema, batches


def _with_body(root: Path, batches: Iterable[pa.RecordBatch], checkpoint: Checkpoint | None) -> Iterator[pa.RecordBatch]:
    """Yields `events` batches (row i entry i) with their entries' stored bytes as `body`, read from
    the log as they come and hashed on the way: the last batch is followed by the check that they
    give the checkpoint's root, before anything is signed (issue 32.1: the log is not held whole).

    :raises LedgerCorrupt: when they do not, or the log does not hold them.
    """
    size = checkpoint.size if checkpoint is not None else 0
    reader = LogReader(root)
    tree = CompactRange()
    for batch in batches:  # the batch's entries alone (the whole log's reading holds a 64 MB segment three times over)
        stored = [data for _, data in reader.entries(tree.size, min(batch.num_rows, size - tree.size))]
        if len(stored) < batch.num_rows or (batch.num_rows and batch["entry"][0].as_py() != tree.size):
            raise LedgerCorrupt(tree.size, f"导出时日志已变 / the log holds other entries than the projection's from entry {tree.size}: export again")
        extend(tree, leaf_hashes(stored))
        ends = array("q", accumulate(map(len, stored), initial=0))
        yield batch.append_column("body", pa.LargeStringArray.from_buffers(len(stored), pa.py_buffer(ends), pa.py_buffer(b"".join(stored))))
    if checkpoint is None or tree.size != checkpoint.size or tree.root() != checkpoint.root:
        raise LedgerCorrupt(None, f"账本已签名部分被改动，拒绝导出 / the signed range was changed: entries 0–{tree.size - 1} do not give the root "
                                  f"of checkpoint {size} (run `matchledger verify`)")


def _derived(db: AuditDB) -> Iterator[tuple[str, pa.Schema, Iterator[pa.RecordBatch]]]:
    """Yields each derived table's schema and batches as DuckDB computes them."""
    for name, reader in db.each_derived():
        yield name, reader.schema, iter(reader)


def _shaped(name: str, table: pa.Table, places: Places) -> pa.Table:
    """Returns rows as the export writes them: typed timestamps, partition columns, descriptions."""
    return _described(name, partitioned(with_timestamps(table), places))


def _described(name: str, table: pa.Table) -> pa.Table:
    """Returns the table with each field's description (from the data dictionary) in its metadata."""
    fields = []
    for f in table.schema:
        text = _column_meaning(name, f.name)
        fields.append(f.with_metadata({"description": text}) if text else f)
    return table.cast(pa.schema(fields, metadata={"description": f"one row per {BY_NAME[name].row}"} if name in BY_NAME else None))


def _column_meaning(table: str, column: str) -> str | None:
    if column in PARTITIONS:
        return f"{_PARTITION_MEANING[column]}, `{NONE}` when there is none (a Hive partition column, kept in the file too)"
    if meaning(table, column) is None and (column == "at" or column.endswith("_at")):
        return f"{'ts' if column == 'at' else column[:-2] + 'ts'} as TIMESTAMP(ms, UTC)"
    return meaning(table, column)


def _schema_entry(name: str, schema: pa.Schema) -> dict[str, Any]:
    relation = BY_NAME.get(name)
    return {"row": relation.row if relation else None, "kind": relation.kind if relation else "table",
            "columns": [{"name": f.name, "type": str(f.type), "description": _column_meaning(name, f.name)} for f in schema]}


def _describe(tree: OutputDirectory, written: Written) -> dict[str, Any]:
    """Returns a written file's manifest row: its hash (taken as it was written), rows and entry range
    from its footer (issue 32.1: the files are not read back)."""
    low, high = _entry_range(written.metadata, tree, written.path)
    return {"path": written.path, "sha256": written.sha256, "rows": written.metadata.num_rows, "entry_min": low, "entry_max": high}


def _entry_range(meta: pq.FileMetaData, tree: OutputDirectory, path: str) -> tuple[int | None, int | None]:
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
            column = pq.read_table(pa.BufferReader(tree.read(path)), columns=["entry"]).column("entry")
            return pc.min(column).as_py(), pc.max(column).as_py()
        lows.append(stats.min)
        highs.append(stats.max)
    return (min(lows), max(highs)) if lows else (None, None)


def load_parquet(out: Path, verifier: Verifier) -> dict[str, pa.Table]:
    """Reads an export back as the projection had it (see `open_parquet`, which also says its checkpoint).

    :raises ExportError: as open_parquet does.
    """
    return open_parquet(out, verifier)[0]


def open_parquet(out: Path, verifier: Verifier) -> tuple[dict[str, pa.Table], tuple[int, str]]:
    """Reads an export back as the projection had it, after checking the manifest's signature by the
    ledger's key, every file against the manifest, the checkpoint it names and its `events` (the
    stored bytes) against that checkpoint's tree, as the Spark path does; nothing outside the export
    is read, and each file is parsed from the very bytes whose hash was checked. Returns the tables
    and the checkpoint (size, root hex) the export is of.

    :raises ExportError: when the manifest is unsigned, of another format, malformed or names a path
        outside the export, a file is missing, extra, changed, or of another schema, or the
        checkpoint does not verify or its tree is not the entries'.
    """
    from ledger.export_tree import TreeMismatch, check_tree, tile_roots

    manifest = _checked_manifest(out, verifier)
    checkpoint = export_checkpoint(manifest, verifier)
    tables = {name: _read_table(out, name, [f for f in manifest.files if f.path.startswith(f"{name}/")]) for name in manifest.tables}
    for f in manifest.files:  # the derived tables' files are not read back, but a changed one is a changed export
        if f.path.split("/")[0] not in tables:
            _verified_bytes(out, f)
    try:
        check_tree(tile_roots(tables["events"]), manifest.checkpoint or {})
    except (TreeMismatch, KeyError) as exc:
        raise ExportError(f"导出的条目与签名日志不符 / the export's entries are not the signed log's: {exc}") from None
    return tables, checkpoint


def export_checkpoint(manifest: Manifest, verifier: Verifier) -> tuple[int, str]:
    """Returns the size and root (hex) of the checkpoint an export was made from, once its note is
    signed by the ledger's key and says what the manifest says.

    :raises ExportError: when there is none, or it is unsigned or disagrees with the manifest.
    """
    from ledger.checkpoints import parse_checkpoint

    if manifest.checkpoint is None:
        raise ExportError("the export names no checkpoint: nothing it holds can be tied to a signed log")
    try:
        signed = parse_checkpoint(manifest.checkpoint["note"], verifier)
    except (SignatureError, KeyError, TypeError) as exc:
        raise ExportError(f"the export's checkpoint does not verify: {exc}") from None
    size, root = signed.size, signed.root.hex()
    if (size, root) != (manifest.checkpoint.get("size"), manifest.checkpoint.get("root")):
        raise ExportError(f"the manifest says checkpoint size {manifest.checkpoint.get('size')} root {manifest.checkpoint.get('root')}, "
                          f"its signed note size {size} root {root}")
    return size, root


def verify_export(out: Path, verifier: Verifier, files: bool = True) -> Manifest:
    """Returns an export's manifest once its signature, its listing and every file's and document's
    SHA-256 are checked; with `files` False every check but the files' hashes, which an engine that
    reads the files itself (Spark) makes on its executors as they parse each file
    (`read_verified_file`), as load_parquet does.

    :raises ExportError: as load_parquet does.
    """
    manifest = _checked_manifest(out, verifier)
    for f in manifest.files if files else ():
        _verified_bytes(out, f)
    return manifest


def _checked_manifest(out: Path, verifier: Verifier) -> Manifest:
    """Returns the signed manifest once its listing and its documents are checked."""
    manifest = _signed_manifest(out, verifier)
    _check_listing(out, manifest)
    for document, digest in manifest.documents.items():
        if hashlib.sha256((out / document).read_bytes()).hexdigest() != digest:
            raise ExportError(f"{document}: sha256 differs from the manifest")
    return manifest


def _check_listing(out: Path, manifest: Manifest) -> None:
    """Refuses a manifest naming an unknown table, document or a path outside the export, and an
    export whose Parquet files are not exactly the manifest's."""
    base = out.resolve()
    for table in [*manifest.tables, *manifest.derived]:
        if table not in SCHEMAS and table not in BY_NAME:
            raise ExportError(f"the manifest names table {table!r}, which no export has")
    for document in manifest.documents:
        if document not in (SCHEMA_FILE, TRINO_FILE):
            raise ExportError(f"the manifest names document {document!r}, which no export has")
    listed = {f.path for f in manifest.files}
    for path in listed:
        if not (base / path).resolve().is_relative_to(base) or not path.endswith(".parquet"):
            raise ExportError(f"the manifest names {path!r}, outside the export or not a Parquet file")
    present = {str(p.relative_to(out)) for p in out.rglob("*.parquet")}
    if present != listed:
        raise ExportError(f"export files differ from the manifest: extra {sorted(present - listed)}, missing {sorted(listed - present)}")


def _read_table(out: Path, name: str, files: list[ManifestFile]) -> pa.Table:
    """Reads one table's files (no partition discovery: the files hold their partition columns) and
    returns it with the projection's columns and types: partition value `none` as NULL, without the
    columns the export added.

    :raises ExportError: when a file differs from the manifest or lacks a column.
    """
    parts = [read_verified_file(out, name, f) for f in files]
    return pa.concat_tables(parts) if parts else SCHEMAS[name].empty_table()


def read_verified_file(out: Path, name: str, f: ManifestFile) -> pa.Table:
    """Reads one file of a table, parsed from the very bytes whose hash is checked against the
    manifest (so nothing changed after a check is read), with the projection's columns and types.
    Any engine's reader goes through it: the local one here, Spark's executors (audit/spark/db.py).

    :raises ExportError: when the file differs from the manifest or lacks a column.
    """
    table = pq.read_table(pa.BufferReader(_verified_bytes(out, f))).replace_schema_metadata(None)
    missing = [c for c in SCHEMAS[name].names if c not in table.column_names]
    if missing:
        raise ExportError(f"table {name} lacks columns {missing}: not this version's export")
    return pa.table([_restored(table.column(field.name), field) for field in SCHEMAS[name]], schema=SCHEMAS[name])


def _verified_bytes(out: Path, f: ManifestFile) -> bytes:
    """Returns a file's bytes once their hash is the manifest's.

    :raises ExportError: when it is not.
    """
    data = (out / f.path).read_bytes()
    if hashlib.sha256(data).hexdigest() != f.sha256:
        raise ExportError(f"{f.path}: sha256 differs from the manifest")
    return data


def _restored(column: pa.ChunkedArray, field: pa.Field) -> pa.ChunkedArray:
    """Returns an exported column as the projection typed it (a partition column's `none` as NULL)."""
    if field.name in PARTITIONS:
        column = pc.if_else(pc.equal(column, NONE), pa.scalar(None, column.type), column)
    return column.cast(field.type)


def _signed_manifest(out: Path, verifier: Verifier) -> Manifest:
    """Returns the manifest once its note verifies, is of this format and commits to its bytes.

    :raises ExportError: when it does not.
    """
    try:
        data = (out / MANIFEST).read_bytes()
        note = (out / MANIFEST_NOTE).read_text()
    except FileNotFoundError as exc:
        raise ExportError(f"{out} has no {Path(exc.filename).name}: not a signed matchledger export") from None
    try:
        body = verify_note(note, verifier)
    except (SignatureError, UnicodeDecodeError) as exc:
        raise ExportError(f"{MANIFEST_NOTE}: {exc}") from None
    signed_format = body.split("\n")[1] if body.count("\n") >= 2 else ""
    if signed_format.startswith(_FORMAT_PREFIX) and signed_format != MANIFEST_FORMAT:
        raise ExportError(f"{out} is a {signed_format} export; this version reads {MANIFEST_FORMAT} only: export the ledger again")
    if body != f"{verifier.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n":
        raise ExportError(f"{MANIFEST_NOTE} is not the signature of this {MANIFEST}: the manifest was changed")
    try:
        manifest = msgspec.json.decode(data, type=Manifest)
    except msgspec.DecodeError as exc:
        raise ExportError(f"{MANIFEST} is malformed: {exc}") from None
    if manifest.format != MANIFEST_FORMAT:
        raise ExportError(f"{MANIFEST} says format {manifest.format!r} where its note says {MANIFEST_FORMAT}")
    return manifest
