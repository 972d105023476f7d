"""Every game of an export replayed on Spark's executors with the project's own engines, grouped
by game stream: the same `steps`, `games`, `seats` and `findings` rows as the local projection.

The events of the game streams are spread over the executors by stream and sorted by stream and
sequence number, so each partition holds whole games, one after another. An executor replays
them through `audit.query.projection.replay_stored`, the function the local projection's workers use,
and sends back one row per few games holding each table's rows as a list; the tables are those
lists exploded. Each finding also carries its place in log order and the engine's `Finding` as
JSON, which the certification reads back as the local projection has them.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from audit.query.arbitration import RulingSigners
from audit.query.projection import GAME_OPENER, SCHEMAS, log_place, replay_stored
from audit.spark.db import plain_type
from replay.protocol import Finding
from schemas.arbitration import ARBITER_STREAM

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

CHUNK = 64
"""Games replayed per output row: few enough that a row stays small, many enough that the engines'
Arrow tables come out in a few large pieces."""
FINDING_EXTRA = [("place", pa.int64()), ("ordinal", pa.int64()), ("finding", pa.string())]
TABLES = {name: pa.schema([f.with_type(plain_type(f.type)) for f in SCHEMAS[name]]
                         + (FINDING_EXTRA if name == "findings" else [])) for name in ("steps", "games", "seats", "findings")}
"""The tables an executor sends, as Spark reads them: strings for Arrow's dictionaries and large
strings, and the findings with their place and their `Finding`."""
OUTPUT = pa.schema([(name, pa.list_(pa.struct(list(schema)))) for name, schema in TABLES.items()])
_STEP_EVENT = ("stream", "seq", "ts", "kind")


def replay_games(events: DataFrame, partitions: int | None = None) -> dict[str, DataFrame]:
    """Returns the four game tables of an export's `events`, replayed on the executors; `findings`
    keeps `place` and `finding` beside the projection's columns. The arbiters' registrations (a
    few rows) go to every executor, which checks a game's rulings against them."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    games = events.where((F.col("seq") == 0) & (F.col("kind") == GAME_OPENER)).select("stream")
    moves = events.join(games, "stream", "left_semi").select("entry", "stream", "seq", "ts", "kind", "body")
    spread = moves.repartition(partitions or events.sparkSession.sparkContext.defaultParallelism, "stream")
    arbiters = events.where(F.col("stream") == ARBITER_STREAM).select("entry", "body").orderBy("entry").collect()
    signers = RulingSigners([(row["entry"], row["body"].encode()) for row in arbiters])
    replay = functools.partial(_replay_partition, signers=signers)
    replayed = spread.sortWithinPartitions("stream", "seq").mapInArrow(replay, from_arrow_schema(OUTPUT)).cache()
    return {name: replayed.select(F.explode(name).alias("row")).select("row.*") for name in TABLES}


def _replay_partition(batches: Iterator[pa.RecordBatch], signers: RulingSigners) -> Iterator[pa.RecordBatch]:
    """Replays the games of one partition, whose events come sorted by stream and seq."""
    pending: list[pa.RecordBatch] = []
    for batch in batches:
        pending.append(batch)
        if sum(len(b) for b in pending) >= 16 * CHUNK:  # keep memory bounded: flush the complete games so far
            table = pa.Table.from_batches(pending)
            last = table["stream"][-1]
            whole = pc.not_equal(table["stream"], last)
            done, rest = table.filter(whole), table.filter(pc.invert(whole))
            if len(done):
                yield from _replay_table(done, signers)
            pending = rest.to_batches()
    if pending:
        yield from _replay_table(pa.Table.from_batches(pending), signers)


def _replay_table(events: pa.Table, signers: RulingSigners) -> Iterator[pa.RecordBatch]:
    """Replays whole games (their events sorted by stream and seq), CHUNK at a time."""
    streams = events["stream"].to_pylist()
    starts = [0, *(i for i in range(1, len(streams)) if streams[i] != streams[i - 1]), len(streams)]
    bounds = list(zip(starts, starts[1:]))
    for at in range(0, len(bounds), CHUNK):
        chunk = bounds[at:at + CHUNK]
        yield _chunk_rows(events.slice(chunk[0][0], chunk[-1][1] - chunk[0][0]), signers)


def _chunk_rows(events: pa.Table, signers: RulingSigners) -> pa.RecordBatch:
    """Replays the games of a slice of events; returns one row holding each table's rows."""
    entries_of = _stream_entries(events)
    bodies = events["body"].to_pylist()
    games = []
    for stream, (lo, hi) in _runs(events["stream"].to_pylist()):
        games.append((b"[" + ",".join(bodies[lo:hi]).encode() + b"]", entries_of[stream]))
    tables, findings = replay_stored(games, signers)
    out = {"steps": _with_event_columns(tables["steps"], events), "games": tables["games"], "seats": tables["seats"],
           "findings": _with_places(tables["findings"], findings, entries_of)}
    columns = [_as_list(out[name].cast(TABLES[name])) for name in TABLES]
    return pa.RecordBatch.from_arrays(columns, schema=OUTPUT)


def _runs(streams: list[str]) -> Iterator[tuple[str, tuple[int, int]]]:
    start = 0
    for i in range(1, len(streams) + 1):
        if i == len(streams) or streams[i] != streams[start]:
            yield streams[start], (start, i)
            start = i


def _stream_entries(events: pa.Table) -> dict[str, array]:
    entries: dict[str, array] = {}
    for stream, entry in zip(events["stream"].to_pylist(), events["entry"].to_pylist()):
        entries.setdefault(stream, array("q")).append(entry)
    return entries


def _with_event_columns(steps: pa.Table, events: pa.Table) -> pa.Table:
    """Returns the replayed steps with the stream, seq, ts and kind of their events, as the local
    projection takes them from `events` by entry."""
    at = pc.index_in(steps["entry"], value_set=events["entry"])
    taken = {name: pc.take(events[name], at) for name in _STEP_EVENT}
    columns = {**{name: steps[name] for name in steps.column_names}, **taken}
    return pa.Table.from_arrays([columns[name] for name in SCHEMAS["steps"].names], names=SCHEMAS["steps"].names)


def _with_places(table: pa.Table, findings: list[Finding], entries_of: dict[str, array]) -> pa.Table:
    """Returns the findings rows with each one's place in log order, its rank among the findings of
    its game, and its `Finding` as JSON (the rows and the findings are in the same order)."""
    places = [log_place(f, entries_of[f.stream]) for f in findings]
    encoded = [msgspec.json.encode(f).decode() for f in findings]
    return (table.append_column("place", pa.array(places, pa.int64())).append_column("ordinal", pa.array(range(len(findings)), pa.int64()))
            .append_column("finding", pa.array(encoded, pa.string())))


def _as_list(table: pa.Table) -> pa.Array:
    """Returns a table's rows as one list of structs (a single row's value)."""
    rows = pa.StructArray.from_arrays([table[name].combine_chunks() for name in table.column_names], fields=list(table.schema))
    return pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows)


def engine_findings(findings: DataFrame) -> list[Finding]:
    """Returns the engines' findings of the replayed games in log order, as the local projection lists them."""
    rows = findings.select("place", "stream", "ordinal", "finding").orderBy("place", "stream", "ordinal").collect()
    return [msgspec.json.decode(row["finding"], type=Finding) for row in rows]
