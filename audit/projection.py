"""The projection: Arrow tables built from the ledger's entries and the replay of every game.

DuckDB reads these tables; they are disposable and rebuilt from the ledger, the only source of
truth. Every row names the log entry it rests on.

The log is read once into one buffer (ledger.store.read_entries). The work then runs in two passes
over it, in forked worker processes when there is enough of it (they share the parent's buffer):

1. group: a worker reads only the kind and stream of a range of entries, so that the parent
   learns every stream's entries without decoding the log itself;
2. replay: a worker decodes whole games under the full event contract, replays them and leaves
   their rows, the `events` rows included, as Arrow files that the parent maps.

The parent decodes only the few events of the other streams (tournaments, orphans), puts the
`events` rows in log order and joins the buffer to them as their `body`, without a copy.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from audit.checks import check_of
from ledger.fastscan import split
from ledger.store import StoredEntries, read_entries
from replay.protocol import Finding
from replay.run import GameReplay, replay_game
from schemas import ALL_EVENTS, decode_stored_array
from schemas.common import GameStarted, PlayerRegistered, RoundSeated, TournamentOpened
from schemas.envelope import Event

_json = msgspec.json.Encoder()
FACT_COLUMNS = {"contact": pa.bool_(), "step": pa.int32(), "quiet": pa.int32(), "turn": pa.int32(),
                "out": pa.int32(), "time_used": pa.int64()}
"""Facts the SQL checks read, kept as typed columns of `steps`; its JSON `facts` holds every fact
the engine derived (these too: leaving them out would cost more than keeping them)."""
GAME_OPENER = "game.started"
TOURNAMENT_OPENER = "tournament.opened"
GROUP_ENTRIES = 1 << 14
"""Entries per grouping task: few enough that a task's buffers stay below glibc's mmap threshold
and reuse warm memory (with 1 << 16 the fresh pages cost more than the decoding itself)."""
CHUNK = 64
"""Games per replay task."""

_HEAD = [("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64()),
         ("kind", pa.string()), ("seat", pa.int8())]
_CODED = pa.dictionary(pa.int32(), pa.string())
"""Stream and kind in `events`: codes and their names. DuckDB reads them as VARCHAR, and putting
the rows into log order moves codes instead of millions of strings."""
SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema([("entry", pa.int64()), ("stream", _CODED), ("seq", pa.int64()), ("ts", pa.int64()),
                         ("kind", _CODED), ("seat", pa.int8()), ("body", pa.large_string())]),
    "steps": pa.schema([*_HEAD, ("action", pa.string()), *FACT_COLUMNS.items(), ("facts", pa.large_string())]),
    "games": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("game", pa.string()), ("tournament", pa.string()),
                        ("round", pa.int32()), ("table_no", pa.int32()), ("game_no", pa.int32()), ("board", pa.string()),
                        ("first", pa.int8()), ("seats", pa.int8()), ("termination", pa.string()), ("winners", pa.list_(pa.int8())),
                        ("started_ts", pa.int64()), ("ended_ts", pa.int64()), ("profile", pa.string())]),
    "seats": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("tournament", pa.string()), ("round", pa.int32()),
                        ("table_no", pa.int32()), ("game_no", pa.int32()), ("board", pa.string()), ("seat", pa.int8()),
                        ("player", pa.string()), ("points", pa.float64())]),
    "findings": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("code", pa.string()),
                           ("article", pa.string()), ("severity", pa.string()), ("message", pa.string()), ("source", pa.string()),
                           ("check_name", pa.string())]),
    "seatings": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("round", pa.int32()), ("table_no", pa.int32()),
                           ("group_no", pa.int32()), ("seat", pa.int8()), ("player", pa.string())]),
    "players": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("player", pa.string()), ("name", pa.string())]),
    "tournaments": pa.schema([("entry", pa.int64()), ("tournament", pa.string()), ("game", pa.string()), ("name", pa.string()),
                              ("format", pa.string()), ("stage", pa.string()), ("profile", pa.string()), ("rules", pa.string())]),
}
HEADS = pa.schema([f for f in SCHEMAS["events"] if f.name != "body"])
"""The `events` columns other than `body`, as the workers send them."""
GAME_TABLES = ("steps", "games", "seats", "findings")
_FACT_FIELDS = pa.struct([f for f in SCHEMAS["steps"] if f.name in ("seat", "action", *FACT_COLUMNS)])
"""The columns of `steps` read straight out of the engines' facts: the acting seat, the action,
the typed facts."""


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

    def tables(self) -> dict[str, pa.Table]:
        """Returns every table as Arrow (empty tables included)."""
        return {name: pa.concat_tables([table, pa.Table.from_pylist(self.rows[name], schema=SCHEMAS[name])])
                if self.rows[name] else table for name, table in self.arrow.items()}

    @property
    def games(self) -> list[dict[str, Any]]:
        """Returns the games table as rows."""
        return self.tables()["games"].to_pylist()

    @property
    def tournaments(self) -> list[dict[str, Any]]:
        """Returns the tournaments table as rows."""
        return self.tables()["tournaments"].to_pylist()


def project_ledger(root: Path, on_game: Callable[[int], None] | None = None, workers: int | None = None) -> Projection:
    """Builds the projection of a ledger directory."""
    return project(read_entries(root), on_game, workers)


def project(log: StoredEntries, on_game: Callable[[int], None] | None = None, workers: int | None = None) -> Projection:
    """Builds the projection of a log's committed entries."""
    with _quiet_gc(), _Workers(log, workers) as pool:
        streams = _group(pool, len(log))
        games = [(s, entries) for s, (kind, entries) in streams.items() if kind == GAME_OPENER]
        arrow, heads, findings = _replay_games(pool, games, on_game)
    others = {s: decode_stored_array(log.json_array(entries)) for s, (kind, entries) in streams.items() if kind != GAME_OPENER}
    tournament = Rows(["seatings", "players", "tournaments"])
    tournament_events = [e for events in others.values() for e in events if e.kind.startswith("tournament.")]
    for event in tournament_events:
        _tournament_rows(tournament, event, streams[event.stream][1][event.seq])
    orphans = [_orphan(s, events) for s, events in others.items() if events[0].kind != TOURNAMENT_OPENER]
    arrow["findings"] = pa.concat_tables([arrow["findings"], _findings_table(orphans, streams)])
    arrow.update({name: tournament.table(name) for name in tournament.columns})
    arrow["events"] = _events_table(heads, others, streams, log)
    return Projection(arrow, findings=findings + orphans, tournament_events=tournament_events)


def _events_table(heads: list[pa.Table], others: dict[str, list[Event]], streams: dict[str, tuple[str, array]],
                  log: StoredEntries) -> pa.Table:
    """Returns the `events` table in log order: the games' rows from the workers, the other
    streams' rows from the parent, and the stored bytes."""
    rows = Rows(["events"])
    for stream, events in others.items():
        for event, entry in zip(events, streams[stream][1]):
            rows.add("events", entry=entry, stream=stream, seq=event.seq, ts=event.ts, kind=event.kind, seat=event.seat)
    table = pa.concat_tables([*heads, rows.table("events").drop_columns(["body"])])
    table = table.sort_by("entry")
    body = pa.LargeStringArray.from_buffers(len(log), pa.py_buffer(log.ends), pa.py_buffer(log.data))
    assert len(body) == table.num_rows, "every entry is in exactly one stream"
    return table.append_column("body", body)


def _orphan(stream: str, events: list[Event]) -> Finding:
    """A stream that opens neither a game nor a tournament: its events belong to nothing replayable."""
    return Finding(stream=stream, seq=events[0].seq, code="audit.G01", article=None,
                   message=f"stream opens with {events[0].kind}, not game.started or tournament.opened; its {len(events)} events are not replayed")


def _findings_table(findings: list[Finding], streams: dict[str, tuple[str, array]]) -> pa.Table:
    rows = Rows(["findings"])
    for x in findings:
        rows.add("findings", entry=streams[x.stream][1][x.seq], stream=x.stream, seq=x.seq, code=x.code, article=x.article,
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


# -- the worker processes ---------------------------------------------------------------------

_LOG = StoredEntries(b"", array("q", [0]))
"""The stored entries, which forked workers inherit from the parent instead of receiving them."""
_SPOOL = Path()
"""Where workers leave their tables for the parent."""


class _Workers:
    """Runs tasks in forked worker processes when there are several cores and a fork, else in
    this process; either way results come back in task order. Tables come back through a spool
    directory in memory (/dev/shm where there is one) as Arrow files the parent maps: sending
    them down the pool's pipes would copy every byte twice, in both processes."""

    def __init__(self, log: StoredEntries, workers: int | None) -> None:
        self.log = log
        self.workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
        self._pool: Any = None
        self._spool: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> _Workers:
        global _LOG, _SPOOL
        _LOG = self.log
        self._spool = tempfile.TemporaryDirectory(prefix="matchledger-", dir=_spool_root(len(self.log.data)))
        _SPOOL = Path(self._spool.name)
        if self.workers > 1 and len(self.log) > 4 * GROUP_ENTRIES and "fork" in multiprocessing.get_all_start_methods():
            self._pool = multiprocessing.get_context("fork").Pool(self.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        global _LOG
        if self._pool is not None:
            self._pool.terminate()
        if self._spool is not None:
            self._spool.cleanup()  # the tables already read keep their mappings
        _LOG = StoredEntries(b"", array("q", [0]))

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


class _Head(msgspec.Struct):
    """The two fields the grouping pass reads; the others are skipped without being decoded."""

    kind: str
    stream: str


_heads = msgspec.json.Decoder(list[_Head])


def _group(pool: _Workers, size: int) -> dict[str, tuple[str, array]]:
    """Returns every stream's first kind and its entries in log order (log order is seq order:
    the writer keeps every stream's seqs dense and increasing)."""
    streams: dict[str, tuple[str, array]] = {}
    for part in pool.map(_group_range, [(lo, min(lo + GROUP_ENTRIES, size)) for lo in range(0, size, GROUP_ENTRIES)]):
        for stream, (kind, entries) in part.items():
            if stream in streams:
                streams[stream][1].frombytes(entries)
            else:
                streams[stream] = (kind, array("q", entries))
    return streams


def _group_range(bounds: tuple[int, int]) -> dict[str, tuple[str, bytes]]:
    """Groups entries lo…hi−1 by stream: (first kind, entries as int64 bytes) per stream."""
    lo, hi = bounds
    found: dict[str, tuple[str, array]] = {}
    for entry, head in enumerate(_heads.decode(_LOG.json_array(array("q", range(lo, hi)))), start=lo):
        if head.stream in found:
            found[head.stream][1].append(entry)
        else:
            found[head.stream] = (head.kind, array("q", [entry]))
    return {stream: (kind, entries.tobytes()) for stream, (kind, entries) in found.items()}


def _replay_games(pool: _Workers, games: list[tuple[str, array]], on_game: Callable[[int], None] | None
                  ) -> tuple[dict[str, pa.Table], list[pa.Table], list[Finding]]:
    """Replays every game; returns the game tables, the `events` rows of the games, and the findings."""
    chunks = [games[i:i + CHUNK] for i in range(0, len(games), CHUNK)]
    parts: list[tuple[dict[str, pa.Table], list[Finding]]] = []
    for (files, found), chunk in zip(pool.map(_replay_chunk, list(enumerate(chunks))), chunks):
        parts.append(({name: _unspool(path) for name, path in files.items()}, found))
        if on_game:
            on_game(len(chunk))
    arrow = {name: pa.concat_tables([SCHEMAS[name].empty_table(), *(tables[name] for tables, _ in parts)])
             for name in GAME_TABLES}
    heads = [tables["events"] for tables, _ in parts]
    return arrow, heads, [f for _, found in parts for f in found]


def _replay_chunk(task: tuple[int, list[tuple[str, array]]]) -> tuple[dict[str, str], list[Finding]]:
    """Decodes and replays some games; returns the spool files of their rows, one per table, and
    their findings."""
    number, games = task
    rows = _GameRows()
    findings: list[Finding] = []
    for _, entries in games:
        events = decode_stored_array(_LOG.json_array(entries))
        findings.extend(rows.add(replay_game(events), entries))
    gc.collect()
    return {name: _spool(table, f"{number}-{name}") for name, table in rows.tables().items()}, findings


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
    """The rows of replayed games: `games`, `seats` and `findings` row by row; the `events` rows
    and the `steps` built column by column over all the games of a task at once, so that DuckDB
    receives a few large chunks rather than one per game."""

    def __init__(self) -> None:
        self.rows = Rows(["games", "seats", "findings"])
        self.events = _EventColumns()
        self.step_events = _EventColumns()
        self.step_facts: list[dict[str, Any]] = []
        self.steps_are_events = True
        """Whether every event was one step, as the engines fold them: then the steps share the
        events' columns."""

    def tables(self) -> dict[str, pa.Table]:
        heads = self.events.arrays()
        coded = heads if self.steps_are_events else self.step_events.arrays()
        where = [column.dictionary_decode() if pa.types.is_dictionary(column.type) else column for column in coded]
        typed = pa.array(self.step_facts, _FACT_FIELDS).flatten()
        return {**{name: self.rows.table(name) for name in self.rows.columns},
                "steps": pa.Table.from_arrays([*where[:5], *typed, _json_column(self.step_facts)], schema=SCHEMAS["steps"]),
                "events": pa.Table.from_arrays(heads, schema=HEADS)}

    def add(self, r: GameReplay, entries: array) -> list[Finding]:
        """Adds one replayed game; returns its findings."""
        start: GameStarted = r.start
        entry = entries[0]
        where = {"tournament": start.tournament, "round": start.round, "table_no": start.table, "game_no": start.game_no,
                 "board": start.board}
        outcome = r.outcome
        self.rows.add("games", entry=entry, stream=r.stream, game=r.game, **where, first=start.first, seats=len(start.seats),
                      termination=outcome.termination if outcome else None, winners=list(outcome.winners) if outcome else None,
                      started_ts=start.ts, ended_ts=r.step_events[-1].ts, profile=_json.encode(start.profile).decode())
        for holder in start.seats:
            points = outcome.points[holder.seat] if outcome and holder.seat < len(outcome.points) else None
            self.rows.add("seats", entry=entry, stream=r.stream, **where, seat=holder.seat, player=holder.holder, points=points)
        for x in r.findings:
            self.rows.add("findings", entry=entries[x.seq] if x.seq < len(entries) else None, stream=x.stream, seq=x.seq,
                          code=x.code, article=x.article, severity=x.severity, message=x.message, source="replay",
                          check_name=check_of(x.code))
        same = r.step_events == r.events
        self.steps_are_events &= same
        self.events.add(r.stream, r.events, entries)
        self.step_events.add(r.stream, r.step_events, entries if same else array("q", [entries[e.seq] for e in r.step_events]))
        self.step_facts += r.step_facts
        return list(r.findings)


_KINDS = {cls: code for code, cls in enumerate(ALL_EVENTS)}
_KIND_NAMES = pa.array([cls.__struct_config__.tag for cls in ALL_EVENTS], pa.string())


class _EventColumns:
    """The `events` columns of some games' events, gathered game by game. Streams and kinds are
    kept as codes and spelled out by Arrow: far cheaper than a Python string per row."""

    def __init__(self) -> None:
        self.games: list[tuple[str, list[Event], array]] = []

    def add(self, stream: str, events: list[Event], entries: array) -> None:
        self.games.append((stream, events, entries))

    def arrays(self) -> list[pa.Array]:
        """Returns the columns entry, stream, seq, ts, kind, seat (stream and kind as codes)."""
        entries, streams = array("q"), array("i")
        for code, (_, events, at) in enumerate(self.games):
            entries += at
            streams += array("i", [code]) * len(events)
        events = [e for _, evs, _ in self.games for e in evs]
        names = pa.array([stream for stream, _, _ in self.games], pa.string())
        kinds = pa.array([_KINDS[type(e)] for e in events], pa.int32())
        return [pa.array(entries, pa.int64()), pa.DictionaryArray.from_arrays(pa.array(streams, pa.int32()), names),
                pa.array([e.seq for e in events], pa.int64()), pa.array([e.ts for e in events], pa.int64()),
                pa.DictionaryArray.from_arrays(kinds, _KIND_NAMES), pa.array([e.seat for e in events], pa.int8())]


def _json_column(records: list[dict[str, Any]]) -> pa.Array:
    """Returns each record as JSON text: encoded with one call and split in C, which costs a third
    of one encoder call per record."""
    data, ends = split(_json.encode(records))
    return pa.LargeStringArray.from_buffers(len(records), pa.py_buffer(ends), pa.py_buffer(data))
