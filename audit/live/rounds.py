"""What the live audit keeps of a tournament's games from one round close to the next (issue 32.2: a
live round close costs its round's games, not its tournament's).

A round close runs the audit's checks over the tournament (audit/live/auditor.py). The per-game
check queries (`SCOPED` of audit/certification/scoped.py) rest each on one game's rows alone: a
game with no entry since the tournament's last round close gives the rows it gave then, published
then; so they run over the games touched since (a game folded again, or still under way) and the
other games are not read. The tournament-level checks (seating, pairing, standings, deals, appeals)
read every game, but of each only its small rows: its row of `games`, its seats, its last
game.ended claim (`claims`) and its seats' claimed move time (`seat_times`); those are kept here
as each round close finds them, so that the next one reads them instead of folding the games again.

The rows keep the log's entry numbers (a round close's projection numbers its entries among those
it reads: `LiveAuditor._project`); a game the projection reads gets its rows renumbered into it.
No check compares the entry of a game it does not read (a game whose result a ruling changes is
read: `ruled`). The service keeps them in `derived/live/` with its other state (audit/live/store.py,
`encode`): a restart goes on from them; an auditor without them (`from_ledger`, or a rebuilt
store) reads and folds every game of a tournament at its first round close, as every close did before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

KEPT_TABLES = ("games", "seats")
"""The projection's tables kept for every game (one row per game, one per seat)."""
KEPT_BUILT = ("claims", "seat_times")
"""The tables the database builds at load that the tournament checks read for every game (a row
per game, one per seat), kept as they were built, with their DuckDB types (`AuditDB.built_tables`)."""


@dataclass(frozen=True)
class RoundRows:
    """The small rows of a tournament's games as its last round close found them (see the module's text)."""

    tables: dict[str, pa.Table]
    """`KEPT_TABLES` and `KEPT_BUILT` by name, `entry` the log's, the games in the order they started."""
    last_ts: dict[str, int]
    """The latest timestamp of each game's events (the competition's clock is the latest event's: `game_status`)."""
    ruled: frozenset[str]
    """The games with a ruling on their stream (the tournament checks read their events)."""
    tournament: list[dict[str, Any]]
    """The tournament's rows of `tournaments` (the per-game checks read its rules)."""

    def streams(self) -> list[str]:
        """Returns the games kept, in the order they started."""
        return self.tables["games"]["stream"].to_pylist()

    def boards(self, streams: Iterable[str]) -> dict[str, str]:
        """Returns the board of each of `streams` that is a Paohuzi game played on a duplicate board."""
        wanted = set(streams)
        games = self.tables["games"].select(["stream", "game", "board"]).to_pylist()
        return {g["stream"]: g["board"] for g in games if g["stream"] in wanted and g["game"] == "paohuzi" and g["board"]}

    def later_than(self, clock: int | None, read: Mapping[str, Any]) -> list[str]:
        """Returns the games not `read` with an event later than `clock` (every game when it is None), in the order they started."""
        return [s for s in self.streams() if s not in read and (clock is None or self.last_ts[s] > clock)]

    def updated(self, fresh: Mapping[str, pa.Table], last_ts: dict[str, int], ruled: set[str], tournament: list[dict[str, Any]]) -> RoundRows:
        """Returns the rows with the games of `fresh` (every table's rows of some games) in place of what was kept of them."""
        streams = set(last_ts)
        tables = {name: _by_start(pa.concat_tables([without(self.tables[name], streams), fresh[name]]), name)
                  for name in (*KEPT_TABLES, *KEPT_BUILT)}
        return RoundRows(tables, {**self.last_ts, **last_ts}, frozenset((self.ruled - streams) | ruled), tournament)

    @classmethod
    def of(cls, fresh: Mapping[str, pa.Table], last_ts: dict[str, int], ruled: set[str], tournament: list[dict[str, Any]]) -> RoundRows:
        """Returns the rows of a tournament whose every game is in `fresh`."""
        return cls({name: _by_start(fresh[name], name) for name in (*KEPT_TABLES, *KEPT_BUILT)}, dict(last_ts), frozenset(ruled), tournament)


class _Stored(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """RoundRows as a file holds them: each table in Arrow's IPC stream format (its schema's metadata, the DuckDB types, kept)."""

    tables: dict[str, bytes]
    last_ts: dict[str, int]
    ruled: list[str]
    tournament: list[dict[str, Any]]


def encode(rows: RoundRows) -> bytes:
    """Returns the rows as a file holds them (MessagePack)."""
    return msgspec.msgpack.encode(_Stored({name: _ipc(t) for name, t in rows.tables.items()}, rows.last_ts, sorted(rows.ruled),
                                          rows.tournament))


def decode(data: bytes) -> RoundRows:
    """Returns the rows `encode` gave these bytes for.

    :raises msgspec.DecodeError, pyarrow.ArrowInvalid: when they are not such bytes.
    """
    stored = msgspec.msgpack.decode(data, type=_Stored)
    if set(stored.tables) != {*KEPT_TABLES, *KEPT_BUILT}:
        raise msgspec.DecodeError(f"kept rows of tables {sorted(stored.tables)}")
    tables = {name: pa.ipc.open_stream(pa.py_buffer(b)).read_all() for name, b in stored.tables.items()}
    return RoundRows(tables, dict(stored.last_ts), frozenset(stored.ruled), stored.tournament)


_IPC = pa.ipc.IpcWriteOptions(compression="zstd")


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=_IPC) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def without(table: pa.Table, streams: set[str]) -> pa.Table:
    """Returns a table without the rows of some streams."""
    if not streams or not table.num_rows:
        return table
    return table.filter(pc.invert(pc.is_in(table["stream"], value_set=pa.array(sorted(streams), pa.string()))))


def renumbered(table: pa.Table, entries: Mapping[int, int]) -> pa.Table:
    """Returns a kept table with the entries the projection reads renumbered as it numbers them
    (`entries`: the log's entry to the projection's); the others are left as the log's."""
    at = table.schema.get_field_index("entry")
    column = [None if e is None else entries.get(e, e) for e in table["entry"].to_pylist()]
    return table.set_column(at, table.schema.field(at), pa.array(column, table.schema.field(at).type))


def _by_start(table: pa.Table, name: str) -> pa.Table:
    """Returns the games' rows in the order the games started (a stable sort: a game's seats stay in order)."""
    return table.sort_by("entry") if name in KEPT_TABLES and table.num_rows else table
