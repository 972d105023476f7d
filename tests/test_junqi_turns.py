"""Turn order, skipping, elimination and the draw rules as data-driven cases (junqi.md §7, §8;
第七条, 第九条): the 50-step rule, the total step limit, timeouts, resignation, draw votes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.junqi import ENGINE
from replay.junqi.perft import parse_position
from replay.junqi.state import JunqiState, Move
from replay.protocol import TERMINAL
from tests.junqi_support import SEATS, point, profile, scripted

DATA = Path(__file__).parent / "data" / "junqi"
SPEC = json.loads((DATA / "turns.json").read_text(encoding="utf-8"))
CASES = SPEC["cases"]


def _script_lines(case: dict[str, Any]) -> list[str]:
    """Expands a case into script lines: `shuffle` quiet moves, the case's moves, then
    `then_shuffle` moves of its `then_cycle`, then its `then` lines."""
    cycle = SPEC["shuffle"]
    lines: list[str] = []
    for _ in range(case.get("shuffle", 0)):
        lines.append(cycle[len(lines) % 8])
    lines += case.get("moves", [])
    then = case.get("then_cycle", [])
    lines += [then[i % len(then)] for i in range(case.get("then_shuffle", 0))]
    return lines + case.get("then", [])


def _states(case: dict[str, Any]) -> list[JunqiState]:
    """Returns the state before the first scripted event and after each one."""
    lines = _script_lines(case)
    if case.get("script"):
        events = scripted(lines, first=case.get("first", 0), **case.get("profile", {}))
        steps = list(ENGINE.replay(events))
        assert [f.code for s in steps for f in s.findings] == case.get("findings", []), case["rule"]
        return [step.state for step in steps][4:]
    state = parse_position(case["position"], profile(**case.get("profile", {})))
    states = [state]
    for line in lines:
        frm, to = line.split(">")
        state = ENGINE.apply_action(state, Move(point(frm), point(to)))
        states.append(state)
    return states


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_turns_and_draws(case: dict[str, Any]) -> None:
    """Checks each expectation of a case (rule named in the case's `rule`)."""
    states = _states(case)
    for expect in case["expect"]:
        state = states[expect["after"]]
        where = f"{case['rule']}: after {expect['after']}"
        if "to_move" in expect:
            assert state.outcome is None, where
            assert SEATS[ENGINE.current_player(state)] == expect["to_move"], where
        if "termination" in expect:
            assert ENGINE.current_player(state) == TERMINAL, where
            assert state.outcome.termination == expect["termination"], where
            if "winners" in expect:
                assert [SEATS[s] for s in state.outcome.winners] == sorted(expect["winners"], key=SEATS.index), where
        for counter in ("step", "quiet"):
            if counter in expect:
                assert getattr(state, counter) == expect[counter], f"{where}: {counter}"
        if "alive" in expect:
            assert "".join(SEATS[s] for s in range(4) if state.alive[s]) == expect["alive"], where


def test_quiet_draw_points_are_3_each_section_9() -> None:
    """第十条: a draw gives every seat 3 points; the outcome is QUIET_LIMIT with no winner."""
    case = next(c for c in CASES if c["name"].startswith("quiet draw exactly"))
    outcome = _states(case)[-1].outcome
    assert outcome is not None and outcome.points == (3.0, 3.0, 3.0, 3.0) and outcome.winners == ()


def test_win_points_are_5_and_1_section_9() -> None:
    """第十条: the winning alliance's players get 5, the losers 1."""
    case = next(c for c in CASES if c["name"].startswith("a win on the step"))
    outcome = _states(case)[-1].outcome
    assert outcome is not None and outcome.points == (5.0, 1.0, 5.0, 1.0)
