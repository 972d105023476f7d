"""An audit session on Apache Spark over a Parquet export: the export checked first, every game
replayed on the executors, every view and named query run as Spark SQL; certification, standings
and queries then run on it as on a ledger's session in DuckDB.

Before a query runs, the manifest's signature by the ledger's key, every file's SHA-256 (on the
executors: a file they parse is hashed as they read it, the others by `db.check_files`), the
signature of the checkpoint the export was made from, and the export's entries against that
checkpoint's tree (hashed per block of tiles on the executors, ledger/export_tree.py) are checked.
The tables an export holds of the replay (`steps`, `games`, `seats`, `findings`) are not read: the
executors derive them again from `events`, the stored entries themselves. The driver keeps what the
tournament checks read in Python, none of it a row per game or event: the tournaments,
registrations, seatings and arbitration tables, the engines' findings and the tournament streams'
events; the games are counted on Spark and the Paohuzi deals checked there, board by board.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
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
DRIVER_TABLES = ("tournaments", "players", "seatings", "arbiters", "appeals", "decisions", "rulings")
"""The tables the driver holds as Arrow for the checks made in Python (a row per tournament,
registration, seat of a round's seating or ruling; none per event or game)."""
ON_DEMAND = ("games", "seats")
"""The tables of a row per game or seat of a game: left on the executors, brought to the driver
only when a command asks for them whole (the certification asks Spark for counts instead)."""


@dataclass
class ExportProjection(Projection):
    """A projection whose per-game tables stay on Spark until a caller asks for them."""

    on_demand: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)

    def _table(self, name: str) -> pa.Table:
        if name in self.on_demand:
            self.arrow[name] = self.on_demand.pop(name)()
        return super()._table(name)


@dataclass
class ExportSession(Session):
    """A session on an export: what the certification asks of the games, asked of Spark."""

    @property
    def _spark(self) -> Any:
        """The Spark session its database (`SparkDB`) runs on."""
        return self.db.spark  # type: ignore[attr-defined]

    def game_counts(self, tournament: str | None = None) -> Counter[tuple[str, str, str]]:
        from pyspark.sql import functions as F

        games = self._spark.table("games")
        if tournament is not None:
            games = games.where(F.col("tournament") == tournament)
        return Counter({(r["tournament"] or "", r["game"], r["profile"]): r["count"]
                        for r in games.groupBy("tournament", "game", "profile").count().collect()})

    def games_of(self, streams: Iterable[str | None]) -> dict[str, dict[str, Any]]:
        from pyspark.sql import functions as F

        wanted = sorted({s for s in streams if s is not None})
        if not wanted:
            return {}
        rows = self._spark.table("games").where(F.col("stream").isin(wanted)).select("stream", "game", "tournament").collect()
        return {r["stream"]: {"game": r["game"], "tournament": r["tournament"]} for r in rows}


def open_export(out: Path, verifier: Verifier, master: str | None = None) -> tuple[VerifyReport, Session]:
    """Checks an export, then opens its session on Spark (`master`, local[2] when None).

    :raises ExportError: when the export or its checkpoint does not verify.
    """
    from audit.spark.db import SparkDB, check_files, read_table, spark_session
    from audit.spark.replay import engine_findings, replay_games

    manifest = verify_export(out, verifier, files=False)  # the signature, the listing, the documents: the files' hashes below
    checkpoint = export_checkpoint(manifest, verifier)
    spark = spark_session(master)
    files = _files_by_table(manifest)
    names = [name for name in manifest.tables if name not in REPLAYED]
    check_files(spark, out, [f for name, listed in files.items() if name not in names for f in listed])  # files no executor reads
    read = _materialized({name: read_table(spark, out, name, files[name]) for name in names})  # each file hashed as it is parsed
    events = read["events"]
    _check_tree(events, manifest)
    replayed = replay_games(events)
    others, streams = _other_streams(events)
    orphans = [orphan(s, found) for s, found in others.items() if is_orphan(s, found[0].kind)]
    engine = replayed["findings"]
    tables = {**read, "events": events, **{name: replayed[name] for name in REPLAYED[:3]},
              "findings": engine.drop("place", "ordinal", "finding").unionByName(_frame(spark, findings_table(orphans, streams)))}
    db = SparkDB(spark, tables)
    projection = ExportProjection(arrow=_driver_tables(tables), findings=engine_findings(engine) + orphans,
                                  tournament_events=[e for found in others.values() for e in found if e.kind.startswith("tournament.")],
                                  on_demand={name: partial(_driver_table, tables, name) for name in ON_DEMAND})
    report = VerifyReport(ok=True, size=checkpoint[0], root=checkpoint[1], checkpoints=1, signed=checkpoint[0])
    return report, ExportSession(projection, db, origin="spark")


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
        out[name] = _driver_table(tables, name)
    return out


def _driver_table(tables: dict[str, Any], name: str) -> pa.Table:
    """Returns one table from Spark as Arrow with the projection's schema, in log order."""
    table = tables[name].select(*SCHEMAS[name].names).toArrow().cast(SCHEMAS[name])
    return table.sort_by([(key, "ascending") for key in _LOG_ORDER.get(name, ("entry",))])


_LOG_ORDER = {"seats": ("entry", "seat"), "seatings": ("entry", "table_no", "seat")}
"""How the driver's tables are put back in the projection's order, log order (Spark returns rows in
the order it read its files): the checks read the registrations, the tournaments and the seatings
in that order (the round-1 draw, the order the findings are reported in)."""
