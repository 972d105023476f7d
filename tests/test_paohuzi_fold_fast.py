"""The replay's shortcuts against the plain reading they stand for (paohuzi.md §2, §14; 第五条):
the deal read by slices of the deck gives card i to seat (dealer + i) mod 3; the fields the fold
takes from each state in one call (`_StateFacts`, for the step facts and the card conservation
check of §14) are the state's; a step's facts keep their keys in the documented order; the
per-seat tuples the rules rebuild change only the seat's value.

MATCHLEDGER_SEED sets the seed (printed); MATCHLEDGER_GAMES the number of bot deals (default 12)."""

from __future__ import annotations

import os
import random

from replay.paohuzi import ENGINE, fold, rules
from replay.paohuzi.cards import LIANGZHANG_INDEX, deal_hands, full_deck
from replay.paohuzi.state import State
from tests.test_paohuzi_support import start_event

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


def test_state_fields_taken_in_one_call_are_the_states() -> None:
    """§14: the fields the conservation check and the step facts read, taken at once, are the state's own."""
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
