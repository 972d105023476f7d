"""胡牌条件 (第八条; paohuzi.md §7): the maximising decomposition of a winning hand, its 胡息,
名堂 and deal score."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, Literal, NamedTuple

from replay.paohuzi.cards import N_VALUES, Counts
from replay.paohuzi.melds import (
    FOUR_KINDS,
    Group,
    Score,
    Stats,
    chi_partners,
    deal_score,
    group_huxi,
    mingtang,
    new_tuple,
    stats_of,
    three_of,
    total_huxi,
)
from schemas.paohuzi import HuxiTable, PaohuziProfile

Source = Literal["self", "other"]
MENZI: Final = 7
"""Every winning hand is exactly 7 门子 (§7.2)."""


class WinContext(NamedTuple):
    """How a win comes about, for the 名堂 that depend on it (§9)."""

    zimo: bool = False
    tianhu: bool = False
    dihu: bool = False
    haidi: bool = False
    tinghu: bool = False


PLAIN_WIN = WinContext()
"""A win with none of the circumstances that make 名堂 (no 自摸, 天胡 …)."""


class HuResult(NamedTuple):
    """A complete hand: its chosen decomposition, 胡息, 名堂 and score."""

    groups: tuple[Group, ...]
    huxi: int
    stats: Stats
    mingtang: tuple[tuple[str, int], ...]
    score: Score


def best_hand(
    profile: PaohuziProfile, melds: Sequence[Group], hand: Counts, card: int | None = None,
    source: Source | None = None, from_discard: bool = False, ctx: WinContext = PLAIN_WIN,
) -> HuResult | None:
    """Returns the best complete decomposition of table groups + concealed hand + winning card by
    the profile's objective (§7.4), whether or not its 胡息 reaches `min_huxi`; None if incomplete."""
    found = _prepared(profile, melds, hand, card, source)
    if found is None:
        return None
    melds, hand, card, source, concealed = found
    shuahou = card is not None and sum(hand) == 1
    best: HuResult | None = None
    best_key: tuple[int, int] = (-1, -1)
    for fixed, pool, triples in _placements(profile, melds, concealed, card, source, from_discard):
        need = MENZI - len(fixed)
        pair_ok = _pair_needed(profile, fixed, sum(pool), need)
        if pair_ok is None:
            continue
        for rest in _split(pool, 0, pair_ok, profile.allow_jiao, triples, need):
            result = _result(profile, tuple(fixed) + tuple(rest), ctx, shuahou)
            key = (result.score.s, result.huxi)
            if profile.decomposition_objective == "max_huxi":
                key = (result.huxi, result.score.s)
            if key > best_key:
                best, best_key = result, key
    return best


def _prepared(
    profile: PaohuziProfile, melds: Sequence[Group], hand: Counts, card: int | None, source: Source | None,
) -> tuple[Sequence[Group], Counts, int | None, Source | None, _Concealed] | None:
    """Returns the cards a hu search starts from, the forced 提/偎 of a self-drawn card made first
    (`forced_placement`), with the concealed hand; None when a card of it can join no group."""
    forced = forced_placement(profile, melds, hand, card, source)
    if forced is not None:
        melds, hand, card, source = forced.melds, forced.hand, None, None
    concealed = _concealed(hand, profile.kan_locked)
    if not _may_complete(concealed, card):
        return None
    return melds, hand, card, source, concealed


def _pair_needed(profile: PaohuziProfile, fixed: Sequence[Group], size: int, need: int) -> bool | None:
    """Tells whether the pool's `need` groups must include the pair 将, from its card count, or None
    when no split can fit (§7.2): with k 跑/提 the 7 门子 hold 20 + k cards, exactly one pair among
    them; without, 21 cards and no pair (unless the profile allows one without 跑/提)."""
    four = any(g.kind in FOUR_KINDS for g in fixed)
    if size == 3 * need - 1 and (four or not profile.pair_requires_pao_or_ti):
        return True
    if size == 3 * need and not four:
        return False
    return None


class Forced(NamedTuple):
    """The forced 提/偎 a self-drawn winning card makes before any hu (§5.1, §5.2), and the cards after it."""

    kind: str
    melds: tuple[Group, ...]
    hand: Counts


def forced_placement(
    profile: PaohuziProfile, melds: Sequence[Group], hand: Counts, card: int | None, source: Source | None,
) -> Forced | None:
    """Returns the forced 提 (onto a 坎 or 偎) or 偎 (onto a pair) a self-drawn card makes first where
    the profile puts forced actions before hu (§4.1, §6, `hu_vs_forced_order = forced_first`), as
    the replay does; None for another seat's card, under `hu_first`, or when nothing is forced."""
    if card is None or source != "self" or profile.hu_vs_forced_order != "forced_first":
        return None
    if hand[card] == 3:
        return Forced("ti", (*melds, Group("ti", (card,) * 4)), _without(hand, card))
    for i, g in enumerate(melds):
        if three_of(g, card) and g.kind in ("wei", "chou_wei"):
            return Forced("ti", (*melds[:i], Group("ti", (card,) * 4), *melds[i + 1:]), hand)
    if hand[card] == 2:
        return Forced("wei", (*melds, Group("wei", (card,) * 3)), _without(hand, card))
    return None


def _without(hand: Counts, card: int) -> Counts:
    """Returns the hand with every copy of `card` taken out."""
    return hand[:card] + (0,) + hand[card + 1:]


def winning_hand(
    profile: PaohuziProfile, melds: Sequence[Group], hand: Counts, card: int | None = None,
    source: Source | None = None, from_discard: bool = False, ctx: WinContext = PLAIN_WIN,
) -> HuResult | None:
    """Returns the best decomposition if the hand wins (complete, 胡息 ≥ `min_huxi`), else None."""
    result = best_hand(profile, melds, hand, card, source, from_discard, ctx)
    return result if result is not None and result.huxi >= profile.min_huxi else None


def san_ti_wu_kan(profile: PaohuziProfile, melds: Sequence[Group], hand: Counts) -> HuResult | None:
    """三提五坎 (§2, §7.5): three 提 or five 坎 at the deal win at once, whatever the 胡息 and the
    rest of the hand (S4); scored as the minimum 胡息 at least, with no other 名堂."""
    tis = [g for g in melds if g.kind == "ti"]
    kans = [Group("kan", (v,) * 3) for v in range(N_VALUES) if hand[v] == 3]
    if len(tis) < 3 and len(kans) < 5:
        return None
    rest = tuple(v for v in range(N_VALUES) if hand[v] != 3 for _ in range(hand[v]))
    groups = (*melds, *kans, *((Group("rest", rest),) if rest else ()))
    huxi = sum(group_huxi(g, profile.huxi_table) for g in groups)
    fans = [("三提五坎", 1)]
    score = deal_score(max(huxi, profile.min_huxi), fans, False, profile)
    return HuResult(groups, huxi, stats_of(groups, False, False, False, True, False), tuple(fans), score)


def may_win(profile: PaohuziProfile, melds: tuple[Group, ...], hand: Counts, card: int | None, table_huxi: int) -> bool:
    """Tells whether a hand might win on `card` (fast necessary tests before the search): every
    card of the pool can join some group, and the 胡息 bound with the table groups' `table_huxi`
    reaches `min_huxi`."""
    concealed = _concealed(hand, profile.kan_locked)
    if not _may_complete(concealed, card):
        return False
    return table_huxi + _bound(concealed, profile.huxi_table, melds, hand, card) >= profile.min_huxi


def completes(
    profile: PaohuziProfile, melds: Sequence[Group], hand: Counts, card: int | None = None,
    source: Source | None = None, from_discard: bool = False,
) -> bool:
    """Tells whether `best_hand` finds a complete decomposition (whatever its 胡息): the same
    placements and split, searched only until one split is found and building no group. Most cards
    shown to a seat that pass `may_win` still make no 7 门子, and this answers them for a fraction
    of the full search."""
    found = _prepared(profile, melds, hand, card, source)
    if found is None:
        return False
    melds, hand, card, source, concealed = found
    for fixed, pool, triples in _placements(profile, melds, concealed, card, source, from_discard):
        need = MENZI - len(fixed)
        pair_ok = _pair_needed(profile, fixed, sum(pool), need)
        if pair_ok is not None and _splits(pool, 0, pair_ok, profile.allow_jiao, triples, need):
            return True
    return False


# ---- the concealed hand, worked out once per hand ---------------------------------------------


class _Concealed:
    """A concealed hand as the hu checks see it (a seat's hand is checked against every card shown
    until it changes, so this is cached per hand): the locked 坎 set aside (as 提 when four), the
    pool left to split, the triples the split may still use as 坎 (none when locked), the values
    held three or four times (坎 for the 胡息 bound), and `reach`: the winning cards that might
    complete the hand."""

    def __init__(self, kans: tuple[Group, ...], pool: Counts, triples: frozenset[int], kan_values: frozenset[int], reach: int) -> None:
        self.kans = kans
        self.pool = pool
        self.triples = triples
        self.kan_values = kan_values
        self.reach = reach
        self.small_kans = self.big_kans = self.small_fours = self.big_fours = 0
        """How many of `kan_values` are small and big cards held three times, and four times (the
        胡息 bound counts a triple as a 坎, four as the better of 坎 and 提)."""
        for v in kan_values:
            four = pool[v] == 4 or any(g.kind == "ti" and g.cards[0] == v for g in kans)
            if v >= 10 and four:
                self.big_fours += 1
            elif v >= 10:
                self.big_kans += 1
            elif four:
                self.small_fours += 1
            else:
                self.small_kans += 1


_ANY_CARD: Final = (1 << N_VALUES) - 1
"""`reach` of a pool in which every card can join some group."""
_NEAR: Final = tuple(sum(1 << c for c in {v, *(c for pair in chi_partners(v, True) for c in pair)}) for v in range(N_VALUES))
"""The cards that can share a group with each card (itself included: pairs, 坎, 绞), as bits."""
_PARTNER_BITS: Final = tuple(
    tuple((1 << a | 1 << b, 1 << a if a == b else 0) for a, b in chi_partners(v, True) if a != v) for v in range(N_VALUES)
)
"""For each card, the partners that make a group with one copy of it, as bits: the cards held, and the
card held twice where both partners are one value (a pair with a second copy, 绞 v v 拾, needs
what a single card lacks, so those are left out)."""
_NONE: Final[frozenset[int]] = frozenset()
_CACHE_SIZE: Final = 1024
"""Hands kept by `_concealed` (for each `kan_locked`): below the distinct hands of a few hundred
deals, so a replay of many deals does not run on a warm cache; within a deal the hit rate is what counts."""
_LOCKED: Final[dict[Counts, _Concealed]] = {}
_UNLOCKED: Final[dict[Counts, _Concealed]] = {}


def _concealed(hand: Counts, kan_locked: bool) -> _Concealed:
    """Returns the concealed hand of `hand`, from the cache when it was seen (emptied when full).
    The hands asked about last are found by identity first: a card on offer is checked against
    each seat's hand, which stays the same tuple from state to state until the seat's cards change."""
    for seen in _RECENT:
        if seen.hand is hand and seen.kan_locked == kan_locked:
            return seen.concealed
    cache = _LOCKED if kan_locked else _UNLOCKED
    found = cache.get(hand)
    if found is None:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        found = cache[hand] = _conceal(hand, kan_locked)
    _RECENT.insert(0, _Seen(hand, kan_locked, found))
    del _RECENT[_RECENT_SIZE:]
    return found


class _Seen:
    """A hand `_concealed` was asked about, with its answer."""

    def __init__(self, hand: Counts, kan_locked: bool, concealed: _Concealed) -> None:
        self.hand = hand
        self.kan_locked = kan_locked
        self.concealed = concealed


_RECENT: Final[list[_Seen]] = []
_RECENT_SIZE: Final = 4
"""The hands asked about last (most recent first): one per seat and the hand just before a change."""


def _conceal(hand: Counts, kan_locked: bool) -> _Concealed:
    held = [v for v in range(N_VALUES) if hand[v] >= 3]
    if not held:
        return _Concealed((), hand, _NONE, _NONE, _reach(hand))
    triples = frozenset(held)
    if not kan_locked:
        return _Concealed((), hand, triples, triples, _reach(hand))
    kans = tuple([_KAN[v] if hand[v] == 3 else new_tuple(Group, ("ti", (v,) * hand[v])) for v in triples])
    pool = list(hand)
    for v in held:
        pool[v] = 0
    locked = tuple(pool)
    return _Concealed(kans, locked, _NONE, triples, _reach(locked))


def _reach(pool: Counts) -> int:
    """Returns the winning cards that might complete a pool: a single card with no partners for
    any group stays out of every split unless the winning card lands next to it."""
    held = twice = 0
    for v, n in enumerate(pool):
        if n:
            held |= 1 << v
        if n > 1:
            twice |= 1 << v
    reach = _ANY_CARD
    for v, n in enumerate(pool):
        if n == 1:
            for cards, pair in _PARTNER_BITS[v]:
                if (held & cards) == cards and (twice & pair) == pair:
                    break
            else:
                reach &= _NEAR[v]
    return reach


def _may_complete(concealed: _Concealed, card: int | None) -> bool:
    """Tells whether the hand might be complete with the winning card (False only where a card of
    the pool can join no group, whichever way the winning card is placed)."""
    if card is None:
        return concealed.reach == _ANY_CARD
    return bool(concealed.reach >> card & 1)


def _bound(concealed: _Concealed, table: HuxiTable, melds: tuple[Group, ...], hand: Counts, card: int | None) -> int:
    """Returns an upper bound of the 胡息 the concealed cards and the winning card can add to the
    table groups: every triple in hand as 坎 (four of a card as 提), as many 一二三/二七十 as the
    cards allow, and the winning card as a 跑/提 (on top of the group it joins) or as a triple with a pair."""
    kan, ti = table.kan, table.ti
    bound = (concealed.small_kans * kan[0] + concealed.big_kans * kan[1]
             + concealed.small_fours * max(kan[0], ti[0]) + concealed.big_fours * max(kan[1], ti[1]))
    extra = -1  # the winning card, counted in with the hand's for the sequences
    if card is not None:
        extra = card
        size = 1 if card >= 10 else 0
        if hand[card] == 3 or _has_triple(melds, card):
            bound += max(table.pao[size], table.ti[size])
        elif hand[card] == 2:
            bound += max(table.wei[size], table.peng[size])
    s123, s2710 = table.s123, table.s2710
    return (bound + _times(hand, extra, 0, 1, 2) * s123[0] + _times(hand, extra, 10, 11, 12) * s123[1]
            + _times(hand, extra, 1, 6, 9) * s2710[0] + _times(hand, extra, 11, 16, 19) * s2710[1])


def _times(hand: Counts, extra: int, a: int, b: int, c: int) -> int:
    """Returns how many groups of the cards a, b, c the hand and the card `extra` (-1: none) hold:
    the least of their counts."""
    n = hand[a] + 1 if a == extra else hand[a]
    m = hand[b] + 1 if b == extra else hand[b]
    if m < n:
        n = m
    m = hand[c] + 1 if c == extra else hand[c]
    if m < n:
        n = m
    return n


def _has_triple(melds: tuple[Group, ...], card: int) -> bool:
    """Tells whether a table group is three of `card` (a 偎, 臭偎 or 碰 a fourth copy would join)."""
    for g in melds:
        if three_of(g, card):
            return True
    return False


# ---- the search -------------------------------------------------------------------------------


def _result(profile: PaohuziProfile, groups: tuple[Group, ...], ctx: WinContext, shuahou: bool) -> HuResult:
    huxi = total_huxi(groups, profile.huxi_table)
    stats = stats_of(groups, ctx.tianhu, ctx.dihu, ctx.haidi, ctx.tinghu, shuahou)
    fans = mingtang(stats, profile)
    score = deal_score(huxi, fans, ctx.zimo, profile) if huxi >= profile.min_huxi else Score(0, 0, 0)
    return HuResult(groups, huxi, stats, tuple(fans), score)


def _placements(
    profile: PaohuziProfile, melds: Sequence[Group], concealed: _Concealed, card: int | None,
    source: Source | None, from_discard: bool,
) -> Iterator[tuple[list[Group], list[int], frozenset[int]]]:
    """Yields each way to seat the winning card: into a 坎/偎/碰 as 跑/提 (跑胡), onto a pair as a
    triple, or into the concealed pool — with the locked 坎 taken out first (§7.2, §7.4)."""
    fixed = [*melds, *concealed.kans]
    pool = list(concealed.pool)
    triples = concealed.triples
    if card is None:
        yield fixed, pool, triples
        return
    own = source == "self"
    merges = []
    for i, g in enumerate(fixed):
        if three_of(g, card) and g.kind in ("kan", "wei", "chou_wei", "peng"):
            if g.kind == "peng" and from_discard and not profile.peng_pao_on_discard:
                continue
            kind = "ti" if own and g.kind != "peng" else "pao"
            merges.append(fixed[:i] + [Group(kind, (card,) * 4)] + fixed[i + 1:])
    if merges and (own or profile.allow_pao_hu):
        for merged in merges:
            yield merged, pool, triples
    if not merges or profile.allow_po_pao_hu:
        if pool[card] == 2:
            kind = "wei" if own else profile.external_third_as
            yield fixed + [Group(kind, (card,) * 3)], [n if v != card else 0 for v, n in enumerate(pool)], triples
        added = list(pool)
        added[card] += 1
        yield fixed, added, triples


def _split(
    counts: list[int], i: int, pair_ok: bool, jiao: bool, triples: frozenset[int], need: int,
) -> Iterator[list[Group]]:
    """Yields every split of the concealed pool into exactly `need` groups: sequences (一二三,
    二七十 included), 绞, 坎 (only where unlocked) and at most one pair (§14)."""
    while i < N_VALUES and counts[i] == 0:
        i += 1
    if i == N_VALUES:
        if need == 0:
            yield []
        return
    if need == 0:
        return
    for group, pair in _shapes_at(counts, i, pair_ok, jiao, triples):
        for c in group.cards:
            counts[c] -= 1
        for rest in _split(counts, i, pair_ok and not pair, jiao, triples, need - 1):
            yield [group, *rest]
        for c in group.cards:
            counts[c] += 1


def _splits(counts: list[int], i: int, pair_ok: bool, jiao: bool, triples: frozenset[int], need: int) -> bool:
    """Tells whether `_split` yields any split: the same shapes tried at the lowest card, with
    plain recursion and no group built, stopping at the first split found."""
    while i < N_VALUES and counts[i] == 0:
        i += 1
    if i == N_VALUES:
        return need == 0
    if need == 0:
        return False
    rest = need - 1
    if i in triples and counts[i] >= 3 and _splits_taking(counts, i, i, i, pair_ok, jiao, triples, rest):
        return True
    rank = i % 10
    if rank <= 7 and counts[i + 1] and counts[i + 2] and _splits_taking(counts, i, i + 1, i + 2, pair_ok, jiao, triples, rest):
        return True
    if rank == 1 and counts[i + 5] and counts[i + 8] and _splits_taking(counts, i, i + 5, i + 8, pair_ok, jiao, triples, rest):
        return True
    if jiao and i < 10:
        if counts[i] >= 2 and counts[i + 10] >= 1 and _splits_taking(counts, i, i, i + 10, pair_ok, jiao, triples, rest):
            return True
        if counts[i + 10] >= 2 and _splits_taking(counts, i, i + 10, i + 10, pair_ok, jiao, triples, rest):
            return True
    if pair_ok and counts[i] >= 2:
        counts[i] -= 2
        found = _splits(counts, i, False, jiao, triples, rest)
        counts[i] += 2
        return found
    return False


def _splits_taking(counts: list[int], a: int, b: int, c: int, pair_ok: bool, jiao: bool, triples: frozenset[int], need: int) -> bool:
    """Tells whether the rest splits once the group a b c (a the lowest card) is taken."""
    counts[a] -= 1
    counts[b] -= 1
    counts[c] -= 1
    found = _splits(counts, a, pair_ok, jiao, triples, need)
    counts[a] += 1
    counts[b] += 1
    counts[c] += 1
    return found


def _shapes_at(
    counts: list[int], i: int, pair_ok: bool, jiao: bool, triples: frozenset[int],
) -> Iterator[tuple[Group, bool]]:
    """Yields the groups that can take the lowest remaining card `i`."""
    rank = i % 10
    if i in triples and counts[i] >= 3:
        yield _KAN[i], False
    if rank <= 7 and counts[i + 1] and counts[i + 2]:
        yield _RUN[i], False
    if rank == 1 and counts[i + 5] and counts[i + 8]:
        yield _ERQISHI[i], False
    if jiao and i < 10:
        if counts[i] >= 2 and counts[i + 10] >= 1:
            yield _JIAO_SMALL[i], False
        if counts[i + 10] >= 2:
            yield _JIAO_BIG[i], False
    if pair_ok and counts[i] >= 2:
        yield _JIANG[i], True


# The groups `_shapes_at` yields, built once for each lowest card `i` (only those it asks for make sense).
_KAN: Final = tuple(Group("kan", (i, i, i)) for i in range(N_VALUES))
_RUN: Final = tuple(Group("shun", (i, i + 1, i + 2)) for i in range(N_VALUES))
_ERQISHI: Final = tuple(Group("shun", (i, i + 5, i + 8)) for i in range(N_VALUES))
_JIAO_SMALL: Final = tuple(Group("jiao", (i, i, i + 10)) for i in range(N_VALUES))
_JIAO_BIG: Final = tuple(Group("jiao", (i, i + 10, i + 10)) for i in range(N_VALUES))
_JIANG: Final = tuple(Group("jiang", (i, i)) for i in range(N_VALUES))
