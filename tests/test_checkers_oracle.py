"""Differential test of the move generator against OpenSpiel's `chinese_checkers` (checkers.md
§14.1: the same 121-hole indexing, adjacent hops, free side triangles, no goal lock). Runs where
`pyspiel` is importable (the `[oracle]` extra: `pip install -e '.[oracle]'`); skipped elsewhere, but
failed under MATCHLEDGER_REQUIRE_ORACLE=1, which .ci/run sets."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

from replay.checkers.board import BIT, ids
from replay.checkers.moves import all_moves

if os.environ.get("MATCHLEDGER_REQUIRE_ORACLE"):
    import pyspiel  # CI installs the [oracle] extra: a missing pyspiel fails, not skips
else:
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the [oracle] extra)")
GAMES = int(os.environ.get("MATCHLEDGER_ORACLE_GAMES", "5"))


def _board(state: Any) -> tuple[int, int]:
    """Reads OpenSpiel's board text (player 0 = `1` = north) into our two bit sets."""
    cells = [c for c in str(state).split("Player")[0] if c in "12."]
    assert len(cells) == 121
    north = sum(BIT[i] for i, c in enumerate(cells) if c == "1")
    south = sum(BIT[i] for i, c in enumerate(cells) if c == "2")
    return north, south


def _turn_endpoints(state: Any) -> dict[tuple[int, int], Any]:
    """Returns every (from, to) a whole OpenSpiel turn can make (its hop chains are successive
    actions), each with a state after it."""
    player = state.current_player()
    before = _board(state)[player]
    found: dict[tuple[int, int], Any] = {}

    def explore(node: Any) -> None:
        for action in node.legal_actions():
            child = node.child(action)
            if child.is_terminal() or child.current_player() != player:
                after = _board(child)[player]
                if before != after:
                    found.setdefault((ids(before & ~after)[0], ids(after & ~before)[0]), child)
            else:
                explore(child)

    explore(state)
    return found


def test_endpoints_agree_with_openspiel_on_random_games() -> None:
    """§4.1–4.3, §14.1: in every position of random games both generators give the same moves."""
    seed = 20261129
    print(f"checkers oracle seed={seed} games={GAMES}")
    rng = random.Random(seed)
    game = pyspiel.load_game("chinese_checkers")
    for _ in range(GAMES):
        state = game.new_initial_state()
        for _ply in range(120):
            if state.is_terminal():
                break
            seat = state.current_player()
            pieces = _board(state)
            theirs = _turn_endpoints(state)
            assert set(all_moves(seat, pieces[seat], pieces[0] | pieces[1])) == set(theirs)
            state = theirs[rng.choice(sorted(theirs))]
