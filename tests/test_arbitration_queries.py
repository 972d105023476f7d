"""Named queries as README says (issue 30 points 9 and 14): a parameter not given is NULL, meaning all
(every tournament, every round); an unknown tournament or relation is a usage error (exit 2).
Tournament.md §3, §5 (the standings each query shows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ledger_support import cli


@pytest.fixture(scope="module")
def two_events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger with a checkers Swiss event and a Junqi duplicate event."""
    root = tmp_path_factory.mktemp("q") / "l"
    for game, players in (("checkers", "4"), ("junqi", "8")):
        result = cli("simulate", game, "--tournament", "--players", players, "--rounds", "2", "--ledger", str(root))
        assert result.exit_code == 0, result.output
    return root


def _rows(root: Path, *args: str) -> list[dict[str, object]]:
    result = cli(*args, "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    table = json.loads(result.stdout)
    return [dict(zip(table["columns"], row)) for row in table["rows"]]


@pytest.mark.parametrize(("name", "game"), [("ranking", "junqi"), ("swiss_standings", "checkers"), ("mp", "junqi"),
                                            ("crosstable", "checkers"), ("tournament_games", "junqi"), ("ranking_through", "junqi")])
def test_a_named_query_without_its_tournament_reads_every_tournament(two_events: Path, name: str, game: str) -> None:
    """README "a parameter not given is NULL, meaning all": the rows of every tournament, each named,
    the same as asking for each tournament in turn."""
    every = _rows(two_events, "query", "--name", name)
    one = _rows(two_events, "query", "--name", name, "--param", f"tournament={game}-cup-1")
    assert one and f"{game}-cup-1" in {r["tournament"] for r in every} <= {"checkers-cup-1", "junqi-cup-1"}
    assert [r for r in every if r["tournament"] == f"{game}-cup-1"] == [{"tournament": f"{game}-cup-1", **r} for r in one]


@pytest.mark.parametrize("args", [("query", "--name", "ranking", "--param", "tournament=nosuch"), ("query", "--describe", "nosuch")])
def test_what_does_not_exist_is_a_usage_error(two_events: Path, args: tuple[str, ...]) -> None:
    """README's exit codes: 2 for a tournament or relation that does not exist, named in the message."""
    result = cli(*args, "--ledger", str(two_events))
    assert result.exit_code == 2 and "nosuch" in result.output, result.output
