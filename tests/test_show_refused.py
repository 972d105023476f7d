"""`show --at` the seq of a refused event (issue 31 point 6): the picture is the report's board at
the finding (the last legal position, the refused move dashed red), and the text names the finding
with its rule in Chinese; any other step shows no refusal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ledger import LogReader
from replay.picture import AS_CLAIMED
from tests.ledger_support import cli

GAMES = {  # game: simulate options giving a small tournament with a planted illegal move
    "junqi": ("--players", "8"),
    "paohuzi": ("--players", "6"),
    "checkers": ("--players", "4"),
}


@pytest.fixture(scope="module", params=list(GAMES))
def planted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Returns a ledger with a planted illegal move and the audit's finding of it."""
    root = tmp_path_factory.mktemp(request.param) / "ledger"
    made = cli("simulate", request.param, "--tournament", *GAMES[request.param], "--rounds", "1", "--games-per-round", "1",
               "--seed", "3", "--inject", "illegal-move", "--ledger", str(root), "--json")
    assert made.exit_code == 0, made.output
    where = json.loads(made.stdout)["planted"]
    audit = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    found = next(f for f in audit["findings"] if (f["stream"], f["seq"]) == (where["stream"], where["seq"]) and f["severity"] == "error")
    return root, found


def test_show_at_a_refused_event_draws_it_and_names_the_finding(planted: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Issue 31 point 6: `show --at` an illegal event draws the refused move dashed on the last legal
    position, as the report's board at the finding, and names the finding, its rule and article."""
    root, found = planted
    svg = tmp_path / "at.svg"
    result = cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(found["seq"]), "--svg", str(svg))
    assert result.exit_code == 0, result.output
    picture = svg.read_text()
    assert picture.count('class="mark mark-illegal"') == 1 and 'stroke-dasharray="8 5"' in picture
    assert "refused" in picture and "被拒绝" in result.stdout
    assert f"error {found['code']}" in result.stdout and f"seq {found['seq']}" in result.stdout
    assert "规则 rule: " in result.stdout and found["article"] in result.stdout
    said = json.loads(cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(found["seq"]), "--json").stdout)
    assert [f["code"] for f in said["refused"]] == [found["code"]] and not said["as_claimed"]
    assert not re.search(r"\b[A-Z]+_[A-Z_]+\b|UNVERIFIED", result.stdout.split("被拒绝")[0]), "the board's caption in words"
    end = cli("show", "--ledger", str(root), "--game", found["stream"]).stdout
    assert not re.search(r"\b[A-Z]+_[A-Z_]+\b|UNVERIFIED|winners=", end.split("legend")[0]), "the end in words, not FLAG_CAPTURED"


def test_show_at_a_legal_event_shows_no_refusal(planted: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """The step before a refused event is drawn as played: no refused move, no finding named."""
    root, found = planted
    svg = tmp_path / "before.svg"
    result = cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(found["seq"] - 1), "--svg", str(svg))
    assert result.exit_code == 0, result.output
    assert "mark-illegal" not in svg.read_text() and "被拒绝" not in result.stdout and found["code"] not in result.stdout
    said = json.loads(cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(found["seq"] - 1), "--json").stdout)
    assert said["refused"] == []


def test_show_beyond_a_halted_replay_is_the_log_claim(planted: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Issue 31 point 6: `show --at` a later move of a Junqi or checkers game whose replay an illegal
    move halted draws the board as the log claims it, says so and names the finding that halted it;
    a Paohuzi deal goes on derived (no claim, no refusal named): the planted discard out of turn is
    one the log then ignores (tests/test_paohuzi_claimed.py has the faults the log goes on from)."""
    root, found = planted
    events = list(LogReader(root).events(found["stream"]))
    later = next(e.seq for e in events if e.seq > found["seq"] + 1 and e.kind.endswith((".moved", ".discarded")))
    svg = tmp_path / "later.svg"
    result = cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(later), "--svg", str(svg))
    assert result.exit_code == 0, result.output
    said = json.loads(cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(later), "--json").stdout)
    if found["code"].startswith("paohuzi."):
        assert not said["as_claimed"] and AS_CLAIMED not in svg.read_text() and found["code"] not in result.stdout
        return
    assert said["as_claimed"] and said["refused"] == []
    assert f"{AS_CLAIMED}：重放已于 seq {found['seq']} 停止" in result.stdout and f"error {found['code']}" in result.stdout
    picture = svg.read_text()
    assert AS_CLAIMED in picture and "mark-illegal" not in picture and "mark-last" in picture
    derived = cli("show", "--ledger", str(root), "--game", found["stream"], "--at", str(found["seq"]))
    assert derived.stdout.split("legend")[0] != result.stdout.split("legend")[0], "the claimed moves moved pieces"
