"""The projection: Arrow tables built from the ledger's entries and the replay of every game.

DuckDB reads these tables; they are disposable and rebuilt from the ledger, the only source of
truth. Every row names the log entry it rests on. Games are replayed in worker processes (forked,
so that they share the decoded events) when there are enough of them to pay for it.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from audit.checks import check_of
from ledger.store import iter_payloads
from replay.protocol import Finding
from replay.run import replay_game
from schemas import AnyEvent
from schemas.common import GameStarted, PlayerRegistered, RoundSeated, TournamentOpened
from schemas.envelope import Event

_json = msgspec.json.Encoder()
_events = msgspec.json.Decoder(list[AnyEvent])  # type: ignore[valid-type]
FACT_COLUMNS = {"contact": pa.bool_(), "step": pa.int32(), "quiet": pa.int32(), "turn": pa.int32(),
                "out": pa.int32(), "time_used": pa.int64()}
"""Facts the SQL checks read, kept as typed columns of `steps`; the rest stay in its JSON `facts`."""
CHUNK = 64
"""Games per task handed to a worker process."""

SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64()),
                         ("kind", pa.string()), ("seat", pa.int8()), ("body", pa.string())]),
    "steps": pa.schema([("entry", pa.int64()), ("stream", pa.string()), ("seq", pa.int64()), ("ts", pa.int64()),
                        ("kind", pa.string()), ("seat", pa.int8()), ("action", pa.string()),
                        *FACT_COLUMNS.items(), ("facts", pa.string())]),
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
GAME_TABLES = ("steps", "games", "seats", "findings")


class Rows:
    """Rows of some tables, column by column, turned into Arrow with their fixed schemas."""

    def __init__(self, names: Iterable[str]) -> None:
        self.columns: dict[str, dict[str, list[Any]]] = {name: {c: [] for c in SCHEMAS[name].names} for name in names}

    def add(self, table: str, **values: Any) -> None:
        """Appends one row to a table; missing columns are null."""
        for column, items in self.columns[table].items():
            items.append(values.get(column))

    def extend(self, table: str, **columns: list[Any]) -> None:
        """Appends many rows given column by column; every column of the table must be given."""
        for column, items in self.columns[table].items():
            items.extend(columns[column])

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
    game_events: dict[str, list[Event]] = field(default_factory=dict)
    """Every game's events, by stream."""
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


def project(segments: Iterable[tuple[int, list[bytes]]], on_game: Callable[[int], None] | None = None,
            workers: int | None = None) -> Projection:
    """Builds the projection of a log given segment by segment as (first index, entries)."""
    base = Rows(["seatings", "players", "tournaments"])
    streams: dict[str, list[Event]] = {}
    entries: dict[str, list[int]] = {}  # each stream's log indexes, by seq (seqs are dense)
    tournament_events: list[Event] = []
    event_batches: list[pa.RecordBatch] = []
    for first, payloads in segments:
        decoded: list[Event] = _events.decode(b"[" + b",".join(payloads) + b"]") if payloads else []
        event_batches.append(_event_batch(first, decoded, payloads))
        for i, event in enumerate(decoded, start=first):
            streams.setdefault(event.stream, []).append(event)
            entries.setdefault(event.stream, []).append(i)
            if event.kind.startswith("tournament."):
                tournament_events.append(event)
                _tournament_rows(base, event, i)
    games = [(s, evs) for s, evs in streams.items() if isinstance(evs[0], GameStarted)]
    arrow, findings = _replay_games(games, entries, on_game, workers)
    orphans = [_orphan(s, evs) for s, evs in streams.items() if not isinstance(evs[0], (GameStarted, *TOURNAMENT_OPENERS))]
    findings += orphans
    arrow["findings"] = pa.concat_tables([arrow["findings"], _findings_table(orphans, entries)])
    arrow.update({name: base.table(name) for name in base.columns})
    arrow["events"] = pa.Table.from_batches(event_batches, schema=SCHEMAS["events"])
    return Projection(arrow, findings=findings, game_events=dict(games), tournament_events=tournament_events)


TOURNAMENT_OPENERS = (TournamentOpened,)


def _orphan(stream: str, events: list[Event]) -> Finding:
    """A stream that opens neither a game nor a tournament: its events belong to nothing replayable."""
    return Finding(stream=stream, seq=events[0].seq, code="audit.G01", article=None,
                   message=f"stream opens with {events[0].kind}, not game.started or tournament.opened; its {len(events)} events are not replayed")


def _findings_table(findings: list[Finding], entries: dict[str, list[int]]) -> pa.Table:
    rows = Rows(["findings"])
    for x in findings:
        rows.add("findings", entry=entries[x.stream][x.seq], stream=x.stream, seq=x.seq, code=x.code, article=x.article,
                 severity=x.severity, message=x.message, source="projection", check_name=check_of(x.code))
    return rows.table("findings")


def _event_batch(first: int, decoded: list[Event], payloads: list[bytes]) -> pa.RecordBatch:
    """Returns the events table rows of one segment; the stored bytes become the body column as
    they are, without a copy per entry."""
    ends = list(itertools.accumulate(map(len, payloads), initial=0))
    body = pa.StringArray.from_buffers(len(payloads), pa.py_buffer(array("i", ends)), pa.py_buffer(b"".join(payloads)))
    columns = [pa.array(range(first, first + len(decoded)), pa.int64()), pa.array([e.stream for e in decoded], pa.string()),
               pa.array([e.seq for e in decoded], pa.int64()), pa.array([e.ts for e in decoded], pa.int64()),
               pa.array([e.kind for e in decoded], pa.string()), pa.array([e.seat for e in decoded], pa.int8()), body]
    return pa.RecordBatch.from_arrays(columns, schema=SCHEMAS["events"])


def project_ledger(root: Path, on_game: Callable[[int], None] | None = None, workers: int | None = None) -> Projection:
    """Builds the projection of a ledger directory."""
    return project(iter_payloads(root), on_game, workers)


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


# -- replaying games, in worker processes when it pays ---------------------------------------

_WORK: tuple[list[tuple[str, list[Event]]], dict[str, list[int]]] | None = None
"""The games and entry indexes a forked worker inherits from its parent."""


def _replay_games(games: list[tuple[str, list[Event]]], entries: dict[str, list[int]],
                  on_game: Callable[[int], None] | None, workers: int | None) -> tuple[dict[str, pa.Table], list[Finding]]:
    global _WORK
    chunks = [(i, min(i + CHUNK, len(games))) for i in range(0, len(games), CHUNK)]
    workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
    parts: list[tuple[dict[str, bytes], list[Finding]]] = []
    _WORK = (games, entries)
    try:
        if workers > 1 and len(chunks) > 1 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                for part, (lo, hi) in zip(pool.imap(_replay_chunk, chunks), chunks):
                    parts.append(part)
                    if on_game:
                        on_game(hi - lo)
        else:
            for lo, hi in chunks:
                parts.append(_replay_chunk((lo, hi)))
                if on_game:
                    on_game(hi - lo)
    finally:
        _WORK = None
    arrow = {name: pa.concat_tables([SCHEMAS[name].empty_table(), *(_from_ipc(blobs[name]) for blobs, _ in parts)])
             for name in GAME_TABLES}
    return arrow, [f for _, found in parts for f in found]


def _replay_chunk(bounds: tuple[int, int]) -> tuple[dict[str, bytes], list[Finding]]:
    """Replays games lo…hi−1 and returns their rows (Arrow IPC per table) and their findings."""
    assert _WORK is not None
    games, entries = _WORK
    rows = Rows(GAME_TABLES)
    findings: list[Finding] = []
    for _, events in games[bounds[0]:bounds[1]]:
        findings.extend(_game_rows(rows, replay_game(events), entries))
    return {name: _to_ipc(rows.table(name)) for name in GAME_TABLES}, findings


def _to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()


def _game_rows(rows: Rows, r: Any, entries: dict[str, list[int]]) -> list[Finding]:
    start: GameStarted = r.start
    index = entries[r.stream]
    entry = index[0]
    where = {"tournament": start.tournament, "round": start.round, "table_no": start.table, "game_no": start.game_no, "board": start.board}
    outcome = r.outcome
    rows.add("games", entry=entry, stream=r.stream, game=r.game, **where, first=start.first, seats=len(start.seats),
             termination=outcome.termination if outcome else None, winners=list(outcome.winners) if outcome else None,
             started_ts=start.ts, ended_ts=r.facts[-1]["ts"], profile=_json.encode(start.profile).decode())
    for holder in start.seats:
        points = outcome.points[holder.seat] if outcome and holder.seat < len(outcome.points) else None
        rows.add("seats", entry=entry, stream=r.stream, **where, seat=holder.seat, player=holder.holder, points=points)
    facts = r.facts
    typed = {k: [f.get(k) for f in facts] for k in FACT_COLUMNS}
    rows.extend("steps", entry=[index[f["seq"]] for f in facts], stream=[r.stream] * len(facts),
                seq=[f["seq"] for f in facts], ts=[f["ts"] for f in facts], kind=[f["kind"] for f in facts],
                seat=[f.get("seat") for f in facts], action=[f.get("action") for f in facts], **typed,
                facts=[_json.encode({k: v for k, v in f.items() if k not in _NOT_IN_JSON}).decode() for f in facts])
    for x in r.findings:
        rows.add("findings", entry=index[x.seq] if x.seq < len(index) else None, stream=x.stream, seq=x.seq, code=x.code, article=x.article,
                 severity=x.severity, message=x.message, source="replay", check_name=check_of(x.code))
    return list(r.findings)


_NOT_IN_JSON = frozenset({"seq", "ts", "kind", "seat", "action", *FACT_COLUMNS})
