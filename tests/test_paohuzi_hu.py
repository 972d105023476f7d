"""胡牌条件, 胡息, 名堂 and deal scores (paohuzi.md §7–§10, §16): the vectors as data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from replay.paohuzi import hu_report, parse_melds
from replay.paohuzi.cards import parse_cards
from replay.paohuzi.melds import Group, Stats, deal_score, group_huxi, mingtang
from replay.paohuzi.profiles import PROFILES
from replay.paohuzi.report import hand_report
from replay.protocol import InvalidActionError
from schemas.paohuzi import HuxiTable, PaohuziProfile

DATA = Path(__file__).resolve().parent / "data" / "paohuzi"
HANDS = json.loads((DATA / "hands.json").read_text(encoding="utf-8"))["hands"]


@pytest.mark.parametrize("case", HANDS, ids=[c["id"] for c in HANDS])
def test_hand_vectors(case: dict[str, Any]) -> None:
    """§16.3 complete hands (and the [PARAM] vectors): hu, 胡息, colour counts, 名堂 and score."""
    profile = msgspec.structs.replace(PROFILES[case.get("profile", "default")], **case.get("overrides", {}))
    report = hand_report(profile, case["hand"], case.get("melds"), case.get("win"), case.get("source"))
    for key, expected in case["expect"].items():
        got = sorted(report[key]) if key == "mingtang" else report[key]
        assert got == (sorted(expected) if key == "mingtang" else expected), f"{case['id']} ({case['rule']}): {key}"


GROUP_HUXI = [
    ("碰 一", 1), ("碰 壹", 3), ("偎 一", 3), ("偎 壹", 6), ("臭偎 一", 3), ("臭偎 壹", 6), ("坎 一", 3), ("坎 壹", 6),
    ("跑 一", 6), ("跑 壹", 9), ("提 一", 9), ("提 壹", 12), ("吃 一二三", 3), ("吃 壹贰叁", 6),
    ("吃 二七十", 3), ("吃 贰柒拾", 6), ("吃 三四五", 0), ("吃 一一壹", 0), ("吃 八九十", 0),
]


@pytest.mark.parametrize(("meld", "huxi"), GROUP_HUXI)
def test_group_huxi_table(meld: str, huxi: int) -> None:
    """§8 / §16.1 (附录四 consensus): the 胡息 of each 门子."""
    (group,) = parse_melds(meld)
    assert group_huxi(group, HuxiTable()) == huxi


@pytest.mark.parametrize(
    ("huxi", "tun"), [(15, 1), (17, 1), (18, 2), (19, 2), (21, 3), (24, 4), (30, 6), (31, 6), (42, 10)]
)
def test_tun_changde(huxi: int, tun: int) -> None:
    """§10 / §16.4: 囤 = (胡息 − 15)//3 + 1."""
    assert deal_score(huxi, [], False, PROFILES["changde_quan"]).tun == tun


def test_tun_zimo_plus_one() -> None:
    """§16.4 (S4): 15 胡息 + 自摸 = 2 囤 under zimo_mode tun_plus_1."""
    assert deal_score(15, [], True, PaohuziProfile()).tun == 2


@pytest.mark.parametrize(("huxi", "money"), [(15, 10), (17, 10), (18, 15), (20, 15), (21, 20), (23, 20), (24, 25)])
def test_ningxiang_money_steps(huxi: int, money: int) -> None:
    """§16.4 (S3 宁乡): 15→10, 18→15, 21→20, 24→25."""
    assert deal_score(huxi, [], False, PROFILES["ningxiang"]).s == money


def _stats(red: int = 5, big: int = 10, small: int = 11, duizi: int = 0) -> Stats:
    return Stats(red=red, big=big, small=small, duizi=duizi, tianhu=0, dihu=0, haidi=0, tinghu=0, shuahou=0)


@pytest.mark.parametrize(("red", "fan", "name"), [(1, 3, "点胡"), (0, 5, "乌胡"), (11, 2, "红胡"), (13, 4, "红乌")])
def test_hongheidian_fan(red: int, fan: int, name: str) -> None:
    """§16.4 (S4 TestTunFan, 红黑点 table): 1 red → 3 番, 0 → 5, 11 → 2, 13 → 4."""
    assert mingtang(_stats(red=red), PROFILES["changde_hhd"]) == [(name, fan)]


def test_hongheidian_base_100() -> None:
    """§16.4: 囤 2 × 番 1 × base 100 → S = 200 (winner +400, each loser −200)."""
    assert deal_score(18, [], False, msgspec.structs.replace(PROFILES["changde_hhd"], base=100)).s == 200


@pytest.mark.parametrize(
    ("table", "stats", "expected"),
    [
        ("changde_quan", {"red": 12}, [("红胡", 5)]),
        ("changde_quan", {"red": 1, "small": 17, "big": 4}, [("点胡", 6), ("小字胡", 11)]),
        ("ningxiang", {"red": 0, "big": 18, "small": 3, "duizi": 1}, [("乌胡", 5), ("对子胡", 5), ("大字胡", 5)]),
        ("ningxiang", {"red": 10, "small": 17}, [("红胡", 2)]),
        ("none", {"red": 0}, []),
    ],
)
def test_mingtang_tables(table: str, stats: dict[str, int], expected: list[tuple[str, int]]) -> None:
    """§9: 红胡 +1 per extra red (常德全), 小字胡 threshold 16 (常德) vs 18 (宁乡), additive 番."""
    profile = PaohuziProfile(mingtang_table=table)  # type: ignore[arg-type]
    assert mingtang(_stats(**stats), profile) == expected


def test_cards_in_both_notations() -> None:
    """§1: ids and Chinese names parse to the same cards."""
    assert parse_cards("x1,x2,d10") == parse_cards("一二拾") == [0, 1, 19]


def test_hu_report_keys_and_errors() -> None:
    """`hu_report` (matchledger hu): the documented keys; bad input names the problem."""
    report = hu_report("一一一三三三四四四五五五六六六八八八九九九", profile="default")
    assert set(report) >= {"hu", "huxi", "red", "big", "small", "mingtang", "score", "reason", "decomposition"}
    assert report["decomposition"][0] == "坎 一一一"
    with pytest.raises(InvalidActionError, match="more than 4 copies of 一"):
        hu_report("一一一一一")
    with pytest.raises(InvalidActionError, match="not a paohuzi card: 'q'"):
        hu_report("一q")
    with pytest.raises(InvalidActionError, match="unknown paohuzi profile 'x'"):
        hu_report("一", profile="x")
    assert parse_melds("peng x3, chi x4,x5,x6") == [Group("peng", (2, 2, 2)), Group("chi", (3, 4, 5))]
