"""The arbitration report of one game (DESIGN.md audit/): result, findings with their rule, the
timeline, a time chart, a board per action, and the game's entries proved against the checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ledger_support import cli


def test_report_of_a_game_with_a_planted_illegal_move(tmp_path: Path) -> None:
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "5",
               "--inject", "illegal-move", "--ledger", str(root)).exit_code == 0
    audit = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    bad = audit["findings"][0]
    result = cli("report", "--ledger", str(root), "--game", bad["stream"], "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["findings"] >= 1 and summary["proof"].startswith("verified: stream") and "had exactly" in summary["proof"]
    page = out.read_text()
    assert bad["code"] in page and "class='bad'" in page
    assert page.count("<svg") > 10, "a board per action and the time chart"
    assert "signed by" in page and "check-proof" in page


def test_report_refuses_an_unknown_game(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    result = cli("report", "--ledger", str(root), "--game", "nope", "--out", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and "no game stream 'nope'" in result.stderr
