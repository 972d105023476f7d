"""do_move applies most moves in one `replace` (rules._plain_ply); the rules taken step by step
(count_step, then next_turn) must give the same state. Every legal move of positions from seeded bot
games is checked under profiles that change the turn order, the step unit and the draws."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from replay.junqi import ENGINE
from replay.junqi.moves import legal_moves
from replay.junqi.pieces import seat_of
from replay.junqi.rules import count_step, do_move, eliminate, next_turn
from replay.junqi.state import JunqiState
from tests.junqi_support import start

PROFILES = [
    {},
    {"turn_direction": "counterclockwise"},
    {"step_unit": "round", "quiet_limit": 4},
    {"no_move_rule": "skip_turn", "quiet_limit": 6, "quiet_trigger": ">"},
    {"max_steps": 40, "elimination_resets_quiet": True},
]


def _step_by_step(state: JunqiState, frm: int, to: int) -> JunqiState:
    """Returns the state after the move by the rules one at a time, with the combat outcome do_move reports."""
    report = do_move(state, frm, to)[1]
    cells = list(state.board)
    mover, target = cells[frm], cells[to]
    cells[frm] = 0
    cells[to] = {"move": mover, "win": mover, "lose": target, "both": 0}[report.result]
    revealed = tuple(r or s in report.marshal_deaths for s, r in enumerate(state.revealed))
    state = replace(state, board=tuple(cells), revealed=revealed, last_move=(frm, to))
    if report.eliminated:
        state = eliminate(state, report.eliminated[0], "FLAG", at_step=state.step + 1)
    state = count_step(state, contact=target != 0, judge=state.outcome is None)
    return state if state.outcome is not None else next_turn(state, seat_of(mover))


@pytest.mark.parametrize("overrides", PROFILES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_do_move_agrees_with_the_rules_step_by_step(overrides: dict[str, Any]) -> None:
    seed = 20260 + len(overrides)
    events = ENGINE.bot_game(start(**overrides), random.Random(seed))
    checked = 0
    for i, step in enumerate(ENGINE.replay(events)):
        state = step.state
        if state.to_move < 0 or state.outcome is not None or i % 3:
            continue
        for frm, to in legal_moves(state, state.to_move):
            assert do_move(state, frm, to)[0] == _step_by_step(state, frm, to), (seed, i, frm, to)
            checked += 1
    assert checked > 500, f"seed {seed}: only {checked} moves checked"
