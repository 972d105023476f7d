"""Why an action is illegal: the stable finding code, the article and the message (§5, 第七–九条)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replay.paohuzi.cards import names
from replay.paohuzi.melds import is_chi_shape
from replay.paohuzi.options import best_at, chi_seats, has_discard, hu_at, may_chi, opening_result, peng_seat
from replay.paohuzi.rules import legal
from replay.paohuzi.state import DRAW, KIND_WORDS, Action, Pending, State, xiajia
from replay.protocol import IllegalActionError, Said

ART_SEATS: Final = "第二条 竞技跑胡子定义 (三人对抗)"
ART_DEAL: Final = "第五条"
ART_LIANG: Final = "第六条"
ART_PLAY: Final = "第七条"
ART_HU: Final = "第八条"
ART_PRIORITY: Final = "第九条"
ART_END: Final = "第十条"
ART_SCORE: Final = "第十一条"
ART_BI: Final = "第四条(二十) 比牌"
ART_HUXI: Final = "第四条(二十四) 胡息, 附录四"
ART_MINGTANG: Final = "附录五"

ART_FORCED: Final = {"pao": "第四条(十五) 跑牌", "chou_wei": "第四条(十三) 臭偎", "wei": "第四条 术语定义 (偎)", "ti": "第四条 术语定义 (提)"}
"""The article of each forced action (the 偎 and 提 entries of 第四条 are not in the known fragment)."""
_SECTION: Final = {"pao": "§5.3", "chou_wei": "§5.1", "wei": "§5.1", "ti": "§5.2"}
_CLAIMS: Final = frozenset({"hu", "peng", "chi"})

Problem = tuple[str, str | None, Said]
"""A broken rule: its code, its article and why (Chinese and English)."""
PHASE_WORDS: Final = {"draw": ("摸牌", "draw"), "discard": ("出牌", "discard"), "offer": ("回应", "answer"),
                      "deal": ("发牌", "deal"), "liang": ("亮张", "show the 亮张"), "board": ("建局", "set the board"), "end": ("结束", "end")}
"""What a seat must do in each phase of the deal, Chinese and English."""


def illegal(state: State, action: Action) -> IllegalActionError:
    """Returns the error naming the first rule `action` breaks in `state` (the seat to act's)."""
    code, article, why = _diagnose(state, action)
    return IllegalActionError(code, by_seat(action, _seat(state), why), article)


def by_seat(action: Action, seat: int | None, why: Said) -> Said:
    """Returns why an action of `seat` is refused, its action and cards named as the board shows them."""
    done = action.said()
    return Said(f"座位{seat}{done.zh}：{why.zh}", f"{done.en} by seat {seat}: {why.en}")


def _card(card: int) -> str:
    return names([card]) if 0 <= card < 20 else "?"


def forced_problem(effects: Sequence[tuple[str, int, int]], why: Said) -> Problem:
    """Returns F02: an action out of the flow the forced actions just derived set (§5.1–§5.3), naming them."""
    kind = effects[0][0]
    zh = "、".join(f"座位{s}{KIND_WORDS[k][0]}{_card(c)}（{_SECTION[k]}）" for k, s, c in effects)
    en = ", ".join(f"{KIND_WORDS[k][1]} {_card(c)} by seat {s} ({_SECTION[k]})" for k, s, c in effects)
    return "paohuzi.F02", ART_FORCED[kind], Said(f"{why.zh}；按规则须先{zh}（是否漏记？）", f"{why.en}; the rules force {en} first (was it skipped?)")


def _seat(state: State) -> int:
    return state.offers[0].seat if state.phase == "offer" and state.offers else state.turn


def _diagnose(state: State, action: Action) -> Problem:
    if state.phase == "end":
        return "paohuzi.X01", ART_END, Said("本局已结束", "the deal is over")
    if action.kind in _CLAIMS and state.phase in ("discard", "draw"):
        return _late_claim(state, state.turn, action)
    if state.phase == "discard":
        return _discard(state, action)
    if state.phase == "draw":
        if action.kind == "draw" and state.deck is None:
            return "paohuzi.C01", ART_DEAL, Said(f"墩中已没有{_card(action.card)}", f"no copy of {_card(action.card)} is left in the wall")
        return "paohuzi.T01", ART_PLAY, _must(state.turn, "draw")
    if state.phase != "offer":
        return "paohuzi.T01", ART_DEAL, Said("发牌尚未完成", "the deal is not complete")
    offer = state.offers[0]
    if action.kind == "pass":
        return "paohuzi.A42", ART_HU, Said("本赛制设置有胡必胡，不能过", "hu is compulsory in this profile (hu_optional = false)")
    if action.kind in _CLAIMS:
        return claim_problem(state, offer.seat, action)
    zh, en = _on(state.pending)
    done = action.said()
    return "paohuzi.T01", ART_PLAY, Said(f"此时{zh}不能{done.zh}", f"{action.kind} is not a choice now{en}")


def _on(pending: Pending | None) -> tuple[str, str]:
    return (f"对{_card(pending.card)}", f" on {_card(pending.card)}") if pending is not None else ("", "")


def _must(seat: int, phase: str) -> Said:
    zh, en = PHASE_WORDS[phase]
    return Said(f"座位{seat}应{zh}", f"seat {seat} must {en}")


def claim_problem(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a hu, 碰 or 吃 by `seat` breaks on the card on offer; P01 (T02 for the seat
    at the head) when the claim is open to the seat but comes before its turn in 第九条's order."""
    pending = state.pending
    if pending is None and action.kind != "hu":
        return "paohuzi.T01", ART_PLAY, Said("没有可吃碰胡的牌", "no card is on offer")
    problem = _claim_rule(state, seat, action, pending)
    if problem is not None:
        return problem
    head = state.offers[0]
    zh, en = _on(pending)
    stage, stage_en = stage_words(head.stage)
    if head.seat != seat:
        return "paohuzi.P01", ART_PRIORITY, Said(f"座位{head.seat}尚未回应{zh}的{stage}",
                                                 f"seat {head.seat} has not answered its {stage_en} offer{en} yet")
    return "paohuzi.T02", ART_PRIORITY, Said(f"须先回应{zh}的{stage}", f"must first answer the {stage_en} offer{en}")


def stage_words(stage: str) -> tuple[str, str]:
    """Returns a priority stage of 第九条 in words, Chinese and English (`self_ti`: a hu before one's own 提)."""
    if stage.startswith("self_"):
        return f"{KIND_WORDS[stage[5:]][0]}前的胡", f"hu before {KIND_WORDS[stage[5:]][1]}"
    return {"open": ("起手胡", "opening hu"), "before_forced": ("跑提前的胡", "hu before a forced action")}.get(stage) or KIND_WORDS[stage]


def claim_out_of_turn(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a hu, 碰 or 吃 by a seat that is not to act breaks (第七–九条)."""
    if state.phase == "offer":
        return claim_problem(state, seat, action)
    return _late_claim(state, seat, action)


def _late_claim(state: State, seat: int, action: Action) -> Problem:
    """Names the rule a claim breaks outside an offer: hu on the seat's own cards while it must discard,
    or a claim on the card just laid down (`settled`), which nobody claimed in time."""
    if action.kind == "hu" and state.phase == "discard" and seat == state.turn:
        return _hu_rule(state, seat, None, None) or ("paohuzi.T01", ART_PLAY, _must(state.turn, "discard"))
    settled = state.settled
    if settled is None:
        must = _must(state.turn, state.phase)
        return "paohuzi.T01", ART_PLAY, Said(f"没有可吃碰胡的牌；{must.zh}", f"no card is on offer; {must.en}")
    probe = state.replace(pending=settled)
    problem = _claim_rule(probe, seat, action, settled)
    must = _must(state.turn, "draw")
    return problem or ("paohuzi.T01", ART_PLAY, Said(f"{_card(settled.card)}已放下而无人要；{must.zh}",
                                                     f"{_card(settled.card)} was laid down unclaimed; {must.en}"))


def _claim_rule(state: State, seat: int, action: Action, pending: Pending | None) -> Problem | None:
    """Returns the rule a claim by `seat` on `pending` breaks, or None when the seat may make it."""
    if action.kind == "hu":
        return _hu_claim(state, seat, pending)
    assert pending is not None
    if action.kind == "peng":
        return _peng(state, seat, pending)
    return _chi(state, seat, action, pending)


def _hu_claim(state: State, seat: int, pending: Pending | None) -> Problem | None:
    if state.stage == "open":
        if opening_result(state, seat)[0] is None:
            return "paohuzi.A40", ART_HU, Said("不成起手胡（天胡、亮张地胡或三提五坎）", "no opening win (天胡, 地胡 on the 亮张 or 三提五坎)")
        return None
    if pending is None:
        return _hu_rule(state, seat, None, None)
    if not pending.from_wall and not state.profile.hu_on_discard:
        card = _card(pending.card)
        return "paohuzi.A41", ART_HU, Said(f"本赛制设置不能胡别家打出的{card}",
                                           f"no hu on another seat's discard {card} (§7.1, hu_on_discard = false)")
    return _hu_rule(state, seat, pending.card, pending.owner)


def _hu_rule(state: State, seat: int, card: int | None, owner: int | None) -> Problem | None:
    """Returns A40 with the derived 胡息 when `seat` does not win on `card` (own cards when None)."""
    if hu_at(state, seat, card, owner) is not None:
        return None
    on, on_en = (f"用{_card(card)}", f" on {_card(card)}") if card is not None else ("自摸", " on its own cards")
    if state.dead[seat]:
        return "paohuzi.A40", ART_HU, Said(f"{on}不成胡：死手（跑、提后无牌可打，§5.8）",
                                           f"no winning hand{on_en}: the hand is dead (stuck after a forced action, §5.8)")
    best = best_at(state, seat, card, owner)
    if best is None:
        return "paohuzi.A40", ART_HU, Said(f"{on}不成胡：牌组不成 7 门子（§7.2）", f"no winning hand{on_en}: the cards do not form 7 门子 (§7.2)")
    least = state.profile.min_huxi
    return "paohuzi.A40", ART_HU, Said(f"{on}不成胡：7 门子只有 {best.huxi} 胡息，低于起胡 {least} 胡息（§7.3）",
                                       f"no winning hand{on_en}: 7 门子 with {best.huxi} 胡息, below the minimum {least} (§7.3)")


def _discard(state: State, action: Action) -> Problem:
    if action.kind != "discard":
        return "paohuzi.T01", ART_PLAY, _must(state.turn, "discard")
    n = state.hands[state.turn][action.card] if 0 <= action.card < 20 else 0
    card = _card(action.card)
    if n >= 3:
        return "paohuzi.A11", "第四条(九) 坎", Said(f"{card}是坎，不能打出", f"{card} is a 坎 and cannot be discarded")
    return "paohuzi.A10", ART_PLAY, Said(f"手中没有{card}", f"{card} is not in the hand")


def _peng(state: State, seat: int, pending: Pending) -> Problem | None:
    card = pending.card
    if seat == pending.owner or state.hands[seat][card] != 2:
        return "paohuzi.A30", ART_PLAY, Said(f"坎外没有一对{_card(card)}可碰", f"no pair of {_card(card)} outside a 坎 to 碰 with")
    if state.guo_peng[seat] & (1 << card):
        return "paohuzi.A31", ART_PLAY, Said(f"之前对{_card(card)}已过碰", f"passed a 碰 on {_card(card)} earlier (过碰)")
    if peng_seat(state, pending) is None:
        return "paohuzi.A32", ART_PLAY, Said("碰后无牌可打", "the 碰 would leave nothing to discard")
    return None


def _chi(state: State, seat: int, action: Action, pending: Pending) -> Problem | None:
    card = pending.card
    groups = action.groups
    if seat not in chi_seats(state, pending):
        if pending.from_wall:
            who, who_en = "摸牌者或其下家", "the drawer or its 下家"
        else:
            who, who_en = f"出牌者的下家座位{xiajia(pending.owner)}", f"the discarder's 下家, seat {xiajia(pending.owner)}"
        return "paohuzi.A20", ART_PLAY, Said(f"座位{seat}不能吃这张{_card(card)}（只有{who}可吃，§5.5）",
                                             f"seat {seat} may not eat this {_card(card)} (only {who_en}, §5.5)")
    if not may_chi(state, seat, card):
        return "paohuzi.A24", ART_PLAY, Said(f"本家之前已过或打出过{_card(card)}（过张/臭牌）",
                                             f"{_card(card)} was passed or discarded by this seat earlier (过张/臭牌)")
    if not groups or card not in groups[0] or any(len(g) != 3 or not is_chi_shape(g, state.profile.allow_jiao) for g in groups):
        return "paohuzi.A22", ART_PLAY, Said("所吃牌组不是含这张牌的顺子或绞", "the groups are not sequences or 绞 containing the card")
    hand = list(state.hands[seat])
    if any(hand[c] >= 3 for g in groups for c in g):
        return "paohuzi.A21", "第四条(九) 坎", Said("坎中的牌不能用来吃", "a 坎 card cannot be used to eat")
    hand[card] += 1
    for g in groups:
        for c in g:
            hand[c] -= 1
    if any(n < 0 for n in hand):
        return "paohuzi.A21", ART_PLAY, Said("手中没有这些牌", "the hand does not hold these cards")
    if hand[card] > 0 or any(card not in g for g in groups[1:]):
        return "paohuzi.A23", ART_BI, Said(f"手中其余的{_card(card)}都须比进吃的牌组",
                                           f"every other {_card(card)} in hand must be 比'd into a 吃 group")
    if state.profile.chi_requires_discard and not has_discard(tuple(hand)) and not state.skip_discard[seat]:
        return "paohuzi.A25", ART_PLAY, Said("吃后无牌可打", "the 吃 would leave nothing to discard")
    return None


def check(state: State, action: Action) -> None:
    """Checks that `action` is legal for the seat to act.

    :raises IllegalActionError: with the code and article of the broken rule.
    """
    if not is_legal(state, action):
        raise illegal(state, action)


def is_legal(state: State, action: Action) -> bool:
    """Tells whether `action` is among the legal actions of the seat to act (without listing them)."""
    if state.phase == "offer":
        return action in state.offers[0].actions
    if state.phase == "discard":
        return action.kind == "discard" and 0 <= action.card < 20 and 0 < state.hands[state.turn][action.card] < 3
    if state.phase == "draw" and state.deck is not None:
        return action == DRAW
    return action in legal(state)
