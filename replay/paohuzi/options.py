"""Who may do what with a card (paohuzi.md §5–§7, 第九条): hu checks, 吃 with 比牌, 碰, forced 跑,
and the order in which seats are asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.paohuzi.cards import N_VALUES, Counts
from replay.paohuzi.hu import HuResult, Source, WinContext, best_hand, completes, may_win, san_ti_wu_kan, winning_hand
from replay.paohuzi.melds import chi_partners, new_tuple, three_of
from replay.paohuzi.state import HU, PASS, SEATS, Action, Pending, State, xiajia
from schemas.paohuzi import PaohuziProfile


def adjust(counts: Counts, card: int, n: int) -> Counts:
    """Returns the multiset with `n` more (or fewer) of `card`."""
    changed = list(counts)
    changed[card] += n
    return tuple(changed)


def bit(card: int) -> int:
    """Returns the bit of a card value in a per-seat memory such as 过张 or 过碰."""
    return 1 << card


def has_discard(hand: Sequence[int]) -> bool:
    """Tells whether a hand holds a card it may discard: any card outside a 坎 (§5.7)."""
    return 1 in hand or 2 in hand


def win_context(state: State, seat: int, card: int | None, owner: int | None) -> WinContext:
    """Describes how a win by `seat` on `card` (from `owner`) would come about, for the 名堂."""
    opening = state.stage == "open"
    from_wall = state.pending.from_wall if state.pending is not None and card is not None else True
    zimo = not opening and (card is None or (owner == seat and from_wall))
    tianhu = opening and seat == state.dealer
    dihu = (opening and seat != state.dealer) or (card is not None and not from_wall and owner == state.dealer and state.discards_made == 1)
    haidi = not opening and from_wall and state.wall_left == 0
    tinghu = state.intakes[seat] == 0 and (state.profile.tinghu_intakes == "chi_peng" or state.forced_intakes[seat] == 0)
    return new_tuple(WinContext, (zimo, tianhu, dihu, haidi, tinghu))


def hu_result(state: State, seat: int) -> HuResult | None:
    """Returns the hand `seat` would win with on the card now on offer (or with its own cards
    after a forced 提/偎), else None."""
    if state.stage == "open":
        return opening_result(state, seat)[0]
    if state.stage.startswith("self"):
        return hu_at(state, seat, None, None)
    assert state.pending is not None
    return hu_at(state, seat, state.pending.card, state.pending.owner)


def opening_result(state: State, seat: int) -> tuple[HuResult | None, bool]:
    """Returns the best opening win of a seat (§2): 天胡 for the dealer, 地胡 on the 亮张 for the
    others where allowed, or 三提五坎 where enabled; and whether it wins on the 亮张."""
    profile = state.profile
    found: list[tuple[HuResult, bool]] = []
    if seat == state.dealer:
        regular = hu_at(state, seat, None, None)
    else:
        regular = hu_at(state, seat, state.liangzhang, state.dealer) if profile.xian_can_hu_liangzhang else None
    if regular is not None:
        found.append((regular, seat != state.dealer))
    instant = san_ti_wu_kan(profile, state.melds[seat], state.hands[seat]) if profile.san_ti_wu_kan else None
    if instant is not None and not state.dead[seat]:
        found.append((instant, False))
    if not found:
        return None, False
    return max(found, key=lambda f: f[0].score.s)


def hu_at(state: State, seat: int, card: int | None, owner: int | None) -> HuResult | None:
    """Returns the hand `seat` wins with on `card` from `owner` (None: on its own cards), else None."""
    if state.dead[seat]:
        return None
    hand, melds, profile = state.hands[seat], state.melds[seat], state.profile
    if not may_win(profile, melds, hand, card, state.table_huxi[seat]):
        return None
    source, from_discard, ctx = _win_terms(state, seat, card, owner)
    if not completes(profile, melds, hand, card, source, from_discard):
        return None
    return winning_hand(profile, melds, hand, card, source, from_discard, ctx)


def best_at(state: State, seat: int, card: int | None, owner: int | None) -> HuResult | None:
    """Returns the best decomposition `seat` would have on `card` from `owner` whatever its 胡息
    (to say why a claimed hu fails), or None when the cards make no 7 门子."""
    return best_hand(state.profile, state.melds[seat], state.hands[seat], card, *_win_terms(state, seat, card, owner))


def _win_terms(state: State, seat: int, card: int | None, owner: int | None) -> tuple[Source | None, bool, WinContext]:
    """Returns how a win on `card` from `owner` comes about: its source, whether off a discard, its context."""
    pending = state.pending
    from_wall = pending.from_wall if pending is not None else True
    if card is not None and pending is not None and pending.in_hand and owner == state.dealer:
        from_wall = False
    source: Source = "self" if card is not None and owner == seat else "other"
    return source if card is not None else None, card is not None and not from_wall, win_context(state, seat, card, owner)


def hu_choices(profile: PaohuziProfile) -> tuple[Action, ...]:
    """Returns the answers to a hu offer: hu or pass, or hu alone where hu is compulsory."""
    return (HU, PASS) if profile.hu_optional else (HU,)


def chi_options(hand: Counts, card: int, allow_jiao: bool) -> list[tuple[tuple[int, ...], ...]]:
    """Returns every legal way to eat `card` with this hand: the eaten group, then one 比 group
    for each other copy of the card in hand (比牌, §5.5); 坎 cards may not be used."""
    partners = chi_partners(card, allow_jiao)
    groups = _groups_with(card, allow_jiao)  # each `partners` pair with the card, in ascending order
    candidates = [k for k in range(len(partners)) if _holds_partners(hand, partners[k])]
    if not candidates:
        return []
    if not 0 < hand[card] < 3:
        # No copy of the card outside a 坎: nothing to 比, each eaten group stands alone.
        return sorted((groups[k],) for k in candidates)
    usable = [n if n < 3 else 0 for n in hand]
    found: set[tuple[tuple[int, ...], ...]] = set()
    for k in candidates:
        _take(usable, partners[k])
        main = groups[k]
        for bi in _bi(usable, card, allow_jiao):
            found.add((main, *sorted(bi)))
        _put(usable, partners[k])
    return sorted(found)


def _holds_partners(hand: Counts, pair: tuple[int, ...]) -> bool:
    """Tells whether a hand holds both partners of a 吃 outside a 坎 (both copies when they are one card)."""
    a, b = pair[0], pair[1]
    return 0 < hand[a] < 3 and 0 < hand[b] < 3 and (a != b or hand[a] == 2)


def _take(counts: list[int], cards: tuple[int, ...]) -> bool:
    """Takes the cards out of `counts` if all are there; leaves `counts` as it was otherwise."""
    for c in cards:
        counts[c] -= 1
    for c in cards:
        if counts[c] < 0:
            _put(counts, cards)
            return False
    return True


def _put(counts: list[int], cards: tuple[int, ...]) -> None:
    for c in cards:
        counts[c] += 1


def _bi(usable: list[int], card: int, allow_jiao: bool) -> list[list[tuple[int, ...]]]:
    """Returns every way to meld all remaining copies of `card` into 吃-type groups (下比)."""
    if usable[card] == 0:
        return [[]]
    out = []
    for group in _groups_with(card, allow_jiao):
        if _take(usable, group):
            out.extend([[group, *rest] for rest in _bi(usable, card, allow_jiao)])
            _put(usable, group)
    return out


def _groups_with(card: int, allow_jiao: bool) -> tuple[tuple[int, ...], ...]:
    """Returns the 吃-type groups holding `card`, each in ascending order."""
    return _GROUPS_WITH[card] if allow_jiao else _GROUPS_WITH_NO_JIAO[card]


_GROUPS_WITH: Final = tuple(tuple(tuple(sorted((c, *p))) for p in chi_partners(c, True)) for c in range(N_VALUES))
_GROUPS_WITH_NO_JIAO: Final = tuple(tuple(tuple(sorted((c, *p))) for p in chi_partners(c, False)) for c in range(N_VALUES))
"""`_groups_with` of each card number, with and without 绞, worked out once."""


def chi_leaves_discard(state: State, seat: int, groups: tuple[tuple[int, ...], ...], card: int) -> bool:
    """Tells whether the seat still has a card to discard after this 吃 (or needs none)."""
    if state.skip_discard[seat]:
        return True
    hand = list(state.hands[seat])
    hand[card] += 1
    for g in groups:
        for c in g:
            hand[c] -= 1
    return has_discard(hand)


def may_chi(state: State, seat: int, card: int) -> bool:
    """Tells whether `seat` is not barred from eating `card`: 过张, its own discards, a dead hand."""
    return not state.dead[seat] and not ((state.guo_zhang[seat] | state.chou[seat]) & bit(card))


def chi_seats(state: State, pending: Pending) -> list[int]:
    """Returns who may eat the card on offer, in order: the drawer then its 下家 for a wall card,
    the discarder's 下家 for a discard (§5.5)."""
    if not pending.from_wall or state.profile.chi_wall_card_by == "xiajia_only":
        return [xiajia(pending.owner)]
    return [pending.owner, xiajia(pending.owner)]


def peng_seat(state: State, pending: Pending) -> int | None:
    """Returns the seat that may 碰 the card on offer: another seat holding a pair of it outside a 坎,
    not barred by 过碰 nor dead, with a card left to discard where the profile asks it (§5.4)."""
    hands = state.hands
    for seat in range(SEATS):
        if seat == pending.owner or hands[seat][pending.card] != 2 or state.dead[seat]:
            continue
        if state.guo_peng[seat] & bit(pending.card):
            return None
        after = adjust(state.hands[seat], pending.card, -2)
        if state.profile.peng_requires_discard and not (state.skip_discard[seat] or has_discard(after)):
            return None
        return seat
    return None


def pao_seat(state: State, pending: Pending) -> int | None:
    """Returns the seat forced to 跑 the card on offer: a 坎 in hand or 偎 on the table (any card
    from another seat), or a 碰 on the table (wall card by anyone; discard only by profile) (§5.3)."""
    card, owner = pending.card, pending.owner
    hands, melds = state.hands, state.melds
    for seat in range(SEATS):
        if seat != owner and hands[seat][card] == 3:
            return seat
        for g in melds[seat]:
            if three_of(g, card):
                if g.kind in ("wei", "chou_wei") and seat != owner:
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
