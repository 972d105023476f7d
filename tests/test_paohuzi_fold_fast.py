"""The replay's shortcuts against the plain reading they stand for (paohuzi.md §2, §14; 第五条):
the deal read by slices of the deck gives card i to seat (dealer + i) mod 3; the fields the fold
keeps of each state (`_StateFacts`, for the step facts and the card conservation
check of §14) are the state's; a step's facts keep their keys in the documented order; the
per-seat tuples the rules rebuild change only the seat's value; `melds.three_of` is the plain
"three of this card" comparison; `replay.run.summarise`, which pauses the cyclic collector, finds
what the kept replay finds and leaves the collector as it was.

MATCHLEDGER_SEED sets the seed (printed); MATCHLEDGER_GAMES the number of bot deals (default 12)."""

from __future__ import annotations

import gc
import os
import pickle
import random

from replay import run as run_mod
from replay.paohuzi import ENGINE, fold, rules
from replay.paohuzi.cards import LIANGZHANG_INDEX, N_VALUES, deal_hands, full_deck
from replay.paohuzi.melds import Group, three_of
from replay.paohuzi.state import FIELDS, State
from tests.paohuzi_support import start_event

SEED = int(os.environ.get("MATCHLEDGER_SEED", "20261201"))
GAMES = int(os.environ.get("MATCHLEDGER_GAMES", "12"))
STATE_KEYS = ["phase", "wall", "huxi_0", "huxi_1", "huxi_2", "could_act", "derived"]


def test_deal_hands_give_card_i_to_seat_dealer_plus_i() -> None:
    """第五条: deck card i goes to seat (dealer + i) mod 3, one at a time from the dealer; each hand sorted."""
    rng = random.Random(SEED)
    print(f"seed={SEED}")
    for _ in range(30):
        deck = full_deck()
        rng.shuffle(deck)
        for dealer in range(3):
            plain: list[list[int]] = [[], [], []]
            for i in range(LIANGZHANG_INDEX):
                plain[(dealer + i) % 3].append(deck[i])
            assert deal_hands(deck, dealer) == [sorted(h) for h in plain], f"seed={SEED} dealer={dealer}"


def test_per_seat_tuples_change_only_the_seat() -> None:
    """The rules' per-seat memories (hands, groups, 胡息, 过张 …): setting one seat's value keeps the others."""
    values = ("a", "b", "c")
    assert [rules._set(values, seat, "x") for seat in range(3)] == [("x", "b", "c"), ("a", "x", "c"), ("a", "b", "x")]
    assert rules._set((1, 2), 1, 9) == (1, 9)  # any other length: the plain slices


def _bot_steps() -> list[list]:  # type: ignore[type-arg]
    rng = random.Random(SEED)
    print(f"seed={SEED} games={GAMES}")
    games = []
    for n in range(GAMES):
        events = ENGINE.bot_game(start_event(stream=f"fast-{n}", dealer=n % 3), random.Random(rng.getrandbits(64)))
        games.append(list(ENGINE.replay(events)))
    return games


def test_state_fields_the_fold_keeps_are_the_states() -> None:
    """§14: the fields the conservation check and the step facts read, kept per state, are the state's own."""
    checked = 0
    for steps in _bot_steps():
        for step in steps:
            state = step.state
            if not isinstance(state, State):
                continue
            known = fold._StateFacts(state)
            assert (known.phase, known.wall, known.drawn, known.hands, known.melds, known.discards, known.pending, known.win) == (
                state.phase, state.wall_left, state.drawn, state.hands, state.melds, state.discards, state.pending, state.win)
            assert (known.huxi_0, known.huxi_1, known.huxi_2) == state.table_huxi
            checked += 1
    assert checked > 100


def test_state_copy_values_and_replace_name_every_field() -> None:
    """The native State lists its fields four times (`FIELDS`, `__init__`, `copy`, `values`): each
    of its states' fields read by name is `values()`'s, `copy()` keeps every one (the same object)
    and `replace` changes the named field alone."""
    checked = 0
    games = _bot_steps()
    for steps in games[:3]:
        for step in steps:
            state = step.state
            if not isinstance(state, State):
                continue
            values = state.values()
            assert len(values) == len(FIELDS) and all(getattr(state, f) is v for f, v in zip(FIELDS, values))
            assert all(a is b for a, b in zip(state.copy().values(), values, strict=True))
            assert state.copy() == state and pickle.loads(pickle.dumps(state)) == state
            checked += 1
    other = games[3][len(games[3]) // 2].state  # another deal's state: other values of each field's type
    assert isinstance(other, State)
    replaced = 0
    for i, (name, value) in enumerate(zip(FIELDS, other.values())):
        if value is not values[i]:
            changed = state.replace(**{name: value}).values()
            assert [j for j, (a, b) in enumerate(zip(changed, values)) if a is not b] == [i], name
            replaced += 1
    assert checked > 100 and replaced > 15


def test_step_facts_keep_their_key_order() -> None:
    """The facts of every step list the seat, action, forced (a move time: ms and the seat's total),
    then the state's facts, in that order (the projection stores them as JSON text)."""
    kinds = set()
    for steps in _bot_steps():
        for step in steps:
            keys = list(step.facts)
            if "ms" in keys:
                assert keys == ["seat", "action", "forced", "ms", "time_used", *STATE_KEYS], keys
                kinds.add("timed")
            elif "huxi" in keys:
                assert keys[:3] == ["seat", "action", "forced"] and keys[-len(STATE_KEYS):] == STATE_KEYS, keys
                kinds.add("hu")
            elif step.state is not None:
                assert keys == ["seat", "action", "forced", *STATE_KEYS], keys
                kinds.add("step")
    assert {"timed", "step"} <= kinds


def test_three_of_is_the_plain_comparison() -> None:
    """§5.1–§5.3: a 跑/提 goes onto three of the card (坎, 偎, 臭偎, 碰); `three_of` tells it for every
    group the bot deals make and for groups that share only some cards with the triple."""
    groups = {g for steps in _bot_steps() for step in steps if isinstance(step.state, State) for seat in step.state.melds for g in seat}
    groups |= {Group("chi", (c, c, c + 1)) for c in range(N_VALUES - 1)} | {Group("ti", (c,) * 4) for c in range(N_VALUES)}
    groups |= {Group("jiang", (c, c)) for c in range(N_VALUES)} | {Group("chi", (c, c + 1, c)) for c in range(N_VALUES - 1)}
    assert any(len(g.cards) == 3 and len(set(g.cards)) == 1 for g in groups)
    for g in groups:
        for card in range(N_VALUES):
            assert three_of(g, card) == (g.cards == (card,) * 3), (g, card)


def test_summarise_finds_what_the_kept_replay_finds_and_restores_the_collector() -> None:
    """The totals `matchledger replay` prints (summarise, with the collector paused) are those of the
    replay the projection keeps (replay_all), and the collector is left as it was, on or off."""
    rng = random.Random(SEED)
    events = [e for n in range(4) for e in ENGINE.bot_game(start_event(stream=f"sum-{n}", dealer=n % 3), random.Random(rng.getrandbits(64)))]
    kept = list(run_mod.replay_all(events))
    assert gc.isenabled()
    summary = run_mod.summarise(events)
    assert gc.isenabled()
    assert (summary.games, summary.events, summary.moves) == (len(kept), sum(len(g.step_facts) for g in kept), sum(g.moves for g in kept))
    assert summary.findings == [f for g in kept for f in g.findings]
    gc.disable()
    try:
        assert run_mod.summarise(events).moves == summary.moves
        assert not gc.isenabled()
    finally:
        gc.enable()
