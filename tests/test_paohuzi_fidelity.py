"""Issue 13 (rule fidelity), Paohuzi items: each discrepancy an independent check found, pinned by
a hand-written hand, position or log and named after its rule section (paohuzi.md §2, §5–§9)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from replay.paohuzi import ENGINE, game_hu_report, hu_report
from replay.paohuzi.cards import card_id, card_number, names
from replay.paohuzi.checks import ART_FORCED, claim_out_of_turn
from replay.paohuzi.fold import replay
from replay.paohuzi.options import chi_options, hu_at, may_chi
from replay.paohuzi.report import hand_report
from replay.paohuzi.state import DRAW, HU, PASS, Action, State, xiajia
from replay.protocol import IllegalActionError, InvalidActionError
from replay.run import position
from schemas.common import Disconnected, MoveTimeUsed, PenaltyCard, Resigned
from schemas.envelope import Event, SeatHolder
from schemas.paohuzi import Chi, Dealt, Discarded, Drawn, Hu, LiangzhangRevealed, Pao, PaohuziProfile, Passed, Ti, Wei
from tests.ledger_support import cli
from tests.paohuzi_support import codes, last_state, start_event, table
from tests.test_paohuzi_opening import deal_events

replace = msgspec.structs.replace
DEFAULT = PaohuziProfile()
HU_FIRST = PaohuziProfile(hu_vs_forced_order="hu_first")


# ---- item 1: the forced 偎/提 of a self-drawn card comes before hu (§4.1, §5.1, §5.2, §6) --------


def test_s5_1_forced_wei_before_self_drawn_hu() -> None:
    """§5.1/§6 (forced_first): a self-drawn 陆 completing the pair 陆陆 is 偎'd first; 六柒捌 is then no 门子."""
    report = hand_report(DEFAULT, "六陆陆柒捌", "偎壹,偎贰,偎叁,偎肆,偎伍", "陆", "self")
    assert report["hu"] is False
    assert report["reason"] == (
        "after the forced 偎 陆陆陆 of the self-drawn card (§5.1/§5.2, hu_vs_forced_order = forced_first): "
        "incomplete: 21 cards do not form 7 门子 (§7.2: 21 cards with no pair and no 跑/提, "
        "or 20 + k cards with k 跑/提 and exactly one pair 将)")
    after = hand_report(DEFAULT, "六柒捌", "偎壹,偎贰,偎叁,偎肆,偎伍,偎陆")
    assert after["hu"] is False and after["reason"] == report["reason"].split(": ", 1)[1]


def test_s6_hu_first_places_the_self_drawn_card_loose() -> None:
    """§6 [PARAM hu_vs_forced_order = hu_first]: the drawer may hu before its forced 偎, the card loose (陆柒捌)."""
    report = hand_report(HU_FIRST, "六陆陆柒捌", "偎壹,偎贰,偎叁,偎肆,偎伍", "陆", "self")
    assert (report["hu"], report["huxi"]) == (True, 30)


def test_s5_2_forced_ti_before_self_drawn_hu() -> None:
    """§5.2: a self-drawn card onto a 坎 is 提'd first (12 胡息 for 壹), never a loose card beside the 坎."""
    report = hand_report(DEFAULT, "壹壹壹二二三四五", "偎贰,偎叁,偎肆,偎伍", "壹", "self")
    assert report["decomposition"][4] == "提 壹壹壹壹" and report["huxi"] == 36


def test_s5_1_another_seats_card_may_stay_loose() -> None:
    """§7.4: another seat's card is not forced onto the pair: 陆柒捌 wins as a loose sequence."""
    report = hand_report(DEFAULT, "六陆陆柒捌", "偎壹,偎贰,偎叁,偎肆,偎伍", "陆", "other")
    assert report["hu"] is True


def test_s5_1_replay_agrees_with_the_hand_tool() -> None:
    """§5.1: the replay makes the forced 偎 of the drawn 陆 and offers no hu, as the hand tool says."""
    state = table(["六陆陆柒捌", "", ""], ("偎壹,偎贰,偎叁,偎肆,偎伍", "", ""), wall="陆")
    after = ENGINE.apply_action(state, DRAW)
    assert after.effects == (("wei", 0, card_number("陆")),) and after.phase == "discard"


# ---- item 2: exactly one pair once there is a 跑 or 提 (§7.2) -----------------------------------


def test_s7_2_pao_requires_exactly_one_pair() -> None:
    """§7.2: 跑 + six three-card groups (22 cards) is not a hand: with k 跑/提 it is 20 + k cards and one pair."""
    report = hand_report(DEFAULT, "柒柒柒", "跑壹,碰贰,碰叁,碰肆,碰伍,碰陆")
    assert report["hu"] is False
    assert report["reason"].startswith("incomplete: 22 cards do not form 7 门子 (§7.2: ")
    loose = replace(DEFAULT, pair_requires_pao_or_ti=False)
    assert hand_report(loose, "柒柒柒", "跑壹,碰贰,碰叁,碰肆,碰伍,碰陆")["hu"] is False
    assert hand_report(DEFAULT, "柒柒", "跑壹,碰贰,碰叁,碰肆,碰伍,碰陆")["hu"] is True


# ---- item 3: the dealer discards first even with two 提 at the deal (§2 step 5, §5.8) ------------


TWO_TI = "四四四四柒柒柒柒"


def test_s2_dealer_with_two_ti_discards_first() -> None:
    """§2 step 5: the dealer with two 提 at the deal still makes the first discard; the 亮张 is no intake,
    so the §5.8 exemption waits for the dealer's first intake. A log that has the dealer discard is clean."""
    events = deal_events([TWO_TI, "", ""], "一")
    opened = next(s.state for s in replay(events) if s.state is not None and s.state.liangzhang is not None)
    assert (opened.phase, opened.turn, opened.skip_discard) == ("discard", 0, (1, 0, 0))
    first = next(e for e in events if isinstance(e, (Discarded, Drawn)))
    assert isinstance(first, Discarded) and first.seat == 0
    assert codes(events) == []


def test_s2_dealer_skipping_its_first_discard_is_flagged() -> None:
    """§2 step 5: a log in which the seat after the dealer draws at once is out of turn (T01)."""
    events = deal_events([TWO_TI, "", ""], "一")
    i = next(n for n, e in enumerate(events) if isinstance(e, Discarded))
    wrong = Drawn(stream=events[i].stream, seq=events[i].seq, ts=events[i].ts, seat=1, card="x1")
    assert _findings(events[:i] + [wrong]) == [
        ("paohuzi.T01", "第七条", "轮到座位0出牌，座位1却摸牌 seat 1 acts (draw) but seat 0 is to act (discard)")]


# ---- item 4: the deal exemption and a discard-free 跑 (§5.8 [PARAM deal_exemption]) -------------


def _two_ti_seat(profile: PaohuziProfile) -> State:
    """Seat 1 with two 提 at the deal (exemption unused) and the 坎 九九九; seat 0 to discard 九; the
    wall then gives seat 2 a 拾 nobody wants and seat 0 a 一 that seat 1 may eat with 二三."""
    return table(["九一五", "九九九二三七八贰叁肆伍陆", "六"], ("", "提四,提柒", ""), wall="拾一", profile=profile).replace(
        phase="discard", pao_ti=(0, 2, 0), skip_discard=(0, 1, 0))


def _cards(state: State, seat: int) -> int:
    return sum(state.hands[seat]) + sum(len(g.cards) for g in state.melds[seat])


@pytest.mark.parametrize(("setting", "skips_left", "cards_at_hu"),
                         [("first_discarding_intake", 1, 23), ("first_intake", 0, 22)])
def test_s5_8_deal_exemption_and_a_discard_free_pao(setting: str, skips_left: int, cards_at_hu: int) -> None:
    """§5.8 [PARAM deal_exemption]: the third 跑/提 (a 重跑) needs no discard. `first_discarding_intake`
    keeps the exemption for the next intake, so the seat reaches 20 + k = 23 cards at a hu; `first_intake`
    spends it on the 跑 and leaves the seat one card short (22: it can never win)."""
    profile = PaohuziProfile(deal_exemption=setting)  # type: ignore[arg-type]
    state = ENGINE.apply_action(_two_ti_seat(profile), Action("discard", card=card_number("九")))
    assert state.effects == (("pao", 1, card_number("九")),)
    assert (state.phase, state.turn, state.skip_discard) == ("draw", 2, (0, skips_left, 0))
    while not (state.phase == "offer" and state.offers[0].seat == 1):
        state = ENGINE.apply_action(state, DRAW if state.phase == "draw" else PASS)
    chi = next(a for a in state.offers[0].actions if a.kind == "chi")
    eaten = ENGINE.apply_action(state, chi)
    assert (eaten.phase == "discard") is (setting == "first_intake")
    held = _cards(eaten, 1) - (1 if eaten.phase == "discard" else 0)
    assert held + 1 == cards_at_hu


@pytest.mark.parametrize(("setting", "skips"), [("first_discarding_intake", 2), ("first_intake", 1)])
def test_s5_8_three_ti_at_the_deal(setting: str, skips: int) -> None:
    """§5.8 [PARAM deal_exemption]: three 提 at the deal skip two discards (its 2nd and 3rd 提) under
    `first_discarding_intake`, one under `first_intake`."""
    events = deal_events(["", "二二二二四四四四柒柒柒柒", ""], "一", PaohuziProfile(deal_exemption=setting))  # type: ignore[arg-type]
    opened = next(s.state for s in replay(events) if s.state is not None and s.state.liangzhang is not None)
    assert opened.skip_discard == (0, skips, 0)
    assert codes(events) == []
    assert last_state(events).phase == "end"


# ---- item 5: each finding names the most specific rule (第七–九条) -----------------------------


def _bot_step(found: Callable[[State, Event], bool], seeds: int = 300) -> tuple[list[Event], int]:
    """Returns a bot log and the index of the first event after which `found(state, next event)` holds."""
    for seed in range(seeds):
        events = ENGINE.bot_game(start_event(), random.Random(seed))
        for i, step in enumerate(ENGINE.replay(events[:-1])):
            if step.state is not None and step.state.hands and step.state.phase != "end" and found(step.state, events[i + 1]):
                print(f"bot seed={seed} index={i}")
                return events, i
    raise AssertionError("no such moment in the bot games")


def _planted(events: list[Event], i: int, kind: type[Event], seat: int, **fields: Any) -> list[Event]:
    """The log up to event `i` followed by a hand-made event of `seat`."""
    return events[: i + 1] + [kind(stream=events[i].stream, seq=i + 1, ts=events[i].ts + 1, seat=seat, **fields)]


def _can_chi(hand: tuple[int, ...], card: int) -> bool:
    """Tells whether `hand` has a 吃 shape (with 比) for `card`."""
    return bool(chi_options(hand, card, allow_jiao=True))


def _chi_fields(hand: tuple[int, ...], card: int) -> dict[str, Any]:
    """The fields of a 吃 event `hand` makes on `card` (its first shape with 比)."""
    main, *bi = chi_options(hand, card, allow_jiao=True)[0]
    return {"card": card_id(card), "group": [card_id(c) for c in main], "bi": [[card_id(c) for c in g] for g in bi]}


def _findings(events: list[Event]) -> list[tuple[str, str | None, str]]:
    return [(f.code, f.article, f.message) for s in ENGINE.replay(events) for f in s.findings if f.severity == "error"]


def test_s6_chi_before_a_pending_peng_is_priority() -> None:
    """第九条 / §6.4: the 下家 eating a discard while another seat's 碰 offer is open is P01, not T01."""
    def peng_pending(state: State, _: Event) -> bool:
        p = state.pending
        return (state.phase == "offer" and state.offers[0].stage == "peng" and p is not None and not p.from_wall
                and state.offers[0].seat != xiajia(p.owner) and _can_chi(state.hands[xiajia(p.owner)], p.card)
                and may_chi(state, xiajia(p.owner), p.card))
    events, i = _bot_step(peng_pending)
    state = last_state(events[: i + 1])
    eater = xiajia(state.pending.owner)
    planted = _planted(events, i, Chi, eater, **_chi_fields(state.hands[eater], state.pending.card))
    (code, article, message), = _findings(planted)
    assert (code, article) == ("paohuzi.P01", "第九条")
    card = names([state.pending.card])
    assert f"座位{state.offers[0].seat}尚未回应对{card}的碰" in message
    assert message.endswith(f"seat {state.offers[0].seat} has not answered its peng offer on {card} yet")


def test_s5_5_chi_after_guo_zhang() -> None:
    """§3 过张 / §5.5: eating a card the seat passed (or discarded) earlier is A24, not T01 "must draw"."""
    def barred(state: State, _: Event) -> bool:
        s = state.settled
        seat = state.turn
        return (state.phase == "draw" and s is not None and not s.from_wall and xiajia(s.owner) == seat
                and bool((state.guo_zhang[seat] | state.chou[seat]) >> s.card & 1) and _can_chi(state.hands[seat], s.card))
    events, i = _bot_step(barred)
    state = last_state(events[: i + 1])
    planted = _planted(events, i, Chi, state.turn, **_chi_fields(state.hands[state.turn], state.settled.card))
    (code, article, message), = _findings(planted)
    assert (code, article) == ("paohuzi.A24", "第七条") and "过张/臭牌" in message


def test_s5_5_chi_by_the_shangjia_of_a_discard() -> None:
    """§5.5: the discarder's 上家 eating its discard is A20 (only the 下家 may), not T01."""
    def shangjia_could(state: State, _: Event) -> bool:
        p = state.pending if state.phase == "offer" else state.settled
        return (p is not None and not p.from_wall and state.stage != "open"
                and _can_chi(state.hands[xiajia(xiajia(p.owner))], p.card))
    events, i = _bot_step(shangjia_could)
    state = last_state(events[: i + 1])
    p = state.pending if state.phase == "offer" else state.settled
    upper = xiajia(xiajia(p.owner))
    (code, article, message), = _findings(_planted(events, i, Chi, upper, **_chi_fields(state.hands[upper], p.card)))
    assert (code, article) == ("paohuzi.A20", "第七条")
    assert f"only the discarder's 下家, seat {xiajia(p.owner)}" in message


@pytest.mark.parametrize("kind", ["wei", "pao"])
def test_s5_forced_action_skipped_is_named(kind: str) -> None:
    """§5.1/§5.3: a log that goes on as if the forced 偎/跑 had not happened gets F02 naming it."""
    forced = {"wei": Wei, "pao": Pao}[kind]
    events, i = _bot_step(lambda state, nxt: isinstance(nxt, (Wei, Pao)) and isinstance(nxt, forced)
                          and state.effects[:1] == ((kind, nxt.seat, card_number(nxt.card)),))
    state = last_state(events[: i + 1])
    _, seat, card = state.effects[0]
    wrong = next(s for s in range(3) if s != (state.turn if state.phase == "draw" else seat) and s != seat)
    (code, article, message), = _findings(_planted(events, i, Passed, wrong, card=card_id(card)))
    assert code == "paohuzi.F02" and article == ART_FORCED[kind]
    section, word = f"§5.{'1' if kind == 'wei' else '3'}", {"wei": "偎", "pao": "跑"}[kind]
    assert f"按规则须先座位{seat}{word}{names([card])}（{section}）（是否漏记？）" in message
    assert message.endswith(f"the rules force {kind} {names([card])} by seat {seat} ({section}) first (was it skipped?)")


LOW_HAND = "一二三四五六七八九肆伍陆七八九肆伍陆柒捌"


def test_s7_3_hu_below_the_minimum_states_the_huxi() -> None:
    """§7.3: a hu claimed by a seat that is not next, with a complete hand below min_huxi, is A40 stating
    the derived 胡息 (3 for 一二三 alone), not T01 or P01."""
    state = ENGINE.apply_action(table(["五", LOW_HAND, "玖玖五"], wall="玖"), DRAW)
    assert [(o.seat, o.stage) for o in state.offers] == [(2, "peng")]
    code, article, why = claim_out_of_turn(state, 1, HU)
    assert (code, article) == ("paohuzi.A40", "第八条")
    assert why == ("用玖不成胡：7 门子只有 3 胡息，低于起胡 15 胡息（§7.3）", "no winning hand on 玖: 7 门子 "
                                                                              "with 3 胡息, below the minimum 15 (§7.3)")
    settled = state
    while settled.phase == "offer":
        settled = ENGINE.apply_action(settled, PASS)
    assert settled.phase == "draw" and settled.turn == 1
    with pytest.raises(IllegalActionError, match=r"paohuzi.A40 \(第八条\): 座位1胡：用玖不成胡：7 门子只有 3 胡息.* hu by seat 1: no winning hand "
                                                 r"on 玖: 7 门子 with 3 胡息"):
        ENGINE.apply_action(settled, HU)


def test_s7_3_hu_claim_out_of_turn_in_a_log() -> None:
    """§7.3 / 第九条: in a log, a hu by a seat that is not to act is judged on its cards (A40), not T01."""
    def other_seat_drew(state: State, nxt: Event) -> bool:
        return state.phase == "offer" and state.pending is not None and state.pending.from_wall and state.stage != "open"
    events, i = _bot_step(other_seat_drew)
    state = last_state(events[: i + 1])
    seat = next(s for s in range(3) if s != state.offers[0].seat and hu_at(state, s, state.pending.card, state.pending.owner) is None)
    (code, article, message), = _findings(_planted(events, i, Hu, seat, card=card_id(state.pending.card)))
    assert (code, article) == ("paohuzi.A40", "第八条")
    assert message.startswith(f"座位{seat}胡：") and f"hu by seat {seat}: no winning hand on " in message


# ---- item 8: events naming a seat the game does not have (第二条: three players) ---------------


NO_SEAT: list[tuple[type[Event], dict[str, Any]]] = [
    (PenaltyCard, {"card": "red", "reason": "conduct"}),
    (Resigned, {}),
    (Disconnected, {}),
    (MoveTimeUsed, {"ms": 1000}),
    (Discarded, {"card": "x1"}),
]


@pytest.mark.parametrize(("kind", "fields"), NO_SEAT, ids=[k.__name__ for k, _ in NO_SEAT])
def test_s2_event_naming_seat_3_is_ignored(kind: type[Event], fields: dict[str, Any]) -> None:
    """第二条 (three players): an event naming seat 3 is X03 and changes nothing (the result stands)."""
    events = ENGINE.bot_game(start_event(), random.Random(41))
    j = next(n for n, e in enumerate(events) if isinstance(e, Discarded))
    extra = kind(stream=events[j].stream, seq=j + 1, ts=events[j].ts, seat=3, **fields)
    log = events[: j + 1] + [extra] + [replace(e, seq=e.seq + 1) for e in events[j + 1:]]
    found = _findings(log)
    assert found == [("paohuzi.X03", "第二条 竞技跑胡子定义 (三人对抗)",
                      f"事件 {extra.kind} 指明座位3，本局座位为 0–2，此事件不计 "
                      f"{extra.kind} names seat 3, but the game has seats 0–2; the event is ignored")]
    assert ENGINE.outcome(last_state(log)) == ENGINE.outcome(last_state(events))


def test_s2_deal_or_start_naming_seat_3() -> None:
    """第二条: a deal with dealer 3 is X03 and ignored; a game.started with `first` 3 starts no game; a
    player seated at seat 3 is reported and the deal goes on."""
    events = ENGINE.bot_game(start_event(), random.Random(43))
    j = next(n for n, e in enumerate(events) if isinstance(e, Dealt))
    assert [c for c, *_ in _findings(events[:j] + [replace(events[j], dealer=3)])] == ["paohuzi.X03"]
    steps = list(ENGINE.replay([replace(events[0], first=3)]))
    assert [f.code for f in steps[0].findings] == ["paohuzi.X03"] and steps[0].state is None
    fourth = replace(events[0], seats=[*events[0].seats, SeatHolder(seat=3, player="P4")])  # type: ignore[attr-defined]
    assert _findings([fourth, *events[1:]]) == [
        ("paohuzi.X03", "第二条 竞技跑胡子定义 (三人对抗)", "开局把选手安排在座位3，本局座位为 0–2 game.started seats a player at seat 3, but the "
                                                            "game has seats 0–2")]


# ---- item 6: `matchledger hu` takes every profile field and the circumstances of a win (§7.3, §9) --


PLAIN_18 = "一二三壹贰叁二七十贰柒拾四五六肆伍陆八九十"
"""V06: 18 胡息, no 名堂."""


def test_s7_3_hu_tool_min_huxi_and_settings() -> None:
    """§7.3 [PARAM min_huxi] and every field by `--set FIELD=VALUE`: the tool answers under the changed profile."""
    assert hu_report(PLAIN_18, min_huxi=19)["reason"] == "胡息 18 below the minimum 19"
    assert hu_report(PLAIN_18, settings=["min_huxi=18"])["hu"] is True
    first = hu_report("六陆陆柒捌", "偎壹,偎贰,偎叁,偎肆,偎伍", "陆", "self", settings=["hu_vs_forced_order=hu_first"])
    assert (first["hu"], first["huxi"]) == (True, 30)
    with pytest.raises(InvalidActionError, match=r"^bad paohuzi setting: Object contains unknown field `foo`$"):
        hu_report(PLAIN_18, settings=["foo=1"])
    with pytest.raises(InvalidActionError, match=r"^bad paohuzi setting: Expected `int`, got `str` - at `\$.min_huxi`$"):
        hu_report(PLAIN_18, settings=["min_huxi=x"])
    with pytest.raises(InvalidActionError, match="^a setting is FIELD=VALUE, got 'min_huxi'$"):
        hu_report(PLAIN_18, settings=["min_huxi"])


def test_s9_hu_tool_special_wins() -> None:
    """§9: `--special 天胡,海胡` adds those 名堂 (常德全名堂: 6 番 each; 18 胡息 = 2 囤: S = 24, the winner 48)."""
    report = hu_report(PLAIN_18, special="天胡，海胡")
    assert (sorted(report["mingtang"]), report["score"]) == (["天胡", "海胡"], 48)
    assert hu_report(PLAIN_18, special="dihu,tinghu")["mingtang"] == ["地胡", "听胡"]
    with pytest.raises(InvalidActionError, match="^unknown circumstance '神胡'; known: 天胡, 地胡, 海胡, 听胡$"):
        hu_report(PLAIN_18, special="神胡")


def test_s9_hu_command_line() -> None:
    """`matchledger hu --min-huxi N --set F=V --special …`: the options reach the evaluator; exit 2 without a hu."""
    ok = cli("hu", "--hand", PLAIN_18, "--special", "海胡", "--set", "mingtang_table=changde_hhd", "--json")
    assert ok.exit_code == 0 and json.loads(ok.output)["mingtang"] == []
    low = cli("hu", "--hand", PLAIN_18, "--min-huxi", "21", "--json")
    assert low.exit_code == 3 and json.loads(low.output)["reason"] == "胡息 18 below the minimum 21"


# ---- item 7: which intakes break 听胡 (§9 [PARAM tinghu_intakes]) --------------------------------


def test_s9_tinghu_counts_forced_intakes_by_profile() -> None:
    """§9 听胡: a forced 偎 is counted apart from 吃/碰; `chi_peng` (default) keeps 听胡 after it,
    `any_intake` does not."""
    walled = ENGINE.apply_action(table(["一一五七", "", ""], wall="一"), DRAW)
    assert (walled.forced_intakes, walled.intakes) == ((1, 0, 0), (0, 0, 0))
    for setting, tinghu in (("chi_peng", True), ("any_intake", False)):
        profile = PaohuziProfile(tinghu_intakes=setting)  # type: ignore[arg-type]
        state = ENGINE.apply_action(table([PLAIN_18[:-1], "", ""], wall="十", profile=profile, forced_intakes=(1, 0, 0)), DRAW)
        won = ENGINE.apply_action(state, HU).win
        assert won is not None and ("听胡" in dict(won.result.mingtang)) is tinghu, setting


def test_s9_tinghu_broken_by_chi() -> None:
    """§9 听胡: after a 吃 the seat no longer wins 听胡 under either setting."""
    for setting in ("chi_peng", "any_intake"):
        profile = PaohuziProfile(tinghu_intakes=setting)  # type: ignore[arg-type]
        state = ENGINE.apply_action(table([PLAIN_18[:-1], "", ""], wall="十", profile=profile, intakes=(1, 0, 0)), DRAW)
        won = ENGINE.apply_action(state, HU).win
        assert won is not None and "听胡" not in dict(won.result.mingtang)


@pytest.mark.parametrize("seed", [19, 21, 33])
def test_s7_hu_tool_reads_a_recorded_deal(seed: int) -> None:
    """第八条 with `--game ID --at SEQ`: the winner's hand just before its hu, taken from the log with the
    deal's profile and circumstances, gives the hu, 胡息, 名堂 and score the log claims; --min-huxi still applies."""
    events = next(e for s in range(seed, seed + 50)
                  if (e := ENGINE.bot_game(start_event(), random.Random(s)))[-1].termination == "HU")  # type: ignore[attr-defined]
    hu = next(e for e in events if isinstance(e, Hu))
    state = position(events, hu.stream, hu.seq - 1).state
    report = game_hu_report(state, hu.seat)
    assert (report["seat"], report["hu"], report["huxi"], report["score"]) == (hu.seat, True, hu.huxi, hu.score)
    assert sorted(report["mingtang"]) == sorted(hu.mingtang)
    assert game_hu_report(state, hu.seat, min_huxi=99)["reason"] == f"胡息 {hu.huxi} below the minimum 99"


def test_s5_2_deal_ti_left_unlogged_is_no_skipped_action() -> None:
    """§2 step 5: a log that omits the deal's 提 and has the wrong seat act first is T01, not F02."""
    events = [e for e in deal_events([TWO_TI, "", ""], "一") if not isinstance(e, Ti)]
    events = [replace(e, seq=n) for n, e in enumerate(events)]
    i = next(n for n, e in enumerate(events) if isinstance(e, LiangzhangRevealed))
    wrong = Drawn(stream=events[i].stream, seq=i + 1, ts=events[i].ts, seat=1, card="x1")
    assert codes(events[: i + 1] + [wrong]) == ["paohuzi.T01"]
