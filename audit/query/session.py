"""An audit session: the projection of a ledger loaded into DuckDB, with the replays kept."""

from __future__ import annotations

import gc
import multiprocessing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

import msgspec
import pyarrow.compute as pc

from audit.query.db import AuditDB
from audit.query.projection import Projection, project_ledger
from audit.query.projection_cache import projection_of
from ledger import Checkpoint, LogReader, VerifyReport, verify
from ledger.commitments import check_heads
from ledger.index import check_index
from ledger.state import check_state
from schemas import decode_stored_array


class Database(Protocol):
    """What the checks and commands ask of a session's database: DuckDB's (audit/query/db.py) or Spark's (audit/spark/db.py)."""

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]: ...

    def run_named(self, name: str, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]: ...

    def per_group(self, name: str, keys: tuple[str, ...], check: Callable[[list[dict[str, Any]]], list[Any]], **params: Any) -> Iterator[Any]: ...

    def query(self, sql: str, timeout: float = 60.0) -> tuple[list[str], list[tuple[Any, ...]]]: ...


@dataclass
class Session:
    """The projection of one ledger and the database built from it."""

    projection: Projection
    db: Database
    origin: str = "built"
    """How the projection was had: built from the log, or reused as kept beside it (audit.query.projection_cache)."""
    signed: Checkpoint | None = None
    """The signed checkpoint the entries read were checked against (readers say the size they verified to)."""

    def game_counts(self, tournament: str | None = None) -> Counter[tuple[str, str, str]]:
        """Counts the games (of one tournament, or all) by tournament ('' for none), game and profile,
        grouped by Arrow: a season's 100,000 profiles are not made Python strings (116 MB of `audit --since`)."""
        keys = ["tournament", "game", "profile"]
        games = self.projection.table("games").select(keys)
        if tournament is not None:
            games = games.filter(pc.equal(games["tournament"], tournament))
        grouped = games.group_by(keys, use_threads=False).aggregate([([], "count_all")])
        return Counter({(t or "", g, p): n for t, g, p, n in zip(*(grouped[c].to_pylist() for c in [*keys, "count_all"]))})

    def games_of(self, streams: Iterable[str | None]) -> dict[str, dict[str, Any]]:
        """Returns the game and tournament of each of `streams` that is a game's."""
        wanted = set(streams)
        return {g["stream"]: {"game": g["game"], "tournament": g["tournament"]} for g in self._games("stream", "game", "tournament")
                if g["stream"] in wanted}

    def _games(self, *columns: str) -> list[dict[str, Any]]:
        """Returns some columns of the games table as rows (a season's games are 100,000 rows: the
        other columns are not made Python objects)."""
        return self.projection.table("games").select(list(columns)).to_pylist()

    def tournament_game(self, tournament: str) -> tuple[str, str]:
        """Returns a tournament's game and format.

        :raises ValueError: when the ledger holds no such tournament.
        """
        for row in self.projection.tournaments:
            if row["tournament"] == tournament:
                return row["game"], row["format"]
        known = ", ".join(r["tournament"] for r in self.projection.tournaments) or "none"
        raise ValueError(f"no tournament {tournament!r} in the ledger (known: {known})")


def open_session(root: Path, progress: Callable[[int], None] | None = None, kept: bool = False, body: bool = True) -> Session:
    """Replays a ledger and loads its projection into an in-memory DuckDB. With `kept`, the
    projection kept beside the log is used, extended by the entries signed since, instead of
    replaying it, and a projection built is kept (what the read-only commands ask: standings,
    query, appeals); without `body` as well, the database's `events` has no `body` column and the
    kept entries are not read again (the projection reads them when its tables are asked for)."""
    if kept:
        return Session(*projection_of(root, None, progress, body=body))
    projection = project_ledger(root, progress)
    return Session(projection, AuditDB(projection.sources(), holds=projection.arrow))


def open_verified_session(root: Path, progress: Callable[[int], None] | None = None) -> tuple[VerifyReport, Session | None]:
    """Verifies a ledger and opens its session at the same time: the verification runs in a forked
    process beside the replay, so the two share the cores. A damaged log yields no session (and
    whatever the damage made the replay raise is the damage's, reported by the verification)."""
    report = _verify_in_background(root)
    try:
        projection = project_ledger(root, progress)
        # The index check (10,001 stream files on the 10,000-game event) runs while DuckDB loads:
        # both wait mostly outside the interpreter, on files and in DuckDB's and Arrow's threads.
        with ThreadPoolExecutor(max_workers=1) as pool:
            indexed = pool.submit(_index_checked, root, report, projection)
            session = Session(projection, AuditDB(projection.sources(), holds=projection.arrow))
    except msgspec.ValidationError:
        if not report().ok:
            return report(), None
        index, error = _first_unreadable(root)
        return replace(report(), ok=False, index=index, error=f"the stored event cannot be read under this version's contract "
                       f"({error}); it is evidence as recorded, but nothing derived from it can be certified"), None
    except Exception:
        if report().ok:
            raise
        return report(), None
    if not report().ok:
        return report(), None
    return indexed.result(), session


def _index_checked(root: Path, report: Callable[[], VerifyReport], projection: Projection) -> VerifyReport:
    """Waits for the verification and, when it passed, checks the stream index beside it."""
    verified = report()
    return _with_index_checked(root, verified, projection) if verified.ok else verified


def _first_unreadable(root: Path) -> tuple[int | None, str]:
    """Finds the first entry the contract no longer accepts (a log recorded before a bound existed)."""
    log = LogReader(root).packed()
    for i in range(len(log)):
        try:
            decode_stored_array(b"[" + bytes(log.data[log.ends[i]:log.ends[i + 1]]) + b"]")
        except msgspec.ValidationError as exc:
            return i, str(exc).replace("$[0]", "$")
    return None, "an entry the contract refuses"


def _with_index_checked(root: Path, report: VerifyReport, projection: Projection) -> VerifyReport:
    """Checks the stream index against the projection's `events` (row i is entry i), which has every
    entry's stream decoded already: the verification beside it skips that part."""
    streams = projection.column("events", "stream").combine_chunks()
    problem = check_index(root, streams, report.signed)
    if problem is not None:
        return replace(report, ok=False, error=f"stream index: {problem}")
    heads: dict[str, tuple[int, int]] = {}
    problem = check_heads(streams, report.commitments, heads) or check_state(heads, report.state, report.signed)
    return report if problem is None else replace(report, ok=False, error=problem)


def _verify_in_background(root: Path) -> Callable[[], VerifyReport]:
    """Starts verifying a ledger in a forked process; returns a function that waits for the report.
    Without a fork the verification runs at once, in this process."""
    if "fork" not in multiprocessing.get_all_start_methods():
        done = verify(root, index=False)
        return lambda: done
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send_verification, args=(root, sender), daemon=True)
    child.start()
    sender.close()
    reports: list[VerifyReport] = []

    def wait() -> VerifyReport:
        if not reports:
            try:
                reports.append(receiver.recv())
            except EOFError:  # the child died without a word: verify here instead
                reports.append(verify(root, index=False))
            child.join()
            receiver.close()
        return reports[0]

    return wait


def _send_verification(root: Path, sender: Connection) -> None:
    # What the child inherited from the parent is left out of its garbage collections: the child
    # collected in a full suite segfaulted now and then while traversing inherited objects (the
    # parent has native threads at the fork: DuckDB's, the session's pools); verifying makes only
    # its own objects, and the child is gone once it has sent its report.
    gc.freeze()
    sender.send(verify(root, index=False))
    sender.close()


def movement_ranking(root: Path, tournament: str, through_round: int) -> list[str]:
    """Returns the players in movement order after a round (cumulative R, tie-breaks, player
    number), or for a Swiss event in the order its pairing takes them."""
    session = open_session(root)
    _, fmt = session.tournament_game(tournament)
    if fmt == "swiss":
        return [r["player"] for r in session.db.run("pairing_order", tournament=tournament, through=through_round)]
    return [r["player"] for r in session.db.run("ranking_through", tournament=tournament, through=through_round)]
