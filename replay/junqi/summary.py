"""The per-game record junqi.md §9 asks of a replay: result and points per seat, the reason, total
steps, the quiet counter at the end, eliminations in order, flag captures, time used per seat."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from replay.junqi.state import JunqiState
from replay.protocol import Step


def game_summary(steps: Iterable[Step]) -> dict[str, Any]:
    """Folds a replay's steps into one flat record of the game (primitives, lists and None only)."""
    time_used = [0, 0, 0, 0]
    moves = [0, 0, 0, 0]
    findings = 0
    stream, last = "", None
    for step in steps:
        stream = step.event.stream
        last = step.state
        findings += len(step.findings)
        seat = step.facts.get("seat")
        if step.event.kind == "game.move_time" and seat is not None:
            time_used[seat] += step.event.ms  # type: ignore[attr-defined]
        elif step.event.kind == "junqi.moved" and "combat" in step.facts and seat is not None:
            moves[seat] += 1
    if last is None:
        raise ValueError("a game summary needs at least the game.started step")
    return _record(stream, last, time_used, moves, findings)


def _record(stream: str, state: JunqiState, time_used: list[int], moves: list[int], findings: int) -> dict[str, Any]:
    outcome = state.outcome
    return {
        "stream": stream,
        "termination": outcome.termination if outcome else None,
        "winners": list(outcome.winners) if outcome else None,
        "points": list(outcome.points) if outcome else None,
        "steps": state.step,
        "plies": state.plies,
        "quiet": state.quiet,
        "eliminations": [{"seat": e.seat, "cause": e.cause, "step": e.step} for e in state.eliminations],
        "flags_captured": [e.seat for e in state.eliminations if e.cause == "FLAG"],
        "flags_revealed": [s for s in range(4) if state.revealed[s]],
        "timeouts": list(state.timeouts),
        "moves": moves,
        "time_used_ms": time_used,
        "halted": state.halted,
        "findings": findings,
    }
