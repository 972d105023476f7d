"""The kept projection extended, not rebuilt (issue 32 goal 2): after more entries are signed, only
they are read and hashed, the games they touch folded again, and the projection answers as one
built from scratch. Threats: a kept prefix changed under the new checkpoint, a forged state."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import audit.query.db as db
import audit.query.projection_cache as cache
from audit.query.kept_read import read
from audit.query.session import open_session
from audit.query.standings import standings
from ledger import LogReader, init, record
from ledger.reader import StoredEntries
from schemas import decode_stored

SEED = int(os.environ.get("MATCHLEDGER_SEASON_SEED", random.randrange(1 << 30)))
CUTS = int(os.environ.get("MATCHLEDGER_SEASON_CUTS", "3"))
"""Random cut points per test run (the seed is printed: set MATCHLEDGER_SEASON_SEED to replay one)."""


def _stored(root: Path) -> list[bytes]:
    log = LogReader(root).packed()
    return [bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(len(log))]


def _recorded(root: Path, lines: list[bytes]) -> None:
    """Records entries as one batch, signed by a checkpoint (the log's own streams as well)."""
    record(root, [line + b"\n" for line in lines], own=True)


def _plain(table: pa.Table) -> list[dict[str, Any]]:
    """A table's rows in a fixed order, dictionaries decoded: what a query sees, whatever the chunking."""
    columns = {name: (col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col)
               for name, col in zip(table.column_names, table.columns)}
    plain = pa.table(columns)
    keys = [(n, "ascending") for n, c in columns.items() if not (pa.types.is_list(c.type) or pa.types.is_large_list(c.type))]
    return plain.take(pc.sort_indices(plain, sort_keys=keys)).to_pylist()


def same_projection(got: Any, want: Any) -> None:
    """Asserts two sessions hold the same projection: every table's rows, the findings in order,
    the tournament events, and every table the database built at load."""
    tables, fresh = got.projection.tables(), want.projection.tables()
    assert tables.keys() == fresh.keys()
    for name in tables:
        assert _plain(tables[name]) == _plain(fresh[name]), name
    assert got.projection.findings == want.projection.findings
    assert got.projection.tournament_events == want.projection.tournament_events
    built, rebuilt = got.db.built_tables(), want.db.built_tables()
    for name in built:
        assert _plain(read(built[name])) == _plain(read(rebuilt[name])), name  # a kept one is its files' dataset


@pytest.fixture(scope="module")
def entries(cup: Any) -> list[bytes]:
    return _stored(cup.root)


def _kinds(entries: list[bytes]) -> list[str]:
    return [e.kind for e in decode_stored(entries)]


def _cuts(entries: list[bytes], rng: random.Random) -> list[int]:
    """Cut points: inside a game, between rounds, before the first ruling (which changes an earlier
    round's result), and random ones."""
    kinds = _kinds(entries)
    inside = kinds.index("game.started") + 5
    between = kinds.index("tournament.round_seated", inside)
    rulings = [i for i, k in enumerate(kinds) if k == "game.ruling"]  # on a game of the last round, then a withdrawal's
    return sorted({inside, between, rulings[0], rulings[-1], *(rng.randrange(1, len(entries)) for _ in range(CUTS))})


def test_extended_equals_built_at_random_cuts(entries: list[bytes], tmp_path: Path) -> None:
    """Differential (issue 32.2): a projection kept at each cut and extended to the next answers as
    one built from the whole log: tables, findings, tournament events, the database's tables, standings."""
    print(f"MATCHLEDGER_SEASON_SEED={SEED}")
    root = tmp_path / "ledger"
    for cut, session, fresh in _extended_at(entries, _cuts(entries, random.Random(SEED)), root):
        for row in fresh.projection.tournaments:
            assert standings(session, row["tournament"]).rows == standings(fresh, row["tournament"]).rows, cut
    assert open_session(root, kept=True).origin == "reused"


def _extended_at(entries: list[bytes], cuts: list[int], root: Path) -> Iterator[tuple[int, Any, Any]]:
    """Records a log cut by cut into a new ledger at `root`; after each, yields the cut, the session of
    the projection kept before and extended (built at the first), and one built from the whole log,
    having asserted that they hold the same projection."""
    init(root)
    done = 0
    for cut in [*cuts, len(entries)]:
        _recorded(root, entries[done:cut])
        done = cut
        session = open_session(root, kept=True, body=False)
        assert session.origin.startswith("built" if cut == cuts[0] else "extended"), (cut, session.origin)
        fresh = open_session(root)
        same_projection(session, fresh)
        yield cut, session, fresh


def test_one_more_game_reads_and_hashes_only_its_entries(entries: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work proportional to change (issue 32.2): after one more game, standings read and hash that
    game's entries only (no whole-log read, no replay of the season) and answer as a full build."""
    kinds = _kinds(entries)
    last_start = max(i for i, k in enumerate(kinds) if k == "game.started")
    root = tmp_path / "ledger"
    init(root)
    _recorded(root, entries[:last_start])
    open_session(root, kept=True, body=False)
    end = kinds.index("tournament.round_closed", last_start)  # the game's last entry is the one before
    _recorded(root, entries[last_start:end])
    new = end - last_start
    counted = {"read": 0, "hashed": 0, "whole": 0, "replayed": 0}
    reading, hashing, replaying = cache._entries, cache.leaf_hashes, cache.replay_game

    def read(*args: Any) -> Any:
        for item in reading(*args):
            counted["read"] += 1
            yield item

    def hashed(payloads: Any, *args: Any) -> bytes:
        counted["hashed"] += len(payloads)
        return hashing(payloads, *args)

    packed = LogReader.packed

    def whole(root: Path) -> Any:
        counted["whole"] += 1
        return packed(LogReader(root))

    def replayed(events: Any, **options: Any) -> Any:
        counted["replayed"] += 1
        return replaying(events, **options)

    monkeypatch.setattr(cache, "_entries", read)
    monkeypatch.setattr(cache, "leaf_hashes", hashed)
    monkeypatch.setattr(cache, "_whole_log", whole)
    monkeypatch.setattr(cache, "replay_game", replayed)
    monkeypatch.setattr(LogReader, "packed", lambda *_: pytest.fail("the whole log was read"))
    session = open_session(root, kept=True, body=False)
    assert session.origin == f"extended ({new} entries signed since checkpoint {last_start})"
    assert counted == {"read": new, "hashed": new, "whole": 0, "replayed": 1}
    T = session.projection.tournaments[0]["tournament"]  # noqa: N806
    got = standings(session, T).rows
    assert counted["whole"] == 0
    monkeypatch.undo()
    assert got == standings(open_session(root), T).rows


def test_a_changed_prefix_is_built_again(entries: list[bytes], tmp_path: Path) -> None:
    """Threat: a kept state, signed by the log's key, of a log whose signed prefix is not the one
    signed now (another log under the same key): the new entries do not extend its frontier to the
    signed root, and the projection is built from scratch, saying why; it answers as a full build."""
    from audit.simulator.simulate import simulate_games

    root, other = tmp_path / "ledger", tmp_path / "other"
    init(root)
    shutil.copytree(root, other)  # the same key, an empty log
    half = len(entries) // 2
    _recorded(root, entries[:half])
    open_session(root, kept=True, body=False)
    for n in range(50):  # another log, as long as the kept one at least
        if len(LogReader(other).packed()) > half:
            break
        simulate_games(other, "checkers", 2, SEED + n)
    shutil.copytree(root / "derived" / cache.NAME, other / "derived" / cache.NAME)
    again = open_session(other, kept=True, body=False)
    assert again.origin.startswith(f"built (账本已签名部分与所保存的不一致 / the log signed at {len(LogReader(other).packed())} "
                                   f"does not extend checkpoint {half}"), again.origin
    same_projection(again, open_session(other))


def test_query_reads_body_only_when_it_names_it(entries: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`query` on an extended projection: SQL without `body` reads no kept entry again; SQL with it
    reads the whole log, checked against the signed root, and answers as a fresh build."""
    import json

    from typer.testing import CliRunner

    from audit.cli import app

    root = tmp_path / "ledger"
    init(root)
    _recorded(root, entries[:len(entries) // 2])
    runner = CliRunner()
    plain = ["query", "--ledger", str(root), "--json", "-q", "SELECT count(*) AS n FROM steps"]
    with_body = ["query", "--ledger", str(root), "--json", "-q",
                 "SELECT count(*) AS n FROM events WHERE body LIKE '%\"kind\":\"game.ended\"%'"]
    assert runner.invoke(app, plain).exit_code == 0
    _recorded(root, entries[len(entries) // 2:])
    whole = {"n": 0}
    reading = cache._whole_log

    def counted(r: Path) -> StoredEntries:
        whole["n"] += 1
        return reading(r)

    monkeypatch.setattr(cache, "_whole_log", counted)
    got = runner.invoke(app, plain)
    assert got.exit_code == 0, got.output
    assert whole["n"] == 0
    assert json.loads(got.stdout)["rows"] == [[len(open_session(root).projection.tables()["steps"])]]
    ended = runner.invoke(app, with_body)
    assert ended.exit_code == 0, ended.output
    assert whole["n"] == 1
    assert json.loads(ended.stdout)["rows"] == [[_kinds(entries).count("game.ended")]]


@pytest.mark.parametrize("game", ["junqi", "paohuzi"])
def test_a_game_under_way_keeps_its_kept_steps(game: str, tmp_path: Path) -> None:
    """Differential (issue 32.2), the other two games: an extension that adds entries to games under
    way keeps their kept steps and adds only the new entries' (a fold never reads ahead), and the
    projection equals one built from the whole log, cut inside games at random points."""
    from tests.ledger_support import cli

    source = tmp_path / "source"
    done = cli("simulate", game, "--tournament", "--players", {"junqi": "8", "paohuzi": "6"}[game], "--rounds", "2",
               "--seed", str(SEED % 1000), "--ledger", str(source), "--json")
    assert done.exit_code == 0, done.output
    stored = _stored(source)
    kinds = _kinds(stored)
    rng = random.Random(SEED)
    print(f"MATCHLEDGER_SEASON_SEED={SEED}")
    starts = [i for i, k in enumerate(kinds) if k == "game.started"]
    cuts = sorted({starts[0] + 3, starts[-1] + 7, *(rng.randrange(starts[0] + 1, len(stored)) for _ in range(CUTS + 2))})
    assert len(list(_extended_at(stored, cuts, tmp_path / "ledger"))) == len(cuts) + 1


def test_the_per_stream_tables_built_in_shares_are_those_built_at_once(cup: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tournament.md §3 (move times re-derived from timing events, each game's alone): `claims`,
    `timings` and `seat_times` built a share of the streams at a time (every stream's events in one
    share, a season's window never over every event, issue 32) hold the rows built over every event at once."""
    session = open_session(cup.root)
    events = session.projection.tables()["events"]
    once = {name: _plain(table) for name, table in db.per_stream_rows(events).items()}
    assert once["timings"] and once["claims"], "the cup has move-time and result claims to build"
    counts = pc.value_counts(events["stream"].combine_chunks()).to_pylist()
    monkeypatch.setattr(db, "SHARE_EVENTS", 40)
    monkeypatch.setattr(db, "AT_ONCE_EVENTS", 40)
    shares = db._shares([c["counts"] for c in sorted(counts, key=lambda c: str(c["values"]))])
    assert max(shares) > 3, shares  # many shares, streams of the same game never split
    shared = db.AuditDB(session.projection.sources(), holds=session.projection.arrow)
    for name in db.PER_STREAM:
        assert _plain(read(shared.built_tables()[name])) == once[name], name
