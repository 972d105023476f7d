"""`hu_report`: what the rules make of one hand (for `matchledger hu`), and the meld notation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from replay.paohuzi.cards import COPIES, card_number, cards_of, counts_of, is_big, is_red, names, parse_cards
from replay.paohuzi.hu import HuResult, Source, WinContext, best_hand, forced_placement
from replay.paohuzi.melds import KIND_NAMES, Group, is_chi_shape
from replay.paohuzi.options import best_at
from replay.paohuzi.profiles import profile_named, with_settings
from replay.paohuzi.rules import current_seat
from replay.paohuzi.state import SEATS, State
from replay.protocol import InvalidActionError
from schemas.paohuzi import PaohuziProfile

_KINDS = {
    "臭偎": "chou_wei", "吃": "chi", "碰": "peng", "偎": "wei", "跑": "pao", "提": "ti", "坎": "kan",
    "chou_wei": "chou_wei", "chi": "chi", "peng": "peng", "wei": "wei", "pao": "pao", "ti": "ti", "kan": "kan",
}
_KIND_RE = "|".join(sorted(_KINDS, key=len, reverse=True))
_SPLIT = re.compile(rf"\s*[;；]\s*|\s*[,，、]\s*(?=(?:{_KIND_RE})(?![a-z_]))")
_GROUP = re.compile(rf"^({_KIND_RE})[\s:：]*(.*?)(?:\s*[×*]\s*(\d))?$")
_SIZES = {"chi": 3, "peng": 3, "wei": 3, "chou_wei": 3, "kan": 3, "pao": 4, "ti": 4}


def parse_melds(text: str) -> list[Group]:
    """Parses table groups such as `跑 一; 提 壹; 吃 四五六` or `peng x3, chi x4,x5,x6` (`×2` repeats one).

    :raises InvalidActionError: on an unknown kind, a wrong card count or a 吃 that is no sequence.
    """
    groups: list[Group] = []
    for part in filter(None, _SPLIT.split(text.strip())):
        match = _GROUP.match(part)
        if not match:
            raise InvalidActionError(f"not a meld: {part!r} (expected e.g. 碰 一, 吃 一二三, pao x1)")
        kind = _KINDS[match.group(1)]
        cards = parse_cards(match.group(2))
        size = _SIZES[kind]
        if kind != "chi" and len(cards) == 1:
            cards = cards * size
        if len(cards) != size or (kind != "chi" and len(set(cards)) != 1):
            raise InvalidActionError(f"{KIND_NAMES[kind]} needs {size} cards, got {names(cards)!r} in {part!r}")
        if kind == "chi" and not is_chi_shape(tuple(cards), allow_jiao=True):
            raise InvalidActionError(f"吃 {names(cards)} is neither a sequence nor 绞")
        groups.extend([Group(kind, tuple(sorted(cards)))] * int(match.group(3) or 1))
    return groups


SPECIALS = {"天胡": "tianhu", "地胡": "dihu", "海胡": "haidi", "听胡": "tinghu",
            "tianhu": "tianhu", "dihu": "dihu", "haidi": "haidi", "tinghu": "tinghu"}
"""The circumstances of a win `--special` names (§9): 天胡, 地胡, 海胡 (the last wall card), 听胡 (no intake)."""


def hu_report(
    hand: str, melds: str | None = None, win: str | None = None, source: str | None = None,
    profile: str = "default", settings: Sequence[str] = (), special: str = "", min_huxi: int | None = None,
) -> dict[str, Any]:
    """Evaluates a hand under a named profile changed by `FIELD=VALUE` settings: hu or not and why,
    胡息, colour counts, 名堂, the winner's deal score (2S, §10) and the chosen decomposition. Without
    `win` the hand is taken as complete, its triples valued as 坎; `source` defaults to `self` when
    `win` is given; `special` names the circumstances of the win (`天胡,海胡`: 天胡, 地胡, 海胡, 听胡);
    `min_huxi`, when given, is the profile's threshold (§7.3).

    :raises InvalidActionError: on malformed cards or melds, more than 4 copies of a card, an unknown
        profile, a bad setting or an unknown circumstance.
    """
    threshold = [f"min_huxi={min_huxi}"] if min_huxi is not None else []
    rules = with_settings(profile_named(profile), [*settings, *threshold])
    return hand_report(rules, hand, melds, win, source, [name for name in re.split(r"[,，、\s]+", special) if name])


def hand_report(
    rules: PaohuziProfile, hand: str, melds: str | None = None, win: str | None = None, source: str | None = None,
    special: Sequence[str] = (),
) -> dict[str, Any]:
    """Evaluates a hand under a profile value (see `hu_report`).

    :raises InvalidActionError: on malformed cards or melds, more than 4 copies of a card, or an unknown circumstance.
    """
    groups = parse_melds(melds) if melds else []
    concealed = parse_cards(hand)
    card = card_number(win) if win else None
    if source not in (None, "self", "other"):
        raise InvalidActionError(f"source must be self or other, got {source!r}")
    src: Source | None = ("other" if source == "other" else "self") if card is not None else None
    every = [c for g in groups for c in g.cards] + concealed + ([card] if card is not None else [])
    over = [names([c]) for c, n in enumerate(counts_of(every)) if n > COPIES]
    if over:
        raise InvalidActionError(f"more than {COPIES} copies of {', '.join(over)}")
    ctx = _context(src == "self", special)
    result = best_hand(rules, groups, counts_of(concealed), card, src, src == "other" and rules.hu_on_discard, ctx)
    forced = forced_placement(rules, groups, counts_of(concealed), card, src)
    return _judged(rules, every, result, _forced_note(forced.kind, forced.melds) if forced is not None else "")


def game_hu_report(
    state: object, seat: int | None = None, settings: Sequence[str] = (), min_huxi: int | None = None,
) -> dict[str, Any]:
    """Evaluates a seat's hand in a recorded deal at one step (`matchledger hu --game ID --at SEQ`):
    on the card on offer (else on its own cards), under the game's recorded profile changed by
    `settings`, with the deal's own circumstances (自摸, 天胡, 地胡, 海胡, 听胡); the seat defaults
    to the one to answer or act.

    :raises InvalidActionError: when the step is not in a dealt paohuzi deal or the seat is not 0–2.
    """
    if not isinstance(state, State) or not state.hands:
        raise InvalidActionError("hu --game needs a step of a paohuzi deal after its deal")
    who = current_seat(state) if seat is None else seat
    who = state.turn if who is None else who
    if not 0 <= who < SEATS:
        raise InvalidActionError(f"seat {who} is not a seat of a paohuzi game (0–{SEATS - 1})")
    threshold = [f"min_huxi={min_huxi}"] if min_huxi is not None else []
    state = state.replace(profile=with_settings(state.profile, [*settings, *threshold]))
    pending = state.pending
    on_offer = pending is not None and not (pending.in_hand and who == state.dealer)
    card, owner = (pending.card, pending.owner) if on_offer and pending is not None else (None, None)
    every = [c for g in state.melds[who] for c in g.cards] + cards_of(state.hands[who]) + ([card] if card is not None else [])
    return {"seat": who, **_judged(state.profile, every, best_at(state, who, card, owner), "")}


def _judged(rules: PaohuziProfile, every: list[int], result: HuResult | None, note: str) -> dict[str, Any]:
    """Builds the report of a hand (all its cards `every`) from its best decomposition, if any."""
    big = sum(1 for c in every if is_big(c))
    report: dict[str, Any] = {
        "hu": False, "huxi": 0, "red": sum(1 for c in every if is_red(c)), "big": big,
        "small": len(every) - big, "mingtang": [], "fan": 0, "tun": 0, "score": 0,
        "reason": note + _incomplete(len(every)), "decomposition": [],
    }
    if result is None:
        return report
    report.update(huxi=result.huxi, decomposition=[f"{KIND_NAMES[g.kind]} {names(g.cards)}" for g in result.groups])
    if result.huxi < rules.min_huxi:
        report["reason"] = f"{note}胡息 {result.huxi} below the minimum {rules.min_huxi}"
        return report
    report.update(
        hu=True, mingtang=[name for name, _ in result.mingtang], fan=result.score.fan, tun=result.score.tun,
        score=2 * result.score.s, reason="hu",
    )
    return report


def _incomplete(cards: int) -> str:
    """Says why a hand is no 7 门子, with the card count §7.2 asks for."""
    return (f"incomplete: {cards} cards do not form 7 门子 (§7.2: 21 cards with no pair and no 跑/提, "
            f"or 20 + k cards with k 跑/提 and exactly one pair 将)")


def _forced_note(kind: str, melds: tuple[Group, ...]) -> str:
    """Says which forced group the self-drawn card made before the hu was judged (§5.1, §5.2)."""
    group = next(g for g in reversed(melds) if g.kind == kind)
    return f"after the forced {KIND_NAMES[kind]} {names(group.cards)} of the self-drawn card (§5.1/§5.2, hu_vs_forced_order = forced_first): "


def _context(zimo: bool, special: Sequence[str]) -> WinContext:
    """Returns the circumstances of the win: 自摸, and those `special` names.

    :raises InvalidActionError: for a name that is none of 天胡, 地胡, 海胡, 听胡.
    """
    unknown = [name for name in special if name not in SPECIALS]
    if unknown:
        raise InvalidActionError(f"unknown circumstance {unknown[0]!r}; known: 天胡, 地胡, 海胡, 听胡")
    return WinContext(zimo=zimo, **{SPECIALS[name]: True for name in special})
