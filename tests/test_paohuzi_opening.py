"""The deal and its opening (第五条, 第六条; paohuzi.md §2): 亮张 as the dealer's 21st card, the
forced initial 提, 天胡, 地胡, 三提五坎 and the two-提 discard exemption — on scripted decks."""

from __future__ import annotations

import random

import msgspec

from replay.paohuzi import ENGINE, play_board
from replay.paohuzi.fold import replay
from schemas.paohuzi import Hu, PaohuziProfile, Ti
from tests.paohuzi_support import codes, last_state, scripted_deck, start_event

HU_HAND = "一二三壹贰叁二七十贰柒拾四五六肆伍陆八九"


def deal_events(hands: list[str], liang: str, profile: str | PaohuziProfile = "default", wall: str = "") -> list:
    """Plays a scripted deal (dealer seat 0) with the bot and returns its events."""
    deck = scripted_deck(hands, liang, wall)
    return play_board(start_event(profile), deck, random.Random(5))


def test_tianhu() -> None:
    """§2 / §9: the dealer's 21 cards (亮张 included) win at once: 天胡 (+ 听胡); V01 under 常德全名堂."""
    events = deal_events(["一一一三三三四四四五五五六六六八八八九九", "", ""], "九")
    assert codes(events) == []
    hu = next(e for e in events if isinstance(e, Hu))
    assert hu.seat == 0 and hu.card is None
    assert sorted(hu.mingtang) == sorted(["乌胡", "对子胡", "小字胡", "天胡", "听胡"])
    # 乌胡 8 + 对子胡 8 + 小字胡 15 + 天胡 6 + 听胡 6 = 43 番, 3 囤 → S = 129
    assert events[-1].points == [258, -129, -129]


def test_dihu_on_liangzhang() -> None:
    """§2 [PARAM xian_can_hu_liangzhang]: a non-dealer wins on the 亮张 (地胡); off, it may not."""
    events = deal_events(["五五", HU_HAND, ""], "十")
    hu = next(e for e in events if isinstance(e, Hu))
    assert (hu.seat, hu.card, codes(events)) == (1, "x10", [])
    assert "地胡" in hu.mingtang
    state = last_state(events)
    outcome = ENGINE.outcome(state)
    assert outcome is not None and outcome.winners == (1,)
    closed = deal_events(["五五", HU_HAND, ""], "十", PaohuziProfile(xian_can_hu_liangzhang=False))
    opened = next(s.state for s in replay(closed) if s.state is not None and s.state.liangzhang is not None)
    assert opened.offers == () and opened.phase == "discard" and codes(closed) == []


def test_initial_ti_is_forced_and_logged() -> None:
    """§2.2 / §5.2: four of a kind in a dealt hand is a forced 提 before the first discard."""
    events = deal_events(["四四四四", "", ""], "一")
    tis = [e for e in events if isinstance(e, Ti)]
    assert tis and (tis[0].seat, tis[0].card) == (0, "x4")
    assert codes(events) == []


def test_two_ti_at_deal_skip_first_discard() -> None:
    """§5.8 [PARAM double_ti_at_deal_no_discard]: two 提 at the deal exempt the first discard."""
    events = deal_events(["", "四四四四柒柒柒柒", ""], "一")
    states = [s.state for s in replay(events)]
    opened = next(s for s in states if s is not None and s.liangzhang is not None)
    assert opened.skip_discard == (0, 1, 0)
    assert codes(events) == []


def test_san_ti_wu_kan() -> None:
    """§2.1 / §7.5 [PARAM san_ti_wu_kan]: three 提 at the deal win at once, whatever the 胡息."""
    hands = ["", "", "二二二二三三三三五五五五"]
    profile = PaohuziProfile(san_ti_wu_kan=True)
    events = deal_events(hands, "一", profile)
    hu = next(e for e in events if isinstance(e, Hu))
    assert (hu.seat, hu.mingtang, codes(events)) == (2, ["三提五坎"], [])
    plain = deal_events(hands, "一")
    assert all(not isinstance(e, Hu) or e.mingtang != ["三提五坎"] for e in plain)


def test_profile_travels_in_game_started() -> None:
    """DESIGN schemas/: the profile in force is recorded in game.started and used by the replay."""
    profile = msgspec.structs.replace(PaohuziProfile(), min_huxi=10)
    events = deal_events(["五五", "", ""], "一", profile)
    assert events[0].profile.min_huxi == 10 and last_state(events).profile.min_huxi == 10
