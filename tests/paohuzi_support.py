"""Shared helpers of the paohuzi tests: start events, scripted decks, replays that collect codes."""

from __future__ import annotations

import random
from collections.abc import Sequence

from replay.paohuzi import ENGINE, PROFILES
from replay.paohuzi.cards import LIANGZHANG_INDEX, N_VALUES, WALL_START, parse_cards
from schemas.common import GameStarted
from schemas.envelope import Event, SeatHolder
from schemas.paohuzi import PaohuziProfile

TS0 = 1_767_225_600_000


def start_event(profile: str | PaohuziProfile = "default", stream: str = "pz-r1-t1-g1", dealer: int = 0,
                board: str = "b1") -> GameStarted:
    """Returns a game.started of a paohuzi deal with three registered players."""
    rules = PROFILES[profile] if isinstance(profile, str) else profile
    return GameStarted(
        stream=stream, seq=0, ts=TS0, profile=rules,
        seats=[SeatHolder(seat=s, player=f"P{s + 1}") for s in range(3)], first=dealer, board=board,
    )


def scripted_deck(hands: Sequence[str], liang: str, wall: str, dealer: int = 0) -> list[int]:
    """Builds a deck order that deals the given hands (Chinese names, up to 20 each; filled from the
    rest without new triples), turns `liang` as the 亮张 and puts `wall` on top of the wall."""
    rest = [c for c in range(N_VALUES) for _ in range(4)]
    wanted = [parse_cards(h) for h in hands]
    top = parse_cards(liang) + parse_cards(wall)
    for c in [c for h in wanted for c in h] + top:
        rest.remove(c)
    random.Random(0).shuffle(rest)
    full = []
    for hand in wanted:
        # Fill with cards the hand holds at most twice, so no unasked-for 坎 or 提 appears.
        while len(hand) < 20:
            card = next(c for c in rest if hand.count(c) < 2)
            rest.remove(card)
            hand = hand + [card]
        full.append(hand)
    deck = [0] * 80
    for seat in range(3):
        for k in range(20):
            deck[3 * k + (seat - dealer) % 3] = full[seat][k]
    deck[LIANGZHANG_INDEX] = top[0]
    deck[WALL_START:] = top[1:] + rest
    assert sorted(deck) == sorted(c for c in range(N_VALUES) for _ in range(4))
    return deck


def codes(events: Sequence[Event]) -> list[str]:
    """Replays events in collect mode and returns the finding codes in order."""
    return [f.code for step in ENGINE.replay(events) for f in step.findings if f.severity == "error"]


def last_state(events: Sequence[Event]):  # type: ignore[no-untyped-def]
    """Replays events and returns the final state."""
    return list(ENGINE.replay(events))[-1].state


def table(hands: Sequence[str], melds: Sequence[str] = ("", "", ""), wall: str = "", turn: int = 0,
          profile: PaohuziProfile | None = None, **fields: object):  # type: ignore[no-untyped-def]
    """Builds a mid-deal state with seat `turn` to draw from a known wall (Chinese card names)."""
    from replay.paohuzi.cards import counts_of
    from replay.paohuzi.melds import total_huxi
    from replay.paohuzi.report import parse_melds
    from replay.paohuzi.state import State

    cards = tuple(parse_cards(wall))
    groups = tuple(tuple(parse_melds(m)) if m else () for m in melds)
    rules = profile or PaohuziProfile()
    return State(
        profile=rules, stream="pz-test", phase="draw", dealer=0, turn=turn, deck=(),
        wall=cards, wall_left=len(cards) + 10, hands=tuple(counts_of(parse_cards(h)) for h in hands),
        melds=groups, table_huxi=tuple(total_huxi(g, rules.huxi_table) for g in groups), liangzhang=0,
        **fields,  # type: ignore[arg-type]
    )
