"""The projection: Arrow tables built from the ledger's entries and the replay of every game.

DuckDB reads these tables; they are disposable and rebuilt from the ledger, the only source of
truth. Every row names the log entry it rests on.

The log is read once into one buffer (ledger.reader.LogReader.packed). The work then runs in two passes
over it, in forked worker processes when there is enough of it (they share the parent's buffer):

1. ranges: a worker decodes a range of entries under the full event contract, gives their
   `events` columns in log order and their streams' entries, and replays every game that both
   starts and ends inside the range;
2. spanning games: the parent, which now knows every stream's entries, has the games that reach
   beyond one range replayed whole (their first-pass rows, if any, are dropped).

Workers leave their rows as Arrow files that the parent maps. Once both passes are done, the parent
writes `events` range by range with the stored bytes as `body`, copies out the few entries decoded
beside the games (tournaments, arbitration, openings, orphans), and releases each range from its
buffer (freed outright once the workers are gone). `events` and
`steps` (its rows' event columns taken from `events` by entry, a task's rows at a time) end in
unnamed files on disk that DuckDB scans batch by batch: the build's memory follows a range and the
heads of `events`, not the log (issue 32.1).
"""

from __future__ import annotations

import bisect
import gc
import itertools
import multiprocessing
import operator
import os
import shutil
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from audit.query.arbitration import KINDS as ARBITRATION_KINDS
from audit.query.arbitration import RulingSigners, arbitration_rows
from audit.query.checks import check_of
from audit.query.jsonsplit import split
from audit.query.kept_read import read, rows_without, take
from audit.query.spill import Spill
from ledger import LogReader
from ledger.fastscan import gather
from ledger.reader import StoredEntries
from replay.fold import GameEnd, fold_game
from replay.protocol import Finding, GameEngine, Outcome, Step
from replay.run import GameReplay
from schemas import ALL_EVENTS, decode_stored_array
from schemas.common import GameEnded, GameStarted, PlayerRegistered, RoundSeated, TournamentOpened
from schemas.envelope import Event
from schemas.log import LOG_STREAMS

_json = msgspec.json.Encoder()
FACT_COLUMNS = {"contact": pa.bool_(), "step": pa.int32(), "quiet": pa.int32(), "turn": pa.int32(),
                "out": pa.int32(), "time_used": pa.int64()}
"""Facts the SQL checks read, kept as typed columns of `steps`; its JSON `facts` holds every fact
the engine derived (these too: leaving them out would cost more than keeping them)."""
GAME_OPENER = "game.started"
TOURNAMENT_OPENER = "tournament.opened"
RANGE_ENTRIES = 1 << 14
"""Entries per first-pass task: few enough that a task's buffers reuse warm memory, many enough
that few games reach beyond their range."""
CHUNK = 64
"""Games per second-pass task."""
LATE_STEPS = 1 << 20
"""Steps of the games replayed whole whose events' columns are read back in one pass over `events`."""

_CODED = pa.dictionary(pa.int32(), pa.string())
_WHERE = [("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64())]
ARBITRATION_SCHEMAS = {  # audit/query/arbitration.py fills them
    "arbiters": pa.schema([*_WHERE, ("key_name", pa.string()), ("role", pa.string()), ("name", pa.string()), ("problem", pa.string())]),
    "appeals": pa.schema([*_WHERE, ("player", pa.string()), ("game", pa.string()), ("ruling_seq", pa.int64()), ("grounds", pa.string()),
                          ("deadline_ts", pa.int64())]),
    "decisions": pa.schema([*_WHERE, ("appeal_seq", pa.int64()), ("decision", pa.string()), ("committee", pa.int32()),
                            ("members", pa.int32()), ("for_decision", pa.int32()), ("votes", pa.string()), ("text", pa.string()),
                            ("arbiter", pa.string()), ("signature", pa.string())]),
    "rulings": pa.schema([*_WHERE, ("ruling", pa.string()), ("explicit_kind", pa.bool_()), ("seat", pa.int8()), ("corrects", pa.int64()),
                          ("appeal_stream", pa.string()), ("appeal_seq", pa.int64()), ("player", pa.string()), ("from_round", pa.int32()),
                          ("termination", pa.string()), ("points", pa.list_(pa.float64())), ("text", pa.string()),
                          ("arbiter", pa.string()), ("signature", pa.string())]),
}
"""Stream and kind in `events` and `steps`: codes and their names. DuckDB reads them as VARCHAR,
and the workers send, and `steps` takes from `events`, codes instead of millions of strings."""
SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema([("entry", pa.int64()), ("stream", _CODED), ("seq", pa.int64()), ("ts", pa.int64()),
                         ("kind", _CODED), ("seat", pa.int8()), ("body", pa.large_string())]),
    "steps": pa.schema([("entry", pa.int64()), ("stream", _CODED), ("seq", pa.int64()), ("ts", pa.int64()), ("kind", _CODED),
                        ("seat", pa.int8()), ("action", pa.string()), *FACT_COLUMNS.items(), ("facts", pa.large_string())]),
    "games": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("game", pa.string()), ("tournament", pa.string()),
                        ("round", pa.int32()), ("table_no", pa.int32()), ("game_no", pa.int32()), ("board", pa.string()),
                        ("first", pa.int8()), ("seats", pa.int8()), ("termination", pa.string()), ("winners", pa.list_(pa.int8())),
                        ("started_ts", pa.int64()), ("ended_ts", pa.int64()), ("profile", pa.string()),
                        ("derived_termination", pa.string()), ("derived_winners", pa.list_(pa.int8())), ("ruled_by", pa.int64())]),
    "seats": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("tournament", pa.string()), ("round", pa.int32()),
                        ("table_no", pa.int32()), ("game_no", pa.int32()), ("board", pa.string()), ("seat", pa.int8()),
                        ("player", pa.string()), ("points", pa.float64()), ("derived_points", pa.float64())]),
    "findings": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("code", pa.string()),
                           ("article", pa.string()), ("severity", pa.string()), ("message", pa.string()), ("source", pa.string()),
                           ("check_name", pa.string())]),
    "seatings": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("round", pa.int32()), ("table_no", pa.int32()),
                           ("group_no", pa.int32()), ("seat", pa.int8()), ("player", pa.string())]),
    "players": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("player", pa.string()), ("name", pa.string())]),
    "tournaments": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("game", pa.string()), ("name", pa.string()),
                              ("format", pa.string()), ("stage", pa.string()), ("profile", pa.string()), ("rules", pa.string())]),
    **ARBITRATION_SCHEMAS,
}
_ARBITRATION_TABLES = ("arbiters", "appeals", "decisions", "rulings")
_HEADS = pa.schema([("entry", pa.int64()), ("stream", pa.int32()), *(f for f in SCHEMAS["events"] if f.name in ("seq", "ts", "kind", "seat"))])
"""The `events` columns a range task sends, in log order: the entry is the row's place, and its
stream a code of the task's own."""
_STEP_EVENT = ("stream", "seq", "ts", "kind")
"""The columns of `steps` taken from its event's row of `events`."""
_FACT_FIELDS = pa.struct([f for f in SCHEMAS["steps"] if f.name in ("seat", "action", *FACT_COLUMNS)])
"""The columns of `steps` read straight out of the engines' facts: the acting seat, the action,
the typed facts."""
_WORKER_STEPS = pa.schema([SCHEMAS["steps"].field("entry"), *_FACT_FIELDS, SCHEMAS["steps"].field("facts")])
"""The columns of `steps` a worker sends."""
GAME_TABLES = {"steps": _WORKER_STEPS, **{name: SCHEMAS[name] for name in ("games", "seats", "findings")}}
"""The tables of replayed games, as the workers send them."""


class Rows:
    """Rows of some tables, column by column, turned into Arrow with their fixed schemas."""

    def __init__(self, names: Iterable[str]) -> None:
        self.columns: dict[str, dict[str, list[Any]]] = {name: {c: [] for c in SCHEMAS[name].names} for name in names}

    def add(self, table: str, **values: Any) -> None:
        """Appends one row to a table; missing columns are null."""
        for column, items in self.columns[table].items():
            items.append(values.get(column))

    def table(self, table: str) -> pa.Table:
        """Returns a table's rows as Arrow."""
        return pa.Table.from_pydict(self.columns[table], schema=SCHEMAS[table])


@dataclass
class Projection:
    """The projection's Arrow tables, with what the tournament checks need beside them. Rows added
    to `rows` by hand (tests, tools) are appended to the tables."""

    arrow: dict[str, pa.Table] = field(default_factory=lambda: {name: s.empty_table() for name, s in SCHEMAS.items()})
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {name: [] for name in SCHEMAS})
    findings: list[Finding] = field(default_factory=list)
    """Every engine finding, as the engines reported it."""
    tournament_events: list[Event] = field(default_factory=list)
    """Every event of a tournament stream (openings, registrations, seatings, round closings)."""
    tournament_entries: list[int] | None = None
    """The entry of each of `tournament_events`, where the projection knew them (kept with it)."""
    places: list[int] = field(default_factory=list)
    """The place in the log (`log_place`) of each engine finding, the first of `findings`: what an extension merges by."""
    body: Callable[[], pa.Array] | None = None
    """Where `events` was kept without its `body`: reads it (the whole log, checked), the first time it is asked for."""
    held: Held | None = None
    """The stored bytes of the entries decoded beside the games (`HELD_KINDS`, every entry of a stream
    that is no game's), where the build released the log as it went (`project`)."""

    def tables(self) -> dict[str, pa.Table]:
        """Returns every table as Arrow (empty tables included)."""
        self.with_body()
        return {name: self._table(name) for name in self.arrow}

    def with_body(self) -> None:
        """Joins `body` to `events` where it was kept without it (the other tables are left where they are)."""
        if self.body is not None and "body" not in self.arrow["events"].column_names:
            self.arrow["events"] = self.arrow["events"].append_column("body", pa.chunked_array([self.body()]))

    def table(self, name: str) -> pa.Table:
        """Returns one table as Arrow, rows added by hand included."""
        return self._table(name)

    def sources(self) -> dict[str, pa.Table | ds.Dataset]:
        """Returns every table for DuckDB to scan: those on disk as datasets, not read into memory (issue 32.1)."""
        held = sources(self.arrow)
        return {name: held[name] if isinstance(held[name], ds.Dataset) and not self.rows[name] else self._table(name) for name in held}

    def column(self, table: str, name: str) -> pa.ChunkedArray:
        """Returns one column of a table, reading no other column of a table on disk."""
        held = sources(self.arrow)[table]
        return read(held, [name])[name] if isinstance(held, ds.Dataset) and not self.rows[table] else self._table(table)[name]

    def _table(self, name: str) -> pa.Table:
        table = self.arrow[name]
        return pa.concat_tables([table, pa.Table.from_pylist(self.rows[name], schema=SCHEMAS[name])]) if self.rows[name] else table

    @property
    def games(self) -> list[dict[str, Any]]:
        """Returns the games table as rows."""
        return self._table("games").to_pylist()

    @property
    def tournaments(self) -> list[dict[str, Any]]:
        """Returns the tournaments table as rows."""
        return self._table("tournaments").to_pylist()


def project_ledger(root: Path, on_game: Callable[[int], None] | None = None, workers: int | None = None) -> Projection:
    """Builds the projection of a ledger directory (see `project` for `on_game`)."""
    reader = LogReader(root)
    log = reader.packed()
    return project(log, on_game, workers, RulingSigners.of(reader, len(log)))


def project(log: StoredEntries, on_game: Callable[[int], None] | None = None, workers: int | None = None,
            signers: RulingSigners | None = None) -> Projection:
    """Builds the projection of a log's committed entries, telling `on_game` how many games each
    piece of work replayed; an `on_game` with an `expect` method (a progress bar's ticker) is told
    first how many games the log holds, so that the bar has its total from the start. A game's
    ruling counts only when `signers` shows it signed (none do without them: nothing unsigned counts)."""
    expect = getattr(on_game, "expect", None)
    _few_io_threads()
    with _quiet_gc(), _Workers(log, workers, signers or RulingSigners(())) as pool:
        first = _FirstPass(log, release=pool.forked)
        parts = pool.map(_read_range, [(lo, min(lo + RANGE_ENTRIES, len(log))) for lo in range(0, len(log), RANGE_ENTRIES)])
        if expect is not None:  # counted while the workers start on the ranges, not before them
            expect(count_games(log))
        for part in parts:
            first.add(part, on_game)
        late, late_findings = _replay_games(pool, first.left_over(), on_game, first.replayed)
        with Spill(SCHEMAS["steps"]) as steps:
            with Spill(SCHEMAS["events"]) as events:
                first.write(events, steps)
            first.write_steps(steps, [tables.pop("steps") for tables in late], events)
    if pool.forked:
        log.release(len(log))  # the workers are gone: the pages themselves
    kept, findings = first.game_tables()
    return _assemble_spilled(first, events, steps, [*kept, *late], findings + late_findings)


def _few_io_threads() -> None:
    """Each of Arrow's I/O threads reads ahead of a scan of the files written here: as many as the
    cores, not Arrow's default 8 (issue 32.1: 100–150 MB less at an audit's peak on the 3.1 M-entry
    event). Set before any scan: resizing the pool while a thread scans crashed an audit."""
    wanted = max(1, os.cpu_count() or 1)
    if pa.io_thread_count() > wanted:
        pa.set_io_thread_count(wanted)


def _assemble_spilled(first: _FirstPass, events: Spill, steps: Spill, games: list[dict[str, pa.Table]], findings: list[Finding]) -> Projection:
    """Builds the projection of a log whose `events` and `steps` the first pass wrote (`steps`: the
    file): the other streams are decoded from the entries it held."""
    arrow = {name: pa.concat_tables([schema.empty_table(), *(t[name] for t in games)]) for name, schema in GAME_TABLES.items() if name != "steps"}
    arrow["steps"] = SCHEMAS["steps"].empty_table()
    held = first.held
    # `events` is the spill written already (bodies and all): no table of the log's length stands in for it
    projection = assemble_others(held, first.streams, arrow, findings, HEADS_SCHEMA.empty_table(), first.arbitration)
    spilled = OnDisk()
    for name, table in projection.arrow.items():
        dict.__setitem__(spilled, name, table)
    spilled.open("events", [events.file])
    spilled.open("steps", [steps.file])
    projection.arrow, projection.held = spilled, held
    return projection


_GAME_START = b'{"kind":"game.started"'
"""How a stored game.started begins: entries are the events' canonical JSON, the tag first."""


def count_games(log: StoredEntries) -> int:
    """Counts the games of a log (its game.started entries) in one pass over the stored bytes,
    without decoding an entry: what a progress bar needs for its total."""
    stored = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(log), [None, pa.py_buffer(log.ends), pa.py_buffer(log.data)])
    games = 0
    for lo in range(0, len(log), COUNT_ENTRIES):  # a slice at a time, its pages let go: the count does not hold the log
        games += pc.sum(pc.starts_with(stored.slice(lo, COUNT_ENTRIES), pattern=_GAME_START)).as_py() or 0
        log.let_go(lo, lo + COUNT_ENTRIES)
    return games


COUNT_ENTRIES = 1 << 16


def project_replayed(log: StoredEntries, events: list[Event], games: Iterable[tuple[GameReplay, array]]) -> Projection:
    """Builds the projection of a log whose entries are decoded (`events`, row i entry i) and whose
    games are replayed already, each with its entries: the live audit folds them as they arrive."""
    streams: dict[str, tuple[str, array]] = {}
    for entry, event in enumerate(events):
        known = streams.get(event.stream)
        if known is None:
            known = streams[event.stream] = (event.kind, array("q"))
        known[1].append(entry)
    rows = _GameRows()
    for replay, entries in games:
        rows.add(replay, entries)
    return _assemble(log, streams, heads_table(events), [rows.tables()], rows.findings)


def heads_table(events: list[Event], first: int = 0) -> pa.Table:
    """Returns the `events` columns other than `body` of some decoded entries, the first of them entry
    `first`, `stream` coded by a dictionary of their own in the order the streams come."""
    codes: dict[str, int] = {}
    indices = array("i", (codes.setdefault(stream, len(codes)) for stream in map(_stream_of, events)))
    stream = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(list(codes), pa.string()))
    kinds = list(map(_KINDS.__getitem__, map(type, events)))
    return pa.Table.from_arrays([pa.array(range(first, first + len(events)), pa.int64()), stream, *_head_columns(events, kinds)],
                                schema=HEADS_SCHEMA)


HEADS_SCHEMA = pa.schema([f for f in SCHEMAS["events"] if f.name != "body"])
"""`events` as kept: without `body`, which is read from the log."""


def _assemble(log: StoredEntries, streams: dict[str, tuple[str, array]], heads: pa.Table, games: list[dict[str, pa.Table]],
              findings: list[Finding]) -> Projection:
    """Builds the projection from the replayed games' tables and findings, every stream's first kind
    and entries, and the `events` columns but `body`: the other streams are decoded and tabled here."""
    arrow = {name: pa.concat_tables([schema.empty_table(), *(t[name] for t in games)]) for name, schema in GAME_TABLES.items()}
    arrow["steps"] = _steps_table(arrow["steps"], events_of_steps(arrow["steps"], heads))
    return assemble_others(log, streams, arrow, findings, events_table(heads, log))


def assemble_others(log: Any, streams: dict[str, tuple[str, array]], arrow: dict[str, pa.Table], findings: list[Finding],
                    events: pa.Table, arbitration: array | None = None) -> Projection:
    """Completes the projection from the games' tables and findings: the other streams (tournaments,
    arbitration, orphans) decoded from `log` (anything with `json_array`: every entry of a stream
    that is not a game's, and the arbitration events and game openings, must be there), given the
    `events` table and the first kind and entries of those streams and of every stream with a finding;
    the entries of the arbitration's events are found in `events` unless given (`arbitration`)."""
    others = {s: decode_stored_array(log.json_array(entries)) for s, (kind, entries) in streams.items() if kind != GAME_OPENER}
    tournament = Rows(["seatings", "players", "tournaments"])
    tournament_events = [e for events in others.values() for e in events if e.kind.startswith("tournament.")]
    for event in tournament_events:
        _tournament_rows(tournament, event, streams[event.stream][1][event.seq])
    orphans = [orphan(s, events) for s, events in others.items() if is_orphan(s, events[0].kind)]
    arrow["findings"] = pa.concat_tables([arrow["findings"], findings_table(orphans, streams)])
    arrow.update({name: tournament.table(name) for name in tournament.columns})
    arrow["events"] = events
    opened = [e for e in tournament_events if isinstance(e, TournamentOpened)]
    arrow.update(_arbitration_tables(log, arbitration if arbitration is not None else arbitration_entries(events), opened))
    placed = sorted(((log_place(f, streams[f.stream][1]), f.stream, n) for n, f in enumerate(findings)))  # whichever pass found them
    found = [findings[n] for _, _, n in placed]
    return Projection(arrow, findings=found + orphans, tournament_events=tournament_events, places=[p for p, _, _ in placed],
                      tournament_entries=[streams[e.stream][1][e.seq] for e in tournament_events])


def events_table(heads: pa.Table, log: StoredEntries) -> pa.Table:
    """Returns the `events` table: its columns but `body` (row i entry i), joined to the log's
    stored bytes as `body` without a copy."""
    body = pa.LargeStringArray.from_buffers(len(log), pa.py_buffer(log.ends), pa.py_buffer(log.data))
    return heads.append_column("body", pa.chunked_array([body]))


def arbitration_entries(heads: pa.Table) -> array:
    """Returns the entries of the arbitration's events among the rows of `events`, a batch at a
    time (each batch's kinds by its own dictionary: no column of a season's length is combined)."""
    found = array("q")
    for batch in heads.select(["entry", "kind"]).to_batches():
        kinds = batch.column(1)
        codes = [code for code, name in enumerate(kinds.dictionary.to_pylist()) if name in ARBITRATION_KINDS]
        if codes:
            found.extend(pc.filter(batch.column(0), pc.is_in(kinds.indices, value_set=pa.array(codes, kinds.indices.type))).to_pylist())
    return found


def _arbitration_tables(log: Any, entries: array, opened: list[TournamentOpened]) -> dict[str, pa.Table]:
    """Returns the arbiters, appeals, decisions and rulings, decoded from their entries (few of them)."""
    stored_array = log.json_array(entries) if entries else b"[]"
    events = decode_stored_array(stored_array) if entries else []
    data, ends = split(stored_array)  # each entry's stored bytes, whatever holds them
    stored = (bytes(data[ends[i]:ends[i + 1]]) for i in range(len(entries)))
    rows = arbitration_rows(zip(entries, events, stored), opened)
    return {name: pa.Table.from_pylist(rows[name], schema=SCHEMAS[name]) for name in _ARBITRATION_TABLES}


def _entry_of(finding: Finding, entries: array) -> int | None:
    """Returns the entry a finding rests on, given its stream's entries; None past the stream's end."""
    return entries[finding.seq] if 0 <= finding.seq < len(entries) else None


def log_place(finding: Finding, entries: array) -> int:
    """Returns where a finding sorts in log order: at its entry, or just after its stream's last."""
    entry = _entry_of(finding, entries)
    return entries[-1] + 1 if entry is None else entry


def _steps_table(steps: pa.Table, taken: pa.Table) -> pa.Table:
    """Returns the workers' `steps` rows with the columns of their events (`_STEP_EVENT`), row for row
    in `taken` (`events_of_steps`)."""
    columns = {**{name: steps[name] for name in steps.column_names}, **{name: taken[name] for name in _STEP_EVENT}}
    return pa.Table.from_arrays([columns[name] for name in SCHEMAS["steps"].names], schema=SCHEMAS["steps"])


def events_of_steps(steps: pa.Table, events: pa.Table, first: int = 0) -> pa.Table:
    """Returns the `_STEP_EVENT` columns of each step's event, from `events` whose row i is entry first + i."""
    return events.select(_STEP_EVENT).take(pc.subtract(steps["entry"], first) if first else steps["entry"])


def is_orphan(stream: str, first_kind: str) -> bool:
    """Tells whether a stream opening with an event of `first_kind` belongs to nothing replayable:
    neither a game, nor a tournament, nor one of the log's own streams (witnesses, sources, batches)."""
    return first_kind not in (GAME_OPENER, TOURNAMENT_OPENER) and stream not in LOG_STREAMS


def orphan(stream: str, events: list[Event]) -> Finding:
    """A stream that opens neither a game nor a tournament: its events belong to nothing replayable."""
    from replay.values import event_kind  # the kind in words (issue 31)

    return Finding(stream=stream, seq=events[0].seq, code="audit.G01", article=None,
                   message=f"流的首个事件为 {event_kind(events[0].kind)}，既非开局 game.started 也非赛事开幕 tournament.opened，"
                           f"其 {len(events)} 个事件不予复盘 "
                           f"stream opens with {events[0].kind}, not game.started or tournament.opened; its {len(events)} events are not replayed")


def findings_table(findings: list[Finding], streams: dict[str, tuple[str, array]]) -> pa.Table:
    """Returns the `findings` rows of findings the projection makes itself (orphan streams), given
    every stream's first kind and entries."""
    rows = Rows(["findings"])
    for x in findings:
        rows.add("findings", entry=_entry_of(x, streams[x.stream][1]), stream=x.stream, seq=x.seq, code=x.code, article=x.article,
                 severity=x.severity, message=x.message, source="projection", check_name=check_of(x.code))
    return rows.table("findings")


def _tournament_rows(rows: Rows, event: Event, entry: int) -> None:
    if isinstance(event, TournamentOpened):
        rows.add("tournaments", entry=entry, tournament=event.stream, game=event.game, name=event.name, format=event.format,
                 stage=event.stage, profile=_json.encode(event.profile).decode(), rules=_json.encode(event.rules).decode())
    elif isinstance(event, PlayerRegistered):
        rows.add("players", entry=entry, tournament=event.stream, player=event.player, name=event.name)
    elif isinstance(event, RoundSeated):
        for t in event.tables:
            for s in t.seats:
                rows.add("seatings", entry=entry, tournament=event.stream, round=event.round, table_no=t.table,
                         group_no=t.group, seat=s.seat, player=s.holder)


class OnDisk(dict):  # type: ignore[type-arg]
    """Kept tables by name, each an Arrow dataset over its kept files (issue 32.1: the season's `steps`
    and `events` are not held in memory to be queried). `sources` gives them as they are, for DuckDB
    to scan batch by batch; asked for by name (`[]`, `items`, `values`), a table is read whole once."""

    def __init__(self) -> None:
        super().__init__()
        self._files: list[Any] = []
        self.tails: dict[str, pa.Table] = {}
        """The rows an extension added after a kept table's files, by table."""

    def open(self, name: str, parts: list[tuple[str, Any]]) -> None:
        """Opens a table over its parts' files (path, open file: kept open so the checked file is the one read)."""
        self._files += [f for _, f in parts]
        super().__setitem__(name, ds.dataset([path for path, _ in parts], format="ipc"))

    @classmethod
    def of(cls, tables: dict[str, pa.Table], opened: dict[str, Any]) -> OnDisk:
        """Returns tables as these, keeping open the files of another (`opened`) that some of them read."""
        made = cls()
        made._files += getattr(opened, "_files", [])
        dict.update(made, tables)
        return made

    def append(self, name: str, source: pa.Table | ds.Dataset, tail: pa.Table) -> None:
        """Makes a table of a kept one (its files or its rows) followed by some rows (`tails`: what is kept of it next)."""
        self.tails[name] = tail
        if isinstance(source, ds.Dataset):
            super().__setitem__(name, ds.dataset([source, ds.dataset(tail.cast(source.schema))]))
        else:
            super().__setitem__(name, pa.concat_tables([source, tail]))

    def __setitem__(self, name: str, value: pa.Table) -> None:
        """Sets a table; where it had rows added after its kept files (`tails`), the same last rows of
        the new table are its tail now (`with_body` joins `body` to `events`: its tail gets its own)."""
        tail = self.tails.get(name)
        if tail is not None and isinstance(value, pa.Table):
            self.tails[name] = value.slice(value.num_rows - tail.num_rows)
        super().__setitem__(name, value)

    def adopt(self, name: str, other: OnDisk, old: str) -> None:
        """Takes a table from another of these under a new name."""
        self._files += other._files
        super().__setitem__(name, dict.pop(other, old))

    def __getitem__(self, name: str) -> pa.Table:
        value = super().__getitem__(name)
        if isinstance(value, ds.Dataset):
            value = read(value)
            super().__setitem__(name, value)
        return value

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default

    def items(self) -> list[tuple[str, pa.Table]]:  # type: ignore[override]
        return [(name, self[name]) for name in self]

    def values(self) -> list[pa.Table]:  # type: ignore[override]
        return [self[name] for name in self]

    def sources(self) -> dict[str, pa.Table | ds.Dataset]:
        """Returns every table as it is: read already, or a dataset over its files."""
        return dict(super().items())


def sources(tables: dict[str, pa.Table]) -> dict[str, pa.Table | ds.Dataset]:
    """Returns tables for DuckDB to scan: kept ones (`OnDisk`) as datasets where not read already."""
    return tables.sources() if isinstance(tables, OnDisk) else dict(tables)


class Held:
    """The stored bytes of some entries of a log of `size` entries, found by entry number."""

    def __init__(self, size: int, entries: array, data: bytes | memoryview, ends: array, heads: list[tuple[str, str]] | None = None) -> None:
        self.size, self.entries, self.data, self.ends = size, entries, data, ends
        self.heads = heads
        """Each held entry's kind and stream, where known (kept beside them: an extension does not
        decode every held entry again to find them)."""

    def __len__(self) -> int:
        return self.size

    def json_array(self, indexes: array) -> bytes:
        """Returns the stored bytes of some held entries as one JSON array.

        :raises IndexError: when an entry is not held.
        """
        return gather(self.data, self.ends, array("q", map(self._place, indexes)))

    def stored_of(self, entries: list[int]) -> list[bytes]:
        """Returns the stored bytes of some held entries, by entry number.

        :raises IndexError: when an entry is not held.
        """
        return [self.stored(self._place(entry)) for entry in entries]

    def _place(self, entry: int) -> int:
        k = bisect.bisect_left(self.entries, entry)
        if k == len(self.entries) or self.entries[k] != entry:
            raise IndexError(f"entry {entry} is not held")
        return k

    def stored(self, k: int) -> bytes:
        return bytes(self.data[self.ends[k]:self.ends[k + 1]])

    def body(self) -> pa.Array:
        """Returns a `body` column of the log's length: the held entries' bytes, empty elsewhere
        (what the rulings that do not count read: the openings and the rulings of their games)."""
        lengths = array("q", bytes(8 * (self.size + 1)))  # zero where nothing is held; the loop is over the held entries only
        for k, entry in enumerate(self.entries):
            lengths[entry + 1] = self.ends[k + 1] - self.ends[k]
        offsets = pc.cumulative_sum(pa.Array.from_buffers(pa.int64(), self.size + 1, [None, pa.py_buffer(lengths)]))
        return pa.LargeStringArray.from_buffers(self.size, offsets.buffers()[1], pa.py_buffer(bytes(self.data)))

    def merged(self, other: Held) -> Held:
        """Returns the entries these and another hold, in entry order, each once (these where both
        hold it: the same entry of the same log): `table`'s rows, sorted. Gathered by Arrow, not entry
        by entry: `audit --since` merges the season's bodies with the held entries (issue 32.1)."""
        table = self.table(other).sort_by("entry")
        if not table.num_rows:
            return Held(self.size, array("q"), b"", array("q", [0]))
        return Held(self.size, _array_of(table["entry"].combine_chunks()), *_bytes_and_ends(table["body"].combine_chunks().view(pa.large_binary())))

    def only(self, entries: pa.Array) -> Held:
        """Returns the held entries whose numbers are among `entries` (int64), in entry order."""
        mine = _int64s(self.entries)
        picked = pc.indices_nonzero(pc.is_in(mine, value_set=entries))
        return Held(self.size, _array_of(mine.take(picked)), *_bytes_and_ends(self._binary().take(picked)))

    def table(self, other: Held | None = None) -> pa.Table:
        """Returns the held entries as a table (entry, body) over their bytes (no copy), with those
        of `other` these do not hold after them (copied), each entry once: what an `AuditDB` given
        `bodies` joins to `events`, and what `merged` sorts."""
        mine = pa.table({"entry": _int64s(self.entries), "body": self._binary().view(pa.large_string())})
        if other is None or not len(other.entries):
            return mine
        theirs = _int64s(other.entries)
        return pa.concat_tables([mine, other.only(theirs.filter(pc.invert(pc.is_in(theirs, value_set=mine["entry"])))).table()])

    def _binary(self) -> pa.LargeBinaryArray:
        """Returns the held entries' stored bytes as one Arrow array (no copy)."""
        return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(self.entries),
                                                [None, pa.py_buffer(self.ends), pa.py_buffer(self.data)])

    def with_entries(self, new: list[tuple[int, bytes]], size: int, heads: list[tuple[str, str]] | None = None) -> Held:
        """Returns these held entries followed by some later ones (with their kinds and streams, if
        given: the heads are known after only where they were before and are given)."""
        ends = array("q", self.ends)
        for _, stored in new:
            ends.append(ends[-1] + len(stored))
        data = b"".join([self.data, *(stored for _, stored in new)])  # one copy of the held bytes, not two
        known = self.heads + heads if self.heads is not None and heads is not None and len(heads) == len(new) else None
        return Held(size, self.entries + array("q", [e for e, _ in new]), data, ends, known)


def _int64s(values: array) -> pa.Array:
    """Returns an array of int64 (`array("q")`) as Arrow's, without a copy."""
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _array_of(values: pa.Array) -> array:
    """Returns an Arrow int64 array as an `array("q")`."""
    out = array("q")
    out.frombytes(pa.concat_arrays([values]).buffers()[1][: 8 * len(values)] if len(values) else b"")
    return out


def _bytes_and_ends(stored: pa.LargeBinaryArray) -> tuple[bytes, array]:
    """Returns binary values back to back and their boundaries (`Held`'s data and ends), from 0."""
    ends = array("q")
    offsets = stored.buffers()[1]
    ends.frombytes(offsets[8 * stored.offset: 8 * (stored.offset + len(stored) + 1)] if offsets is not None else bytes(8))
    data = stored.buffers()[2]
    start = ends[0]
    if start:
        ends = array("q", (e - start for e in ends))
    return (bytes(data[start:start + ends[-1]]) if data is not None else b""), ends


# -- the worker processes ---------------------------------------------------------------------

_LOG = StoredEntries(b"", array("q", [0]))
"""The stored entries, which forked workers inherit from the parent instead of receiving them."""
_SPOOL = Path()
"""Where workers leave their tables for the parent."""
_SIGNERS = RulingSigners(())
"""Who could sign the log's rulings, which the workers inherit with it."""


class _Workers:
    """Runs tasks in forked worker processes when there are several cores and a fork, else in
    this process; either way results come back in task order. Tables come back through a spool
    directory in memory (/dev/shm where there is one) as Arrow files the parent maps: sending
    them down the pool's pipes would copy every byte twice, in both processes."""

    def __init__(self, log: StoredEntries, workers: int | None, signers: RulingSigners) -> None:
        self.log = log
        self.signers = signers
        self.workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
        self._pool: Any = None
        self._spool: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> _Workers:
        global _LOG, _SPOOL, _SIGNERS
        _LOG, _SIGNERS = self.log, self.signers
        self._spool = tempfile.TemporaryDirectory(prefix="matchledger-", dir=_spool_root(len(self.log.data)))
        _SPOOL = Path(self._spool.name)
        if self.workers > 1 and len(self.log) > 4 * RANGE_ENTRIES and "fork" in multiprocessing.get_all_start_methods():
            self._pool = multiprocessing.get_context("fork").Pool(self.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        global _LOG, _SIGNERS
        if self._pool is not None:
            self._pool.terminate()
        if self._spool is not None:
            self._spool.cleanup()  # the tables already read keep their mappings
        _LOG, _SIGNERS = StoredEntries(b"", array("q", [0])), RulingSigners(())

    @property
    def forked(self) -> bool:
        """Tells whether the tasks run in forked processes (which hold their own copy of the log)."""
        return self._pool is not None

    def map(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Iterator[Any]:
        return self._pool.imap(fn, tasks) if self._pool is not None else map(fn, tasks)


@contextmanager
def _quiet_gc() -> Iterator[None]:
    """Keeps the cyclic garbage collector out of the projection: millions of short-lived objects
    would trigger it again and again, and in forked workers its passes over the parent's objects
    would copy their pages. The projection makes no garbage cycles worth collecting early."""
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


class _RangeRows(NamedTuple):
    """What a first-pass task sends back about its range of entries."""

    files: dict[str, str]
    """Spool files: the range's `events` columns ("heads") and the rows of the games it replayed."""
    streams: list[tuple[str, str, bytes]]
    """Per stream, in the order of the codes in "heads": its name, the kind of its first event in
    the range, and its entries in the range (int64 bytes)."""
    replayed: list[str]
    """The games replayed, each with every one of its entries in the range."""
    findings: list[Finding]


def _read_range(bounds: tuple[int, int]) -> _RangeRows:
    """Decodes entries lo…hi−1 and replays the games that start and end among them."""
    lo, hi = bounds
    at = array("q", range(lo, hi))
    events = decode_stored_array(_LOG.json_array(at))
    _LOG.let_go(lo, hi)  # decoded: the range's pages stay in the log's scratch file, not in this worker
    names = list(map(_stream_of, events))
    kinds = list(map(_KINDS.__getitem__, map(type, events)))
    streams = _group(names, lo)
    ended = set(itertools.compress(names, map(_ENDED.__eq__, kinds)))
    rows = _GameRows()
    replayed = []
    for stream, entries in streams.items():
        first, last = entries[0] - lo, entries[-1] - lo
        if stream in ended and type(events[first]) is GameStarted and events[first].seq == 0:
            game = events[first:last + 1] if last - first + 1 == len(entries) else [events[e - lo] for e in entries]
            fold_game(game, rows.visitor(entries), rulings=_SIGNERS.check(entries, _stored_entry))
            replayed.append(stream)
    codes = {stream: code for code, stream in enumerate(streams)}
    heads = pa.Table.from_arrays([pa.array(at, pa.int64()), pa.array(map(codes.__getitem__, names), pa.int32()),
                                  *_head_columns(events, kinds)], schema=_HEADS)
    files = {"heads": _spool(heads, f"r{lo}-heads")}
    if replayed:
        files.update({name: _spool(table, f"r{lo}-{name}") for name, table in rows.tables().items()})
    found = [(stream, events[entries[0] - lo].kind, entries.tobytes()) for stream, entries in streams.items()]
    return _RangeRows(files, found, replayed, rows.findings)


_stream_of = operator.attrgetter("stream")


def _stored_entry(entry: int) -> bytes:
    """The stored bytes of one entry of the workers' log (a ruling's, whose signature is checked)."""
    return _LOG.json_array(array("q", [entry]))[1:-1]


def _group(names: list[str], lo: int) -> dict[str, array]:
    """Returns the entries of each stream among `names` (the streams of entries lo, lo + 1 …), in
    order of first appearance: run by run when a game's events mostly follow one another (a log
    written table by table), entry by entry when they are interleaved (tables playing at once)."""
    cuts = [0, *itertools.compress(range(1, len(names)), map(operator.ne, names[1:], names[:-1])), len(names)]
    streams: dict[str, array] = {}
    if 8 * len(cuts) < len(names):
        for start, stop in itertools.pairwise(cuts):
            if names[start] not in streams:
                streams[names[start]] = array("q")
            streams[names[start]].extend(range(lo + start, lo + stop))
        return streams
    for entry, name in enumerate(names, lo):
        entries = streams.get(name)
        if entries is None:
            entries = streams[name] = array("q")
        entries.append(entry)
    return streams


_KINDS = {cls: code for code, cls in enumerate(ALL_EVENTS)}
HELD_KINDS = (*ARBITRATION_KINDS, GAME_OPENER)
"""The kinds of event decoded beside the games: the arbitration's and the games' openings."""
_HELD_NAMES = pa.array(HELD_KINDS, pa.string())
_KIND_NAMES = pa.array([cls.__struct_config__.tag for cls in ALL_EVENTS], pa.string())
_ENDED = _KINDS[GameEnded]


def _head_columns(events: list[Event], kinds: list[int]) -> list[pa.Array]:
    """Returns the seq, ts, kind and seat columns of some events, the kind as its code."""
    return [pa.array([e.seq for e in events], pa.int64()), pa.array([e.ts for e in events], pa.int64()),
            pa.DictionaryArray.from_arrays(pa.array(kinds, pa.int32()), _KIND_NAMES), pa.array([e.seat for e in events], pa.int8())]


class _FirstPass:
    """The first pass's ranges, merged as they arrive in log order: every stream's entries, and the
    games replayed, which stand when no other range holds any of their entries. What a range's
    worker spooled of its length (its `events` columns, its games' `steps`) stays in the spool,
    unread, until `write` takes the ranges one at a time: it writes `events` (every stream's name
    known by then: one dictionary for the file) and the standing games' `steps`, copies out the
    entries decoded beside the games (the other streams' and `HELD_KINDS`) and (`release`: the log
    is shared with forked workers) releases the range. Nothing of the log's length is held at once."""

    def __init__(self, log: StoredEntries, release: bool = False) -> None:
        self.streams: dict[str, tuple[str, array]] = {}
        """Every stream's first kind and entries in log order (log order is seq order: the writer
        keeps every stream's seqs dense and increasing)."""
        self.spanning: set[str] = set()
        """The streams with entries in more than one range."""
        self.replayed: set[str] = set()
        self.arbitration = array("q")
        """The entries of the arbitration's events (`write` finds them)."""
        self._codes: dict[str, int] = {}
        self._names = pa.array([], pa.string())
        self._ranges: list[tuple[array, str, str | None, list[str]]] = []  # codes, spooled heads and steps, games replayed
        self._games: list[tuple[dict[str, pa.Table], list[Finding], list[str]]] = []
        self._log, self._release = log, release
        self._body = pa.LargeStringArray.from_buffers(len(log), pa.py_buffer(log.ends), pa.py_buffer(log.data))
        self._others: set[int] = set()  # the codes of the streams that are no game's
        self._held = (array("q"), bytearray(), array("q", [0]))

    def add(self, part: _RangeRows, on_game: Callable[[int], None] | None) -> None:
        """Merges one range's streams and games; its spooled rows are left for `write`."""
        codes = array("i")  # the range's stream codes made global
        for stream, kind, entries in part.streams:
            if stream in self.streams:
                self.spanning.add(stream)
            else:
                self.streams[stream] = (kind, array("q"))
                self._codes[stream] = len(self._codes)
                if kind != GAME_OPENER:
                    self._others.add(self._codes[stream])
            self.streams[stream][1].frombytes(entries)
            codes.append(self._codes[stream])
        self._ranges.append((codes, part.files["heads"], part.files.get("steps"), part.replayed))
        if part.replayed:
            self._games.append(({name: _unspool(part.files[name]) for name in GAME_TABLES if name != "steps"}, part.findings, part.replayed))
            self.replayed.update(part.replayed)
            if on_game:
                on_game(len(part.replayed))

    def write(self, events: Spill, steps: Spill) -> None:
        """Writes `events` and the standing games' `steps` range by range (see the class)."""
        self._names = pa.array(list(self._codes), pa.string())
        others = pa.array(sorted(self._others), pa.int32())
        dropped = self.dropped()
        for codes, heads_file, steps_file, replayed in self._ranges:
            heads = _unspool(heads_file)  # its stream codes are the range's own: made global here
            coded = pc.take(pa.array(codes, pa.int32()), heads["stream"])
            stream = pa.chunked_array([pa.DictionaryArray.from_arrays(c, self._names) for c in coded.chunks], _CODED)
            kinds = pa.chunked_array([pa.DictionaryArray.from_arrays(c.indices, _KIND_NAMES) for c in heads["kind"].chunks], _CODED)
            heads = heads.set_column(1, SCHEMAS["events"].field("stream"), stream).set_column(4, SCHEMAS["events"].field("kind"), kinds)
            if steps_file is not None:
                worked = _unspool(steps_file)
                if gone := dropped.intersection(replayed):
                    worked = worked.filter(pc.invert(pc.is_in(worked["entry"], value_set=self._entries_of(gone))))
                steps.write(_steps_table(worked, events_of_steps(worked, heads, heads["entry"][0].as_py())))
            if heads.num_rows:
                self._write_range(events, heads, coded, others)
        self._ranges.clear()

    def write_steps(self, steps: Spill, tables: list[pa.Table], events: Spill) -> None:
        """Writes the `steps` of games replayed whole (the left-overs), the columns of their events
        read back from `events` (written: row i is entry i) through `kept_read.take`, a file and a batch
        at a time, once per `LATE_STEPS` of them (an interleaved log replays most games whole), a task's
        rows at a time."""
        tables = [t for t in tables if t.num_rows]
        while tables:
            share: list[pa.Table] = []
            rows = 0
            while tables and (not share or rows + tables[0].num_rows <= LATE_STEPS):
                share.append(tables.pop(0))
                rows += share[-1].num_rows
            self._write_share(steps, share, events.file[0])

    def _write_share(self, steps: Spill, tables: list[pa.Table], events: str) -> None:
        entries = pa.chunked_array([t["entry"] for t in tables]).combine_chunks()  # each step's own entry: no two alike
        order = pc.sort_indices(entries)
        written = ds.dataset(events, format="ipc")  # row i is entry i
        found = take(written, entries.take(order), list(_STEP_EVENT)).take(pc.sort_indices(order))  # back in the tables' order
        at = 0
        for table in tables:
            taken = found.slice(at, table.num_rows)
            at += table.num_rows
            stream = pa.chunked_array([pa.DictionaryArray.from_arrays(c.indices, self._names) for c in taken["stream"].chunks], _CODED)
            steps.write(_steps_table(table, taken.set_column(0, "stream", stream)))  # the file's one dictionary

    def _entries_of(self, streams: set[str]) -> pa.Array:
        return pa.array(sorted(e for s in streams for e in self.streams[s][1]), pa.int64())

    def _write_range(self, events: Spill, heads: pa.Table, coded: pa.ChunkedArray, others: pa.Array) -> None:
        lo, hi = heads["entry"][0].as_py(), heads["entry"][-1].as_py() + 1
        events.write(heads.append_column("body", self._body.slice(lo, hi - lo)))
        self.arbitration.extend(arbitration_entries(heads))
        held = pc.or_(pc.is_in(heads["kind"].cast(pa.string()), value_set=_HELD_NAMES), pc.is_in(coded, value_set=others))
        entries, data, ends = self._held
        data_of, bounds = self._log.data, self._log.ends
        for entry in pc.filter(heads["entry"], held).to_pylist():
            entries.append(entry)
            data += data_of[bounds[entry]:bounds[entry + 1]]
            ends.append(len(data))
        if self._release:
            self._log.release(hi, shared=True)  # the workers' second pass may still read it

    @property
    def held(self) -> Held:
        """Returns the entries copied out as the ranges were written (their bytes not copied again: a
        season's openings are 150 MB)."""
        entries, data, ends = self._held
        return Held(len(self._log), entries, memoryview(data).toreadonly(), ends)

    def left_over(self) -> list[tuple[str, array]]:
        """Returns the games the first pass could not replay whole, with their entries."""
        return [(s, entries) for s, (kind, entries) in self.streams.items()
                if kind == GAME_OPENER and (s not in self.replayed or s in self.spanning)]

    def dropped(self) -> set[str]:
        """The games replayed in a range that another range holds entries of (replayed whole later)."""
        return self.spanning.intersection(self.replayed)

    def game_tables(self) -> tuple[list[dict[str, pa.Table]], list[Finding]]:
        """Returns the `games`, `seats` and `findings` rows of the games replayed that stand, and their findings."""
        kept: list[dict[str, pa.Table]] = []
        findings: list[Finding] = []
        for tables, found, replayed in self._games:
            dropped = self.spanning.intersection(replayed)
            if dropped:
                tables = {name: rows_without(table, "stream", dropped) for name, table in tables.items()}
            kept.append(tables)
            findings += [f for f in found if f.stream not in dropped]
        return kept, findings


def _replay_games(pool: _Workers, games: list[tuple[str, array]], on_game: Callable[[int], None] | None,
                  counted: set[str]) -> tuple[list[dict[str, pa.Table]], list[Finding]]:
    """Replays games whole (the first pass's left-overs); returns their tables and findings. The
    games in `counted` were already reported to `on_game`."""
    size = max(1, min(CHUNK, -(-len(games) // (2 * pool.workers))))  # a few left-overs still keep every worker busy
    chunks = [games[i:i + size] for i in range(0, len(games), size)]
    tables: list[dict[str, pa.Table]] = []
    findings: list[Finding] = []
    for (files, found), chunk in zip(pool.map(_replay_chunk, list(enumerate(chunks))), chunks):
        tables.append({name: _unspool(path) for name, path in files.items()})
        findings += found
        if on_game:
            on_game(sum(1 for stream, _ in chunk if stream not in counted))
    return tables, findings


def _replay_chunk(task: tuple[int, list[tuple[str, array]]]) -> tuple[dict[str, str], list[Finding]]:
    """Decodes and replays some games; returns the spool files of their rows, one per table, and
    their findings."""
    number, games = task
    tables, findings = replay_stored(((_LOG.json_array(entries), entries) for _, entries in games), _SIGNERS)
    if spans := [(entries[0], entries[-1]) for _, entries in games if entries]:
        # Replayed: the pages read stay in the log's scratch file, not in this worker (a season's games
        # that span ranges lie all over the log: they were kept, 1.4 GB of it in each worker, issue 32).
        _LOG.let_go(min(first for first, _ in spans), max(last for _, last in spans) + 1)
    return {name: _spool(table, f"g{number}-{name}") for name, table in tables.items()}, findings


def replay_stored(games: Iterable[tuple[bytes, array]], signers: RulingSigners) -> tuple[dict[str, pa.Table], list[Finding]]:
    """Decodes and replays games, each given as the JSON array of its stored entries and their
    entry numbers, a ruling counting only when `signers` shows it signed; returns their rows in
    `GAME_TABLES` (`steps` without its events' columns) and their findings. The projection's
    workers and Spark's executors (audit/spark/replay.py) both replay through it."""
    rows = _GameRows()
    for stored, entries in games:
        fold_game(decode_stored_array(stored), rows.visitor(entries), rulings=signers.check_array(stored, entries))
    return rows.tables(), rows.findings


def _spool_root(log_bytes: int) -> str | None:
    """Returns /dev/shm when it has room for about three times the log, else the default temp dir."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 3 * log_bytes + (64 << 20):
        return shm
    return None


def _spool(table: pa.Table, name: str) -> str:
    path = str(_SPOOL / f"{name}.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return path


def _unspool(path: str) -> pa.Table:
    """Maps a spooled table without copying it, then removes its file (the mapping stays)."""
    table = pa.ipc.open_file(pa.memory_map(path)).read_all()
    os.unlink(path)
    return table


class _GameRows:
    """The rows of replayed games: `games`, `seats` and `findings` row by row; `steps` column by
    column over all the games of a task at once, so that DuckDB receives a few large chunks rather
    than one per game. The `steps` columns of the events (stream, seq …) come from `events` later."""

    def __init__(self) -> None:
        self.rows = Rows(["games", "seats", "findings"])
        self.step_entries = array("q")
        self.step_facts: list[dict[str, Any]] = []
        self.findings: list[Finding] = []

    def tables(self) -> dict[str, pa.Table]:
        typed = pa.array(self.step_facts, _FACT_FIELDS).flatten()
        steps = [pa.array(self.step_entries, pa.int64()), *typed, _json_column(self.step_facts)]
        return {**{name: self.rows.table(name) for name in self.rows.columns},
                "steps": pa.Table.from_arrays(steps, schema=_WORKER_STEPS)}

    def add(self, r: GameReplay, entries: array) -> None:
        """Adds one game replayed already (the live audit keeps its games step by step)."""
        self._game(r.start, r.game, r.outcome, r.derived, r.rulings, r.findings, r.step_events[-1].ts, entries)
        self.step_entries += entries if r.step_events == r.events else array("q", [entries[e.seq] for e in r.step_events])
        self.step_facts += r.step_facts

    def visitor(self, entries: array) -> _RowsOfGame:
        """Returns the fold driver's visitor (replay/fold.py) that adds the game of `entries` as it is folded."""
        return _RowsOfGame(self, entries)

    def _game(self, start: GameStarted, game: str, outcome: Outcome | None, derived: Outcome | None,
              rulings: list[dict[str, Any]], findings: list[Finding], ended_ts: int, entries: array) -> None:
        """Adds a game's `games`, `seats` and `findings` rows."""
        entry = entries[0]
        where = {"tournament": start.tournament, "round": start.round, "table_no": start.table, "game_no": start.game_no,
                 "board": start.board}
        self.rows.add("games", entry=entry, stream=start.stream, game=game, **where, first=start.first, seats=len(start.seats),
                      termination=outcome.termination if outcome else None, winners=list(outcome.winners) if outcome else None,
                      started_ts=start.ts, ended_ts=ended_ts, profile=_json.encode(start.profile).decode(),
                      derived_termination=derived.termination if derived else None,
                      derived_winners=list(derived.winners) if derived else None,
                      ruled_by=rulings[-1]["seq"] if rulings else None)
        for holder in start.seats:
            self.rows.add("seats", entry=entry, stream=start.stream, **where, seat=holder.seat, player=holder.holder,
                          points=_seat_points(outcome, holder.seat), derived_points=_seat_points(derived, holder.seat))
        for x in findings:
            self.rows.add("findings", entry=_entry_of(x, entries), stream=x.stream, seq=x.seq,
                          code=x.code, article=x.article, severity=x.severity, message=x.message, source="replay",
                          check_name=check_of(x.code))
        self.findings += findings


class _RowsOfGame:
    """A visitor of the fold driver writing one game's rows into `_GameRows`: each step's facts as
    it comes (a stored game's events are its entries, one step each), the game's rows at its end."""

    def __init__(self, rows: _GameRows, entries: array) -> None:
        self.rows, self.entries = rows, entries

    def begin_game(self, start: GameStarted, game: str, engine: GameEngine) -> None:
        self.start, self.game, self.last_ts = start, game, start.ts
        self.findings: list[Finding] = []

    def visit_step(self, step: Step) -> None:
        self.rows.step_facts.append(step.facts)
        self.last_ts = step.event.ts
        if step.findings:
            self.findings.extend(step.findings)

    def end_game(self, end: GameEnd) -> None:
        self.rows._game(self.start, self.game, end.ruled, end.derived, end.rulings, self.findings + end.unusable,
                        self.last_ts, self.entries)
        self.rows.step_entries += self.entries

    def result(self) -> None:
        """The rows are the result, in `_GameRows`."""


def _seat_points(outcome: Outcome | None, seat: int) -> float | None:
    return outcome.points[seat] if outcome and seat < len(outcome.points) else None


def _json_column(records: list[dict[str, Any]]) -> pa.Array:
    """Returns each record as JSON text: encoded with one call and split in C, which costs a third
    of one encoder call per record."""
    data, ends = split(_json.encode(records))
    return pa.LargeStringArray.from_buffers(len(records), pa.py_buffer(ends), pa.py_buffer(data))
