"""The check queries an incremental audit runs over the games it touched only (issue 32.4: cost
what changed). Each row of these queries rests on one game's rows alone (its steps, events, seats,
timings, claims, engine findings, its game row and its tournament's rules) and is led by its
stream, in stream order; so the rows of the games not touched are the earlier audit's, kept in its
state (`ROWS`), and the touched games' rows are found again over their rows only. A game is touched
when a new entry is on its stream or its row in `games`, `seats` or `findings` changed (a ruling
recorded elsewhere changes a result). The differential test at random cuts holds the verdict equal
to a full audit's (tests/test_audit_since.py)."""

from __future__ import annotations

import heapq
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from audit.query.db import AuditDB, register, scratch_connection
from audit.query.kept_read import rows_where
from audit.query.projection import SCHEMAS, Projection
from audit.query.projection_cache import sources

SCOPED = ("claim_mismatches", "huxi_claims", "junqi_quiet", "junqi_step_limit", "leave_camp", "move_time_gaps",
          "move_time_totals", "points", "timeouts")
"""The per-game check queries (tests/test_audit_since.py checks that each orders by its stream first)."""
FILTERED, FILTERED_BUILT = ("steps", "events", "seats"), ("claims", "timings")
"""The tables (and built tables) cut to the touched games for them: the large per-move ones; the
others are whole, and the rows of the games not touched are dropped from what the queries give."""
COUNTS, PER_GAME_COUNTS = "event_counts", ("steps", "claims", "seats", "timings")
"""The counts of what each check looked at: those of the games' own rows add up (when every touched
game is new, none of its rows was counted before); the seatings are counted whole."""
RECORDED = (*SCOPED, COUNTS)
ROWS = "checks.rows"
"""The state's file of each scoped query's rows over the whole ledger (JSON)."""
COMPARED = ("games", "seats", "findings")

Rows = dict[str, list[dict[str, Any]]]
Touched = tuple[set[str], bool]
"""The touched streams, and whether they are all new games (none has rows in a kept table's files)."""


def recording(db: AuditDB, rows: Rows) -> None:
    """Makes `db` keep in `rows` what each scoped query gives over the whole ledger (the next audit's earlier rows)."""
    run = db.run

    def recorded(name: str, **params: Any) -> list[dict[str, Any]]:
        got = run(name, **params)
        if name in RECORDED and params.get("tournament") is None:
            rows[name] = got
        return got

    db.run = recorded  # type: ignore[method-assign]


def scoping(db: AuditDB, projection: Projection, built: dict[str, Any], touched: Touched, earlier: Rows, rows: Rows) -> None:
    """Makes `db` answer each scoped query from the earlier rows of the games not touched and a run
    over the touched games' rows only, keeping what it gives in `rows`; a query the earlier audit
    did not run over the whole ledger (`audit --tournament`) runs whole."""
    streams, new_only = touched
    run = db.run
    small: list[AuditDB] = []

    def touched_db() -> AuditDB:
        if not small:
            small.append(_touched_db(projection, built, sorted(streams), new_only, db.bodies))
        return small[0]

    def scoped(name: str, **params: Any) -> list[dict[str, Any]]:
        whole = name not in earlier or params.get("tournament") is not None or (name == COUNTS and not new_only)
        if name not in RECORDED or whole:
            got = run(name, **params)
        elif name == COUNTS:
            got = [_counts(earlier[name][0], touched_db().run(name, **params)[0] if streams else None)]
        else:
            fresh = of_streams(touched_db().run(name, **params), streams) if streams else []
            got = list(heapq.merge([r for r in earlier[name] if r["stream"] not in streams], fresh, key=lambda r: r["stream"]))
        if name in RECORDED and params.get("tournament") is None:
            rows[name] = got
        return got

    db.run = scoped  # type: ignore[method-assign]


def answering(db: AuditDB, touched: AuditDB, streams: set[str]) -> None:
    """Makes `db` answer each scoped query by a run over `touched`, a database of some games' rows,
    giving the rows of `streams` only; the other queries it runs itself. The live audit's round close
    (audit/live/auditor.py) runs them so: the rows of the games with no entry since the tournament's
    last round close were published then, and are the same now (each rests on its game's rows alone)."""
    run = db.run

    def scoped(name: str, **params: Any) -> list[dict[str, Any]]:
        return of_streams(touched.run(name, **params), streams) if name in SCOPED else run(name, **params)

    db.run = scoped  # type: ignore[method-assign]


def of_streams(rows: list[dict[str, Any]], streams: set[str]) -> list[dict[str, Any]]:
    """Returns the rows of a scoped query that are of some streams, in their order."""
    return [r for r in rows if r["stream"] in streams]


def _counts(before: dict[str, Any], fresh: dict[str, Any] | None) -> dict[str, Any]:
    """Returns the earlier counts with the new games' added (the seatings as counted now)."""
    if fresh is None:
        return before
    return {k: before[k] + fresh[k] if k in PER_GAME_COUNTS else fresh[k] for k in before}


def touched_games(before: Projection, after: Projection, streams: set[str]) -> Touched:
    """Returns the streams with a new entry, the games whose rows in `COMPARED` differ between two
    projections and the games of a tournament whose row differs (compared only when a new entry is
    on a stream that is no game's: a tournament's or the arbitration's, whose rulings change
    results), and whether every touched game is new."""
    touched = set(streams)
    earlier = set(before.column("games", "stream").to_pylist())
    games = after.column("games", "stream").to_pylist()
    if not streams <= set(games):
        old, new = before.sources(), after.sources()
        for name in COMPARED:
            touched |= _differing(old[name], new[name], name, "stream")
        changed = _differing(old["tournaments"], new["tournaments"], "tournaments", "tournament")
        if changed:  # a game's checks read its tournament's rules
            touched.update(g for g, t in zip(games, after.column("games", "tournament").to_pylist()) if t in changed)
    return touched, not touched & earlier


def _differing(old: pa.Table | ds.Dataset, new: pa.Table | ds.Dataset, name: str, key: str) -> set[str]:
    """Returns the keys whose rows differ between two versions of a table, compared as multisets by
    DuckDB over the tables where they lie (a season's seats and findings are not made Python rows
    for the few a ruling changes, issue 32)."""
    columns = ", ".join(f'"{c}"' for c in SCHEMAS[name].names)
    con = scratch_connection()
    try:
        register(con, "old", old)
        register(con, "new", new)
        rows = con.execute(f'SELECT DISTINCT "{key}" FROM ((SELECT {columns} FROM old EXCEPT ALL SELECT {columns} FROM new) '
                           f'UNION ALL (SELECT {columns} FROM new EXCEPT ALL SELECT {columns} FROM old)) WHERE "{key}" IS NOT NULL').fetchall()
    finally:
        con.close()
    return {row[0] for row in rows}


def _touched_db(projection: Projection, built: dict[str, Any], touched: list[str], new_only: bool,
                bodies: pa.Table | None) -> AuditDB:
    """Returns a database of the touched games' rows of the large tables, the others whole; the
    rows of new games only are in the rows an extension added after a kept table's files (`tails`);
    `bodies`, the stored bytes its `events` gives, where they are not in its column (`AuditDB`)."""
    tails = getattr(projection.arrow, "tails", {}) if new_only else {}
    tables = {name: rows_where(tails.get(name, t), "stream", touched) if name in FILTERED else t for name, t in sources(projection.arrow).items()}
    cut = {name: rows_where(t, "stream", touched) for name, t in sources(built).items() if name in FILTERED_BUILT}
    return AuditDB(tables, built=cut, bodies=bodies)
