"""Status "as of" when (issue 30 point 11; Junqi 第十八条 2: a result is provisional while its appeal
window is open): judged at the competition's latest event by default, so an arbiter's registration
in log.arbiters moves no game's status; `--as-of` judges at another time; every output that shows a
status says the time, and `audit` records it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ledger_support import cli

T = "checkers-cup-1"


def _standings(root: Path, *args: str) -> dict[str, Any]:
    result = cli("standings", "--tournament", T, "--ledger", str(root), "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_status_is_judged_at_the_competitions_latest_event_and_says_so(tmp_path: Path) -> None:
    """A registration in log.arbiters a week later leaves every game provisional as it was (the last
    round's window is open at the last event); `--as-of` a day after the end makes them final."""
    root, key = tmp_path / "l", tmp_path / "z.key"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--ledger", str(root)).exit_code == 0
    before = _standings(root)
    assert {r["status"] for r in before["rows"]} == {"provisional"}
    assert cli("keygen", "--name", "z", "--out", str(key)).exit_code == 0
    late = "2030-01-01T00:00:00+00:00"
    assert cli("appeal", "register", "--pub", str(tmp_path / "z.pub"), "--role", "referee", "--at", late, "--ledger", str(root)).exit_code == 0
    after = _standings(root)
    assert (after["as_of"], [r["status"] for r in after["rows"]]) == (before["as_of"], [r["status"] for r in before["rows"]])
    final = _standings(root, "--as-of", late)
    assert final["as_of"] == "2030-01-01T00:00:00Z" and {r["status"] for r in final["rows"]} == {"final"}
    audited = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    assert audited["as_of"] == before["as_of"]
    text = cli("standings", "--tournament", T, "--ledger", str(root)).output
    assert f"status as of {before['as_of']}" in text


def test_a_bad_as_of_is_a_usage_error(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--ledger", str(root)).exit_code == 0
    result = cli("standings", "--tournament", T, "--ledger", str(root), "--as-of", "yesterday")
    assert result.exit_code == 2 and "--as-of" in result.output
