"""The turn state machine of paohuzi.md §4: deal and opening, draws with the forced 提/偎/臭偎,
offers resolved by the priority of §6 (胡 > 跑 > 碰 > 吃), discards and the end of the deal."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import msgspec

from replay.paohuzi.cards import LIANGZHANG_INDEX, WALL_START, Counts, counts_of
from replay.paohuzi.hu import HuResult, WinContext, winning_hand
from replay.paohuzi.melds import Group, group_huxi, is_chi_shape
from replay.paohuzi.state import DRAW, HU, PASS, PENG, SEATS, Action, Offer, Pending, State, Win, xiajia
from schemas.paohuzi import PaohuziProfile

replace = msgspec.structs.replace


def _set(values: tuple, seat: int, value: object) -> tuple:  # type: ignore[type-arg]
    return values[:seat] + (value,) + values[seat + 1:]


def _add(counts: Counts, card: int, n: int) -> Counts:
    return counts[:card] + (counts[card] + n,) + counts[card + 1:]


def _bit(card: int) -> int:
    return 1 << card


def _melds(state: State, seat: int, melds: tuple[Group, ...]) -> dict[str, tuple]:  # type: ignore[type-arg]
    """Returns the fields that change with a seat's table groups: the groups and their 胡息 total."""
    huxi = sum(group_huxi(g, state.profile.huxi_table) for g in melds)
    return {"melds": _set(state.melds, seat, melds), "table_huxi": _set(state.table_huxi, seat, huxi)}


def has_discard(hand: Counts) -> bool:
    """Tells whether a hand holds a card it may discard: any card outside a 坎 (§5.7)."""
    return any(0 < n < 3 for n in hand)


# ---- deal and opening (第五条, 第六条) ---------------------------------------------------------


def deal(state: State, dealer: int, hands: Sequence[Sequence[int]]) -> State:
    """Gives each seat its 20 dealt cards; the deal waits for the 亮张."""
    wall = state.deck[WALL_START:] if state.deck is not None else ()
    return replace(state, phase="liang", dealer=dealer, turn=dealer, hands=tuple(counts_of(h) for h in hands), wall=wall)


def reveal_liangzhang(state: State, card: int) -> State:
    """Turns up the 亮张 as the dealer's 21st card, makes the forced initial 提 of every seat and
    opens the deal: 天胡 for the dealer, 地胡 for the others where allowed, then the first discard."""
    hands = _set(state.hands, state.dealer, _add(state.hands[state.dealer], card, 1))
    state = replace(state, liangzhang=card, hands=hands, phase="offer")
    effects: list[tuple[str, int, int]] = []
    for seat in range(SEATS):
        for value, n in enumerate(state.hands[seat]):
            if n == 4:
                state = _meld(state, seat, Group("ti", (value,) * 4), {value: 4})
                state = replace(state, pao_ti=_set(state.pao_ti, seat, state.pao_ti[seat] + 1))
                effects.append(("ti", seat, value))
        if state.pao_ti[seat] >= 2 and state.profile.double_ti_at_deal_no_discard:
            state = replace(state, skip_discard=_set(state.skip_discard, seat, True))
    offers = []
    if _hu_at(state, state.dealer, None, None):
        offers.append(Offer(state.dealer, "open", _hu_choices(state.profile)))
    if state.profile.xian_can_hu_liangzhang:
        for seat in (xiajia(state.dealer), xiajia(xiajia(state.dealer))):
            if _hu_at(state, seat, card, state.dealer):
                offers.append(Offer(seat, "open", _hu_choices(state.profile)))
    pending = Pending(card, state.dealer, from_wall=False, in_hand=True)
    state = replace(state, pending=pending, stage="open", offers=tuple(offers), effects=tuple(effects))
    return _advance(state)


# ---- who may do what ----------------------------------------------------------------------


def win_context(state: State, seat: int, card: int | None, owner: int | None) -> WinContext:
    """Describes how a win by `seat` on `card` (from `owner`) would come about, for the 名堂."""
    opening = state.stage == "open"
    from_wall = state.pending.from_wall if state.pending is not None and card is not None else True
    return WinContext(
        zimo=not opening and (card is None or (owner == seat and from_wall)),
        tianhu=opening and seat == state.dealer,
        dihu=(opening and seat != state.dealer)
        or (card is not None and not from_wall and owner == state.dealer and state.discards_made == 1),
        haidi=not opening and from_wall and state.wall_left == 0,
        tinghu=state.intakes[seat] == 0,
    )


def hu_result(state: State, seat: int) -> HuResult | None:
    """Returns the hand `seat` would win with on the card now on offer (or with its own cards
    after a forced 提/偎), else None."""
    if state.stage.startswith("self") or (state.stage == "open" and seat == state.dealer):
        return _hu_at(state, seat, None, None)
    assert state.pending is not None
    return _hu_at(state, seat, state.pending.card, state.pending.owner)


def _hu_at(state: State, seat: int, card: int | None, owner: int | None) -> HuResult | None:
    if state.dead[seat]:
        return None
    hand = state.hands[seat]
    from_wall = state.pending.from_wall if state.pending is not None else True
    if card is not None and state.pending is not None and state.pending.in_hand and owner == state.dealer:
        from_wall = False
    source = "self" if card is not None and owner == seat else "other"
    ctx = win_context(state, seat, card, owner)
    return winning_hand(state.profile, state.melds[seat], hand, card, source if card is not None else None,
                        card is not None and not from_wall, ctx, state.table_huxi[seat])


def _hu_choices(profile: PaohuziProfile) -> tuple[Action, ...]:
    return (HU, PASS) if profile.hu_optional else (HU,)


def chi_options(hand: Counts, card: int, allow_jiao: bool) -> list[tuple[tuple[int, ...], ...]]:
    """Returns every legal way to eat `card` with this hand: the eaten group, then one 比 group
    for each other copy of the card in hand (比牌, §5.5); 坎 cards may not be used."""
    candidates = [p for p in _partners(card, allow_jiao) if all(0 < hand[c] < 3 for c in p)]
    if not candidates:
        return []
    usable = [n if n < 3 else 0 for n in hand]
    found: set[tuple[tuple[int, ...], ...]] = set()
    for partners in candidates:
        if _take(usable, partners):
            main = tuple(sorted((card, *partners)))
            for bi in _bi(usable, card, allow_jiao):
                found.add((main, *sorted(bi)))
            _put(usable, partners)
    return sorted(found)


@functools.lru_cache(maxsize=64)
def _partners(card: int, allow_jiao: bool) -> tuple[tuple[int, ...], ...]:
    """Returns the pairs of cards that make a 吃-type group with `card`."""
    size, rank = divmod(card, 10)
    base = size * 10
    out = []
    for start in range(max(0, rank - 2), min(rank, 7) + 1):
        out.append(tuple(base + r for r in range(start, start + 3) if r != rank))
    if rank in (1, 6, 9):
        out.append(tuple(base + r for r in (1, 6, 9) if r != rank))
    if allow_jiao:
        other = card + 10 if size == 0 else card - 10
        out.extend([(card, other), (other, other)])
    return tuple(p for p in out if is_chi_shape((card, *p), allow_jiao))


def _take(counts: list[int], cards: Sequence[int]) -> bool:
    """Takes the cards out of `counts` if all are there; leaves `counts` as it was otherwise."""
    for c in cards:
        counts[c] -= 1
    if any(counts[c] < 0 for c in cards):
        _put(counts, cards)
        return False
    return True


def _put(counts: list[int], cards: Sequence[int]) -> None:
    for c in cards:
        counts[c] += 1


def _bi(usable: list[int], card: int, allow_jiao: bool) -> list[list[tuple[int, ...]]]:
    """Returns every way to meld all remaining copies of `card` into 吃-type groups (下比)."""
    if usable[card] == 0:
        return [[]]
    out = []
    for partners in _partners(card, allow_jiao):
        group = (card, *partners)
        if _take(usable, group):
            out.extend([[tuple(sorted(group)), *rest] for rest in _bi(usable, card, allow_jiao)])
            _put(usable, group)
    return out


def _chi_leaves_discard(state: State, seat: int, groups: tuple[tuple[int, ...], ...], card: int) -> bool:
    hand = list(state.hands[seat])
    hand[card] += 1
    for g in groups:
        for c in g:
            hand[c] -= 1
    return state.skip_discard[seat] or has_discard(tuple(hand))


def may_chi(state: State, seat: int, card: int) -> bool:
    """Tells whether `seat` is not barred from eating `card`: 过张, its own discards, a dead hand."""
    return not state.dead[seat] and not ((state.guo_zhang[seat] | state.chou[seat]) & _bit(card))


def chi_seats(state: State, pending: Pending) -> list[int]:
    """Returns who may eat the card on offer, in order: the drawer then its 下家 for a wall card,
    the discarder's 下家 for a discard (§5.5)."""
    if not pending.from_wall or state.profile.chi_wall_card_by == "xiajia_only":
        return [xiajia(pending.owner)]
    return [pending.owner, xiajia(pending.owner)]


def peng_seat(state: State, pending: Pending) -> int | None:
    """Returns the seat that may 碰 the card on offer: another seat holding a pair of it outside a 坎,
    not barred by 过碰 nor dead, with a card left to discard where the profile asks it (§5.4)."""
    for seat in range(SEATS):
        if seat == pending.owner or state.hands[seat][pending.card] != 2 or state.dead[seat]:
            continue
        if state.guo_peng[seat] & _bit(pending.card):
            return None
        after = _add(state.hands[seat], pending.card, -2)
        if state.profile.peng_requires_discard and not (state.skip_discard[seat] or has_discard(after)):
            return None
        return seat
    return None


def pao_seat(state: State, pending: Pending) -> int | None:
    """Returns the seat forced to 跑 the card on offer: a 坎 in hand or 偎 on the table (any card
    from another seat), or a 碰 on the table (wall card by anyone; discard only by profile) (§5.3)."""
    card = pending.card
    for seat in range(SEATS):
        if seat != pending.owner and state.hands[seat][card] == 3:
            return seat
        for g in state.melds[seat]:
            if g.cards == (card,) * 3:
                if g.kind in ("wei", "chou_wei") and seat != pending.owner:
                    return seat
                if g.kind == "peng" and (pending.from_wall or state.profile.peng_pao_on_discard):
                    return seat
    return None


def hu_order(state: State, pending: Pending) -> list[int]:
    """Returns who may hu the card on offer, in priority order (第九条; §6.2, §7.1)."""
    owner = pending.owner
    if not pending.from_wall:
        return [xiajia(owner), xiajia(xiajia(owner))] if state.profile.hu_on_discard else []
    if state.profile.hu_priority == "xiajia_first":
        return [xiajia(owner), xiajia(xiajia(owner)), owner]
    return [owner, xiajia(owner), xiajia(xiajia(owner))]


# ---- transitions --------------------------------------------------------------------------


def draw(state: State, card: int) -> State:
    """The seat to draw turns the top wall card: forced 提/偎/臭偎 first (§4.1), else the card is
    shown and offered to all."""
    seat = state.turn
    wall = state.wall[1:] if state.wall else ()
    state = replace(state, wall=wall, wall_left=state.wall_left - 1, drawn=state.drawn + (card,), effects=())
    forced = forced_private(state, seat, card)
    if forced is None:
        return expose(state, card, seat, from_wall=True)
    if state.profile.hu_vs_forced_order == "hu_first" and _hu_at(state, seat, card, seat):
        pending = Pending(card, seat, from_wall=True)
        offers = (Offer(seat, "before_forced", _hu_choices(state.profile)),)
        return replace(state, phase="offer", pending=pending, stage="before_forced", offers=offers)
    return _apply_forced(state, seat, card, forced)


def forced_private(state: State, seat: int, card: int) -> str | None:
    """Returns the forced action an own draw makes, unseen by others: 提 onto a 坎 or 偎, 偎 (or
    臭偎 after a passed 碰) onto a pair (§5.1, §5.2); None when the card is shown."""
    if state.hands[seat][card] == 3 or any(g.cards == (card,) * 3 and g.kind in ("wei", "chou_wei") for g in state.melds[seat]):
        return "ti"
    if state.hands[seat][card] == 2:
        return "chou_wei" if state.guo_peng[seat] & _bit(card) else "wei"
    return None


def _apply_forced(state: State, seat: int, card: int, kind: str) -> State:
    if kind == "ti":
        state = _upgrade(state, seat, card, "ti")
    else:
        state = _meld(state, seat, Group(kind, (card,) * 3), {card: 2})
    state = replace(state, effects=((kind, seat, card),), pending=None)
    if _hu_at(state, seat, None, None):
        stage = f"self_{kind}"
        return replace(state, phase="offer", stage=stage, offers=(Offer(seat, stage, _hu_choices(state.profile)),))
    return after_intake(state, seat, kind)


def _upgrade(state: State, seat: int, card: int, kind: str) -> State:
    """Makes a 跑/提 of the fourth card: onto a 坎 in hand or onto a group on the table."""
    if state.hands[seat][card] == 3:
        state = _meld(state, seat, Group(kind, (card,) * 4), {card: 3})
    else:
        melds = tuple(Group(kind, (card,) * 4) if g.cards == (card,) * 3 else g for g in state.melds[seat])
        state = replace(state, **_melds(state, seat, melds))
    return replace(state, pao_ti=_set(state.pao_ti, seat, state.pao_ti[seat] + 1))


def _meld(state: State, seat: int, group: Group, from_hand: dict[int, int]) -> State:
    hand = state.hands[seat]
    for card, n in from_hand.items():
        hand = _add(hand, card, -n)
    return replace(state, hands=_set(state.hands, seat, hand), **_melds(state, seat, state.melds[seat] + (group,)))


def expose(state: State, card: int, owner: int, from_wall: bool) -> State:
    """Shows a card to all (示众) and opens the offers: 胡 first (§6)."""
    pending = Pending(card, owner, from_wall)
    state = replace(state, phase="offer", pending=pending, stage="hu")
    offers = tuple(Offer(s, "hu", _hu_choices(state.profile)) for s in hu_order(state, pending) if _hu_at(state, s, card, owner))
    return _advance(replace(state, offers=offers))


def _advance(state: State) -> State:
    """Moves through the priority stages until a seat has a choice or the card is settled."""
    while not state.offers:
        pending = state.pending
        if state.stage == "open":
            return after_intake(replace(state, pending=None, stage=""), state.dealer, "open")
        assert pending is not None
        if state.stage == "hu":
            seat = pao_seat(state, pending)
            if seat is not None:
                state = _upgrade(state, seat, pending.card, "pao")
                state = replace(state, pending=None, stage="", effects=state.effects + (("pao", seat, pending.card),))
                return after_intake(state, seat, "pao")
            seat = peng_seat(state, pending)
            state = replace(state, stage="peng", offers=(Offer(seat, "peng", (PENG, PASS)),) if seat is not None else ())
        elif state.stage == "peng":
            offers = []
            for seat in chi_seats(state, pending):
                if may_chi(state, seat, pending.card):
                    options = [Action("chi", groups=g) for g in chi_options(state.hands[seat], pending.card, state.profile.allow_jiao)
                               if not state.profile.chi_requires_discard or _chi_leaves_discard(state, seat, g, pending.card)]
                    if options:
                        offers.append(Offer(seat, "chi", (*options, PASS)))
            state = replace(state, stage="chi", offers=tuple(offers))
        else:
            row = state.discards[pending.owner] + (pending.card,)
            state = replace(state, discards=_set(state.discards, pending.owner, row), pending=None, stage="")
            return to_draw(state, xiajia(pending.owner))
    return state


def after_intake(state: State, seat: int, kind: str) -> State:
    """After taking a card the seat discards, unless exempt (§5.8): its 2nd and later 跑/提, the
    first intake after two 提 at the deal, or a hand with nothing left to discard."""
    profile = state.profile
    exempt = kind in ("pao", "ti") and state.pao_ti[seat] >= 2 and profile.second_pao_ti_no_discard
    if state.skip_discard[seat]:
        state, exempt = replace(state, skip_discard=_set(state.skip_discard, seat, False)), True
    if exempt:
        return to_draw(state, xiajia(seat))
    if not has_discard(state.hands[seat]):
        if profile.stuck_after_forced == "skip_discard_and_dead":
            state = replace(state, dead=_set(state.dead, seat, True))
        return to_draw(state, xiajia(seat))
    return replace(state, phase="discard", turn=seat, stage="", offers=())


def to_draw(state: State, seat: int) -> State:
    """Hands the turn to `seat` to draw, or ends the deal in 荒庄 when the wall is empty (第十条)."""
    if state.wall_left == 0:
        return replace(state, phase="end", exhausted=True, turn=seat, offers=(), stage="")
    return replace(state, phase="draw", turn=seat, offers=(), stage="")


def _intake_clears(state: State, seat: int) -> State:
    """Forgets 过张/过碰 at an intake where their scope is `until_next_intake` (§13.9)."""
    if state.profile.guo_zhang_scope == "until_next_intake":
        state = replace(state, guo_zhang=_set(state.guo_zhang, seat, 0))
    if state.profile.guo_peng_scope == "until_next_intake":
        state = replace(state, guo_peng=_set(state.guo_peng, seat, 0))
    return state


def discard(state: State, card: int) -> State:
    """The seat to discard lays a card from its hand on offer; it may never eat that value later."""
    seat = state.turn
    hands = _set(state.hands, seat, _add(state.hands[seat], card, -1))
    state = replace(state, hands=hands, chou=_set(state.chou, seat, state.chou[seat] | _bit(card)),
                    discards_made=state.discards_made + 1, effects=())
    return expose(state, card, seat, from_wall=False)


def answer(state: State, action: Action) -> State:
    """Applies the answer of the seat at the head of the offers: hu, 碰, 吃 or pass."""
    offer = state.offers[0]
    seat, pending = offer.seat, state.pending
    state = replace(state, effects=())
    if action.kind == "hu":
        return _win(state, seat)
    if action.kind == "pass":
        return _pass(state, offer)
    assert pending is not None
    state = _intake_clears(state, seat)
    state = replace(state, intakes=_set(state.intakes, seat, state.intakes[seat] + 1), pending=None, offers=())
    if action.kind == "peng":
        state = _meld(state, seat, Group("peng", (pending.card,) * 3), {pending.card: 2})
        return after_intake(state, seat, "peng")
    hand = list(state.hands[seat])
    hand[pending.card] += 1
    for g in action.groups:
        for c in g:
            hand[c] -= 1
    melds = state.melds[seat] + tuple(Group("chi", g) for g in action.groups)
    state = replace(state, hands=_set(state.hands, seat, tuple(hand)), **_melds(state, seat, melds))
    return after_intake(state, seat, "chi")


def _pass(state: State, offer: Offer) -> State:
    seat, pending = offer.seat, state.pending
    if offer.stage.startswith("self_"):
        return after_intake(replace(state, offers=(), stage=""), seat, offer.stage.removeprefix("self_"))
    if offer.stage == "before_forced":
        assert pending is not None
        forced = forced_private(state, seat, pending.card)
        assert forced is not None
        return _apply_forced(replace(state, offers=(), stage=""), seat, pending.card, forced)
    if pending is not None and offer.stage == "peng":
        state = replace(state, guo_peng=_set(state.guo_peng, seat, state.guo_peng[seat] | _bit(pending.card)))
    elif pending is not None and offer.stage == "chi":
        state = replace(state, guo_zhang=_set(state.guo_zhang, seat, state.guo_zhang[seat] | _bit(pending.card)))
    return _advance(replace(state, offers=state.offers[1:]))


def _win(state: State, seat: int) -> State:
    result = hu_result(state, seat)
    assert result is not None
    pending = state.pending
    card = pending.card if pending is not None and hu_takes_pending(state, seat) else None
    owner = pending.owner if card is not None and pending is not None else None
    if card is not None and pending is not None and pending.in_hand and seat != state.dealer:
        state = replace(state, hands=_set(state.hands, state.dealer, _add(state.hands[state.dealer], card, -1)))
    from_wall = pending is None or pending.from_wall
    return replace(state, phase="end", win=Win(seat, card, owner, from_wall, result), offers=(), stage="", pending=None)


def hu_takes_pending(state: State, seat: int) -> bool:
    """Tells whether a hu by `seat` now wins on the card on offer (not on its own completed hand)."""
    return state.pending is not None and not (state.stage == "open" and seat == state.dealer)


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
    counts = list(map(sum, zip(*state.hands))) if state.hands else [0] * 20
    for seat in range(SEATS):
        for g in state.melds[seat]:
            for c in g.cards:
                counts[c] += 1
        for c in state.discards[seat]:
            counts[c] += 1
    if state.pending is not None and not state.pending.in_hand:
        counts[state.pending.card] += 1
    if state.win is not None and state.win.card is not None:
        counts[state.win.card] += 1
    return tuple(counts)


def deck_prefix_ok(state: State) -> bool:
    """Tells whether the known deck agrees with the cards dealt, the 亮张 and every draw so far."""
    if state.deck is None:
        return True
    if state.liangzhang is not None and state.deck[LIANGZHANG_INDEX] != state.liangzhang:
        return False
    return tuple(state.deck[WALL_START:WALL_START + len(state.drawn)]) == state.drawn
