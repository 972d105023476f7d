"""The turn state machine of paohuzi.md §4: deal and opening, draws with the forced 提/偎/臭偎,
offers resolved by the priority of §6 (胡 > 跑 > 碰 > 吃), discards and the end of the deal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.paohuzi.cards import WALL_START, Counts, counts_of
from replay.paohuzi.melds import Group, new_tuple, three_of, total_huxi
from replay.paohuzi.options import (
    adjust,
    bit,
    chi_leaves_discard,
    chi_options,
    chi_seats,
    has_discard,
    hu_at,
    hu_choices,
    hu_order,
    hu_result,
    may_chi,
    opening_result,
    pao_seat,
    peng_seat,
)
from replay.paohuzi.state import DRAW, PASS, PENG, SEATS, Action, Offer, Pending, State, Win, xiajia

# Each transition returns a new state and leaves the one it was given as it was (State is frozen by
# contract, see its docstring): a function changes only a `copy()` it made itself, before returning
# it, or hands that copy to a helper that says it changes its caller's copy (`_offer`, `_advance`,
# `_hand_on`, whose parameter is named `new`).


def _set(values: tuple, seat: int, value: object) -> tuple:  # type: ignore[type-arg]
    """Returns a per-seat tuple with `seat`'s value replaced (built at once for the three seats)."""
    if len(values) == SEATS:
        if seat == 0:
            return (value, values[1], values[2])
        if seat == 1:
            return (values[0], value, values[2])
        if seat == 2:
            return (values[0], values[1], value)
    return values[:seat] + (value,) + values[seat + 1:]


def _melds(state: State, seat: int, melds: tuple[Group, ...], hands: tuple[Counts, ...] | None = None) -> State:
    """Returns the state with a seat's table groups (and their 胡息 total) set, and the hands when given."""
    huxi = total_huxi(melds, state.profile.huxi_table)
    new = state.copy()
    new.melds, new.table_huxi = _set(state.melds, seat, melds), _set(state.table_huxi, seat, huxi)
    if hands is not None:
        new.hands = hands
    return new


# ---- deal and opening (第五条, 第六条) ---------------------------------------------------------


def deal(state: State, dealer: int, hands: Sequence[Sequence[int]]) -> State:
    """Gives each seat its 20 dealt cards; the deal waits for the 亮张."""
    new = state.copy()
    new.phase, new.dealer, new.turn, new.hands = "liang", dealer, dealer, tuple(counts_of(h) for h in hands)
    new.wall = state.deck[WALL_START:] if state.deck is not None else ()
    return new


def reveal_liangzhang(state: State, card: int) -> State:
    """Turns up the 亮张 as the dealer's 21st card, makes the forced initial 提 of every seat and
    opens the deal: 天胡 for the dealer, 地胡 for the others where allowed, then the first discard."""
    state = state.copy()
    state.liangzhang, state.phase = card, "offer"
    state.hands = _set(state.hands, state.dealer, adjust(state.hands[state.dealer], card, 1))
    effects: list[tuple[str, int, int]] = []
    for seat in range(SEATS):
        for value, n in enumerate(state.hands[seat]):
            if n == 4:
                state = _meld(state, seat, Group("ti", (value,) * 4), {value: 4}).copy()
                state.pao_ti = _set(state.pao_ti, seat, state.pao_ti[seat] + 1)
                effects.append(("ti", seat, value))
        state = _deal_exemption(state, seat)
    state = state.copy()
    state.pending = Pending(card, state.dealer, from_wall=False, in_hand=True)
    state.stage, state.effects = "open", tuple(effects)
    order = (state.dealer, xiajia(state.dealer), xiajia(xiajia(state.dealer)))
    offers = tuple(Offer(s, "open", hu_choices(state.profile)) for s in order if opening_result(state, s)[0] is not None)
    return _advance(state, offers)


def _deal_exemption(state: State, seat: int) -> State:
    """Grants the discards a seat with n ≥ 2 提 at the deal skips (§5.8, [PARAM deal_exemption]):
    one under `first_intake`, n − 1 (its 2nd and later 提) under `first_discarding_intake`."""
    n = state.pao_ti[seat]
    if n < 2 or not state.profile.double_ti_at_deal_no_discard:
        return state
    new = state.copy()
    new.skip_discard = _set(state.skip_discard, seat, 1 if state.profile.deal_exemption == "first_intake" else n - 1)
    return new


# ---- transitions --------------------------------------------------------------------------


def draw(state: State, card: int) -> State:
    """The seat to draw turns the top wall card: forced 提/偎/臭偎 first (§4.1), else the card is
    shown and offered to all."""
    seat = state.turn
    forced = forced_private(state, seat, card)  # reads nothing the draw changes
    state = state.copy()
    state.wall = state.wall[1:] if state.wall else ()
    state.wall_left, state.drawn, state.effects, state.settled = state.wall_left - 1, state.drawn + (card,), (), None
    if forced is None:
        state.phase, state.pending, state.stage = "offer", new_tuple(Pending, (card, seat, True, False)), "hu"
        return _offer(state)
    if state.profile.hu_vs_forced_order == "hu_first" and hu_at(state, seat, card, seat):
        state.phase, state.pending, state.stage = "offer", Pending(card, seat, from_wall=True), "before_forced"
        state.offers = (Offer(seat, "before_forced", hu_choices(state.profile)),)
        return state
    return _apply_forced(state, seat, card, forced)


def forced_private(state: State, seat: int, card: int) -> str | None:
    """Returns the forced action an own draw makes, unseen by others: 提 onto a 坎 or 偎, 偎 (or
    臭偎 after a passed 碰) onto a pair (§5.1, §5.2); None when the card is shown."""
    if state.hands[seat][card] == 3 or any(three_of(g, card) and g.kind in ("wei", "chou_wei") for g in state.melds[seat]):
        return "ti"
    if state.hands[seat][card] == 2:
        return "chou_wei" if state.guo_peng[seat] & bit(card) else "wei"
    return None


def _apply_forced(state: State, seat: int, card: int, kind: str) -> State:
    if kind == "ti":
        state = _upgrade(state, seat, card, "ti")
    else:
        state = _meld(state, seat, Group(kind, (card,) * 3), {card: 2})
    state = state.copy()
    state.effects, state.pending = ((kind, seat, card),), None
    if hu_at(state, seat, None, None):
        stage = f"self_{kind}"
        state.phase, state.stage, state.offers = "offer", stage, (Offer(seat, stage, hu_choices(state.profile)),)
        return state
    return after_intake(state, seat, kind)


def _upgrade(state: State, seat: int, card: int, kind: str) -> State:
    """Makes a 跑/提 of the fourth card: onto a 坎 in hand or onto a group on the table."""
    if state.hands[seat][card] == 3:
        state = _meld(state, seat, Group(kind, (card,) * 4), {card: 3})
    else:
        melds = tuple(Group(kind, (card,) * 4) if three_of(g, card) else g for g in state.melds[seat])
        state = _melds(state, seat, melds)
    state = state.copy()
    state.pao_ti = _set(state.pao_ti, seat, state.pao_ti[seat] + 1)
    return state


def _meld(state: State, seat: int, group: Group, from_hand: dict[int, int]) -> State:
    hand = state.hands[seat]
    for card, n in from_hand.items():
        hand = adjust(hand, card, -n)
    return _melds(state, seat, state.melds[seat] + (group,), hands=_set(state.hands, seat, hand))


def expose(state: State, card: int, owner: int, from_wall: bool) -> State:
    """Shows a card to all (示众) and opens the offers: 胡 first (§6)."""
    state = state.copy()
    state.phase, state.pending, state.stage = "offer", Pending(card, owner, from_wall), "hu"
    return _offer(state)


def _offer(new: State) -> State:
    """Opens the offers on the card just shown (the `pending` of `new`, a copy its caller made, at
    the `hu` stage): changes `new` and returns it, or the state the priority stages lead to."""
    pending = new.pending
    assert pending is not None
    offers: tuple[Offer, ...] = ()
    for seat in hu_order(new, pending):
        if hu_at(new, seat, pending.card, pending.owner):
            offers += (new_tuple(Offer, (seat, "hu", hu_choices(new.profile))),)
    return _advance(new, offers)


def _advance(new: State, offers: tuple[Offer, ...]) -> State:
    """Puts the `offers` of the stage of `new` (a copy its caller made) to the seats, or, with none,
    moves through the priority stages until a seat has a choice or the card is settled: changes
    `new` and returns it, or the state an intake leads to. The stages' choices read neither the
    stage nor the offers, so `new` changes only on the way out; every way out sets its offers."""
    if offers:
        new.offers = offers
        return new
    pending, stage = new.pending, new.stage
    if stage == "open":
        new.pending, new.stage = None, ""
        return after_intake(new, new.dealer, "open")
    assert pending is not None
    if stage == "hu":
        seat = pao_seat(new, pending)
        if seat is not None:
            state = _upgrade(new, seat, pending.card, "pao").copy()
            state.pending, state.stage, state.effects = None, "", state.effects + (("pao", seat, pending.card),)
            return after_intake(state, seat, "pao")
        seat = peng_seat(new, pending)
        if seat is not None:
            new.stage, new.offers = "peng", (new_tuple(Offer, (seat, "peng", (PENG, PASS))),)
            return new
        stage = "peng"
    if stage == "peng":
        chi: tuple[Offer, ...] = ()
        for seat in chi_seats(new, pending):
            offer = _chi_offer(new, seat, pending.card)
            if offer is not None:
                chi += (offer,)
        if chi:
            new.stage, new.offers = "chi", chi
            return new
    # Nobody takes the card: it lies in its owner's discard row, the owner's 下家 draws next.
    new.discards = _set(new.discards, pending.owner, new.discards[pending.owner] + (pending.card,))
    new.pending, new.settled = None, pending
    _hand_on(new, xiajia(pending.owner))
    return new


def _chi_offer(state: State, seat: int, card: int) -> Offer | None:
    """Returns the 吃 offer of a seat on the card, or None when it may not or cannot eat it (§5.5)."""
    if not may_chi(state, seat, card):
        return None
    profile = state.profile
    options = [new_tuple(Action, ("chi", -1, groups)) for groups in chi_options(state.hands[seat], card, profile.allow_jiao)
               if not profile.chi_requires_discard or chi_leaves_discard(state, seat, groups, card)]
    return new_tuple(Offer, (seat, "chi", (*options, PASS))) if options else None


_FORCED: Final = frozenset({"wei", "chou_wei", "pao", "ti"})
"""The forced intakes (§5.1–§5.3), counted apart from 吃/碰 for 听胡 ([PARAM tinghu_intakes])."""


def after_intake(state: State, seat: int, kind: str) -> State:
    """After taking a card the seat discards, unless exempt (§5.8): its 2nd and later 跑/提, an
    intake the deal exemption covers, or a hand with nothing left to discard. The dealer's opening
    (`open`) is no intake: the dealer discards the first card (§2 step 5)."""
    profile = state.profile
    exempt = kind in ("pao", "ti") and state.pao_ti[seat] >= 2 and profile.second_pao_ti_no_discard
    new = state.copy()
    if kind in _FORCED:
        new.forced_intakes = _set(state.forced_intakes, seat, state.forced_intakes[seat] + 1)
    # A 重跑 needs no discard anyway: only `first_intake` spends the deal exemption on it.
    if kind != "open" and state.skip_discard[seat] and (not exempt or profile.deal_exemption == "first_intake"):
        new.skip_discard, exempt = _set(state.skip_discard, seat, state.skip_discard[seat] - 1), True
    if exempt:
        _hand_on(new, xiajia(seat))
        return new
    if not has_discard(state.hands[seat]):
        if profile.stuck_after_forced == "skip_discard_and_dead":
            new.dead = _set(state.dead, seat, True)
        _hand_on(new, xiajia(seat))
        return new
    new.phase, new.turn, new.stage, new.offers = "discard", seat, "", ()
    return new


def to_draw(state: State, seat: int) -> State:
    """Hands the turn to `seat` to draw, or ends the deal in 荒庄 when the wall is empty (第十条)."""
    new = state.copy()
    _hand_on(new, seat)
    return new


def _hand_on(new: State, seat: int) -> None:
    """Changes `new`, a copy its caller made, to hand the turn to `seat` to draw, or ends the deal
    when the wall is empty (第十条; the wall never refills, so the 荒庄 mark is false until then)."""
    new.phase, new.exhausted = ("end", True) if new.wall_left == 0 else ("draw", False)
    new.turn, new.offers, new.stage = seat, (), ""


def discard(state: State, card: int) -> State:
    """The seat to discard lays a card from its hand on offer; it may never eat that value later."""
    seat = state.turn
    new = state.copy()
    new.hands = _set(state.hands, seat, adjust(state.hands[seat], card, -1))
    new.chou, new.discards_made, new.effects = _set(state.chou, seat, state.chou[seat] | bit(card)), state.discards_made + 1, ()
    new.phase, new.pending, new.stage = "offer", new_tuple(Pending, (card, seat, False, False)), "hu"
    return _offer(new)


def answer(state: State, action: Action) -> State:
    """Applies the answer of the seat at the head of the offers: hu, 碰, 吃 or pass."""
    offer = state.offers[0]
    seat, pending = offer.seat, state.pending
    if action.kind == "hu":
        return _win(state, seat)
    if action.kind == "pass":
        return _pass(state, offer)
    assert pending is not None
    new = state.copy()
    # An intake forgets 过张/过碰 where their scope is `until_next_intake` (§13.9).
    if state.profile.guo_zhang_scope == "until_next_intake":
        new.guo_zhang = _set(state.guo_zhang, seat, 0)
    if state.profile.guo_peng_scope == "until_next_intake":
        new.guo_peng = _set(state.guo_peng, seat, 0)
    new.intakes, new.pending, new.offers, new.effects = _set(state.intakes, seat, state.intakes[seat] + 1), None, (), ()
    state = new
    if action.kind == "peng":
        state = _meld(state, seat, Group("peng", (pending.card,) * 3), {pending.card: 2})
        return after_intake(state, seat, "peng")
    hand = list(state.hands[seat])
    hand[pending.card] += 1
    for g in action.groups:
        for c in g:
            hand[c] -= 1
    melds = state.melds[seat] + tuple(new_tuple(Group, ("chi", g)) for g in action.groups)
    state = _melds(state, seat, melds, hands=_set(state.hands, seat, tuple(hand)))
    return after_intake(state, seat, "chi")


def _pass(state: State, offer: Offer) -> State:
    seat, pending = offer.seat, state.pending
    new = state.copy()
    new.effects = ()
    if offer.stage.startswith("self_"):
        new.offers, new.stage = (), ""
        return after_intake(new, seat, offer.stage.removeprefix("self_"))
    if offer.stage == "before_forced":
        assert pending is not None
        forced = forced_private(state, seat, pending.card)
        assert forced is not None
        new.offers, new.stage = (), ""
        return _apply_forced(new, seat, pending.card, forced)
    if pending is not None and offer.stage == "peng":
        new.guo_peng = _set(state.guo_peng, seat, state.guo_peng[seat] | bit(pending.card))
    elif pending is not None and offer.stage == "chi":
        new.guo_zhang = _set(state.guo_zhang, seat, state.guo_zhang[seat] | bit(pending.card))
    return _advance(new, state.offers[1:])


def _win(state: State, seat: int) -> State:
    """The seat at the head of the offers wins (its hu is legal): the deal ends."""
    result = hu_result(state, seat)
    assert result is not None
    pending = state.pending
    card = pending.card if pending is not None and hu_takes_pending(state, seat) else None
    owner = pending.owner if card is not None and pending is not None else None
    new = state.copy()
    if card is not None and pending is not None and pending.in_hand and seat != state.dealer:
        new.hands = _set(state.hands, state.dealer, adjust(state.hands[state.dealer], card, -1))
    from_wall = pending is None or pending.from_wall
    new.phase, new.win, new.offers, new.stage, new.pending, new.effects = "end", Win(seat, card, owner, from_wall, result), (), "", None, ()
    return new


def hu_takes_pending(state: State, seat: int) -> bool:
    """Tells whether a hu by `seat` now wins on the card on offer (not on its own completed hand)."""
    if state.stage == "open":
        return opening_result(state, seat)[1]
    return state.pending is not None


def current_seat(state: State) -> int | None:
    """Returns the seat to act, or None at a chance point or the end."""
    if state.phase == "offer":
        return state.offers[0].seat
    if state.phase == "discard" or (state.phase == "draw" and state.deck is not None):
        return state.turn
    return None


def legal(state: State) -> list[Action]:
    """Returns the legal actions of the seat to act, or the possible draws from an unknown wall."""
    if state.phase == "offer":
        return list(state.offers[0].actions)
    if state.phase == "discard":
        return [Action("discard", card=c) for c, n in enumerate(state.hands[state.turn]) if 0 < n < 3]
    if state.phase == "draw":
        if state.deck is not None:
            return [DRAW]
        return [Action("draw", card=c) for c, n in enumerate(unseen(state)) if n > 0]
    return []


def unseen(state: State) -> Counts:
    """Returns the cards not in any hand, group, discard row or on offer: the wall as a multiset."""
    census = census_of(state)
    return tuple(4 - n for n in census)


def census_of(state: State) -> Counts:
    """Counts every card outside the wall: hands, table groups, discard rows and the card on offer."""
    counts = list(map(sum, zip(*state.hands)))
    for melds in state.melds:
        for group in melds:
            for c in group.cards:
                counts[c] += 1
    for row in state.discards:
        for c in row:
            counts[c] += 1
    if state.pending is not None and not state.pending.in_hand:
        counts[state.pending.card] += 1
    if state.win is not None and state.win.card is not None:
        counts[state.win.card] += 1
    return tuple(counts)
