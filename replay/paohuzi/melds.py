"""门子 (groups) and their 胡息 (paohuzi.md §3, §8), and the 名堂 tables of §9."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

from replay.paohuzi.cards import N_VALUES, is_big, is_red
from schemas.paohuzi import HuxiTable, PaohuziProfile

SEQUENCE_KINDS: Final = frozenset({"chi", "shun", "jiao"})
"""Kinds whose cards may differ: 吃 on the table, 顺子 and 绞 in hand; no 对子胡 with any of them."""
FOUR_KINDS: Final = frozenset({"pao", "ti"})
KIND_NAMES = {
    "chi": "吃", "peng": "碰", "kan": "坎", "wei": "偎", "chou_wei": "臭偎", "pao": "跑", "ti": "提",
    "shun": "顺", "jiao": "绞", "jiang": "将", "rest": "散",
}


new_tuple: Final = tuple.__new__
"""Builds a named tuple from the tuple of all its fields, in C: a NamedTuple's own `__new__` runs as
bytecode even in the compiled build, so the replay's hot paths build theirs with this."""


class Group(NamedTuple):
    """One 门子: its kind and its cards (ascending)."""

    kind: str
    cards: tuple[int, ...]


def three_of(group: Group, card: int) -> bool:
    """Tells whether a group is three of `card`: a 坎, 偎, 臭偎 or 碰 it may be a 跑/提 onto. Read card
    by card: no tuple of three is built to compare with, and most groups differ at the first card."""
    cards = group.cards
    return len(cards) == 3 and cards[0] == card and cards[1] == card and cards[2] == card


def is_sequence(cards: tuple[int, ...]) -> bool:
    """Tells whether three cards of one size form 一句话: consecutive ranks, or 二七十."""
    a, b, c = sorted(cards)
    if a // 10 != c // 10:
        return False
    return (b == a + 1 and c == a + 2) or (a % 10 == 1 and b == a + 5 and c == a + 8)


def is_jiao(cards: tuple[int, ...]) -> bool:
    """Tells whether three cards form 绞 (大小搭): one rank, both sizes."""
    ranks = {c % 10 for c in cards}
    return len(ranks) == 1 and len({c // 10 for c in cards}) == 2


def is_chi_shape(cards: tuple[int, ...], allow_jiao: bool) -> bool:
    """Tells whether three cards may be eaten together: a sequence, or 绞 where allowed (§5.5)."""
    return is_sequence(cards) or (allow_jiao and is_jiao(cards))


def chi_partners(card: int, allow_jiao: bool) -> tuple[tuple[int, ...], ...]:
    """Returns the pairs of cards that make a 吃-type group with `card`."""
    return _CHI_PARTNERS[card] if allow_jiao else _CHI_PARTNERS_NO_JIAO[card]


def _chi_partners(card: int, allow_jiao: bool) -> tuple[tuple[int, ...], ...]:
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


_CHI_PARTNERS: Final = tuple(_chi_partners(card, True) for card in range(N_VALUES))
_CHI_PARTNERS_NO_JIAO: Final = tuple(_chi_partners(card, False) for card in range(N_VALUES))
"""`chi_partners` of each card number, with and without 绞, worked out once."""


def group_huxi(group: Group, table: HuxiTable) -> int:
    """Returns the 胡息 of one 门子 per the table of §8 (附录四)."""
    kind, cards = group
    size = 1 if is_big(cards[-1]) else 0
    if kind in SEQUENCE_KINDS:
        if not is_sequence(cards):
            return 0
        first = min(cards) % 10
        if first == 0:
            return table.s123[size]
        if first == 1 and max(cards) % 10 == 9:
            return table.s2710[size]
        return 0
    if kind in ("jiang", "rest"):
        return 0
    return getattr(table, kind)[size]  # type: ignore[no-any-return]


def total_huxi(groups: Iterable[Group], table: HuxiTable) -> int:
    """Returns the summed 胡息 of groups (each group's worked out once per table: the replay sums a
    seat's table groups at every change and each decomposition a hu search tries)."""
    if table is _LAST_TABLE[0]:
        known = _LAST_KNOWN[0]  # the same table as last time: no hash of it (a struct of tuples)
    else:
        found = _KNOWN_HUXI.get(table)
        if found is None:
            if len(_KNOWN_HUXI) >= 16:
                _KNOWN_HUXI.clear()
            found = _KNOWN_HUXI[table] = {}
        known = found
        _LAST_TABLE[0], _LAST_KNOWN[0] = table, known
    total = 0
    for g in groups:
        huxi = known.get(g)
        if huxi is None:
            huxi = known[g] = group_huxi(g, table)
        total += huxi
    return total


_KNOWN_HUXI: Final[dict[HuxiTable, dict[Group, int]]] = {}
"""The 胡息 of each group met, per table (a few hundred groups exist; a replay meets one or two tables)."""
_LAST_TABLE: Final[list[HuxiTable | None]] = [None]
_LAST_KNOWN: Final[list[dict[Group, int]]] = [{}]
"""The table `total_huxi` was last asked about and its groups' 胡息."""


class Stats(NamedTuple):
    """What the 名堂 look at: colour and size counts over all the winner's cards, the shape, and
    how the win came."""

    red: int
    big: int
    small: int
    duizi: int
    tianhu: int
    dihu: int
    haidi: int
    tinghu: int
    shuahou: int


def stats_of(groups: Iterable[Group], tianhu: bool, dihu: bool, haidi: bool, tinghu: bool, shuahou: bool) -> Stats:
    """Counts the 名堂 inputs of a winning decomposition (every card of a 跑/提 counts, §9)."""
    groups = list(groups)
    cards = [c for g in groups for c in g.cards]
    big = sum(1 for c in cards if is_big(c))
    return Stats(
        red=sum(1 for c in cards if is_red(c)), big=big, small=len(cards) - big,
        duizi=int(not any(g.kind in SEQUENCE_KINDS for g in groups)),
        tianhu=int(tianhu), dihu=int(dihu), haidi=int(haidi), tinghu=int(tinghu), shuahou=int(shuahou),
    )


class MingtangRule(NamedTuple):
    """A 名堂: applies when `stat` lies in [lo, hi]; worth `fan` plus `per_extra` per unit over lo."""

    name: str
    stat: str
    lo: int
    hi: int
    fan: int
    per_extra: int = 0


_ANY = 99
_FLAG = (1, 1)
MINGTANG_TABLES: dict[str, tuple[MingtangRule, ...]] = {
    # 常德全名堂 (S6/S7), the 大六八番 values; the 小六八番 alternatives are in brackets in §9.
    "changde_quan": (
        MingtangRule("红胡", "red", 10, _ANY, 3, 1), MingtangRule("乌胡", "red", 0, 0, 8),
        MingtangRule("点胡", "red", 1, 1, 6), MingtangRule("对子胡", "duizi", *_FLAG, 8),
        MingtangRule("大字胡", "big", 18, _ANY, 8, 1), MingtangRule("小字胡", "small", 16, _ANY, 10, 1),
        MingtangRule("天胡", "tianhu", *_FLAG, 6), MingtangRule("地胡", "dihu", *_FLAG, 6),
        MingtangRule("海胡", "haidi", *_FLAG, 6), MingtangRule("听胡", "tinghu", *_FLAG, 6),
        MingtangRule("耍猴", "shuahou", *_FLAG, 8),
    ),
    # 常德红黑点 (S6/S7).
    "changde_hhd": (
        MingtangRule("红胡", "red", 10, 12, 2), MingtangRule("红乌", "red", 13, _ANY, 4),
        MingtangRule("乌胡", "red", 0, 0, 5), MingtangRule("点胡", "red", 1, 1, 3),
        MingtangRule("对子胡", "duizi", *_FLAG, 4),
    ),
    # 宁乡 (S3): 十八小 threshold 18.
    "ningxiang": (
        MingtangRule("红胡", "red", 10, _ANY, 2, 1), MingtangRule("乌胡", "red", 0, 0, 5),
        MingtangRule("点胡", "red", 1, 1, 4), MingtangRule("对子胡", "duizi", *_FLAG, 5),
        MingtangRule("大字胡", "big", 18, _ANY, 5, 1), MingtangRule("小字胡", "small", 18, _ANY, 5, 1),
        MingtangRule("天胡", "tianhu", *_FLAG, 5), MingtangRule("地胡", "dihu", *_FLAG, 5),
    ),
    # 邵阳 default (S4): where §9 gives "3 or 4" / "5 or 6" the first value is taken.
    "shaoyang": (
        MingtangRule("红胡", "red", 10, 12, 2), MingtangRule("红乌", "red", 13, _ANY, 4),
        MingtangRule("乌胡", "red", 0, 0, 5), MingtangRule("点胡", "red", 1, 1, 3),
        MingtangRule("对子胡", "duizi", *_FLAG, 5), MingtangRule("小字胡", "small", 18, _ANY, 6),
    ),
    "none": (),
}


def mingtang(stats: Stats, profile: PaohuziProfile) -> list[tuple[str, int]]:
    """Returns the applicable 名堂 of the profile's table with their 番 (附录五 unknown; §9)."""
    found = []
    for rule in MINGTANG_TABLES[profile.mingtang_table]:
        value = getattr(stats, rule.stat)
        if rule.lo <= value <= rule.hi:
            found.append((rule.name, rule.fan + rule.per_extra * (value - rule.lo)))
    return found


class Score(NamedTuple):
    """The deal score of §10: 囤, 番 and S (each loser's share; the winner gets 2S)."""

    tun: int
    fan: int
    s: int


def deal_score(huxi: int, fans: list[tuple[str, int]], zimo: bool, profile: PaohuziProfile) -> Score:
    """Computes 囤 × 番 × base for a winning hand (第十一条 unknown; regional formula of §10)."""
    steps = (huxi - profile.min_huxi) // 3
    tun = steps + 1 if profile.tun_formula == "(huxi-min)//3+1" else 5 * (steps + 2)
    if zimo and profile.zimo_mode == "tun_plus_1":
        tun += 1
    if not fans:
        fan = 1
    elif profile.combine == "sum":
        fan = sum(f for _, f in fans)
    else:
        fan = 1
        for _, f in fans:
            fan *= f
    s = tun * fan * profile.base
    if zimo and profile.zimo_mode == "double":
        s *= 2
    return Score(tun, fan, s)
