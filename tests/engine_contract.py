"""The contract every game engine must pass: seeded bot games replay clean, random playouts
apply only legal actions, `apply_action` never mutates, and replaying the history reproduces the
state. Each engine's test module calls `check_engine` with its own starts."""

from __future__ import annotations

import os
import pickle
import random

from replay.protocol import CHANCE, TERMINAL, GameEngine
from schemas.common import GameStarted

PLAYOUTS = int(os.environ.get("MATCHLEDGER_PLAYOUTS", "5"))


def check_engine(engine: GameEngine, start: GameStarted, seed: int, playouts: int = PLAYOUTS) -> None:
    """Runs the whole contract for one engine from one start event; prints the seed."""
    print(f"contract {engine.name} seed={seed} playouts={playouts}")
    rng = random.Random(seed)
    for _ in range(playouts):
        events = engine.bot_game(start, random.Random(rng.getrandbits(64)))
        _check_bot_game_replays_clean(engine, events)
        _check_random_playout(engine, events, random.Random(rng.getrandbits(64)))


def _check_bot_game_replays_clean(engine: GameEngine, events: list) -> None:
    assert [e.seq for e in events] == list(range(len(events))), "bot events must have dense seqs"
    assert all(a.ts <= b.ts for a, b in zip(events, events[1:])), "timestamps must not go back"
    steps = list(engine.replay(events))
    findings = [f for s in steps for f in s.findings if f.severity == "error"]
    assert not findings, f"bot game has findings: {[str(f) for f in findings[:5]]}"
    assert engine.is_terminal(steps[-1].state)
    assert events[-1].kind == "game.ended"  # type: ignore[attr-defined]


def _setup_prefix(engine: GameEngine, events: list) -> tuple[list, object]:
    """Returns the events up to the first state where a seat (not chance) is to act, and that state."""
    steps = engine.replay(events)
    prefix = []
    for step in steps:
        prefix.append(step.event)
        if engine.current_player(step.state) >= 0:
            return prefix, step.state
    raise AssertionError("bot game never reached a seat's turn")


def _check_random_playout(engine: GameEngine, events: list, rng: random.Random, max_actions: int = 400) -> None:
    prefix, state = _setup_prefix(engine, events)
    history = list(prefix)
    ts = prefix[-1].ts
    for _ in range(max_actions):
        player = engine.current_player(state)
        if player == TERMINAL or engine.is_terminal(state):
            break
        assert player != CHANCE, "random playouts start after the chance events"
        actions = engine.legal_actions(state)
        assert actions, "a non-terminal state must offer a legal action"
        for seat in range(len(getattr(state, "seats", ())) or 1):
            assert isinstance(engine.information_state_string(state, seat), str)
        action = rng.choice(actions)
        before = pickle.dumps(state)
        ts += 1000
        history.append(engine.to_event(state, action, stream=prefix[0].stream, seq=len(history), ts=ts))
        new_state = engine.apply_action(state, action)
        assert pickle.dumps(state) == before, "apply_action mutated its input"
        state = new_state
    replayed = list(engine.replay(history))[-1].state
    assert replayed == state, "replaying the history must reproduce the state"
