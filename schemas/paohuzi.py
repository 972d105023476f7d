"""Events and rule profile of paohuzi (see `shared/rules/paohuzi.md`).

Cards are written in the notation of paohuzi.md §1: `x1`…`x10` for 一…十 (小字) and `d1`…`d10`
for 壹…拾 (大字). Input may use either the id or the Chinese name; every card field is rewritten to
the id when the event is decoded, so the canonical bytes of an event never depend on the spelling.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from schemas.envelope import Event, Seat
from schemas.profiles import Profile

SMALL_NAMES = "一二三四五六七八九十"
BIG_NAMES = "壹贰叁肆伍陆柒捌玖拾"
CARD_IDS: tuple[str, ...] = tuple(f"x{r}" for r in range(1, 11)) + tuple(f"d{r}" for r in range(1, 11))
"""Card id strings indexed by the engine's card number 0–19 (paohuzi.md §1)."""
CARD_NAMES: tuple[str, ...] = tuple(SMALL_NAMES) + tuple(BIG_NAMES)
"""Chinese card names indexed by card number."""
_VARIANTS = {"貳": "贰", "陸": "陆", "參": "叁", "弍": "贰"}
CARD_NUMBER: dict[str, int] = {
    **{name: i for i, name in enumerate(CARD_IDS)},
    **{name: i for i, name in enumerate(CARD_NAMES)},
    **{old: CARD_NAMES.index(new) for old, new in _VARIANTS.items()},
}
"""Every accepted spelling of a card (id, simplified or traditional name) -> card number."""

if TYPE_CHECKING:
    Card = str
else:
    # An enum rather than a regex: msgspec checks it with one hash lookup, which matters because
    # a deal carries 80 cards and an audit decodes millions of card fields.
    Card = Annotated[Literal[tuple(CARD_NUMBER)], msgspec.Meta(
        description="a card: x1..x10 / d1..d10, or its Chinese name 一..十 / 壹..拾 (traditional forms 貳 陸 參 弍 too)")]
Sha256Hex = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
Huxi = Annotated[int, msgspec.Meta(ge=0)]


def canonical_card(name: str) -> str:
    """Returns the id (`x3`, `d10`) of a card given by id or Chinese name.

    :raises KeyError: for a string that names no card.
    """
    return CARD_IDS[CARD_NUMBER[name]]


def _canonical(value: Any, depth: int) -> Any:
    """Rewrites a card (depth 0) or a list of cards (1) or of lists of cards (2) to ids. Cards
    already given by id, as every stored event has them, are kept as they are, lists included."""
    if depth == 0:
        return value if value in _IDS else canonical_card(value)
    if depth == 1:
        return value if _IDS.issuperset(value) else [canonical_card(v) for v in value]
    return value if all(map(_IDS.issuperset, value)) else [_canonical(v, 1) for v in value]


_IDS = frozenset(CARD_IDS)


class _CardEvent(Event, frozen=True, kw_only=True):
    """Base of the events with card fields: rewrites them to canonical ids after decoding."""

    def __post_init__(self) -> None:
        for name, depth in _card_fields(type(self)):
            if (value := getattr(self, name)) is not None:
                canonical = _canonical(value, depth)
                if canonical is not value:
                    msgspec.structs.force_setattr(self, name, canonical)


_CARD_FIELDS = {"card": 0, "deck": 1, "cards": 1, "group": 1, "hands": 2, "bi": 2}
"""The fields that hold cards, with how deep in lists the cards sit."""


@functools.cache
def _card_fields(cls: type[msgspec.Struct]) -> tuple[tuple[str, int], ...]:
    """Returns an event class's card fields with their depths."""
    return tuple((name, _CARD_FIELDS[name]) for name in cls.__struct_fields__ if name in _CARD_FIELDS)


class HuxiTable(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """附录四 胡息表 (unknown; consensus values of paohuzi.md §8) as [small, big] per 门子."""

    peng: tuple[int, int] = (1, 3)
    kan: tuple[int, int] = (3, 6)
    wei: tuple[int, int] = (3, 6)
    chou_wei: tuple[int, int] = (3, 6)
    pao: tuple[int, int] = (6, 9)
    ti: tuple[int, int] = (9, 12)
    s123: tuple[int, int] = (3, 6)
    s2710: tuple[int, int] = (3, 6)


class PaohuziProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="paohuzi"):
    """Rule profile of paohuzi: every [PARAM] of `shared/rules/paohuzi.md` with its default (§12)."""

    players: Literal[3] = 3
    min_huxi: Annotated[int, msgspec.Meta(ge=0)] = 15
    liangzhang_owner: Literal["dealer"] = "dealer"
    xian_can_hu_liangzhang: bool = True
    san_ti_wu_kan: bool = False
    hu_on_discard: bool = False
    hu_optional: bool = True
    hu_vs_forced_order: Literal["forced_first", "hu_first"] = "forced_first"
    hu_priority: Literal["drawer_then_turn_order", "xiajia_first"] = "drawer_then_turn_order"
    allow_pao_hu: bool = True
    allow_po_pao_hu: bool = False
    external_third_as: Literal["peng", "wei"] = "peng"
    peng_pao_on_discard: bool = False
    peng_requires_discard: bool = True
    chi_wall_card_by: Literal["drawer_then_xiajia", "xiajia_only"] = "drawer_then_xiajia"
    chi_requires_discard: bool = True
    allow_jiao: bool = True
    kan_locked: bool = True
    pair_requires_pao_or_ti: bool = True
    """§7.2: a pair 将 only with a 跑/提 among the 7 门子. With a 跑/提 the hand holds 20 + k cards and
    exactly one pair is required whatever this setting; false allows at most one pair without one."""
    second_pao_ti_no_discard: bool = True
    double_ti_at_deal_no_discard: bool = True
    deal_exemption: Literal["first_discarding_intake", "first_intake"] = "first_discarding_intake"
    """§5.8: which intakes (吃碰偎跑提 after the deal; the 亮张 is none) a seat with n ≥ 2 提 at the deal
    makes without discarding. `first_discarding_intake`: the first n − 1 intakes that would otherwise
    need a discard (a 重跑 needs none), which keeps the 20 + k card count of §7.2, so the seat can
    still win; `first_intake`: only the first intake, whatever it is (§5.8's "first subsequent intake"
    read literally: a discard-free 跑 spends it, and a seat with three 提 gets one skip, leaving it
    unable to win)."""
    stuck_after_forced: Literal["skip_discard_and_dead", "skip_discard"] = "skip_discard_and_dead"
    guo_zhang_scope: Literal["deal", "until_next_intake"] = "deal"
    guo_peng_scope: Literal["deal", "until_next_intake"] = "deal"
    tinghu_intakes: Literal["chi_peng", "any_intake"] = "chi_peng"
    """§9 听胡 (win without any intake): which intakes break it. `chi_peng`: only taking a card into a
    吃 or 碰; the forced 偎, 臭偎, 跑 and 提 do not; `any_intake`: every intake after the deal
    (吃碰偎跑提; the 提 at the deal and the winning card itself are none)."""
    decomposition_objective: Literal["max_score", "max_huxi"] = "max_score"
    huxi_table: HuxiTable = HuxiTable()
    tun_formula: Literal["(huxi-min)//3+1", "ningxiang_money"] = "(huxi-min)//3+1"
    zimo_mode: Literal["tun_plus_1", "double", "none"] = "tun_plus_1"
    mingtang_table: Literal["changde_quan", "changde_hhd", "ningxiang", "shaoyang", "none"] = "changde_quan"
    combine: Literal["sum", "product"] = "sum"
    deal_score: Literal["winner_plus_2S_losers_minus_S", "discarder_pays_both"] = "winner_plus_2S_losers_minus_S"
    base: Annotated[int, msgspec.Meta(ge=1)] = 1


class BoardCreated(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.board_created"):
    """A duplicate board (one deck order for every table): the order itself, or its SHA-256
    commitment `sha256(salt + "|" + ",".join(deck))` when the order is revealed later."""

    board: str
    deck: list[Card] | None = None
    commitment: Sha256Hex | None = None


class BoardRevealed(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.board_revealed"):
    """The deck order of a committed board and the salt of its commitment."""

    board: str
    deck: list[Card]
    salt: str


class Dealt(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.dealt"):
    """第五条 发牌: the dealer and the 20 cards each seat receives (hands indexed by seat)."""

    dealer: Seat
    hands: list[list[Card]]


class LiangzhangRevealed(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.liangzhang"):
    """第六条 亮张: the card turned face up for all after the deal (the dealer's 21st card)."""

    card: Card


class Drawn(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.drawn"):
    """The acting seat turns over the top wall card."""

    card: Card


class Discarded(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.discarded"):
    """The acting seat discards a card from its concealed hand."""

    card: Card


class Chi(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.chi"):
    """吃: the acting seat takes the offered card into `group` (3 cards, the taken card included),
    with the 比 groups that meld every other copy of it held in hand."""

    card: Card
    group: list[Card]
    bi: list[list[Card]] = []


class Peng(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.peng"):
    """碰: the acting seat takes the offered card onto a pair from its hand."""

    card: Card


class Wei(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.wei"):
    """偎 (forced): the acting seat's own draw completes a pair in hand; placed face down."""

    card: Card


class ChouWei(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.chou_wei"):
    """臭偎 (forced): a 偎 after having passed a 碰 on that card; one card face up."""

    card: Card


class Pao(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.pao"):
    """跑 (forced): the fourth card joins the acting seat's 坎, 偎 or 碰; four cards face up."""

    card: Card


class Ti(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.ti"):
    """提 (forced): the fourth card by own draw or at the deal; one card face up."""

    card: Card


class Passed(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.passed"):
    """过: the acting seat declines what it was offered on the card on the table."""

    card: Card | None = None


class HuGroup(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One 门子 of a claimed decomposition: its kind and cards (`rest`: the loose cards of a 三提五坎 win)."""

    kind: Literal["chi", "peng", "kan", "wei", "chou_wei", "pao", "ti", "shun", "jiao", "jiang", "rest"]
    cards: list[Card]

    def __post_init__(self) -> None:
        cards = _canonical(self.cards, 1)
        if cards is not self.cards:
            msgspec.structs.force_setattr(self, "cards", cards)


class Hu(_CardEvent, frozen=True, kw_only=True, tag="paohuzi.hu"):
    """胡: the acting seat wins on `card` (None: on its own cards, e.g. 天胡 or after a forced 提/偎);
    the software's claimed decomposition, 胡息, 名堂 and the winner's deal score (2S of §10)."""

    card: Card | None = None
    groups: list[HuGroup] = []
    huxi: Huxi | None = None
    mingtang: list[str] = []
    score: int | None = None


class Huangzhuang(Event, frozen=True, kw_only=True, tag="paohuzi.huangzhuang"):
    """荒庄: the wall is exhausted and nobody won; a draw (第十条)."""


EVENTS: tuple[type[Event], ...] = (
    BoardCreated, BoardRevealed, Dealt, LiangzhangRevealed, Drawn, Discarded, Chi, Peng, Wei,
    ChouWei, Pao, Ti, Passed, Hu, Huangzhuang,
)
