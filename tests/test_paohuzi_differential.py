"""Differential test: the engine's legal actions at every decision point of seeded random playouts
against an independent generator written here from the rules text (paohuzi.md §4–§7, 第七–九条),
under §12's defaults and a variant. MATCHLEDGER_DIFF_GAMES sets the number of deals (default 30),
MATCHLEDGER_SEED the seed; a disagreement prints the seed and the log up to it as JSONL, which
`matchledger record` takes as it is."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any, NamedTuple, cast

import pytest

import schemas
from replay.paohuzi import ENGINE
from replay.paohuzi.cards import LIANGZHANG_INDEX, card_id, deal_hands, full_deck
from replay.paohuzi.state import DRAW, HU, PASS, PENG, Action, State
from schemas.envelope import Event
from schemas.paohuzi import BoardCreated, Dealt, LiangzhangRevealed, PaohuziProfile
from tests.paohuzi_support import start_event

GAMES = int(os.environ.get("MATCHLEDGER_DIFF_GAMES", "30"))
SEED = int(os.environ.get("MATCHLEDGER_SEED", "20261201"))

# ---- the independent reading of the rules --------------------------------------------------------

Groups = list[tuple[str, tuple[int, ...]]]
"""Table groups (and locked 坎) as (kind, cards)."""
PAIR_GROUPS = ("pao", "ti")
HUXI = {"peng": (1, 3), "kan": (3, 6), "wei": (3, 6), "chou_wei": (3, 6), "pao": (6, 9), "ti": (9, 12)}


def size_of(card: int) -> int:
    """0 for 小字 一…十 (0–9), 1 for 大字 壹…拾 (10–19) (§1)."""
    return card // 10


def rank_of(card: int) -> int:
    """1…10."""
    return card % 10 + 1


def three_card_shape(cards: tuple[int, ...]) -> str | None:
    """Names a three-card 吃-type group (§3): `s123` (一二三), `s2710` (二七十), `run`, `jiao` (绞), else None."""
    a, b, c = sorted(cards)
    if size_of(a) == size_of(c):
        ranks = (rank_of(a), rank_of(b), rank_of(c))
        if ranks == (1, 2, 3):
            return "s123"
        if ranks == (2, 7, 10):
            return "s2710"
        if ranks[1] == ranks[0] + 1 and ranks[2] == ranks[1] + 1:
            return "run"
        return None
    return "jiao" if rank_of(a) == rank_of(b) == rank_of(c) else None


def shape_huxi(cards: tuple[int, ...]) -> int:
    """§8: 一二三 and 二七十 are worth 3 (小) or 6 (大); other sequences and 绞 nothing."""
    shape = three_card_shape(cards)
    return (3, 6)[size_of(cards[0])] if shape in ("s123", "s2710") else 0


def group_value(kind: str, cards: tuple[int, ...]) -> int:
    """§8: the 胡息 of a table group or a triple."""
    if kind == "chi":
        return shape_huxi(cards)
    return HUXI[kind][size_of(cards[0])]


def all_shapes_with(card: int) -> list[tuple[int, ...]]:
    """Every three-card 吃-type group that holds `card` (each sorted), found by trying all card pairs."""
    found = set()
    for a in range(20):
        for b in range(a, 20):
            cards = tuple(sorted((card, a, b)))
            if three_card_shape(cards) is not None:
                found.add(cards)
    return sorted(found)


def best_split(pool: list[int], groups_left: int, pair_left: int) -> int | None:
    """Returns the largest 胡息 of a split of `pool` (counts) into exactly `groups_left` groups of three
    (sequences, 二七十, 绞) and `pair_left` pairs, or None when there is none (§7.2)."""
    first = next((c for c in range(20) if pool[c]), None)
    if first is None:
        return 0 if groups_left == 0 and pair_left == 0 else None
    best: int | None = None
    if pair_left and pool[first] >= 2:
        pool[first] -= 2
        rest = best_split(pool, groups_left, pair_left - 1)
        pool[first] += 2
        best = rest
    if groups_left:
        for cards in all_shapes_with(first):
            if cards[0] != first:
                continue
            need = [cards.count(c) for c in range(20)]
            if all(pool[c] >= need[c] for c in range(20)):
                for c in cards:
                    pool[c] -= 1
                rest = best_split(pool, groups_left - 1, pair_left)
                for c in cards:
                    pool[c] += 1
                if rest is not None and (best is None or rest + shape_huxi(cards) > best):
                    best = rest + shape_huxi(cards)
    return best


def hand_value(fixed: Groups, pool: list[int]) -> int | None:
    """The best 胡息 of 7 门子 with these fixed groups and the rest split from `pool` (no 坎 left in it):
    a pair exactly when a 跑/提 is there (§7.2)."""
    pairs = 1 if any(kind in PAIR_GROUPS for kind, _ in fixed) else 0
    left = 7 - len(fixed) - pairs
    if left < 0 or sum(pool) != 3 * left + 2 * pairs:
        return None
    rest = best_split(list(pool), left, pairs)
    return None if rest is None else rest + sum(group_value(k, g) for k, g in fixed)


def wins(state: State, seat: int, card: int | None, owner: int | None, from_wall: bool) -> bool:
    """§7: whether `seat` has 7 门子 with at least `min_huxi` 胡息 with `card` (None: its own cards). The 坎
    in hand stay whole (§7.2); the card joins a 坎, 偎 or 碰 as 跑 when it can (跑胡, and then only
    so), else a pair as 碰 (§7.4) or the loose cards."""
    if state.dead[seat]:
        return False
    hand = list(state.hands[seat])
    kans = [c for c in range(20) if hand[c] == 3]
    melds = [(g.kind, g.cards) for g in state.melds[seat]] + [("kan", (c,) * 3) for c in kans]
    pool = [0 if c in kans else n for c, n in enumerate(hand)]
    tries = [(melds, pool)] if card is None else placements(melds, pool, card, seat == owner, from_wall)
    return any((v := hand_value(f, p)) is not None and v >= state.profile.min_huxi for f, p in tries)


def placements(melds: Groups, pool: list[int], card: int, own: bool, from_wall: bool) -> list[tuple[Groups, list[int]]]:
    """The ways the winning card joins the hand: as 跑 onto a 坎, 偎 or (a wall card) 碰, and then only
    so; else onto a pair as 碰 (another seat's card) or among the loose cards (§6, §7.4)."""
    merges = [(melds[:i] + [("pao", (card,) * 4)] + melds[i + 1:], pool) for i, (kind, cards) in enumerate(melds)
              if cards == (card,) * 3 and (kind in ("kan", "wei", "chou_wei") or (kind == "peng" and from_wall))]
    if merges:
        return merges
    loose = [n + (c == card) for c, n in enumerate(pool)]
    if pool[card] == 2 and not own:
        return [(melds + [("peng", (card,) * 3)], [0 if c == card else n for c, n in enumerate(pool)]), (melds, loose)]
    return [(melds, loose)]


def chi_ways(state: State, seat: int, card: int) -> set[Action]:
    """§5.5: the 吃 of `card` by `seat`: a group with two hand cards outside 坎, every other copy of the
    card in hand 比'd into a further group, not a 过张/臭牌 value, a card left to discard after it."""
    if state.dead[seat] or (state.guo_zhang[seat] | state.chou[seat]) >> card & 1:
        return set()
    hand = [n if n < 3 else 0 for n in state.hands[seat]]
    hand[card] += 1
    ways = set()
    for main in all_shapes_with(card):
        for bis in bi_sets(hand, card, [main]):
            after = list(state.hands[seat])
            after[card] += 1
            for g in bis:
                for c in g:
                    after[c] -= 1
            if any(0 < n < 3 for n in after) or state.skip_discard[seat]:
                ways.add(Action("chi", -1, (main, *sorted(bis[1:]))))
    return ways


def bi_sets(hand: list[int], card: int, chosen: list[tuple[int, ...]]) -> Iterator[list[tuple[int, ...]]]:
    """Yields the group lists that use up every copy of `card` (the eaten one first), each group holding it."""
    left = list(hand)
    for g in chosen:
        for c in g:
            left[c] -= 1
    if min(left) < 0:
        return
    if left[card] == 0:
        yield chosen
        return
    for group in all_shapes_with(card):
        if not chosen[1:] or group >= chosen[-1]:
            yield from bi_sets(hand, card, chosen + [group])


class Entry(NamedTuple):
    """One step of resolving a shown card: a seat's choice, or the forced 跑 that settles it."""

    seat: int
    actions: frozenset[Action]


def shown_card_queue(state: State, card: int, owner: int, from_wall: bool) -> tuple[list[Entry], int | None]:
    """第九条 / §6 for a card shown by `owner`: the hu choices (drawer, then turn order; none on a
    discard), then the forced 跑 (returned as its seat, settling the card), else the 碰, then the 吃
    (drawer and its 下家 for a wall card, the 下家 for a discard)."""
    order = [owner, (owner + 1) % 3, (owner + 2) % 3]
    hu_seats = order if from_wall else order[1:] if state.profile.hu_on_discard else []
    queue = [Entry(s, frozenset({HU, PASS})) for s in hu_seats if wins(state, s, card, owner, from_wall)]
    for s in order:
        triple = (card,) * 3
        if (s != owner and state.hands[s][card] == 3) or any(
                g.cards == triple and ((g.kind in ("wei", "chou_wei") and s != owner) or (g.kind == "peng" and from_wall))
                for g in state.melds[s]):
            return queue, s
    for s in order[1:]:
        after = [n - 2 * (c == card) for c, n in enumerate(state.hands[s])]
        if (state.hands[s][card] == 2 and not state.dead[s] and not state.guo_peng[s] >> card & 1
                and (any(0 < n < 3 for n in after) or state.skip_discard[s])):
            queue.append(Entry(s, frozenset({PENG, PASS})))
    drawer_eats = from_wall and state.profile.chi_wall_card_by == "drawer_then_xiajia"
    for s in (order[:2] if drawer_eats else order[1:2]):
        ways = chi_ways(state, s, card)
        if ways:
            queue.append(Entry(s, frozenset(ways | {PASS})))
    return queue, None


def forced_on_draw(state: State, seat: int, card: int) -> str | None:
    """§5.1/§5.2: the drawer's own card onto its 坎 or 偎 is 提, onto a pair 偎 (臭偎 after a passed 碰)."""
    if state.hands[seat][card] == 3 or any(g.cards == (card,) * 3 and g.kind in ("wei", "chou_wei") for g in state.melds[seat]):
        return "ti"
    if state.hands[seat][card] == 2:
        return "chou_wei" if state.guo_peng[seat] >> card & 1 else "wei"
    return None


# ---- the playout -------------------------------------------------------------------------------


class Playout:
    """A random deal played through the engine, with the independent expectation at every step."""

    def __init__(self, seed: int, dealer: int, profile: PaohuziProfile) -> None:
        self.rng = random.Random(seed)
        deck = full_deck()
        self.rng.shuffle(deck)
        start = start_event(profile, stream=f"diff-{seed}", dealer=dealer)
        self.events: list[Event] = [start]
        self._add(BoardCreated, board="b1", deck=[card_id(c) for c in deck])
        self._add(Dealt, dealer=dealer, hands=[[card_id(c) for c in h] for h in deal_hands(deck, dealer)])
        self._add(LiangzhangRevealed, card=card_id(deck[LIANGZHANG_INDEX]))
        self.state: State = list(ENGINE.replay(self.events))[-1].state
        self.queue: list[Entry] = self._opening()

    def _add(self, kind: type[Event], **fields: Any) -> None:
        self.events.append(kind(stream=self.events[0].stream, seq=len(self.events), ts=len(self.events), **fields))

    def _opening(self) -> list[Entry]:
        """§2: 天胡 for the dealer on its 21 cards, 地胡 for the others on the 亮张, in turn order."""
        s = self.state
        order = [s.dealer, (s.dealer + 1) % 3, (s.dealer + 2) % 3]
        return [Entry(p, frozenset({HU, PASS})) for p in order
                if wins(s, p, None if p == s.dealer else s.liangzhang, s.dealer, False)]

    def expected(self) -> tuple[int, frozenset[Action]]:
        """The seat to act and its legal actions, by the independent reading."""
        s = self.state
        if s.phase == "offer":
            return self.queue[0].seat, self.queue[0].actions
        if s.phase == "discard":
            return s.turn, frozenset(Action("discard", c) for c, n in enumerate(s.hands[s.turn]) if 0 < n < 3)
        return s.turn, frozenset({DRAW})

    def play(self, action: Action) -> None:
        """Applies `action`, logs it and works out what the independent reading expects next."""
        before = self.state
        self.events.append(ENGINE.to_event(before, action, stream=self.events[0].stream, seq=len(self.events), ts=len(self.events)))
        self.state = ENGINE.apply_action(before, action)
        if action == PASS and self.queue:
            self.queue = self.queue[1:]
        elif action.kind == "draw":
            self._drawn(before, before.wall[0])
        elif action.kind == "discard":
            self.queue, pao = shown_card_queue(self._without(before, action.card), action.card, before.turn, False)
            self._check_pao(pao, action.card)
        else:
            self.queue = []

    @staticmethod
    def _without(state: State, card: int) -> State:
        """The state with `card` out of the discarding seat's hand (the card on offer is in no hand)."""
        hands = list(state.hands)
        hands[state.turn] = tuple(n - (c == card) for c, n in enumerate(hands[state.turn]))
        return state.replace(hands=tuple(hands))

    def _drawn(self, before: State, card: int) -> None:
        seat = before.turn
        kind = forced_on_draw(before, seat, card)
        if kind is not None:
            assert self.state.effects[:1] == ((kind, seat, card),), self.report(f"forced {kind} of {card_id(card)} by seat {seat}")
            self.queue = [Entry(seat, frozenset({HU, PASS}))] if wins(self.state, seat, None, None, True) else []
            return
        self.queue, pao = shown_card_queue(before, card, seat, True)
        self._check_pao(pao, card)

    def _check_pao(self, pao: int | None, card: int) -> None:
        if not self.queue and pao is not None:
            assert ("pao", pao, card) in self.state.effects, self.report(f"forced 跑 of {card_id(card)} by seat {pao}")

    def report(self, what: str) -> str:
        """The message of a disagreement: what, the seed and the log so far as JSONL."""
        lines = b"".join(schemas.encode(e) + b"\n" for e in self.events).decode()
        return f"{what} (stream {self.events[0].stream}); log so far:\n{lines}"

    def choose(self, actions: list[Action]) -> Action:
        """A random choice that takes every hu and most claims, so deals reach wins and intakes."""
        if HU in actions:
            return HU
        claims = [a for a in actions if a.kind in ("peng", "chi")]
        if claims and self.rng.random() < 0.7:
            return self.rng.choice(claims)
        return self.rng.choice(actions)


READINGS = {
    "default": PaohuziProfile(),
    "variant": PaohuziProfile(min_huxi=10, hu_on_discard=True, chi_wall_card_by="xiajia_only"),
}
"""The profiles the generator reads: §12's defaults, and the [PARAM]s it also follows changed."""


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_legal_actions_against_the_rules_text(reading: str) -> None:
    """第七–九条: at every decision point of random deals the engine's seat to act and legal actions
    equal the independent generator's; forced 偎/提/跑 agree too."""
    print(f"reading={reading} seed={SEED} games={GAMES}")
    rng = random.Random(SEED)
    points = 0
    for n in range(GAMES):
        game = Playout(rng.getrandbits(32), n % 3, READINGS[reading])
        while not ENGINE.is_terminal(game.state):
            if game.state.phase == "offer" and not game.queue:
                pytest.fail(game.report(f"the engine offers {game.state.offers[0]} where the rules give no choice"))
            seat, actions = game.expected()
            legal = cast(list[Action], ENGINE.legal_actions(game.state))
            got = (ENGINE.current_player(game.state), frozenset(legal))
            if got != (seat, actions):
                pytest.fail(game.report(f"engine: seat {got[0]} {sorted(a.notation() for a in got[1])}; "
                                        f"rules: seat {seat} {sorted(a.notation() for a in actions)}"))
            points += 1
            game.play(game.choose(legal))
    print(f"{points} decision points agreed")
