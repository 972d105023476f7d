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

# Each transition (`deal`, `reveal_liangzhang`, `draw`, `discard`, `answer`, `expose`) returns a
# new state and leaves the one it was given as it was (State is frozen by contract, see its
# docstring): it makes one `copy()`, and it and the helpers it calls change only that copy, named
# `new`, before it is returned. A helper reads `new` as changed so far, as it would have read the
# state of each step had every step built one.


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


def _melds(new: State, seat: int, melds: tuple[Group, ...], hands: tuple[Counts, ...] | None = None) -> None:
    """Sets a seat's table groups (and their 胡息 total), and the hands when given."""
    huxi = total_huxi(melds, new.profile.huxi_table)
    new.melds, new.table_huxi = _set(new.melds, seat, melds), _set(new.table_huxi, seat, huxi)
    if hands is not None:
        new.hands = hands


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
    new = state.copy()
    new.liangzhang, new.phase = card, "offer"
    new.hands = _set(state.hands, state.dealer, adjust(state.hands[state.dealer], card, 1))
    effects: list[tuple[str, int, int]] = []
    for seat in range(SEATS):
        for value, n in enumerate(new.hands[seat]):
            if n == 4:
                _meld(new, seat, Group("ti", (value,) * 4), {value: 4})
                new.pao_ti = _set(new.pao_ti, seat, new.pao_ti[seat] + 1)
                effects.append(("ti", seat, value))
        _deal_exemption(new, seat)
    new.pending = Pending(card, new.dealer, from_wall=False, in_hand=True)
    new.stage, new.effects = "open", tuple(effects)
    order = (new.dealer, xiajia(new.dealer), xiajia(xiajia(new.dealer)))
    _advance(new, tuple(Offer(s, "open", hu_choices(new.profile)) for s in order if opening_result(new, s)[0] is not None))
    return new


def _deal_exemption(new: State, seat: int) -> None:
    """Grants the discards a seat with n ≥ 2 提 at the deal skips (§5.8, [PARAM deal_exemption]):
    one under `first_intake`, n − 1 (its 2nd and later 提) under `first_discarding_intake`."""
    n = new.pao_ti[seat]
    if n >= 2 and new.profile.double_ti_at_deal_no_discard:
        new.skip_discard = _set(new.skip_discard, seat, 1 if new.profile.deal_exemption == "first_intake" else n - 1)


# ---- transitions --------------------------------------------------------------------------


def draw(state: State, card: int) -> State:
    """The seat to draw turns the top wall card: forced 提/偎/臭偎 first (§4.1), else the card is
    shown and offered to all."""
    seat = state.turn
    forced = forced_private(state, seat, card)  # reads nothing the draw changes
    new = state.copy()
    new.wall = state.wall[1:] if state.wall else ()
    new.wall_left, new.drawn, new.effects, new.settled = state.wall_left - 1, state.drawn + (card,), (), None
    if forced is None:
        new.phase, new.pending, new.stage = "offer", new_tuple(Pending, (card, seat, True, False)), "hu"
        _offer(new)
    elif new.profile.hu_vs_forced_order == "hu_first" and hu_at(new, seat, card, seat):
        new.phase, new.pending, new.stage = "offer", Pending(card, seat, from_wall=True), "before_forced"
        new.offers = (Offer(seat, "before_forced", hu_choices(new.profile)),)
    else:
        _apply_forced(new, seat, card, forced)
    return new


def forced_private(state: State, seat: int, card: int) -> str | None:
    """Returns the forced action an own draw makes, unseen by others: 提 onto a 坎 or 偎, 偎 (or
    臭偎 after a passed 碰) onto a pair (§5.1, §5.2); None when the card is shown."""
    if state.hands[seat][card] == 3 or any(three_of(g, card) and g.kind in ("wei", "chou_wei") for g in state.melds[seat]):
        return "ti"
    if state.hands[seat][card] == 2:
        return "chou_wei" if state.guo_peng[seat] & bit(card) else "wei"
    return None


def _apply_forced(new: State, seat: int, card: int, kind: str) -> None:
    if kind == "ti":
        _upgrade(new, seat, card, "ti")
    else:
        _meld(new, seat, Group(kind, (card,) * 3), {card: 2})
    new.effects, new.pending = ((kind, seat, card),), None
    if hu_at(new, seat, None, None):
        stage = f"self_{kind}"
        new.phase, new.stage, new.offers = "offer", stage, (Offer(seat, stage, hu_choices(new.profile)),)
    else:
        _after_intake(new, seat, kind)


def _upgrade(new: State, seat: int, card: int, kind: str) -> None:
    """Makes a 跑/提 of the fourth card: onto a 坎 in hand or onto a group on the table."""
    if new.hands[seat][card] == 3:
        _meld(new, seat, Group(kind, (card,) * 4), {card: 3})
    else:
        _melds(new, seat, tuple(Group(kind, (card,) * 4) if three_of(g, card) else g for g in new.melds[seat]))
    new.pao_ti = _set(new.pao_ti, seat, new.pao_ti[seat] + 1)


def _meld(new: State, seat: int, group: Group, from_hand: dict[int, int]) -> None:
    hand = new.hands[seat]
    for card, n in from_hand.items():
        hand = adjust(hand, card, -n)
    _melds(new, seat, new.melds[seat] + (group,), hands=_set(new.hands, seat, hand))


def expose(state: State, card: int, owner: int, from_wall: bool) -> State:
    """Shows a card to all (示众) and opens the offers: 胡 first (§6)."""
    new = state.copy()
    new.phase, new.pending, new.stage = "offer", Pending(card, owner, from_wall), "hu"
    _offer(new)
    return new


def _offer(new: State) -> None:
    """Opens the offers on the card just shown (the `pending` of `new`, at the `hu` stage)."""
    pending = new.pending
    assert pending is not None
    offers: tuple[Offer, ...] = ()
    for seat in hu_order(new, pending):
        if hu_at(new, seat, pending.card, pending.owner):
            offers += (new_tuple(Offer, (seat, "hu", hu_choices(new.profile))),)
    _advance(new, offers)


def _advance(new: State, offers: tuple[Offer, ...]) -> None:
    """Puts the `offers` of the stage to the seats, or, with none, moves through the priority stages
    until a seat has a choice or the card is settled. The stages' choices read neither the stage
    nor the offers, so these change only on the way out; every way out sets the offers."""
    if offers:
        new.offers = offers
        return
    pending, stage = new.pending, new.stage
    if stage == "open":
        new.pending, new.stage = None, ""
        _after_intake(new, new.dealer, "open")
        return
    assert pending is not None
    if stage == "hu":
        seat = pao_seat(new, pending)
        if seat is not None:
            _upgrade(new, seat, pending.card, "pao")
            new.pending, new.stage, new.effects = None, "", new.effects + (("pao", seat, pending.card),)
            _after_intake(new, seat, "pao")
            return
        seat = peng_seat(new, pending)
        if seat is not None:
            new.stage, new.offers = "peng", (new_tuple(Offer, (seat, "peng", (PENG, PASS))),)
            return
        stage = "peng"
    if stage == "peng":
        chi: tuple[Offer, ...] = ()
        for seat in chi_seats(new, pending):
            offer = _chi_offer(new, seat, pending.card)
            if offer is not None:
                chi += (offer,)
        if chi:
            new.stage, new.offers = "chi", chi
            return
    # Nobody takes the card: it lies in its owner's discard row, the owner's 下家 draws next.
    new.discards = _set(new.discards, pending.owner, new.discards[pending.owner] + (pending.card,))
    new.pending, new.settled = None, pending
    _hand_on(new, xiajia(pending.owner))


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


def _after_intake(new: State, seat: int, kind: str) -> None:
    """After taking a card the seat discards, unless exempt (§5.8): its 2nd and later 跑/提, an
    intake the deal exemption covers, or a hand with nothing left to discard. The dealer's opening
    (`open`) is no intake: the dealer discards the first card (§2 step 5)."""
    profile = new.profile
    exempt = kind in ("pao", "ti") and new.pao_ti[seat] >= 2 and profile.second_pao_ti_no_discard
    if kind in _FORCED:
        new.forced_intakes = _set(new.forced_intakes, seat, new.forced_intakes[seat] + 1)
    # A 重跑 needs no discard anyway: only `first_intake` spends the deal exemption on it.
    if kind != "open" and new.skip_discard[seat] and (not exempt or profile.deal_exemption == "first_intake"):
        new.skip_discard, exempt = _set(new.skip_discard, seat, new.skip_discard[seat] - 1), True
    if exempt:
        _hand_on(new, xiajia(seat))
    elif not has_discard(new.hands[seat]):
        if profile.stuck_after_forced == "skip_discard_and_dead":
            new.dead = _set(new.dead, seat, True)
        _hand_on(new, xiajia(seat))
    else:
        new.phase, new.turn, new.stage, new.offers = "discard", seat, "", ()


def _hand_on(new: State, seat: int) -> None:
    """Hands the turn to `seat` to draw, or ends the deal when the wall is empty (第十条; the wall
    never refills, so the 荒庄 mark is false until then)."""
    new.phase, new.exhausted = ("end", True) if new.wall_left == 0 else ("draw", False)
    new.turn, new.offers, new.stage = seat, (), ""


def discard(state: State, card: int) -> State:
    """The seat to discard lays a card from its hand on offer; it may never eat that value later."""
    seat = state.turn
    new = state.copy()
    new.hands = _set(state.hands, seat, adjust(state.hands[seat], card, -1))
    new.chou, new.discards_made, new.effects = _set(state.chou, seat, state.chou[seat] | bit(card)), state.discards_made + 1, ()
    new.phase, new.pending, new.stage = "offer", new_tuple(Pending, (card, seat, False, False)), "hu"
    _offer(new)
    return new


def answer(state: State, action: Action) -> State:
    """Applies the answer of the seat at the head of the offers: hu, 碰, 吃 or pass."""
    offer = state.offers[0]
    seat, pending = offer.seat, state.pending
    new = state.copy()
    new.effects = ()
    if action.kind == "hu":
        _win(new, seat)
        return new
    if action.kind == "pass":
        _pass(new, offer)
        return new
    assert pending is not None
    # An intake forgets 过张/过碰 where their scope is `until_next_intake` (§13.9).
    if state.profile.guo_zhang_scope == "until_next_intake":
        new.guo_zhang = _set(state.guo_zhang, seat, 0)
    if state.profile.guo_peng_scope == "until_next_intake":
        new.guo_peng = _set(state.guo_peng, seat, 0)
    new.intakes, new.pending, new.offers = _set(state.intakes, seat, state.intakes[seat] + 1), None, ()
    if action.kind == "peng":
        _meld(new, seat, Group("peng", (pending.card,) * 3), {pending.card: 2})
        _after_intake(new, seat, "peng")
        return new
    hand = list(new.hands[seat])
    hand[pending.card] += 1
    for g in action.groups:
        for c in g:
            hand[c] -= 1
    melds = new.melds[seat] + tuple(new_tuple(Group, ("chi", g)) for g in action.groups)
    _melds(new, seat, melds, hands=_set(new.hands, seat, tuple(hand)))
    _after_intake(new, seat, "chi")
    return new


def _pass(new: State, offer: Offer) -> None:
    seat, pending = offer.seat, new.pending
    if offer.stage.startswith("self_"):
        new.offers, new.stage = (), ""
        _after_intake(new, seat, offer.stage.removeprefix("self_"))
        return
    if offer.stage == "before_forced":
        assert pending is not None
        forced = forced_private(new, seat, pending.card)
        assert forced is not None
        new.offers, new.stage = (), ""
        _apply_forced(new, seat, pending.card, forced)
        return
    if pending is not None and offer.stage == "peng":
        new.guo_peng = _set(new.guo_peng, seat, new.guo_peng[seat] | bit(pending.card))
    elif pending is not None and offer.stage == "chi":
        new.guo_zhang = _set(new.guo_zhang, seat, new.guo_zhang[seat] | bit(pending.card))
    _advance(new, new.offers[1:])


def _win(new: State, seat: int) -> None:
    """The seat at the head of the offers wins (its hu is legal): the deal ends."""
    result = hu_result(new, seat)
    assert result is not None
    pending = new.pending
    card = pending.card if pending is not None and hu_takes_pending(new, seat) else None
    owner = pending.owner if card is not None and pending is not None else None
    if card is not None and pending is not None and pending.in_hand and seat != new.dealer:
        new.hands = _set(new.hands, new.dealer, adjust(new.hands[new.dealer], card, -1))
    from_wall = pending is None or pending.from_wall
    new.phase, new.win, new.offers, new.stage, new.pending = "end", Win(seat, card, owner, from_wall, result), (), "", None


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
