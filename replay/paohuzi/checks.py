"""Why an action is illegal: the stable finding code, the article and the message (§5, 第七–九条)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.paohuzi.cards import ids
from replay.paohuzi.melds import is_chi_shape
from replay.paohuzi.options import best_at, chi_seats, has_discard, hu_at, may_chi, opening_result, peng_seat
from replay.paohuzi.rules import legal
from replay.paohuzi.state import DRAW, Action, Pending, State, xiajia
from replay.protocol import IllegalActionError

ART_SEATS: Final = "第二条 竞技跑胡子定义 (三人对抗)"
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

ART_FORCED: Final = {"pao": "第四条(十五) 跑牌", "chou_wei": "第四条(十三) 臭偎", "wei": "第四条 术语定义 (偎)", "ti": "第四条 术语定义 (提)"}
"""The article of each forced action (the 偎 and 提 entries of 第四条 are not in the known fragment)."""
_SECTION: Final = {"pao": "§5.3", "chou_wei": "§5.1", "wei": "§5.1", "ti": "§5.2"}
_CLAIMS: Final = frozenset({"hu", "peng", "chi"})

Problem = tuple[str, str | None, str]
"""A broken rule: its code, its article and why."""


def illegal(state: State, action: Action) -> IllegalActionError:
    """Returns the error naming the first rule `action` breaks in `state` (the seat to act's)."""
    code, article, why = _diagnose(state, action)
    return IllegalActionError(code, f"{action.notation()} by seat {_seat(state)}: {why}", article)


def forced_problem(effects: Sequence[tuple[str, int, int]], why: str) -> Problem:
    """Returns F02: an action out of the flow the forced actions just derived set (§5.1–§5.3), naming them."""
    kind = effects[0][0]
    forced = ", ".join(f"{k} {ids([c])} by seat {s} ({_SECTION[k]})" for k, s, c in effects)
    return "paohuzi.F02", ART_FORCED[kind], f"{why}; the rules force {forced} first (was it skipped?)"


def _seat(state: State) -> int:
    return state.offers[0].seat if state.phase == "offer" and state.offers else state.turn


def _diagnose(state: State, action: Action) -> Problem:
    if state.phase == "end":
        return "paohuzi.X01", ART_END, "the deal is over"
    if action.kind in _CLAIMS and state.phase in ("discard", "draw"):
        return _late_claim(state, state.turn, action)
    if state.phase == "discard":
        return _discard(state, action)
    if state.phase == "draw":
        if action.kind == "draw" and state.deck is None:
            return "paohuzi.C01", ART_DEAL, f"no copy of {ids([action.card])} is left in the wall"
        return "paohuzi.T01", ART_PLAY, f"seat {state.turn} must draw"
    if state.phase != "offer":
        return "paohuzi.T01", ART_DEAL, "the deal is not complete"
    offer = state.offers[0]
    if action.kind == "pass":
        return "paohuzi.A42", ART_HU, "hu is compulsory in this profile (hu_optional = false)"
    if action.kind in _CLAIMS:
        return claim_problem(state, offer.seat, action)
    return "paohuzi.T01", ART_PLAY, f"{action.kind} is not a choice now{_on(state.pending)}"


def _on(pending: Pending | None) -> str:
    return f" on {ids([pending.card])}" if pending is not None else ""


def claim_problem(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a hu, 碰 or 吃 by `seat` breaks on the card on offer; P01 (T02 for the seat
    at the head) when the claim is open to the seat but comes before its turn in 第九条's order."""
    pending = state.pending
    if pending is None and action.kind != "hu":
        return "paohuzi.T01", ART_PLAY, "no card is on offer"
    problem = _claim_rule(state, seat, action, pending)
    if problem is not None:
        return problem
    head = state.offers[0]
    if head.seat != seat:
        return "paohuzi.P01", ART_PRIORITY, f"seat {head.seat} has not answered its {head.stage} offer{_on(pending)} yet"
    return "paohuzi.T02", ART_PRIORITY, f"must first answer the {head.stage} offer{_on(pending)}"


def claim_out_of_turn(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a hu, 碰 or 吃 by a seat that is not to act breaks (第七–九条)."""
    if state.phase == "offer":
        return claim_problem(state, seat, action)
    return _late_claim(state, seat, action)


def _late_claim(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a claim breaks outside an offer: hu on the seat's own cards while it must discard,
    or a claim on the card just laid down (`settled`), which nobody claimed in time."""
    if action.kind == "hu" and state.phase == "discard" and seat == state.turn:
        return _hu_rule(state, seat, None, None) or ("paohuzi.T01", ART_PLAY, f"seat {state.turn} must discard")
    settled = state.settled
    if settled is None:
        return "paohuzi.T01", ART_PLAY, f"no card is on offer; seat {state.turn} must {state.phase}"
    probe = state.replace(pending=settled)
    problem = _claim_rule(probe, seat, action, settled)
    return problem or ("paohuzi.T01", ART_PLAY, f"{ids([settled.card])} was laid down unclaimed; seat {state.turn} must draw")


def _claim_rule(state: State, seat: int, action: Action, pending: Pending | None) -> Problem | None:
    """Returns the rule a claim by `seat` on `pending` breaks, or None when the seat may make it."""
    if action.kind == "hu":
        return _hu_claim(state, seat, pending)
    assert pending is not None
    if action.kind == "peng":
        return _peng(state, seat, pending)
    return _chi(state, seat, action, pending)


def _hu_claim(state: State, seat: int, pending: Pending | None) -> Problem | None:
    if state.stage == "open":
        if opening_result(state, seat)[0] is None:
            return "paohuzi.A40", ART_HU, "no opening win (天胡, 地胡 on the 亮张 or 三提五坎)"
        return None
    if pending is None:
        return _hu_rule(state, seat, None, None)
    if not pending.from_wall and not state.profile.hu_on_discard:
        return "paohuzi.A41", ART_HU, f"no hu on another seat's discard {ids([pending.card])} (§7.1, hu_on_discard = false)"
    return _hu_rule(state, seat, pending.card, pending.owner)


def _hu_rule(state: State, seat: int, card: int | None, owner: int | None) -> Problem | None:
    """Returns A40 with the derived 胡息 when `seat` does not win on `card` (own cards when None)."""
    if hu_at(state, seat, card, owner) is not None:
        return None
    on = f" on {ids([card])}" if card is not None else " on its own cards"
    if state.dead[seat]:
        return "paohuzi.A40", ART_HU, f"no winning hand{on}: the hand is dead (stuck after a forced action, §5.8)"
    best = best_at(state, seat, card, owner)
    if best is None:
        return "paohuzi.A40", ART_HU, f"no winning hand{on}: the cards do not form 7 门子 (§7.2)"
    return "paohuzi.A40", ART_HU, f"no winning hand{on}: 7 门子 with {best.huxi} 胡息, below the minimum {state.profile.min_huxi} (§7.3)"


def _discard(state: State, action: Action) -> Problem:
    if action.kind != "discard":
        return "paohuzi.T01", ART_PLAY, f"seat {state.turn} must discard"
    n = state.hands[state.turn][action.card] if 0 <= action.card < 20 else 0
    if n >= 3:
        return "paohuzi.A11", "第四条(九) 坎", f"{ids([action.card])} is a 坎 and cannot be discarded"
    return "paohuzi.A10", ART_PLAY, f"{ids([action.card]) if action.card >= 0 else '?'} is not in the hand"


def _peng(state: State, seat: int, pending: Pending) -> Problem | None:
    card = pending.card
    if seat == pending.owner or state.hands[seat][card] != 2:
        return "paohuzi.A30", ART_PLAY, f"no pair of {ids([card])} outside a 坎 to 碰 with"
    if state.guo_peng[seat] & (1 << card):
        return "paohuzi.A31", ART_PLAY, f"passed a 碰 on {ids([card])} earlier (过碰)"
    if peng_seat(state, pending) is None:
        return "paohuzi.A32", ART_PLAY, "the 碰 would leave nothing to discard"
    return None


def _chi(state: State, seat: int, action: Action, pending: Pending) -> Problem | None:
    card = pending.card
    groups = action.groups
    if seat not in chi_seats(state, pending):
        who = "the drawer or its 下家" if pending.from_wall else f"the discarder's 下家, seat {xiajia(pending.owner)}"
        return "paohuzi.A20", ART_PLAY, f"seat {seat} may not eat this {ids([card])} (only {who}, §5.5)"
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
    return None


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
