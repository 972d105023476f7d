"""The projection (DESIGN.md audit/): every entry of the log lands in `events` exactly once, in log
order and with its stored bytes as `body`; games are replayed the same in forked workers as in
one process; game events are decoded from the stored bytes when asked for."""

from __future__ import annotations

import itertools
import random
import shutil
from array import array
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import audit.query.projection as projection
from audit.query.projection import Projection, project_ledger
from audit.query.session import movement_ranking, open_verified_session
from audit.simulator.faults import flip_byte
from audit.simulator.simulate import record_events, simulate_games
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import LogReader
from ledger.store import Ledger, init
from ledger.verify import verify
from schemas.common import Resigned, Ruling
from schemas.envelope import Event

SEED = 20261129
LATE = f"sim-junqi-{SEED}-g1"
"""The game that gets a ruling at the end of the log."""


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of every kind of stream: loose games of the three games, a checkers tournament, a
    stray stream that opens with neither game.started nor tournament.opened, and a referee's
    ruling on the first game recorded after all of them."""
    root = tmp_path_factory.mktemp("projection") / "ledger"
    init(root)
    for game in ("junqi", "paohuzi", "checkers"):
        simulate_games(root, game, 3, SEED)
    simulate_tournament(root, TournamentPlan("checkers", players=4, rounds=2, games_per_round=1, seed=SEED), movement_ranking)
    with Ledger.open(root) as log:
        record_events(log, [Resigned(stream="stray", seq=0, ts=1, seat=0)])
        first = next(e for e in LogReader(root).events() if e.stream == LATE)
        last = max(e.seq for e in LogReader(root).events() if e.stream == LATE)
        record_events(log, [Ruling(stream=LATE, seq=last + 1, ts=first.ts + 10**7, corrects=last, text="late ruling")])
        log.checkpoint()
    return root


def _sorted(table: pa.Table) -> pa.Table:
    keys = [c for c in ("entry", "seat", "code") if c in table.column_names]
    return table.sort_by([(k, "ascending") for k in keys])


def _forked(root: Path, monkeypatch: pytest.MonkeyPatch) -> Projection:
    """Projects with two forked workers, tiny tasks so that there are many of each pass."""
    monkeypatch.setattr(projection, "RANGE_ENTRIES", 40)
    monkeypatch.setattr(projection, "CHUNK", 2)
    return project_ledger(root, workers=2)


def test_forked_workers_build_the_same_tables_as_one_process(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = project_ledger(ledger, workers=1)
    forked = _forked(ledger, monkeypatch)
    for name, table in alone.tables().items():
        assert _sorted(forked.tables()[name]).equals(_sorted(table)), name
    assert sorted(map(str, forked.findings)) == sorted(map(str, alone.findings))
    assert [g["stream"] for g in alone.games if g["tournament"]], "the tournament's games are projected"


def test_every_entry_is_an_event_row_with_its_stored_bytes(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = [data.decode() for _, data in LogReader(ledger).entries()]
    events = _forked(ledger, monkeypatch).tables()["events"]
    assert events["entry"].to_pylist() == list(range(len(stored)))
    assert events["body"].to_pylist() == stored
    decoded = list(LogReader(ledger).events())
    assert events.select(["stream", "seq", "kind"]).to_pylist() == [{"stream": e.stream, "seq": e.seq, "kind": e.kind} for e in decoded]


def test_stray_stream_is_a_finding_not_a_game(ledger: Path) -> None:
    proj = project_ledger(ledger, workers=1)
    assert [(f.stream, f.code) for f in proj.findings if f.code == "audit.G01"] == [("stray", "audit.G01")]
    assert "stray" not in {g["stream"] for g in proj.games}


def test_every_game_stream_is_a_game(ledger: Path) -> None:
    proj = project_ledger(ledger, workers=1)
    starts = {e.stream for e in LogReader(ledger).events() if e.kind == "game.started"}
    assert sorted(g["stream"] for g in proj.games) == sorted(starts) and len(starts) == 9 + 4


def test_verification_beside_the_replay_gives_the_same_verdict(ledger: Path, tmp_path: Path) -> None:
    """`audit` verifies the log in a forked process while it replays: a clean log yields the
    verify report and a session, a changed byte yields the failed report and no session."""
    report, session = open_verified_session(ledger)
    assert report == verify(ledger) and report.ok and session is not None
    damaged = tmp_path / "damaged"
    shutil.copytree(ledger, damaged)
    flip_byte(damaged, random.Random(SEED))
    report, session = open_verified_session(damaged)
    assert report == verify(damaged) and not report.ok and session is None


def test_spool_falls_back_to_the_temp_dir_and_is_removed(ledger: Path, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """Workers spool their tables in /dev/shm when it has room, else in the temp dir; either way
    nothing is left behind and the tables are the same."""
    alone = project_ledger(ledger, workers=1)
    monkeypatch.setattr(projection.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(0, 0, 0))  # type: ignore[attr-defined]
    monkeypatch.setattr(projection.tempfile, "tempdir", str(tmp_path))
    assert projection._spool_root(1) is None
    forked = _forked(ledger, monkeypatch)
    assert forked.tables()["steps"].num_rows == alone.tables()["steps"].num_rows > 0
    assert list(tmp_path.iterdir()) == []


def test_a_game_reaching_beyond_its_range_is_replayed_whole(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game that starts and ends inside one range of the first pass but has a ruling far later:
    the first pass's replay of it is dropped and the game is replayed whole, ruling included,
    with the same rows as when one range holds the whole log."""
    whole = project_ledger(ledger, workers=1)
    dropped: list[set[str]] = []
    keep = projection._FirstPass.dropped

    def seen(self: projection._FirstPass) -> set[str]:
        dropped.append(keep(self))
        return dropped[-1]

    monkeypatch.setattr(projection._FirstPass, "dropped", seen)
    monkeypatch.setattr(projection, "RANGE_ENTRIES", 400)
    split = project_ledger(ledger, workers=1)
    assert dropped == [{LATE}]
    for name, table in whole.tables().items():
        assert _sorted(split.tables()[name]).equals(_sorted(table)), name
    steps = split.tables()["steps"].filter(pc.equal(split.tables()["steps"]["stream"], LATE))
    assert steps["kind"].to_pylist()[-1] == "game.ruling"


def _rows(table: pa.Table, keys: list[str]) -> list[dict[str, object]]:
    """A table's rows without their entries (which depend on the log's order), in key order."""
    rows = table.drop_columns([c for c in ("entry",) if c in table.column_names]).to_pylist()
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in keys))


@pytest.mark.parametrize("workers", [1, 2])
def test_interleaved_games_give_the_same_rows(ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """The same events recorded with every stream's events interleaved, as tables playing at once
    send them, give the same rows as when each game's events follow one another: ranges whose
    streams change at almost every entry are grouped entry by entry."""
    streams: dict[str, list[Event]] = {}
    for event in LogReader(ledger).events():
        streams.setdefault(event.stream, []).append(event)
    mixed = [e for turn in itertools.zip_longest(*streams.values()) for e in turn if e is not None]
    root = tmp_path / "interleaved"
    init(root)
    with Ledger.open(root) as log:
        for i in range(0, len(mixed), 500):
            record_events(log, mixed[i:i + 500])
        log.checkpoint()
    monkeypatch.setattr(projection, "RANGE_ENTRIES", 40)
    monkeypatch.setattr(projection, "LATE_STEPS", 50)  # most games are replayed whole: their steps' events read back in many shares
    grouped: list[int] = []
    group = projection._group

    def counted(names: list[str], lo: int) -> dict[str, array]:
        grouped.append(len(set(names)))
        return group(names, lo)

    monkeypatch.setattr(projection, "_group", counted)
    one_by_one = project_ledger(root, workers=workers).tables()
    assert workers > 1 or max(grouped) > 8, "the interleaved log's ranges hold many streams"  # (forked: not seen here)
    expected = project_ledger(ledger, workers=1).tables()
    keys = {"events": ["stream", "seq"], "steps": ["stream", "seq"], "games": ["stream"], "seats": ["stream", "seat"],
            "findings": ["stream", "seq", "code"], "seatings": ["round", "table_no", "seat"], "players": ["player"], "tournaments": ["tournament"],
                **{name: ["stream", "seq"] for name in ("arbiters", "appeals", "decisions", "rulings")}}
    for name, table in expected.items():
        assert _rows(one_by_one[name], keys[name]) == _rows(table, keys[name]), name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_group_finds_every_streams_entries_in_order(seed: int) -> None:
    """Grouping a range's entries by stream, run by run or entry by entry, gives each stream's
    entries in log order, streams in order of first appearance."""
    rng = random.Random(seed)
    print(f"seed={seed}")
    for _ in range(200):
        run = rng.choice([1, 2, 50])
        names = [f"s{rng.randrange(6)}" for _ in range(rng.randint(1, 60)) for _ in range(run)]
        lo = rng.randrange(1000)
        expected: dict[str, list[int]] = {}
        for entry, name in enumerate(names, lo):
            expected.setdefault(name, []).append(entry)
        found = projection._group(names, lo)
        assert list(found) == list(expected) and {s: list(e) for s, e in found.items()} == expected
