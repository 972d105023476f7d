"""Differential test of the hu test's fast path (第八条; paohuzi.md §7): on seeded random hands,
near-complete ones among them, the filters the replay runs before the full search (`may_win`:
the cards that might complete the hand and the 胡息 bound; `completes`: the split search that stops
at the first split) never turn away a hand the plain search (`best_hand`, `winning_hand`) finds
winning, `completes` answers exactly whether the plain search finds any decomposition, and the 胡息
bound is the one of the plain formula (the hand copied, the winning card added, every triple held
counted as a 坎). Profiles vary the rules the search reads (locked 坎, 绞, 跑胡, the order of hu and
forced actions, the pair rule, the minimum 胡息).

MATCHLEDGER_HU_CASES sets the number of hands (default 400), MATCHLEDGER_SEED the seed; a
disagreement names the seed and the case."""

from __future__ import annotations

import os
import random

import pytest

from replay.paohuzi import hu
from replay.paohuzi.cards import N_VALUES
from replay.paohuzi.melds import Group
from schemas.paohuzi import HuxiTable, PaohuziProfile

CASES = int(os.environ.get("MATCHLEDGER_HU_CASES", "400"))
SEED = int(os.environ.get("MATCHLEDGER_SEED", "20261201"))

PROFILES = (
    PaohuziProfile(),
    PaohuziProfile(kan_locked=False, allow_jiao=False, min_huxi=9),
    PaohuziProfile(hu_vs_forced_order="hu_first", allow_pao_hu=False, pair_requires_pao_or_ti=False, min_huxi=6),
    PaohuziProfile(allow_po_pao_hu=True, peng_pao_on_discard=True, decomposition_objective="max_huxi", min_huxi=0),
)


def _random_group(rng: random.Random) -> tuple[str, tuple[int, ...]]:
    """Returns a random 门子 shape: a sequence, 二七十, 绞, a triple or a pair."""
    base = rng.choice((0, 10))
    shape = rng.choice(("run", "run", "run", "erqishi", "jiao", "triple", "triple", "pair"))
    if shape == "run":
        first = base + rng.randrange(8)
        return shape, (first, first + 1, first + 2)
    if shape == "erqishi":
        return shape, (base + 1, base + 6, base + 9)
    if shape == "jiao":
        rank = rng.randrange(10)
        return shape, tuple(sorted(rng.choice(((rank, rank, rank + 10), (rank, rank + 10, rank + 10)))))
    card = base + rng.randrange(10)
    return shape, (card,) * (3 if shape == "triple" else 2)


_TABLE_KINDS = {"run": ("chi",), "erqishi": ("chi",), "jiao": ("chi",), "triple": ("peng", "wei", "chou_wei"), "pair": ()}


def random_case(rng: random.Random) -> tuple[tuple[Group, ...], tuple[int, ...], int | None, hu.Source | None, bool]:
    """Returns table groups, a concealed hand, a winning card (or None), its source and whether off a
    discard: mostly 7 random 门子 (some on the table, some upgraded to 跑/提) less one card, so that
    the search has work to do; otherwise a random hand of the right size."""
    counts = [0] * N_VALUES
    melds: list[Group] = []
    groups = 0
    while groups < 7:
        shape, cards = _random_group(rng)
        if any(counts[c] + cards.count(c) > 4 for c in cards):
            continue
        kinds = _TABLE_KINDS[shape]
        if kinds and rng.random() < 0.35:
            kind = rng.choice(kinds)
            if kind != "chi" and rng.random() < 0.3 and counts[cards[0]] == 0:
                kind, cards = rng.choice(("pao", "ti")), (cards[0],) * 4
            melds.append(Group(kind, cards))
        for c in cards:
            counts[c] += 1
        groups += 1
    hand = [c for c in range(N_VALUES) for _ in range(counts[c])]
    for group in melds:
        for c in group.cards:
            hand.remove(c)
    if rng.random() < 0.25:  # a random hand of the same size from what the deck has left
        left = [c for c in range(N_VALUES) for _ in range(4 - counts[c])] + hand
        hand = rng.sample(left, len(hand))
    card: int | None = None
    source: hu.Source | None = None
    if hand and rng.random() < 0.8:
        card = hand.pop(rng.randrange(len(hand)))
        if rng.random() < 0.2:
            card = rng.randrange(N_VALUES)  # often no win at all
        source = rng.choice(("self", "other"))
    hand_counts = tuple(hand.count(c) for c in range(N_VALUES))
    if card is not None and hand_counts[card] >= 4:
        card = None
    return tuple(melds), hand_counts, card, (source if card is not None else None), rng.random() < 0.5


def plain_bound(concealed: hu._Concealed, table: HuxiTable, melds: tuple[Group, ...], hand: tuple[int, ...], card: int | None) -> int:
    """The 胡息 bound as first written: a copy of the hand with the winning card added, each triple
    held counted as a 坎 (four of a card as the better of 坎 and 提: counted as a 坎, the bound turned
    such winning hands away, found by this test), the fourth or third copy of the winning card as the
    best group it can make."""
    bound = sum(table.kan[v // 10] if hand[v] == 3 else max(table.kan[v // 10], table.ti[v // 10]) for v in concealed.kan_values)
    counts = list(hand)
    if card is not None:
        counts[card] += 1
        size = 1 if card >= 10 else 0
        if hand[card] == 3 or any(g.cards == (card,) * 3 for g in melds):
            bound += max(table.pao[size], table.ti[size])
        elif hand[card] == 2:
            bound += max(table.wei[size], table.peng[size])
    return (bound + min(counts[0], counts[1], counts[2]) * table.s123[0] + min(counts[10], counts[11], counts[12]) * table.s123[1]
            + min(counts[1], counts[6], counts[9]) * table.s2710[0] + min(counts[11], counts[16], counts[19]) * table.s2710[1])


def table_huxi(melds: tuple[Group, ...], table: HuxiTable) -> int:
    return sum(hu.group_huxi(g, table) for g in melds)


@pytest.mark.parametrize("profile_index", range(len(PROFILES)))
def test_fast_path_agrees_with_the_plain_search(profile_index: int) -> None:
    """第八条 / §7.2–§7.4: the filters before the search change no answer of the search."""
    profile = PROFILES[profile_index]
    rng = random.Random(SEED + profile_index)
    print(f"seed={SEED} profile={profile_index} cases={CASES}")
    wins = completes = 0
    for case in range(CASES):
        melds, hand, card, source, from_discard = random_case(rng)
        where = f"seed={SEED} profile={profile_index} case={case}: melds={melds} hand={hand} card={card} source={source}"
        best = hu.best_hand(profile, melds, hand, card, source, from_discard)
        won = hu.winning_hand(profile, melds, hand, card, source, from_discard)
        assert hu.completes(profile, melds, hand, card, source, from_discard) == (best is not None), where
        huxi = table_huxi(melds, profile.huxi_table)
        if won is not None:
            assert hu.may_win(profile, melds, hand, card, huxi), where
        concealed = hu._concealed(hand, profile.kan_locked)
        assert hu._bound(concealed, profile.huxi_table, melds, hand, card) == plain_bound(concealed, profile.huxi_table, melds, hand, card), where
        fast = None
        if hu.may_win(profile, melds, hand, card, huxi) and hu.completes(profile, melds, hand, card, source, from_discard):
            fast = hu.winning_hand(profile, melds, hand, card, source, from_discard)
        assert fast == won, where
        wins += won is not None
        completes += best is not None
    print(f"complete={completes} wins={wins}")
    # The cases must exercise both answers, or the test could not fail.
    assert completes > CASES // 10 and wins > 0, f"seed={SEED}: {completes} complete hands, {wins} wins in {CASES} cases"


def test_concealed_hands_found_by_identity_are_the_hands_asked() -> None:
    """The hands asked about last are found by identity; an equal hand built anew gives the same answer."""
    profile = PaohuziProfile()
    rng = random.Random(SEED)
    for _ in range(50):
        _, hand, _, _, _ = random_case(rng)
        first = hu._concealed(hand, profile.kan_locked)
        again = hu._concealed(tuple(list(hand)), profile.kan_locked)
        assert (first.pool, first.kans, first.triples, first.reach) == (again.pool, again.kans, again.triples, again.reach)
        unlocked = hu._concealed(hand, not profile.kan_locked)
        assert unlocked.kans == () and unlocked.pool == hand
