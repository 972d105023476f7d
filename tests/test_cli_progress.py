"""Progress bars with a real total (issue 16: "progress bars on every long command (`record` of a
large file, `replay`, `export`, `report`, `audit` with a total), on stderr, silent with --quiet or
when not a terminal"): `audit` and `export --parquet` count the log's games before replaying them,
`report` counts its stages (one game) or its games (a tournament)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit.cli import app
from tests.ledger_support import cli

TERMINAL = {"TTY_COMPATIBLE": "1", "COLUMNS": "120"}
PLAIN = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A ledger holding a checkers tournament (tournament, player and seating streams beside its games)
    and two games outside it."""
    root = tmp_path_factory.mktemp("progress") / "l"
    made = cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "2", "--games-per-round", "1",
               "--seed", "5", "--ledger", str(root), "--json")
    assert made.exit_code == 0, made.output
    assert cli("simulate", "checkers", "--games", "2", "--seed", "6", "--ledger", str(root)).exit_code == 0
    games = int(cli("query", "--ledger", str(root), "SELECT count(*) FROM games", "--format", "csv").stdout.split()[-1])
    name = cli("query", "--ledger", str(root), "SELECT tournament FROM tournaments", "--format", "csv").stdout.split()[-1]
    return root, name, games


@pytest.fixture(autouse=True)
def _nothing_kept(tournament: tuple[Path, str, int]) -> None:
    """Each test starts without a kept projection (audit/query/projection_cache.py): the commands that keep
    one would otherwise read it, and replay nothing, after the first."""
    shutil.rmtree(tournament[0] / "derived", ignore_errors=True)


def _bars(stderr: str, label: str) -> set[tuple[int, str]]:
    """Returns the (done, total) pairs a bar of this label drew once it had its total: before, while
    the log is read, it may show `0/?`, never a count of done work without its total."""
    drawn = {(int(done), total) for done, total in re.findall(re.escape(label) + r"[^\r\n]*?(\d+)/(\d+|\?)", PLAIN.sub("", stderr))}
    assert drawn and all(done == 0 for done, total in drawn if total == "?"), drawn
    return {(done, total) for done, total in drawn if total != "?"}


def test_count_games_is_the_number_of_games_replayed(tournament: tuple[Path, str, int]) -> None:
    """The total comes from one pass over the stored bytes, and is the projection's own game count."""
    from audit.query.projection import count_games, project
    from ledger import LogReader

    root, _, games = tournament
    log = LogReader(root).packed()
    told: list[int] = []
    done: list[int] = []

    class Ticker:
        def __call__(self, n: int) -> None:
            done.append(n)

        def expect(self, total: int) -> None:
            told.append(total)

    projection = project(log, Ticker())
    assert count_games(log) == games == len(projection.games) == sum(done) and told == [games]


def test_audit_progress_has_the_games_as_its_total(tournament: tuple[Path, str, int]) -> None:
    root, _, games = tournament
    result = CliRunner().invoke(app, ["audit", "--ledger", str(root)], env=TERMINAL)
    assert result.exit_code == 0, result.output
    drawn = _bars(result.stderr, "replaying games")
    assert drawn and {total for _, total in drawn} == {str(games)}, drawn  # never an open-ended `n/?`
    assert (games, str(games)) in drawn
    assert "replaying games" not in result.stdout


def test_audit_progress_is_silent_off_a_terminal_and_with_quiet(tournament: tuple[Path, str, int]) -> None:
    root, _, _ = tournament
    assert CliRunner().invoke(app, ["audit", "--ledger", str(root)]).stderr == ""
    assert CliRunner().invoke(app, ["audit", "--ledger", str(root), "--quiet"], env=TERMINAL).stderr == ""


def test_export_progress_has_the_games_as_its_total(tournament: tuple[Path, str, int], tmp_path: Path) -> None:
    root, _, games = tournament
    result = CliRunner().invoke(app, ["export", "--ledger", str(root), "--parquet", str(tmp_path / "pq")], env=TERMINAL)
    assert result.exit_code == 0, result.output
    assert {total for _, total in _bars(result.stderr, "replaying games")} == {str(games)}


def test_game_report_progress_counts_its_stages(tournament: tuple[Path, str, int], tmp_path: Path) -> None:
    from audit.presentation.report import REPORT_STAGES

    root, _, _ = tournament
    result = CliRunner().invoke(app, ["report", "--ledger", str(root), "--game", "sim-checkers-6-g1", "--out",
                                      str(tmp_path / "g.html")], env=TERMINAL)
    assert result.exit_code == 0, result.output
    drawn = _bars(result.stderr, "writing the report of sim-checkers-6-g1")
    assert {total for _, total in drawn} == {str(REPORT_STAGES)} and (REPORT_STAGES, str(REPORT_STAGES)) in drawn
    assert CliRunner().invoke(app, ["report", "--ledger", str(root), "--game", "sim-checkers-6-g1", "--out",
                                    str(tmp_path / "g.html"), "--force", "--quiet"], env=TERMINAL).stderr == ""


def test_tournament_report_progress_counts_the_games_then_the_reports(tournament: tuple[Path, str, int], tmp_path: Path) -> None:
    """The replay of the ledger (every game of it), then one report per game of the tournament and the page."""
    root, name, games = tournament
    result = CliRunner().invoke(app, ["report", "--ledger", str(root), "--tournament", name, "--out", str(tmp_path / "t.html"),
                                      "--json"], env=TERMINAL)
    assert result.exit_code == 0 and result.stderr == "", result.output  # --json: no bar
    reports = len(__import__("json").loads(result.stdout)["reports"])
    shutil.rmtree(root / "derived")  # the projection that run kept would be read, not replayed
    result = CliRunner().invoke(app, ["report", "--ledger", str(root), "--tournament", name, "--out", str(tmp_path / "t.html"),
                                      "--force"], env=TERMINAL)
    assert result.exit_code == 0, result.output
    assert {total for _, total in _bars(result.stderr, "replaying games")} == {str(games)}
    written = _bars(result.stderr, "writing the reports")
    assert {total for _, total in written} == {str(reports + 1)} and (reports + 1, str(reports + 1)) in written


@pytest.mark.parametrize("command", ["standings", "query", "appeals"])
def test_projection_commands_show_the_replay(tournament: tuple[Path, str, int], command: str) -> None:
    """standings, query and appeals replay the whole log before they answer (a minute on a
    season-sized ledger): the same bar as `audit`, with the games as its total; none with --quiet."""
    root, name, games = tournament
    args = {"standings": ["--tournament", name], "query": ["SELECT count(*) FROM games"], "appeals": []}[command]
    result = CliRunner().invoke(app, [command, "--ledger", str(root), *args], env=TERMINAL)
    assert result.exit_code == 0, result.output
    assert (games, str(games)) in _bars(result.stderr, "replaying games")
    assert "replaying games" not in result.stdout
    assert CliRunner().invoke(app, [command, "--ledger", str(root), *args, "--quiet"], env=TERMINAL).stderr == ""


def test_a_kept_projection_replays_nothing(tournament: tuple[Path, str, int]) -> None:
    """The second standings on a log that did not change reads the kept projection: no game is
    replayed, and the answer is the same."""
    root, name, _ = tournament
    args = ["standings", "--ledger", str(root), "--tournament", name]
    first = CliRunner().invoke(app, args, env=TERMINAL)
    again = CliRunner().invoke(app, args, env=TERMINAL)
    assert first.exit_code == again.exit_code == 0
    assert ("replaying games" in first.stderr) and re.search(r"\d+/\d+", PLAIN.sub("", first.stderr))
    assert not re.search(r"\d+/\d+", PLAIN.sub("", again.stderr))  # the bar never got a total: no game was replayed
    assert again.stdout == first.stdout
