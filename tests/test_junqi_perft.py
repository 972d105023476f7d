"""Perft counts from position files (junqi.md §6 move generation), the generator checked against the
move validator in bot positions, and the position file format of replay/junqi/README.md."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from replay.junqi import ENGINE
from replay.junqi.moves import check_move, legal_moves
from replay.junqi.perft import PositionError, format_position, parse_position
from replay.junqi.state import JunqiState
from replay.protocol import IllegalActionError
from tests.junqi_support import start

DATA = Path(__file__).parent / "data" / "junqi"
DEEP = bool(os.environ.get("MATCHLEDGER_PERFT_DEEP"))


def _perft_cases() -> list[tuple[str, bool, list[int]]]:
    cases = []
    for line in (DATA / "perft.txt").read_text(encoding="utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            deep = words[1] == "deep"
            cases.append((words[0], deep, [int(w) for w in words[1 + deep:]]))
    return cases


@pytest.mark.parametrize(("position", "deep", "counts"), _perft_cases(), ids=lambda v: str(v)[:20])
def test_perft_counts_section_6(position: str, deep: bool, counts: list[int]) -> None:
    """§6: the number of move sequences of each length from a position matches the stored counts."""
    if deep and not DEEP:
        pytest.skip("deep perft runs with MATCHLEDGER_PERFT_DEEP=1")
    setup = None if position == "standard" else str(DATA / "positions" / position)
    assert ENGINE.perft(len(counts), setup) == counts


def _all_pairs_validated(state: JunqiState) -> list[tuple[int, int]]:
    """Returns every (from, to) that `check_move` accepts: the rule checks, independent of the generator."""
    legal = []
    for frm in range(129):
        for to in range(129):
            try:
                check_move(state, state.to_move, frm, to)
            except IllegalActionError:
                continue
            legal.append((frm, to))
    return legal


def test_generator_agrees_with_validator_section_6() -> None:
    """§6.1–§6.4: in bot positions, the generated moves are exactly the pairs the checks accept."""
    seed = 31
    print(f"generator vs validator seed={seed}")
    events = ENGINE.bot_game(start(), random.Random(seed))
    states = [s.state for s in ENGINE.replay(events) if s.state.to_move >= 0]
    for state in states[:: max(1, len(states) // 12)]:
        assert [tuple(m) for m in legal_moves(state, state.to_move)] == _all_pairs_validated(state)


def test_position_file_round_trip() -> None:
    """README.md format: a written position reads back to the same board, counters and turn."""
    state = parse_position((DATA / "positions" / "midgame.txt").read_text(encoding="utf-8"))
    again = parse_position(format_position(state))
    assert (again.board, again.to_move, again.step, again.quiet) == (state.board, state.to_move, state.step, state.quiet)


def test_position_file_errors_name_the_line() -> None:
    """README.md format: a bad token is reported with its line."""
    with pytest.raises(PositionError, match=r"^p.txt line 2: cannot read 'S S99=司令'"):
        parse_position("turn S\nS S99=司令\n", where="p.txt")
