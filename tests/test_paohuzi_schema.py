"""The paohuzi event contract: cards in both notations of §1 decode to one canonical form, and the
profile's defaults are the parameter set of paohuzi.md §12."""

from __future__ import annotations

import pytest

import schemas
from replay.paohuzi import PROFILES, profile_named
from replay.protocol import InvalidActionError
from schemas.codec import ContractError, decode_line
from schemas.paohuzi import HuxiTable, PaohuziProfile

CHI_ZH = '{"kind":"paohuzi.chi","stream":"g1","seq":3,"ts":5,"seat":1,"card":"三","group":["一","二","三"],"bi":[["三","四","五"]]}'
CHI_ID = (b'{"kind":"paohuzi.chi","stream":"g1","seq":3,"ts":5,"seat":1,"v":1,"card":"x3",'
          b'"group":["x1","x2","x3"],"bi":[["x3","x4","x5"]]}')


def test_chinese_names_decode_to_ids() -> None:
    """§1: 一…十/壹…拾 and x1…x10/d1…d10 are the same cards; the stored canonical form uses the ids."""
    event, canonical = decode_line(CHI_ZH.encode(), 1)
    assert canonical == CHI_ID
    assert decode_line(CHI_ID, 1)[1] == CHI_ID
    assert schemas.decode(schemas.encode(event)) == event


def test_bad_card_names_the_field() -> None:
    """§1: a string that is no card is a contract error at its field."""
    with pytest.raises(ContractError, match=r"^第 4 行 line 4: Invalid enum value 'x11' - at `\$.card`$"):
        decode_line(b'{"kind":"paohuzi.discarded","stream":"g1","seq":3,"ts":5,"seat":1,"card":"x11"}', 4)


SECTION_12 = {
    "players": 3, "min_huxi": 15, "liangzhang_owner": "dealer", "xian_can_hu_liangzhang": True, "san_ti_wu_kan": False,
    "hu_on_discard": False, "hu_optional": True, "hu_vs_forced_order": "forced_first", "allow_pao_hu": True,
    "allow_po_pao_hu": False, "external_third_as": "peng", "peng_pao_on_discard": False,
    "chi_wall_card_by": "drawer_then_xiajia", "allow_jiao": True, "kan_locked": True, "pair_requires_pao_or_ti": True,
    "second_pao_ti_no_discard": True, "double_ti_at_deal_no_discard": True, "guo_zhang_scope": "deal",
    "decomposition_objective": "max_score", "tun_formula": "(huxi-min)//3+1", "zimo_mode": "tun_plus_1",
    "mingtang_table": "changde_quan", "deal_score": "winner_plus_2S_losers_minus_S",
}


@pytest.mark.parametrize(("name", "value"), sorted(SECTION_12.items()))
def test_profile_defaults_are_section_12(name: str, value: object) -> None:
    """§12: each [PARAM] default of the parameter schema."""
    assert getattr(PaohuziProfile(), name) == value


def test_huxi_table_default_is_section_8() -> None:
    """§8 / §12 huxi_table: {peng: [1,3], kan: [3,6], wei: [3,6], chou_wei: [3,6], pao: [6,9], ti: [9,12], s123: [3,6], s2710: [3,6]}."""
    table = HuxiTable()
    assert (table.peng, table.kan, table.wei, table.chou_wei, table.pao, table.ti, table.s123, table.s2710) == (
        (1, 3), (3, 6), (3, 6), (3, 6), (6, 9), (9, 12), (3, 6), (3, 6))


def test_named_profiles() -> None:
    """§9: the regional profiles by name; the default is §12's."""
    assert {"default", "changde_quan", "changde_hhd", "ningxiang"} <= set(PROFILES)
    assert profile_named("default") == PaohuziProfile()
    assert profile_named("ningxiang").mingtang_table == "ningxiang"
    with pytest.raises(InvalidActionError, match="unknown paohuzi profile 'wuhan'; known: default, "):
        profile_named("wuhan")
