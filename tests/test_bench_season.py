"""bench/season.py's builder (issue 32, Show) at a tiny scale, so the season bench cannot rot: the
season it builds is a valid log of real tournaments of all three games, the kept event is the
season's first, and a second call uses the cache."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench.season import BUILT, ROTATION, build_season, extra_game, plans
from ledger import LogReader, verify
from schemas.common import GameStarted, RoundClosed, RoundSeated, TournamentOpened

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_season(games=10, events=3, jobs=2, cache=tmp_path_factory.mktemp("bench-cache"))


def test_season_verifies_and_holds_each_event_whole(season: Path) -> None:
    """Nothing unsigned counts (DESIGN.md): the season's log and the kept event verify to their
    newest signed checkpoint, the season holds every event's entries, and its first entries are the
    kept event's, byte for byte (the event and the season compared are the same tournament)."""
    built = json.loads((season / BUILT).read_text())
    report, event = verify(season / "season"), verify(season / "event")
    assert report.ok and event.ok, (report.error, event.error)
    assert report.size == built["entries"] == sum(e["entries"] for e in built["events_built"])
    assert event.size == built["event_entries"] == built["events_built"][0]["entries"]
    first = [data for _, data in LogReader(season / "season").entries(0, event.size)]
    assert first == [data for _, data in LogReader(season / "event").entries()]


def test_season_is_real_tournaments_of_all_three_games(season: Path) -> None:
    """Each event is its own tournament (id, registrations, a committed round-1 draw, every round
    seated and closed, its games under it), Junqi, Paohuzi and checkers in turn, so that `audit`
    and `standings` on the season do a tournament's work for each."""
    opened: dict[str, str] = {}
    seated: Counter[tuple[str, int]] = Counter()
    closed: dict[tuple[str, int], int] = {}
    drawn: set[str] = set()
    games: Counter[str | None] = Counter()
    for event in LogReader(season / "season").events():
        if event.kind == "tournament.opened":
            assert isinstance(event, TournamentOpened)
            opened[event.stream] = event.game
        elif event.kind == "tournament.round_seated":
            assert isinstance(event, RoundSeated)
            seated[event.stream, event.round] += 1
            if event.draw is not None:
                drawn.add(event.stream)
        elif event.kind == "tournament.round_closed":
            assert isinstance(event, RoundClosed) and event.games is not None
            closed[event.stream, event.round] = event.games
        elif event.kind == "game.started":
            assert isinstance(event, GameStarted)
            games[event.tournament] += 1
    season_plans = plans(10, 3)
    assert opened == {p.tournament: p.game for p in season_plans}
    assert sorted(opened.values()) == sorted(ROTATION)
    assert drawn == set(opened)
    for plan in season_plans:
        assert all(seated[plan.tournament, n] == 1 for n in range(1, plan.rounds + 1)), plan.tournament
        assert sum(closed[plan.tournament, n] for n in range(1, plan.rounds + 1)) == games[plan.tournament] > 0


def test_second_build_uses_the_cache(season: Path) -> None:
    """The season is built once: a second call finds the build's record and returns at once."""
    stamp = (season / BUILT).stat().st_mtime_ns
    assert build_season(games=10, events=3, jobs=2, cache=season.parent) == season
    assert (season / BUILT).stat().st_mtime_ns == stamp


def test_extra_game_is_recorded_after_the_season(season: Path, tmp_path: Path) -> None:
    """The bench's one more game is a whole game the recorder takes (`record` exit 0 is a figure, not a refusal)."""
    import shutil

    from tests.ledger_support import cli

    ledger = tmp_path / "ledger"
    shutil.copytree(season / "event", ledger)
    extra_game(tmp_path / "extra.jsonl")
    result = cli("record", "--ledger", str(ledger), str(tmp_path / "extra.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    assert verify(ledger).size == verify(season / "event").size + len((tmp_path / "extra.jsonl").read_bytes().splitlines())
