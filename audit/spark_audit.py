"""An audit session on Apache Spark over a Parquet export: the export checked first, every game
replayed on the executors, every view and named query run as Spark SQL; certification, standings
and queries then run on it as on a ledger's session in DuckDB.

Before Spark reads a row, the manifest's signature by the ledger's key, every file's SHA-256 and
the checkpoint the export was made from (its signature, its size against the export's entries)
are checked. The tables an export holds of the replay (`steps`, `games`, `seats`, `findings`)
are not read: the executors derive them again from `events`, the stored entries themselves. The
driver keeps what the tournament checks read in Python, all of it small: the games, seats,
tournaments, registrations, seatings and arbitration tables, the engines' findings and the
tournament streams' events.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from audit.export import ExportError, Manifest, verify_export
from audit.projection import GAME_OPENER, SCHEMAS, Projection, findings_table, is_orphan, orphan
from audit.session import Session
from ledger import SignatureError, Verifier, VerifyReport, verify_note
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
    from audit.spark_db import SparkDB, read_table, spark_session
    from audit.spark_replay import engine_findings, replay_games

    manifest = verify_export(out, verifier)
    checkpoint = _checkpoint(manifest, verifier)
    spark = spark_session(master)
    files = _files_by_table(manifest)
    read = {name: read_table(spark, out, files[name]) for name in manifest.tables if name not in REPLAYED}
    events = read["events"].cache()
    _check_size(events, checkpoint)
    _check_root(events, checkpoint)
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


def _checkpoint(manifest: Manifest, verifier: Verifier) -> tuple[int, str]:
    """Returns the size and root (hex) of the checkpoint an export was made from, once its note is
    signed by the ledger's key and says what the manifest says.

    :raises ExportError: when there is none, or it is unsigned or disagrees with the manifest.
    """
    import base64

    if manifest.checkpoint is None:
        raise ExportError("the export names no checkpoint: nothing it holds can be tied to a signed log")
    try:
        body = verify_note(manifest.checkpoint["note"], verifier)
    except (SignatureError, KeyError, TypeError) as exc:
        raise ExportError(f"the export's checkpoint does not verify: {exc}") from None
    lines = body.splitlines()
    size, root = int(lines[1]), base64.b64decode(lines[2]).hex()
    if (size, root) != (manifest.checkpoint.get("size"), manifest.checkpoint.get("root")):
        raise ExportError(f"the manifest says checkpoint size {manifest.checkpoint.get('size')} root {manifest.checkpoint.get('root')}, "
                          f"its signed note size {size} root {root}")
    return size, root


def _check_size(events: DataFrame, checkpoint: tuple[int, str]) -> None:
    """Refuses an export whose entries are not exactly those the checkpoint signs (0 … size − 1).

    :raises ExportError: naming the counts.
    """
    from pyspark.sql import functions as F

    row = events.agg(F.count("*").alias("n"), F.countDistinct("entry").alias("distinct"), F.min("entry").alias("low"),
                     F.max("entry").alias("high")).collect()[0]
    size = checkpoint[0]
    if (row["n"], row["distinct"]) != (size, size) or (size and (row["low"], row["high"]) != (0, size - 1)):
        raise ExportError(f"the export holds {row['n']} events (entries {row['low']}…{row['high']}), "
                          f"the checkpoint signs entries 0…{size - 1}")


TILE = 256
"""Entries per tile of the tree (C2SP tlog-tiles' width): each tile's subtree is hashed on an executor."""


def _check_root(events: DataFrame, checkpoint: tuple[int, str]) -> None:
    """Refuses an export whose entries (`events.body`, the stored bytes) do not hash to the root the
    checkpoint signs: each tile's subtree root is computed on the executors from its entries' leaf
    hashes, the tree above the tiles on the driver (RFC 6962 splits a tree at powers of two, so
    every subtree above a tile is made of whole tiles).

    :raises ExportError: naming the root signed and the root computed.
    """
    from pyspark.sql import functions as F

    tiles = events.select((F.col("entry") / TILE).cast("long").alias("tile"), "entry", "body")
    rows = tiles.groupBy("tile").applyInArrow(_tile_root, "tile long, root binary").collect()
    roots = {row["tile"]: bytes(row["root"]) for row in rows}
    computed = _root_over_tiles(roots, 0, checkpoint[0]).hex()
    if computed != checkpoint[1]:
        raise ExportError(f"the export's entries hash to root {computed}, the checkpoint signs {checkpoint[1]}")


def _tile_root(table: pa.Table) -> pa.Table:
    """Returns the root of one tile's subtree, from its entries' stored bytes (hashed as stored)."""
    from ledger.merkle import leaf_hash, root_of

    ordered = table.sort_by("entry")
    leaves = [leaf_hash(body) for body in ordered["body"].cast(pa.binary()).to_pylist()]
    return pa.table({"tile": [table["tile"][0].as_py()], "root": [root_of(leaves)]}, schema=pa.schema([("tile", pa.int64()), ("root", pa.binary())]))


def _root_over_tiles(tiles: dict[int, bytes], lo: int, hi: int) -> bytes:
    """Returns the RFC 6962 root of entries lo … hi − 1, lo on a tile's edge, from the tiles' roots."""
    from ledger.merkle import EMPTY_ROOT, node_hash, split_point

    if hi - lo <= TILE:
        return tiles[lo // TILE] if hi > lo else EMPTY_ROOT
    k = split_point(hi - lo)
    return node_hash(_root_over_tiles(tiles, lo, lo + k), _root_over_tiles(tiles, lo + k, hi))


def _files_by_table(manifest: Manifest) -> dict[str, list[str]]:
    """Returns each table's files as the manifest lists them (a file's table is its first directory)."""
    files: dict[str, list[str]] = {name: [] for name in [*manifest.tables, *manifest.derived]}
    for f in manifest.files:
        files.setdefault(f.path.split("/", 1)[0], []).append(f.path)
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
