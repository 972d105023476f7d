"""An audit session on Apache Spark over a Parquet export: the export checked first, every game
replayed on the executors, every view and named query run as Spark SQL; certification, standings
and queries then run on it as on a ledger's session in DuckDB.

Before a query runs, the manifest's signature by the ledger's key, every file's SHA-256, the
signature of the checkpoint the export was made from, and the export's entries against that
checkpoint's tree (hashed per block of tiles on the executors, ledger/export_tree.py) are checked.
The tables an export holds of the replay (`steps`, `games`, `seats`, `findings`) are not read: the
executors derive them again from `events`, the stored entries themselves. The driver keeps what the
tournament checks read in Python, all of it small: the games, seats, tournaments, registrations,
seatings and arbitration tables, the engines' findings and the tournament streams' events.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from audit.lake.export import ExportError, Manifest, ManifestFile, export_checkpoint, verify_export
from audit.query.projection import GAME_OPENER, SCHEMAS, Projection, findings_table, is_orphan, orphan
from audit.query.session import Session
from ledger import Verifier, VerifyReport
from schemas import decode_stored_array
from schemas.envelope import Event

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REPLAYED = ("steps", "games", "seats", "findings")
DRIVER_TABLES = ("games", "seats", "tournaments", "players", "seatings", "arbiters", "appeals", "decisions", "rulings")
"""The tables the driver holds as Arrow for the checks made in Python (small: a row per game, seat,
registration or ruling, none per event)."""


def open_export(out: Path, verifier: Verifier, master: str | None = None) -> tuple[VerifyReport, Session]:
    """Checks an export, then opens its session on Spark (`master`, local[2] when None).

    :raises ExportError: when the export or its checkpoint does not verify.
    """
    from audit.spark.db import SparkDB, read_table, spark_session
    from audit.spark.replay import engine_findings, replay_games

    manifest = verify_export(out, verifier)
    checkpoint = export_checkpoint(manifest, verifier)
    spark = spark_session(master)
    files = _files_by_table(manifest)
    read = _materialized({name: read_table(spark, out, name, files[name]) for name in manifest.tables if name not in REPLAYED})
    events = read["events"]
    _check_tree(events, manifest)
    replayed = replay_games(events)
    others, streams = _other_streams(events)
    orphans = [orphan(s, found) for s, found in others.items() if is_orphan(s, found[0].kind)]
    engine = replayed["findings"]
    tables = {**read, "events": events, **{name: replayed[name] for name in REPLAYED[:3]},
              "findings": engine.drop("place", "ordinal", "finding").unionByName(_frame(spark, findings_table(orphans, streams)))}
    db = SparkDB(spark, tables)
    projection = Projection(arrow=_driver_tables(tables), findings=engine_findings(engine) + orphans,
                            tournament_events=[e for found in others.values() for e in found if e.kind.startswith("tournament.")])
    report = VerifyReport(ok=True, size=checkpoint[0], root=checkpoint[1], checkpoints=1, signed=checkpoint[0])
    return report, Session(projection, db, origin="spark")


def _check_tree(events: DataFrame, manifest: Manifest) -> None:
    """Refuses an export whose entries (`events.body`, the stored bytes) are not exactly those the
    checkpoint signs: each block of tiles hashed on an executor (ledger/export_tree.py), the tile
    roots combined on the driver.

    :raises ExportError: naming the entry missing, repeated or beyond the checkpoint, or the roots.
    """
    from pyspark.sql import functions as F

    from ledger.export_tree import BLOCK, TreeMismatch, check_tree, roots_from_rows, roots_of_block

    blocks = events.select("entry", "body").withColumn("block", (F.col("entry") / BLOCK).cast("long"))
    rows = blocks.groupBy("block").applyInArrow(roots_of_block, "tile long, count long, root binary, problem string").collect()
    try:
        check_tree(roots_from_rows(rows), manifest.checkpoint or {})
    except TreeMismatch as exc:
        raise ExportError(str(exc)) from None


def _materialized(frames: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """Reads every table into Spark's cache now, before any check (every check reads them), so that
    a file the executors find changed since the driver's check is refused here, as an ExportError.

    :raises ExportError: naming the file, as the executor's check did.
    """
    from pyspark.errors import PythonException

    try:
        for frame in frames.values():
            frame.cache().count()
    except PythonException as exc:
        said = next((line for line in str(exc).splitlines() if "ExportError: " in line), None)
        if said is None:
            raise
        raise ExportError(said.split("ExportError: ", 1)[1].strip()) from None
    return frames


def _files_by_table(manifest: Manifest) -> dict[str, list[ManifestFile]]:
    """Returns each table's files as the manifest lists them (a file's table is its first directory)."""
    files: dict[str, list[ManifestFile]] = {name: [] for name in [*manifest.tables, *manifest.derived]}
    for f in manifest.files:
        files.setdefault(f.path.split("/", 1)[0], []).append(f)
    return files


def _other_streams(events: DataFrame) -> tuple[dict[str, list[Event]], dict[str, tuple[str, array]]]:
    """Returns the decoded events of every stream that is not a game (tournaments, the log's own,
    orphans), in log order, and every such stream's first kind and entries."""
    from pyspark.sql import functions as F

    games = events.where((F.col("seq") == 0) & (F.col("kind") == GAME_OPENER)).select("stream")
    rows = events.join(games, "stream", "left_anti").select("stream", "entry", "body").orderBy("entry").collect()
    bodies: dict[str, list[str]] = {}
    streams: dict[str, tuple[str, array]] = {}
    for row in rows:
        bodies.setdefault(row["stream"], []).append(row["body"])
        streams.setdefault(row["stream"], ("", array("q")))[1].append(row["entry"])
    decoded = {s: decode_stored_array(("[" + ",".join(found) + "]").encode()) for s, found in bodies.items()}
    return decoded, {s: (decoded[s][0].kind, entries) for s, (_, entries) in streams.items()}


def _frame(spark: SparkSession, table: pa.Table) -> DataFrame:
    return spark.createDataFrame(table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_dictionary(f.type) else f
                                                       for f in table.schema])))


def _driver_tables(tables: dict[str, Any]) -> dict[str, pa.Table]:
    """Returns the small tables as Arrow with the projection's schemas; `events` and `steps`, one
    row per event, stay on Spark (empty here: nothing of the driver reads them)."""
    out = {name: schema.empty_table() for name, schema in SCHEMAS.items()}
    for name in DRIVER_TABLES:
        table = tables[name].select(*SCHEMAS[name].names).toArrow().cast(SCHEMAS[name])
        out[name] = table.sort_by([(key, "ascending") for key in _LOG_ORDER.get(name, ("entry",))])
    return out


_LOG_ORDER = {"seats": ("entry", "seat"), "seatings": ("entry", "table_no", "seat")}
"""How the driver's tables are put back in the projection's order, log order (Spark returns rows in
the order it read its files): the checks read the registrations, the tournaments and the seatings
in that order (the round-1 draw, the order the findings are reported in)."""
