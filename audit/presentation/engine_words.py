"""The words the engines' catalogues give (issue 31 point 3): each finding code's rule in Chinese and
the seat colours in words. Apart from the plain dictionary (audit/presentation/terms.py), which the
CLI loads at start-up, because these tables load the engines (about 0.2 s) and only the pages and
tables that show findings or boards need them."""

from __future__ import annotations

from audit.presentation.terms import Term
from replay.checkers.codes import CATALOGUE as CHECKERS_CODES
from replay.checkers.render import PALETTE as CHECKERS_PALETTE
from replay.junqi.codes import CODES as JUNQI_CODES
from replay.junqi.render import PALETTE as JUNQI_PALETTE
from replay.paohuzi.codes import CODES as PAOHUZI_CODES
from replay.paohuzi.render import PALETTE as PAOHUZI_PALETTE

COLOUR_NAMES: dict[str, Term] = {colour: Term(zh, en) for palette in (JUNQI_PALETTE, CHECKERS_PALETTE, PAOHUZI_PALETTE)
                                  for colour, (zh, en) in palette.items()}
"""The seat colours of the boards, in words (a legend names colours, not hex codes)."""


def colour_name(colour: str) -> str:
    """Returns a seat colour in words, Chinese then English."""
    found = COLOUR_NAMES.get(colour.lower())
    return found.both() if found else colour


RULES: dict[str, str] = {
    **{code.code: code.rule_zh for codes in (JUNQI_CODES, PAOHUZI_CODES, CHECKERS_CODES) for code in codes.values()},
    "audit.C01": "声称结果须与推导结果一致（SQL）", "audit.C02": "声称胡息与得分须与推导一致（SQL）",
    "audit.P01": "得分须由结果和规则设置得出（SQL）", "audit.O01": "超时次数不得超过允许次数（SQL）",
    "audit.T01": "声称用时须与时间戳相符（SQL）", "audit.T02": "SQL与引擎计算的用时须一致", "audit.L01": "出营期限（SQL）",
    "audit.Q01": "五十步无接触计数（SQL）", "audit.Q02": "五十步无接触终局（SQL）", "audit.S01": "总步数限制（SQL）",
    "audit.G01": "每个流须为对局或赛事", "audit.A01": "申诉须在时限内提出（非限定场地24小时，限定场地3小时）",
    "audit.A02": "仲裁委员会单数且不少于三人，少数服从多数，只裁决一次", "audit.A03": "须在时限内（默认2个工作日）答复申诉",
    "audit.A04": "终局后只有申诉成立才能改判", "audit.A05": "申诉成立须有裁决执行", "audit.A06": "裁决须由登记的仲裁员签名",
    "audit.A07": "裁决须写明其种类所需的内容", "audit.E01": "实时审计须处理对局的每个事件", "audit.E02": "实时审计须在每轮结束时检查",
    "audit.W01": "首轮编排须可由种子复现", "audit.W02": "瑞士制编排按规则算法，不重复相遇", "audit.W03": "每局座位须与本轮编排一致",
    "audit.W04": "按名次蛇形移位（瑞士移位法）", "ledger.V01": "记录须可验证：帧、树、瓦片、检查点、签名",
}
"""What each finding code's rule says, in Chinese: the engines' from their catalogues, the audit's and the log's here."""


def rule(code: str) -> str | None:
    """Returns a finding code's rule in Chinese, or None for a code the dictionary lacks."""
    return RULES.get(code)
