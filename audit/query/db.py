"""Every DuckDB call of matchledger: load the projection, run the named SQL files, run read-only SQL.

The database is in memory. It reads the projection's Arrow tables where they are, as views over
Arrow memory or, for a kept projection, over its Arrow files batch by batch (copying them into
DuckDB's own storage would cost more than every check scanning them), and holds what
`audit/query/sql/views/` derives from them (views, and tables such as `timings` that several checks
read and are built once at load; a kept projection's are views over their kept files, not copied:
the season's `timings` is 11 M rows). After loading, external access is switched
off and locked, so no SQL can read or write files, let alone the ledger.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from audit.query.kept_read import batches, count_rows, paced
from audit.query.spill import Spill

SQL_DIR = Path(__file__).parent / "sql"
_HEADER = re.compile(r"^--\s*(\w+):\s*(.*)$")
_PARAM = re.compile(r"\$([a-z_]\w*)")
_CREATES = re.compile(r"^CREATE\s+(VIEW|TABLE|MACRO)\b", re.IGNORECASE | re.MULTILINE)


MEMORY_LIMIT = "256MB"
"""What DuckDB's sorts, windows and hash tables hold of a connection's memory before they spill to its
temp directory (`scratch_connection`). At 4 GB a 22 M-entry season's windows (`junqi_quiet`,
`leave_camp`) held 600–900 MB; at 256 MB they spill and the audit's peak is its load's. The 3.1 M
event's audit took as long (issue 32, bench/README)."""
SPILL_LIMIT = "64GB"
"""How much a connection may spill: a runaway query fails instead of filling the disk."""
PER_STREAM = ("claims", "timings", "seat_times")
"""The tables of `audit/query/sql/views/` whose rows each rest on one stream's events alone (built
from `events` only, in this order): built a share of the streams at a time (`per_stream_rows`), and
patched stream by stream by an extension."""
SHARE_EVENTS = 1 << 20
"""Events per share of the streams the per-stream tables are built over: a window over a season's
every event held 750 MB of a 4.4 M-entry audit (`timings`, issue 32); a share's, some tens."""
AT_ONCE_EVENTS = 1 << 22
"""Up to how many events the per-stream tables are built in one go, by their SQL over `events`: an
event's (3.1 M) as fast as before (the shares' pass cost its full audit 7 s of CPU, 18 %), a
season's in shares, so that its window is never larger than an event's."""


class AuditError(Exception):
    """A query failed or is not allowed; the message names it."""


@dataclass(frozen=True)
class NamedQuery:
    """One `.sql` file: its name, what it computes, the article it implements, and its text."""

    name: str
    computes: str
    implements: str
    check: str | None  # the certification check its rows are findings of, if any
    sql: str

    @property
    def params(self) -> list[str]:
        """Returns the names of its parameters (`$tournament` …), each NULL unless given."""
        return sorted(set(_PARAM.findall(self.sql)))

    @property
    def kind(self) -> str:
        """Returns what the file creates: a view, a table built at load, a table macro, or a query."""
        made = _CREATES.search(self.sql)
        return {"VIEW": "view", "TABLE": "table", "MACRO": "macro"}[made.group(1).upper()] if made else "query"


def load_queries(directory: Path = SQL_DIR) -> dict[str, NamedQuery]:
    """Reads every named query of a directory, keyed by name."""
    found = {}
    for path in sorted(directory.glob("*.sql")):
        text = path.read_text()
        meta = _header(text)
        name = meta.get("name", path.stem)
        found[name] = NamedQuery(name, meta.get("computes", ""), meta.get("implements", ""), meta.get("check"), text)
    return found


def _header(text: str) -> dict[str, str]:
    """Reads the `-- key: value` lines at the top of a SQL file; indented comment lines continue a value."""
    meta: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        if m := _HEADER.match(line):
            key = m.group(1)
            meta[key] = m.group(2).strip()
        elif key is not None:
            meta[key] += " " + line.lstrip("- ").strip()
    return meta


QUERIES = load_queries()
VIEWS = load_queries(SQL_DIR / "views")


def catalogue() -> list[tuple[str, str, str, str, str, str]]:
    """Returns every view, table, macro and named query once: name, kind, parameters, check, what
    it computes, what it implements."""
    return [(q.name, q.kind, ", ".join(q.params), q.check or "", q.computes, q.implements) for q in [*VIEWS.values(), *QUERIES.values()]]


class _Built(Mapping[str, pa.Table | ds.Dataset]):
    """The tables a database built at load, by name, each read from it when asked for (`built_tables`);
    one it was given as a dataset (a kept table's files) is that dataset, not read out of DuckDB whole."""

    def __init__(self, con: duckdb.DuckDBPyConnection, names: list[str], given: dict[str, ds.Dataset]) -> None:
        self._con, self._names, self._given = con, names, given

    def __getitem__(self, name: str) -> pa.Table | ds.Dataset:
        if name not in self._names:
            raise KeyError(name)
        if name in self._given:
            return self._given[name]
        return _typed(self._con, name)

    def __contains__(self, name: object) -> bool:  # not Mapping's, which would read the table
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class AuditDB:
    """An in-memory DuckDB of the projection and what the views derive from it, locked against file access."""

    def __init__(self, tables: dict[str, pa.Table | ds.Dataset], memory_limit: str = MEMORY_LIMIT,
                 built: dict[str, pa.Table | ds.Dataset] | None = None,
                 as_of: int | None = None, holds: Any = None, bodies: pa.Table | None = None) -> None:
        """Loads the projection's tables (Arrow tables, or datasets over a kept projection's files);
        `built` holds the tables of `audit/query/sql/views/` as an earlier load built them from the same
        tables (`built_tables`), read instead of built again; `as_of` (ms) is the time the games'
        status is judged at (`game_status`), by default the competition's latest event; `holds`, what
        must live as long as the database (the open files its datasets read); `bodies` (entry, body),
        the stored bytes of some entries, where `events` comes without its `body` column: `events`
        is then a view that gives those entries' bytes and NULL elsewhere (an incremental audit's,
        which reads only the bytes its checks read and never the whole of `events`, issue 32.1)."""
        if bodies is not None and "body" in tables["events"].schema.names:
            bodies = None  # `events` has every entry's bytes already
        self._holds, self.bodies, self._events = holds, bodies, tables["events"]
        self._given_built: dict[str, ds.Dataset] = {}
        self._con = scratch_connection(memory_limit)
        for name, table in tables.items():
            register(self._con, _BODILESS if name == "events" and bodies is not None else name, _few_chunks(table))
        if bodies is not None:
            register(self._con, _BODIES, bodies)
            # A scalar subquery, not a LEFT JOIN: DuckDB estimates a dataset at a row or so and would
            # build the join's hash table over every event (850 MB of a 4.4 M-entry --since); the
            # subquery's single join always builds over the bodies and streams `events` past them.
            self._con.execute(f"CREATE VIEW events AS SELECT e.*, (SELECT b.body FROM {_BODIES} b WHERE b.entry = e.entry) AS body "
                              f"FROM {_BODILESS} e")
        for name, words in word_tables().items():  # the checks' messages name terminations in words
            register(self._con, name, words)
        self._con.execute("CREATE TABLE as_of (ts BIGINT)")
        if as_of is not None:
            if built is not None:
                raise AuditError("a status as of a given time is built afresh, not read from a kept projection")
            self._con.execute("INSERT INTO as_of VALUES (?)", [as_of])
        shares: dict[str, ds.Dataset] = {}
        # Given some per-stream tables, the others are built on them by their SQL; a season's are built in shares.
        in_shares = (built is None or not any(name in built for name in PER_STREAM)) and count_rows(self._events) > AT_ONCE_EVENTS
        for view in VIEWS.values():
            if built is not None and view.kind == "table" and view.name in built:  # the others are built here
                self._load_built(view.name, built[view.name])
            elif view.name in PER_STREAM and in_shares:
                shares = shares or self._in_shares()
                self._load_built(view.name, shares[view.name])
            else:
                self._con.execute(view.sql)
        self._con.execute("SET enable_external_access = false")
        self._con.execute("SET lock_configuration = true")

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Runs a named query of `audit/query/sql/` with its parameters (those it does not take are
        ignored, those it takes and are not given are NULL) and returns the rows as dicts.

        :raises AuditError: when the query is unknown or fails.
        """
        columns, rows = self._execute(_named(name), params)
        return [dict(zip(columns, row)) for row in rows]

    def per_group(self, name: str, keys: tuple[str, ...], check: Callable[[list[dict[str, Any]]], list[Any]], **params: Any) -> Iterator[Any]:
        """Runs a named query (with its parameters, as `run`) and `check` on each group of its rows with
        the same `keys` (NULL as ''), in the keys' order; yields what each call returns (Spark runs the
        groups on its executors). The query gives its rows in that order (`deal_events` does): they
        are read a batch at a time and each group is checked as it ends, so a season's rows are never
        Python objects all at once (its Paohuzi deals' bodies, 650 MB of a 22 M-entry audit, issue 32).
        `check` does not query this database: its rows are still being read.

        :raises AuditError: when the query fails or gives a group after a later one.
        """
        last: tuple[Any, ...] | None = None
        for key, group in itertools.groupby(self._rows(_named(name), params), lambda row: tuple("" if row[k] is None else row[k] for k in keys)):
            if last is not None and key < last:
                raise AuditError(f"查询 {name} 的行未按 {'、'.join(keys)} 排序 / query {name}: its rows are not in the order of {', '.join(keys)}")
            last = key
            yield from check(list(group))

    def _rows(self, query: NamedQuery, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Yields a named query's rows as dicts, a batch at a time."""
        with self._failing(query):
            cursor = self._cursor(query, params)
            columns = [d[0] for d in cursor.description or []]
            while batch := cursor.fetchmany(_BATCH_ROWS):
                yield from (dict(zip(columns, row)) for row in batch)

    def run_named(self, name: str, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a named query of `audit/query/sql/` for a user, with the parameters given (the others
        NULL, meaning all): a query of one tournament run without `tournament` runs for each in
        log order, its rows led by their tournament.

        :raises AuditError: when the query is unknown, a parameter is not one of its own, the
            tournament named is not in the ledger, or it fails.
        """
        query = check_call(name, params)
        if "tournament" not in query.params:
            return self._execute(query, params)
        known = [t for (t,) in self._con.execute("SELECT tournament FROM tournaments ORDER BY entry").fetchall()]
        if params.get("tournament") is not None:
            if params["tournament"] not in known:
                raise AuditError(f"no tournament {params['tournament']!r} in the ledger (known: {', '.join(known) or 'none'})")
            return self._execute(query, params)
        if _ALL_TOURNAMENTS.search(query.sql):
            return self._execute(query, params)
        return self._each_tournament(query, params, known)

    def _each_tournament(self, query: NamedQuery, params: dict[str, Any], known: list[str]) -> tuple[list[str], list[tuple[Any, ...]]]:
        columns, rows = self._execute(query, params) if not known else ([], [])
        for tournament in known:
            columns, found = self._execute(query, {**params, "tournament": tournament})
            rows += found if "tournament" in columns else [(tournament, *row) for row in found]
        return (columns if "tournament" in columns else ["tournament", *columns]), rows

    def _execute(self, query: NamedQuery, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self._failing(query):
            cursor = self._cursor(query, params)
            return [d[0] for d in cursor.description or []], cursor.fetchall()

    def _cursor(self, query: NamedQuery, params: dict[str, Any]) -> duckdb.DuckDBPyConnection:
        """Starts a named query with its parameters (those it does not take ignored, the others NULL)."""
        values = {p: params.get(p) for p in query.params}
        return self._con.execute(query.sql, values) if values else self._con.execute(query.sql)

    @staticmethod
    @contextmanager
    def _failing(query: NamedQuery) -> Iterator[None]:
        """Turns DuckDB's error in a named query into the `AuditError` that names it."""
        try:
            yield
        except duckdb.Error as exc:
            raise AuditError(f"query {query.name}: {exc}") from None

    def derived_tables(self) -> dict[str, pa.Table]:
        """Returns every table and view of `audit/query/sql/views/` (not the macros) as computed from the projection."""
        return self._relations(("view", "table"))

    def each_derived(self) -> Iterator[tuple[str, pa.RecordBatchReader]]:
        """Yields every table and view of `audit/query/sql/views/` (not the macros) one at a time, as a
        reader of its batches computed as they are read (an export writes them as they come: issue 32.1)."""
        for view in VIEWS.values():
            if view.kind in ("view", "table"):
                yield view.name, self._con.sql(f'SELECT * FROM "{view.name}"').to_arrow_reader(_BATCH_ROWS)

    def built_tables(self) -> Mapping[str, pa.Table | ds.Dataset]:
        """Returns the tables of `audit/query/sql/views/` built at load (what `built` takes), each read
        from DuckDB when it is asked for (keeping them holds one at a time, issue 32.1), with its
        columns' DuckDB types in its schema's metadata: Arrow has no HUGEINT, say, and a sum read
        back as DECIMAL(38,0) would print and compare otherwise. A table the database scans from
        files (kept, or built in shares and spilled) is the dataset over them, not read out whole."""
        return _Built(self._con, [view.name for view in VIEWS.values() if view.kind == "table"], self._given_built)

    def _in_shares(self) -> dict[str, ds.Dataset]:
        """Builds the per-stream tables (`PER_STREAM`) a share of the streams at a time: `events` is
        read once and its rows written to a spill file per share (streams in name order, about
        `SHARE_EVENTS` events a share), then each share's tables are built (`per_stream_rows`) and
        added to the tables' own spill files, which the database scans where they lie."""
        counts = self._con.sql("SELECT stream, count(*) AS n FROM events GROUP BY stream ORDER BY stream").to_arrow_table()
        streams, share = counts["stream"].combine_chunks(), _shares(counts["n"].to_pylist())
        schema, events = self._event_batches()
        of_stream, looked = pa.array(share, pa.int32()), list[pa.Array]()
        with ExitStack() as stack:
            spills = [stack.enter_context(Spill(schema)) for _ in range(max(share, default=0) + 1)]
            for batch in events:
                of = _share_of(batch.column("stream"), streams, of_stream, looked)
                batch = batch.cast(schema)
                for i in pc.unique(of).to_pylist():
                    spills[i].write_batches([batch.filter(pc.equal(of, i))])
        with ExitStack() as stack:
            out: dict[str, Spill] = {}
            for spill in spills:
                for name, rows in per_stream_rows(ds.dataset(spill.file[0], format="ipc")).items():
                    if name not in out:
                        out[name] = stack.enter_context(Spill(rows.schema))
                    out[name].write(rows.cast(out[name].schema))
        self._spills = list(out.values())  # their open files: the datasets read them while the database lives (the shares' go now)
        return {name: ds.dataset(spill.file[0], format="ipc", schema=spill.schema) for name, spill in out.items()}

    def _event_batches(self) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
        """Returns `events`' columns (dictionary-coded ones decoded) and its batches (`kept_read.batches`:
        Arrow's own scan of a season's, DuckDB's, held hundreds of MB ahead), or, where DuckDB joins
        its bodies, as DuckDB gives it."""
        if self.bodies is not None:
            reader = self._con.sql("SELECT * FROM events").to_arrow_reader(_BATCH_ROWS)
            return reader.schema, iter(reader)
        plain = pa.schema([pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type) for f in self._events.schema])
        return plain, batches(self._events)

    def _load_built(self, name: str, table: pa.Table | ds.Dataset) -> None:
        """Creates a table of `audit/query/sql/views/` from its rows as `built_tables` gave them, with its own types."""
        types = json.loads((table.schema.metadata or {})[_TYPES.encode()])
        columns = ", ".join(f'CAST("{column}" AS {kind}) AS "{column}"' for column, kind in types)
        if isinstance(table, ds.Dataset):  # a kept table is scanned from its files, like `events`: not copied (issue 32.1)
            register(self._con, f"_built_{name}", table)
            self._given_built[name] = table
            self._con.execute(f'CREATE VIEW "{name}" AS SELECT {columns} FROM "_built_{name}"')
            return
        register(self._con, "_built", table)
        self._con.execute(f'CREATE TABLE "{name}" AS SELECT {columns} FROM _built')
        self._con.unregister("_built")

    def _relations(self, kinds: tuple[str, ...]) -> dict[str, pa.Table]:
        return {view.name: self._con.sql(f'SELECT * FROM "{view.name}"').to_arrow_table() for view in VIEWS.values() if view.kind in kinds}

    def describe(self, name: str) -> list[tuple[str, str]]:
        """Returns the columns of a table, view or table macro (called with NULL arguments) and their types.

        :raises AuditError: when there is no such relation.
        """
        macro = VIEWS.get(name)
        target = f"{name}(NULL, NULL)" if macro is not None and macro.kind == "macro" else f'"{name}"'
        try:
            return [(row[0], row[1]) for row in self._con.execute(f"DESCRIBE SELECT * FROM {target}").fetchall()]
        except duckdb.Error:
            raise AuditError(f"no table or view named {name!r}") from None

    def query(self, sql: str, timeout: float = 60.0) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a user's read-only SQL (SELECT, WITH, SHOW, DESCRIBE, EXPLAIN of those …) and returns
        columns and rows, stopping it after `timeout` seconds.

        :raises AuditError: when the SQL would change anything, runs too long, or fails.
        """
        self._check_read_only(sql)
        timer = threading.Timer(timeout, self._con.interrupt)
        timer.start()
        try:
            cursor = self._con.execute(sql)
            return [d[0] for d in cursor.description or []], cursor.fetchall()
        except duckdb.InterruptException:
            raise AuditError(f"query stopped after {timeout:g} s (--timeout)") from None
        except duckdb.Error as exc:
            raise AuditError(f"SQL error: {exc}") from None
        finally:
            timer.cancel()

    def _check_read_only(self, sql: str) -> None:
        """Refuses any statement that is not read-only, EXPLAIN ANALYZE included (it runs what it explains)."""
        try:
            statements = self._con.extract_statements(sql)
        except (duckdb.Error, ValueError) as exc:
            raise AuditError(f"SQL error or unsupported statement: {exc}") from None
        for statement in statements:
            if statement.type not in _READ_ONLY:
                raise AuditError(f"only read-only queries are allowed, not {statement.type.name}")
            if statement.type == duckdb.StatementType.EXPLAIN:
                explained = _EXPLAIN.sub("", statement.query, count=1)
                if explained == statement.query:
                    raise AuditError("only EXPLAIN of a SELECT is allowed")
                self._check_read_only(explained)


def check_call(name: str, params: dict[str, Any]) -> NamedQuery:
    """Returns the named query a user called, once its parameters are all its own.

    :raises AuditError: when the query is unknown or a parameter is not one of its own.
    """
    query = _named(name)
    unknown = sorted(set(params) - set(query.params))
    if unknown:
        raise AuditError(f"query {name} has no parameter {', '.join(unknown)}; it takes {', '.join(query.params) or 'no parameters'}")
    return query


def _named(name: str) -> NamedQuery:
    """Returns a named query of `audit/query/sql/`.

    :raises AuditError: naming the known ones when there is none of that name.
    """
    if name not in QUERIES:
        raise AuditError(f"no query named {name!r}; known: {', '.join(sorted(QUERIES))}")
    return QUERIES[name]


_ALL_TOURNAMENTS = re.compile(r"\$tournament IS NULL", re.IGNORECASE)
"""How a named query says it reads every tournament itself when `tournament` is NULL."""
_READ_ONLY = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.PRAGMA}
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(ANALY[SZ]E\s+)?", re.IGNORECASE)
_TYPES = "matchledger.duckdb_types"
"""The schema metadata key of a built table's DuckDB column types (see `AuditDB.built_tables`)."""
_BODILESS, _BODIES = "_events_bodiless", "_event_bodies"
"""Where `events` comes without `body`, the names of it and of the bodies given (`AuditDB`'s `bodies`)."""
_BATCH_ROWS = 1 << 16
"""Rows per batch of a relation read batch by batch (`each_derived`)."""
_CHUNKS, _CHUNK_ROWS = 1024, 4096
"""Above this many chunks, of fewer rows than this on average, a table is merged before DuckDB reads
it: DuckDB pays per chunk on every scan, and a projection table can arrive in one chunk per replayed
game. A table read from its kept files comes in batches of thousands of rows: merging the season's
`events` with its bodies copied them all again (12 s and 1 GB of `audit --since`, issue 32.1)."""


def word_tables() -> dict[str, pa.Table]:
    """Returns the tables of words (name, zh, en) the checks' messages read: `termination_words`,
    replay/values.py's one table of how a game ends, `signature_words`, why a ruling or decision
    is ignored, and `decision_words`, a committee's decisions (audit/query/arbitration.py)."""
    from audit.query.arbitration import IGNORED
    from replay.values import TERMINATION_WORDS  # here: `matchledger --help` loads no engine module
    from schemas.arbitration import DECISIONS

    def table(words: dict[str, tuple[str, str]]) -> pa.Table:
        return pa.table({"name": list(words), "zh": [w[0] for w in words.values()], "en": [w[1] for w in words.values()]})

    return {"termination_words": table(TERMINATION_WORDS), "signature_words": table(IGNORED), "decision_words": table(DECISIONS)}


def scratch_connection(memory_limit: str = MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """Returns a new in-process DuckDB connection for the audit's own work, set up alike: the one
    way the audit's database, the per-stream tables and an incremental audit's comparisons open one."""
    spill = tempfile.mkdtemp(prefix="matchledger-duckdb-")
    con = duckdb.connect(":memory:", config={"memory_limit": memory_limit, "max_temp_directory_size": SPILL_LIMIT,
                                             "temp_directory": str(Path(spill) / "spill")})  # DuckDB's own, made and removed by it
    weakref.finalize(con, shutil.rmtree, spill, True)  # what is left of it when the connection goes
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar, on stdout, broke the JSON of a long query
    return con


def register(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table | ds.Dataset) -> None:
    """Gives a connection a table by name: a kept one's files as DuckDB scans them, at most a batch
    ahead (`kept_read.paced`). The one way a table is registered with the audit's connections."""
    con.register(name, paced(table))


def per_stream_rows(events: pa.Table | ds.Dataset) -> dict[str, pa.Table]:
    """Returns the per-stream tables (`PER_STREAM`) built over some events, all of each of their
    streams, with their columns' DuckDB types in their schemas' metadata (as `built_tables` gives
    them): the one way they are built, for a database (a share of the streams at a time) and for
    an extension (the streams it touched)."""
    con = scratch_connection()
    try:
        register(con, "events", events)
        for name in PER_STREAM:
            con.execute(VIEWS[name].sql)
        return {name: _typed(con, name) for name in PER_STREAM}
    finally:
        con.close()


def _typed(con: duckdb.DuckDBPyConnection, name: str) -> pa.Table:
    """Returns a table of a connection with its columns' DuckDB types in its schema's metadata."""
    table = con.sql(f'SELECT * FROM "{name}"').to_arrow_table()
    types = con.execute(f'DESCRIBE "{name}"').fetchall()
    return table.replace_schema_metadata({_TYPES: json.dumps([[row[0], row[1]] for row in types])})


def _share_of(column: pa.Array, streams: pa.Array, share: pa.Array, last: list[pa.Array]) -> pa.Array:
    """Returns the share of each row's stream (`share`: of each of `streams`); a dictionary-coded
    column's streams are looked up once for all the batches with the same dictionary (a kept file's
    every batch: `last` holds the last dictionary and its shares), not once a batch."""
    if isinstance(column, pa.DictionaryArray):
        if not last or not column.dictionary.equals(last[0]):
            last[:] = [column.dictionary, _share_of(column.dictionary, streams, share, [])]
        return pc.fill_null(pc.take(last[1], column.indices), 0)
    return pc.fill_null(pc.take(share, pc.index_in(column, value_set=streams.cast(column.type))), 0)


def _shares(counts: list[int]) -> list[int]:
    """Returns the share each stream (with so many events, in order) is built in: consecutive streams
    together, a share closed once it holds `SHARE_EVENTS` events or more."""
    share, held, out = 0, 0, []
    for n in counts:
        if held >= SHARE_EVENTS:
            share, held = share + 1, 0
        out.append(share)
        held += n
    return out


def _few_chunks(table: pa.Table | ds.Dataset) -> pa.Table | ds.Dataset:
    if isinstance(table, ds.Dataset):  # its files' batches are of a bounded size already
        return table
    chunks = table.column(0).num_chunks if table.num_columns else 0
    return table.combine_chunks() if chunks > _CHUNKS and table.num_rows < _CHUNK_ROWS * chunks else table
