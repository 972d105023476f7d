"""`simulate --tournament` checks that the Swiss pairing can be served before writing anything (issue
30 point 15; checkers.md §12.2: no repeat pairings; README: options are checked before anything is written)."""

from __future__ import annotations

from pathlib import Path

from ledger import LogReader, init
from tests.ledger_support import cli


def test_a_swiss_field_that_cannot_be_paired_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """7 players, 6 rounds, seed 6: round 6 has no pairing without repeats; exit 2, the ledger as it was."""
    root = tmp_path / "l"
    init(root)
    before = sum(1 for _ in LogReader(root).events())
    result = cli("simulate", "checkers", "--tournament", "--players", "7", "--rounds", "6", "--seed", "6", "--ledger", str(root))
    assert result.exit_code == 2, result.output
    assert "no Swiss pairing without repeats" in result.output and "nothing was written" in result.output
    assert sum(1 for _ in LogReader(root).events()) == before


def test_a_swiss_field_that_can_be_paired_is_played(tmp_path: Path) -> None:
    """Up to ⌊players/2⌋ rounds always pair (Dirac), and beyond it a field whose results allow it is played."""
    root = tmp_path / "l"
    for players, rounds in ((7, 3), (8, 5)):
        result = cli("simulate", "checkers", "--tournament", "--players", str(players), "--rounds", str(rounds), "--seed", str(players),
                     "--ledger", str(root))
        assert result.exit_code == 0, result.output
