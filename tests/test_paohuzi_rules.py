"""Forced and optional actions, their preconditions and the priority of 第九条 (paohuzi.md §4–§6, §16.2)."""

from __future__ import annotations

import os
import pickle
import random

import pytest

from replay.paohuzi import ENGINE
from replay.paohuzi.cards import card_number, parse_cards
from replay.paohuzi.melds import Group
from replay.paohuzi.options import chi_options
from replay.paohuzi.rules import deal, discard, draw, expose, reveal_liangzhang
from replay.paohuzi.state import DRAW, HU, PASS, PENG, Action, Offer, Pending, State
from replay.protocol import IllegalActionError
from schemas.paohuzi import PaohuziProfile
from tests.paohuzi_support import start_event, table

replace = State.replace
FILL = ("", "", "")


def c(name: str) -> int:
    return card_number(name)


def groups(names: str) -> tuple[tuple[int, ...], ...]:
    """`一二三 三四五` -> ((0, 1, 2), (2, 3, 4))."""
    return tuple(tuple(sorted(parse_cards(g))) for g in names.split())


# ---- §16.2 forced actions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "hands", "melds", "expected", "kind_after"),
    [
        ("hand 一一, own draw 一: forced 偎", ["一一五", "", ""], FILL, ("wei", 0), "wei"),
        ("hand 一一一, own draw 一: forced 提", ["一一一五", "", ""], FILL, ("ti", 0), "ti"),
        ("偎 一 on the table, own draw 一: forced 提", ["五", "", ""], ("偎 一", "", ""), ("ti", 0), "ti"),
        ("碰 一 on the table, own draw 一: forced 跑", ["五", "", ""], ("碰 一", "", ""), ("pao", 0), "pao"),
        ("hand 一一一 (seat 1), another's wall card 一: forced 跑", ["五", "一一一六", ""], FILL, ("pao", 1), "pao"),
        ("偎 一 (seat 2), another's wall card 一: forced 跑", ["五", "", "六"], ("", "", "偎 一"), ("pao", 2), "pao"),
    ],
)
def test_forced_on_draw(rule: str, hands: list[str], melds: tuple[str, ...], expected: tuple[str, int], kind_after: str) -> None:
    """§5.1–§5.3 / §16.2: the engine derives the forced 偎/提/跑 of a wall card."""
    state = ENGINE.apply_action(table(hands, melds, wall="一"), DRAW)
    assert state.effects == ((expected[0], expected[1], 0),), rule
    assert any(g.kind == kind_after and g.cards[0] == 0 for g in state.melds[expected[1]]), rule


def test_chou_wei_after_passed_peng() -> None:
    """§3 过碰 / §16.2: having passed a 碰 on 一, drawing the third 一 is a forced 臭偎."""
    state = table(["一一五", "", ""], wall="一", guo_peng=(1, 0, 0))
    assert ENGINE.apply_action(state, DRAW).effects == (("chou_wei", 0, 0),)


@pytest.mark.parametrize(("melds", "profile", "pao"), [("碰 一", PaohuziProfile(), False),
                                                       ("碰 一", PaohuziProfile(peng_pao_on_discard=True), True),
                                                       ("偎 一", PaohuziProfile(), True)])
def test_discard_onto_table_group(melds: str, profile: PaohuziProfile, pao: bool) -> None:
    """§5.3 [PARAM peng_pao_on_discard]: a discard 一 is 跑'd onto a 偎 always, onto a 碰 only by profile."""
    state = replace(table(["一五六", "七八", ""], ("", melds, ""), profile=profile), phase="discard")
    after = ENGINE.apply_action(state, Action("discard", card=0))
    assert (after.effects == (("pao", 1, 0),)) is pao


def test_kan_pao_on_discard() -> None:
    """§16.2: hand 一一一 and another's discard 一: forced 跑 (four cards face up)."""
    state = replace(table(["一五六", "一一一七八", ""]), phase="discard")
    after = ENGINE.apply_action(state, Action("discard", card=0))
    assert after.effects == (("pao", 1, 0),) and Group("pao", (0, 0, 0, 0)) in after.melds[1]


# ---- §16.2 吃 and 比牌 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "card", "expected"),
    [
        ("一二三四五", "三", ["一二三 三四五", "三四五 一二三"]),
        ("一二三三", "三", []),
        ("一壹", "一", ["一一壹"]),
        ("壹壹", "一", ["一壹壹"]),
        ("一二", "三", ["一二三"]),
        ("三四", "五", ["三四五"]),
        ("二七", "十", ["二七十"]),
        ("三四五五五", "三", []),
    ],
)
def test_chi_options(hand: str, card: str, expected: list[str]) -> None:
    """§5.5 / §16.2: sequences, 二七十, 绞, mandatory 比牌 for every other copy; 坎 cards unusable."""
    got = chi_options(tuple(parse_cards(hand).count(v) for v in range(20)), c(card), allow_jiao=True)
    assert got == sorted(groups(e) for e in expected)


def _offer_discard(hands: list[str], card: str, **fields: object) -> State:
    """Seat 0 discards `card` from a hand that holds it; returns the offer state."""
    state = replace(table(hands, **fields), phase="discard")  # type: ignore[arg-type]
    return discard(state, c(card))


def test_peng_before_chi_and_pass_keeps_chi() -> None:
    """§6 / §16.2: 碰 and 吃 both open to the 下家: 碰 is offered first; declining it keeps 吃."""
    state = _offer_discard(["三七", "三三叁四五九", "九"], "三")
    assert state.offers == (Offer(1, "peng", (PENG, PASS)),)
    after = ENGINE.apply_action(state, PASS)
    assert after.offers[0].seat == 1 and after.offers[0].stage == "chi"
    assert after.guo_peng[1] == 1 << c("三")


def test_peng_beats_chi_regardless_of_seat() -> None:
    """§6.4: the 上家's 碰 comes before the 下家's 吃."""
    state = _offer_discard(["三七", "四五九", "三三九"], "三")
    assert [(o.seat, o.stage) for o in state.offers] == [(2, "peng")]
    assert ENGINE.apply_action(state, PASS).offers[0][:2] == (1, "chi")


def test_wall_card_chi_drawer_then_xiajia() -> None:
    """§5.5 [PARAM chi_wall_card_by]: a wall card is offered to the drawer, then its 下家."""
    state = ENGINE.apply_action(table(["四五九", "四五九", "四五九"], wall="三"), DRAW)
    assert [(o.seat, o.stage) for o in state.offers] == [(0, "chi"), (1, "chi")]
    state = ENGINE.apply_action(state, PASS)
    assert state.guo_zhang[0] == 1 << c("三")
    xiajia_only = table(["四五九", "四五九", "四五九"], wall="三", profile=PaohuziProfile(chi_wall_card_by="xiajia_only"))
    assert [o.seat for o in ENGINE.apply_action(xiajia_only, DRAW).offers] == [1]


def test_guo_zhang_blocks_later_chi() -> None:
    """§3 过张 [PARAM guo_zhang_scope = deal]: a declined 吃 value is not offered again."""
    state = _offer_discard(["三七", "四五", "九"], "三", guo_zhang=(0, 1 << c("三"), 0))
    assert state.phase == "draw" and state.turn == 1


HU_HAND = "一二三壹贰叁二七十贰柒拾四五六肆伍陆八九"


def test_hu_before_peng_and_turn_order() -> None:
    """第九条 / §6.2: 胡 before 碰; the drawer first, then the 下家, then the 上家."""
    state = ENGINE.apply_action(table(["一", HU_HAND, "十十五"], wall="十"), DRAW)
    assert [(o.seat, o.stage) for o in state.offers] == [(1, "hu")]
    after = ENGINE.apply_action(state, PASS)
    assert [(o.seat, o.stage) for o in after.offers] == [(2, "peng")]
    both = ENGINE.apply_action(table([HU_HAND, HU_HAND, "五"], wall="十"), DRAW)
    assert [o.seat for o in both.offers] == [0, 1]
    first = table([HU_HAND, HU_HAND, "五"], wall="十", profile=PaohuziProfile(hu_priority="xiajia_first"))
    assert [o.seat for o in ENGINE.apply_action(first, DRAW).offers] == [1, 0]


def test_hu_takes_the_deal() -> None:
    """第八条: hu ends the deal; 18 胡息 → 2 囤, 听胡 (no intake) 6 番: S = 12, winner +2S, losers −S (§10)."""
    state = ENGINE.apply_action(ENGINE.apply_action(table(["一", HU_HAND, "五"], wall="十"), DRAW), HU)
    outcome = ENGINE.outcome(state)
    assert outcome is not None and outcome.termination == "HU" and outcome.winners == (1,)
    assert state.win is not None
    assert state.win.result.huxi == 18 and state.win.result.mingtang == (("听胡", 6),)
    assert outcome.points == (-12, 24, -12)


def test_no_hu_on_discard_by_default() -> None:
    """§7.1 [PARAM hu_on_discard = false]: nobody may win on another's discard."""
    state = _offer_discard(["十五", HU_HAND, "九"], "十")
    assert all(o.stage != "hu" for o in state.offers)
    allowed = _offer_discard(["十五", HU_HAND, "九"], "十", profile=PaohuziProfile(hu_on_discard=True))
    assert allowed.offers[0][:2] == (1, "hu")


# ---- each precondition broken once gives exactly its code ---------------------------------


def _offer(state: State, seat: int, stage: str, card: str, owner: int, from_wall: bool, actions: tuple[Action, ...]) -> State:
    return replace(state, phase="offer", stage=stage, pending=Pending(c(card), owner, from_wall),
                   offers=(Offer(seat, stage, actions),))


def _broken() -> list[tuple[str, State, Action]]:
    base = table(["一二三五五五", "一三三四五壹", "七八"])
    discard_phase = replace(base, phase="discard")
    chi_seat1 = _offer(base, 1, "chi", "二", 0, False, (Action("chi", groups=groups("一二三")), PASS))
    chi_no = _offer(base, 1, "chi", "二", 0, False, (PASS,))
    return [
        ("paohuzi.A10", discard_phase, Action("discard", card=c("九"))),
        ("paohuzi.A11", discard_phase, Action("discard", card=c("五"))),
        ("paohuzi.A20", _offer(base, 2, "peng", "二", 0, False, (PENG, PASS)), Action("chi", groups=groups("二七八"))),
        ("paohuzi.A21", replace(_offer(base, 1, "chi", "一", 0, False, (PASS,)),
                                hands=(base.hands[0], tuple(parse_cards("二二二三壹九").count(v) for v in range(20)), base.hands[2])),
         Action("chi", groups=groups("一二三"))),
        ("paohuzi.A22", chi_seat1, Action("chi", groups=groups("一二四"))),
        ("paohuzi.A23", _offer(base, 1, "chi", "三", 0, False, (PASS,)), Action("chi", groups=groups("三四五"))),
        ("paohuzi.A24", replace(chi_no, guo_zhang=(0, 1 << c("二"), 0)), Action("chi", groups=groups("一二三"))),
        ("paohuzi.A25", replace(chi_no, hands=(base.hands[0], tuple(parse_cards("一三五五五").count(v) for v in range(20)), base.hands[2])),
         Action("chi", groups=groups("一二三"))),
        ("paohuzi.A30", chi_seat1, PENG),
        ("paohuzi.A31", replace(_offer(base, 1, "chi", "三", 0, False, (PASS,)), guo_peng=(0, 1 << c("三"), 0)), PENG),
        ("paohuzi.A32", replace(_offer(base, 1, "chi", "三", 0, False, (PASS,)),
                                hands=(base.hands[0], tuple(parse_cards("三三五五五").count(v) for v in range(20)), base.hands[2])), PENG),
        ("paohuzi.A40", _offer(base, 1, "chi", "二", 0, True, (PASS,)), HU),
        ("paohuzi.A41", chi_seat1, HU),
        ("paohuzi.A42", _offer(base, 1, "hu", "二", 0, True, (HU,)), PASS),
        ("paohuzi.T01", discard_phase, DRAW),
        ("paohuzi.T02", _offer(base, 1, "hu", "三", 0, True, (HU, PASS)), PENG),
        ("paohuzi.X01", replace(base, phase="end"), DRAW),
        ("paohuzi.C01", replace(base, deck=None, hands=(tuple(parse_cards("一一一一").count(v) for v in range(20)), base.hands[1], base.hands[2])),
         Action("draw", card=c("一"))),
    ]


@pytest.mark.parametrize(("code", "state", "action"), _broken(), ids=[b[0] for b in _broken()])
def test_precondition_codes(code: str, state: State, action: Action) -> None:
    """§5 / 第七–九条: each broken precondition raises IllegalActionError with exactly its code."""
    with pytest.raises(IllegalActionError) as info:
        ENGINE.apply_action(state, action)
    assert info.value.code == code, str(info.value)


def test_error_message_names_action_seat_and_rule() -> None:
    """STYLE §4: the error names the action, the seat and why."""
    state = replace(table(["一二三五五五", "", ""]), phase="discard")
    with pytest.raises(IllegalActionError, match=r"^paohuzi.A11 \(第四条\(九\) 坎\): 座位0打出 五：五是坎，不能打出 discard 五 by seat 0: 五 "
                                                 r"is a 坎 and cannot be discarded$"):
        ENGINE.apply_action(state, Action("discard", card=c("五")))


# ---- §5.8 discard exemptions ---------------------------------------------------------------


def test_second_pao_no_discard() -> None:
    """§5.8 重跑: after a seat's second 跑/提 it does not discard; its 下家 draws."""
    state = table(["一一一五六", "", ""], wall="一", pao_ti=(1, 0, 0))
    after = ENGINE.apply_action(state, DRAW)
    assert after.phase == "draw" and after.turn == 1
    first = ENGINE.apply_action(table(["一一一五六", "", ""], wall="一"), DRAW)
    assert first.phase == "discard" and first.turn == 0


def test_stuck_hand_skips_discard_and_is_dead() -> None:
    """§5.8 [PARAM stuck_after_forced]: a forced 偎 leaving only 坎 cards skips the discard; the seat is dead."""
    after = ENGINE.apply_action(table(["一一五五五", "", ""], wall="一"), DRAW)
    assert after.phase == "draw" and after.turn == 1 and after.dead == (True, False, False)


def test_draw_and_expose_are_pure() -> None:
    """Protocol: transitions return new states and leave their input unchanged."""
    state = table(["四五", "", ""], wall="三")
    before = state.values()
    draw(state, c("三"))
    expose(state, c("三"), 0, True)
    assert state.values() == before


def test_every_transition_of_bot_deals_leaves_its_input_as_it_was() -> None:
    """Protocol (State is frozen by contract: the rules change only the copy they return): every
    legal action at every seat's turn of seeded bot deals, the deal and the 亮张 leave each field of
    the state they were given the very object it was; a state pickles to an equal one."""
    seed = int(os.environ.get("MATCHLEDGER_SEED", "20261202"))
    print(f"seed={seed}")
    rng = random.Random(seed)
    applied = 0
    for n in range(int(os.environ.get("MATCHLEDGER_GAMES", "6"))):
        events = ENGINE.bot_game(start_event(stream=f"pure-{n}", dealer=n % 3), random.Random(rng.getrandbits(64)))
        for step in ENGINE.replay(events):
            state = step.state
            if not isinstance(state, State):
                continue
            assert pickle.loads(pickle.dumps(state)) == state
            before = state.values()
            if ENGINE.current_player(state) >= 0:
                for action in ENGINE.legal_actions(state):
                    after = ENGINE.apply_action(state, action)
                    assert after is not state
                    applied += 1
            elif state.phase == "liang":
                assert reveal_liangzhang(state, c("一")) is not state
            elif state.phase == "board" and state.hands == ():
                assert deal(state, 0, [[0] * 20, [1] * 20, [2] * 20]) is not state
            assert all(a is b for a, b in zip(state.values(), before, strict=True)), f"seed={seed} game {n}"
    assert applied > 500
