"""Why an action is illegal: the stable finding code, the article and the message (§5, 第七–九条)."""

from __future__ import annotations

from typing import Final

from replay.paohuzi.cards import ids
from replay.paohuzi.melds import is_chi_shape
from replay.paohuzi.options import chi_seats, has_discard, may_chi, peng_seat
from replay.paohuzi.rules import legal
from replay.paohuzi.state import DRAW, Action, State
from replay.protocol import IllegalActionError

ART_DEAL: Final = "第五条"
ART_LIANG: Final = "第六条"
ART_PLAY: Final = "第七条"
ART_HU: Final = "第八条"
ART_PRIORITY: Final = "第九条"
ART_END: Final = "第十条"
ART_SCORE: Final = "第十一条"
ART_BI: Final = "第四条(二十) 比牌"
ART_HUXI: Final = "第四条(二十四) 胡息, 附录四"
ART_MINGTANG: Final = "附录五"


def illegal(state: State, action: Action) -> IllegalActionError:
    """Returns the error naming the first rule `action` breaks in `state` (the seat to act's)."""
    code, article, why = _diagnose(state, action)
    return IllegalActionError(code, f"{action.notation()} by seat {_seat(state)}: {why}", article)


def _seat(state: State) -> int:
    return state.offers[0].seat if state.phase == "offer" and state.offers else state.turn


def _diagnose(state: State, action: Action) -> tuple[str, str | None, str]:
    if state.phase == "end":
        return "paohuzi.X01", ART_END, "the deal is over"
    if state.phase == "discard":
        return _discard(state, action)
    if state.phase == "draw":
        if action.kind == "draw" and state.deck is None:
            return "paohuzi.C01", ART_DEAL, f"no copy of {ids([action.card])} is left in the wall"
        return "paohuzi.T01", ART_PLAY, f"seat {state.turn} must draw"
    if state.phase != "offer":
        return "paohuzi.T01", ART_DEAL, "the deal is not complete"
    offer = state.offers[0]
    pending = state.pending
    card = f" on {ids([pending.card])}" if pending is not None else ""
    if action.kind == "hu":
        return "paohuzi.A40", ART_HU, f"no winning hand{card} (7 门子 and at least {state.profile.min_huxi} 胡息)"
    if action.kind == "pass":
        return "paohuzi.A42", ART_HU, "hu is compulsory in this profile (hu_optional = false)"
    if offer.stage != "chi" and offer.stage != "peng" and action.kind in ("peng", "chi"):
        return "paohuzi.T02", ART_PRIORITY, f"must first answer the {offer.stage} offer{card}"
    if pending is None:
        return "paohuzi.T01", ART_PLAY, "no card is on offer"
    if action.kind == "peng":
        return _peng(state, offer.seat)
    if action.kind == "chi":
        return _chi(state, offer.seat, action)
    return "paohuzi.T01", ART_PLAY, f"{action.kind} is not a choice now{card}"


def _discard(state: State, action: Action) -> tuple[str, str | None, str]:
    if action.kind != "discard":
        return "paohuzi.T01", ART_PLAY, f"seat {state.turn} must discard"
    n = state.hands[state.turn][action.card] if 0 <= action.card < 20 else 0
    if n >= 3:
        return "paohuzi.A11", "第四条(九) 坎", f"{ids([action.card])} is a 坎 and cannot be discarded"
    return "paohuzi.A10", ART_PLAY, f"{ids([action.card]) if action.card >= 0 else '?'} is not in the hand"


def _peng(state: State, seat: int) -> tuple[str, str | None, str]:
    assert state.pending is not None
    card = state.pending.card
    if seat == state.pending.owner or state.hands[seat][card] != 2:
        return "paohuzi.A30", ART_PLAY, f"no pair of {ids([card])} outside a 坎 to 碰 with"
    if state.guo_peng[seat] & (1 << card):
        return "paohuzi.A31", ART_PLAY, f"passed a 碰 on {ids([card])} earlier (过碰)"
    if peng_seat(state, state.pending) is None:
        return "paohuzi.A32", ART_PLAY, "the 碰 would leave nothing to discard"
    return "paohuzi.T02", ART_PRIORITY, "not the seat's turn to 碰"


def _chi(state: State, seat: int, action: Action) -> tuple[str, str | None, str]:
    assert state.pending is not None
    card = state.pending.card
    groups = action.groups
    if seat not in chi_seats(state, state.pending):
        return "paohuzi.A20", ART_PRIORITY, f"seat {seat} may not eat this card (only the drawer or the 下家)"
    if not may_chi(state, seat, card):
        return "paohuzi.A24", ART_PLAY, f"{ids([card])} was passed or discarded by this seat earlier (过张/臭牌)"
    if not groups or card not in groups[0] or any(len(g) != 3 or not is_chi_shape(g, state.profile.allow_jiao) for g in groups):
        return "paohuzi.A22", ART_PLAY, "the groups are not sequences or 绞 containing the card"
    hand = list(state.hands[seat])
    if any(hand[c] >= 3 for g in groups for c in g):
        return "paohuzi.A21", "第四条(九) 坎", "a 坎 card cannot be used to eat"
    hand[card] += 1
    for g in groups:
        for c in g:
            hand[c] -= 1
    if any(n < 0 for n in hand):
        return "paohuzi.A21", ART_PLAY, "the hand does not hold these cards"
    if hand[card] > 0 or any(card not in g for g in groups[1:]):
        return "paohuzi.A23", ART_BI, f"every other {ids([card])} in hand must be 比'd into a 吃 group"
    if state.profile.chi_requires_discard and not has_discard(tuple(hand)) and not state.skip_discard[seat]:
        return "paohuzi.A25", ART_PLAY, "the 吃 would leave nothing to discard"
    return "paohuzi.T02", ART_PRIORITY, "not the seat's turn to eat"


def check(state: State, action: Action) -> None:
    """Checks that `action` is legal for the seat to act.

    :raises IllegalActionError: with the code and article of the broken rule.
    """
    if not is_legal(state, action):
        raise illegal(state, action)


def is_legal(state: State, action: Action) -> bool:
    """Tells whether `action` is among the legal actions of the seat to act (without listing them)."""
    if state.phase == "offer":
        return action in state.offers[0].actions
    if state.phase == "discard":
        return action.kind == "discard" and 0 <= action.card < 20 and 0 < state.hands[state.turn][action.card] < 3
    if state.phase == "draw" and state.deck is not None:
        return action == DRAW
    return action in legal(state)
