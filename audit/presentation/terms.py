"""The one dictionary of terms people read (issue 31 point 3): each term's Chinese, its English and,
for the standings columns, what it means. The HTML legends, the pages' result sentences and the
terminal legends (audit/presentation/render.py) read it, so a term has one Chinese name everywhere.

Chinese names follow the rule books (shared/seeds/): 大分, 小分, 累进分, 得分率, 军旗被夺 …"""

from __future__ import annotations

import re
from typing import NamedTuple

from replay.checkers.codes import CATALOGUE as CHECKERS_CODES
from replay.checkers.render import PALETTE as CHECKERS_PALETTE
from replay.junqi.codes import CODES as JUNQI_CODES
from replay.junqi.render import PALETTE as JUNQI_PALETTE
from replay.paohuzi.codes import CODES as PAOHUZI_CODES
from replay.paohuzi.render import PALETTE as PAOHUZI_PALETTE


class Term(NamedTuple):
    """A term: its Chinese, its short English, and what it means (for a legend), in English."""

    zh: str
    en: str
    meaning: str = ""

    def both(self) -> str:
        """Returns the term as pages show it: Chinese first, English beside."""
        return f"{self.zh} {self.en}" if self.en else self.zh

    def said(self, lang: str) -> str:
        """Returns the term in `lang`: `zh`, `en` or `both`."""
        return self.zh if lang == "zh" else self.en if lang == "en" else self.both()


class Column(NamedTuple):
    """What a standings column means, in English and in the rule books' Chinese (the terminal's legend),
    and the short label a terminal of 80 columns shows instead of its name."""

    en: str
    zh: str
    short: str = ""


COLUMNS: dict[str, Column] = {
    # duplicate standings (tournament.md §3, 附录二 二)
    "rank": Column("rank; equal values share a place", "名次", "#"),
    "player": Column("player id", "选手", "player"),
    "r_shown": Column("r: mean MP score rate over the boards played, shown with one decimal (ranks first)", "得分率", "r"),
    "boards": Column("boards played", "副数", "bds"),
    "opp_r": Column("tie-break 1: mean r of the opponents met", "对手平均得分率", "opp_r"),
    "beaten_r": Column("tie-break 2: mean r of the opponents beaten", "胜过对手平均得分率", "beat_r"),
    "move_ms": Column("tie-break 3: own move time in all games, m:ss (less ranks higher)", "总用时", "time"),
    "trimmed_ms": Column("tie-break 4: mean own move time per game without the longest and shortest, m:ss", "去掉最长最短局的平均用时", "trim"),
    "unresolved": Column("the tie-breaks leave a tie with another player: a play-off decides (加赛)", "未分出名次", "tie"),
    "unverified": Column("games standing on a declared result the engines could not verify", "未验证对局", "unv"),
    "status": Column("final, provisional (an appeal window is open), under_appeal, unresolved or void: the least final of the "
                     "player's games", "成绩状态", "status"),
    "void_games": Column("games voided by a ruling, left out of the comparison", "无效对局", "void"),
    "forfeits": Column("matches forfeited after a withdrawal (第十二条)", "弃权局", "ff"),
    # Swiss standings (tournament.md §5, 第十八条; checkers.md §12)
    "big": Column("big: match points, win 1, draw 0.5, loss 0", "大分", "big"),
    "bh": Column("bh: Buchholz, the sum of the 大分 of the opponents met", "小分", "bh"),
    "ps": Column("ps: progressive score, the sum of the running 大分 after each round", "累进分", "ps"),
    "direct_encounter": Column("tie-break 4: points against the tied players, when all of them met (else –)", "直接胜负", "de"),
    "wins": Column("tie-break 5: games won", "胜局数", "w"),
    "games": Column("games played", "对局数", "g"),
    "win_rate": Column("tie-break 6: wins / games", "胜率", "w%"),
    "bh_prev": Column("tie-break 7: Buchholz after the previous round, then the round before, back to round 1", "前轮小分", "bh_p"),
}
"""The meaning of every standings column: the legends of `standings --legend`, README and the tournament page."""

TERMINATIONS: dict[str, Term] = {
    "FLAG_CAPTURED": Term("军旗被夺", "flag captured", "an alliance lost both flags or all its pieces (军棋第九条)"),
    "NO_LEGAL_MOVE": Term("无子可走", "no legal move", "an alliance had no piece left that could move"),
    "TIMEOUTS": Term("超时判负", "lost on timeouts", "a seat reached the profile's limit of timeouts"),
    "RESIGNED": Term("认输", "resigned", "a seat or alliance resigned"),
    "ILLEGAL_MOVE": Term("违规判负", "lost by an illegal move", "the profile ends the game at an illegal move"),
    "QUIET_LIMIT": Term("五十步无接触和棋", "draw: no contact in 50 steps", "draw: no contact within the quiet limit (军棋第九条 2)"),
    "MAX_STEPS": Term("达到规定步数和棋", "draw: step limit reached", "draw: the whole game reached the step limit (军棋第九条 3)"),
    "DRAW_AGREED": Term("议和", "draw agreed", "draw by agreement of all seats"),
    "HU": Term("胡牌", "hu (a winning hand)", "a seat completed a winning hand (跑胡子第八条)"),
    "WALL_EXHAUSTED": Term("荒庄", "wall exhausted", "the wall ran out without a hu: a draw"),
    "ALL_HOME": Term("全部进营", "all pieces home", "a seat filled the opposite camp (跳棋第三条)"),
    "MARGIN_DRAW": Term("进营差一步和棋", "draw: home within one move", "the first mover got home only one move sooner (跳棋第三条)"),
    "REPETITION": Term("重复行棋和棋", "draw by repetition", "a position repeated (跳棋第三条)"),
    "LEAVE_CAMP": Term("未按时出营判负", "lost: did not leave camp in time", "leave-camp deadline missed (跳棋第五条)"),
    "DISCONNECTED": Term("掉线判负", "lost by disconnection", "a seat disconnected (跳棋第十六条)"),
    "DISSOLVED": Term("解散判负", "lost: table dissolved", "the table was dissolved by a seat (跳棋第十六条)"),
    "MAX_ROUNDS": Term("达到回合上限", "round limit reached", "the game reached the profile's round limit"),
    "FORFEIT": Term("弃权判负", "forfeit", "a ruling: the seat forfeits"),
    "RULING": Term("裁判判定", "decided by a ruling", "the result a referee's ruling sets"),
    "VOID": Term("判为无效", "voided by a ruling", "a ruling voided the game"),
    "REPLAY_ORDERED": Term("判令重赛", "replay ordered", "a ruling ordered the game replayed"),
    "UNVERIFIED": Term("未验证", "unverified", "the engine could not derive a result; the declared one stands in"),
}
"""How a game ended, in words (the engines' `Outcome.termination` values)."""

TERMS: dict[str, Term] = {
    # results and their standing
    "derived": Term("推导结果", "derived result", "the result the engines derive from the recorded play"),
    "claimed": Term("声称结果", "claimed result", "the result the competition software declared (game.ended)"),
    "in_force": Term("生效结果", "result in force", "the derived result after every ruling on the game"),
    "not_finished": Term("未终局", "not finished", "the replay reached no end of the game"),
    "unverified": Term("未验证", "unverified", "the engine could not derive a result; the declared one stands in"),
    # a result's standing (standings `status`)
    "final": Term("最终", "final", "no appeal window open, no appeal pending"),
    "provisional": Term("暂定", "provisional", "an appeal window is still open"),
    "under_appeal": Term("申诉中", "under appeal", "an appeal awaits its decision or correction"),
    "unresolved": Term("未决", "unresolved", "a game without a derived result that counts"),
    "void": Term("无效", "void", "voided by a ruling"),
    "draw": Term("和棋", "draw"),
    # games and tournament formats
    "junqi": Term("四国军棋", "junqi"),
    "paohuzi": Term("跑胡子", "paohuzi"),
    "checkers": Term("跳棋", "checkers"),
    "duplicate": Term("复式赛", "duplicate"),
    "swiss": Term("瑞士制", "swiss"),
    "won": Term("获胜", "won"),
    # severities
    "error": Term("违规", "error", "an event the rules refuse"),
    "warning": Term("提示", "warning", "an event to look at; the game goes on"),
    # seats
    "seat": Term("座位", "seat"),
    "dealer": Term("庄", "dealer"),
    "player_seat": Term("闲", "non-dealer"),
    "first": Term("先行", "first to move"),
    # rulings (schemas.common RulingKind) and appeals
    "result_override": Term("改判结果", "result overridden"),
    "forfeit": Term("判负", "forfeit"),
    "penalty": Term("处罚", "penalty"),
    "void_game": Term("判为无效", "game voided"),
    "replay_from": Term("判令重赛", "replay ordered"),
    "score_correction": Term("更正比分", "score corrected"),
    "authorised_skip": Term("准许跳过", "skip authorised"),
    "withdrawal": Term("退赛", "withdrawal"),
    "upheld": Term("申诉成立", "upheld"),
    "rejected": Term("申诉驳回", "rejected"),
    "vote:uphold": Term("支持", "uphold"),  # a committee member's vote (schemas.common Vote), apart from the statuses
    "vote:reject": Term("驳回", "reject"),
    "vote:void": Term("逾期无效", "void as late"),
    "void_late": Term("逾期无效", "void as late"),
    "in_time": Term("按时提出", "filed in time"),
    "late": Term("逾期", "late"),
    "verified": Term("签名有效", "signature verified"),
    "unsigned": Term("未签名", "unsigned"),
    "bad_signature": Term("签名无效", "signature does not verify"),
}
"""Other words the pages print: results, severities, seats, rulings and appeals."""

CHECKS: dict[str, str] = {
    "log": "日志完整：帧、树、检查点、签名", "rules": "布阵、发牌、行棋及其声称均合规（复盘）", "claims": "声称的结果和比分与推导一致",
    "points": "对局得分：SQL与引擎一致", "deals": "复式发牌：同一副牌各桌所发相同", "timing": "声称用时与时间戳及引擎计时一致",
    "timeouts": "超时次数在本阶段允许之内", "quiet": "军棋五十步无接触：SQL与引擎一致", "steps": "军棋总步数限制",
    "leave-camp": "跳棋出营期限", "seating": "座位与编排符合抽签和移位规则", "appeals": "申诉按时提出，仲裁委员会在期限内以有效多数决定",
    "corrections": "申诉成立均已纠正，无申诉成立不得改判", "arbiters": "每项裁决和决定均由登记的仲裁员签名",
}
"""Each check of the certification (audit/query/checks.py) in Chinese: the terminal's table shows it before the English title."""

EVENT_KINDS: dict[str, str] = {
    "game.started": "开局", "game.ended": "结果声明", "game.move_time": "用时", "game.timed_out": "超时", "game.resigned": "认输",
    "game.skipped": "略过", "game.disconnected": "掉线", "game.draw_offered": "求和", "game.draw_answered": "答复求和",
    "game.penalty": "处罚", "game.ruling": "裁决", "junqi.layout": "布阵", "junqi.moved": "行棋", "junqi.flag_revealed": "亮旗",
    "checkers.moved": "行棋", "paohuzi.board_created": "建副", "paohuzi.board_revealed": "公开牌序", "paohuzi.dealt": "发牌",
    "paohuzi.liangzhang": "亮张", "paohuzi.drawn": "摸牌", "paohuzi.discarded": "打牌", "paohuzi.chi": "吃", "paohuzi.peng": "碰",
    "paohuzi.wei": "偎", "paohuzi.chou_wei": "臭偎", "paohuzi.ti": "提", "paohuzi.pao": "跑", "paohuzi.passed": "过",
    "paohuzi.hu": "胡", "paohuzi.huangzhuang": "荒庄", "appeal.filed": "申诉", "appeal.decided": "申诉决定",
    "arbiter.registered": "登记仲裁员", "tournament.opened": "赛事开幕", "tournament.player_registered": "选手报名",
    "tournament.round_seated": "编排座位", "tournament.round_closed": "本轮结束",
}
"""Each event kind in Chinese (the timeline and the appeals table show it beside the kind)."""


def event_kind(kind: str) -> str:
    """Returns an event kind as people read it: its Chinese, then the kind as the log writes it."""
    zh = EVENT_KINDS.get(kind)
    return f"{zh} {kind}" if zh else kind


COLOUR_NAMES: dict[str, Term] = {colour: Term(zh, en) for palette in (JUNQI_PALETTE, CHECKERS_PALETTE, PAOHUZI_PALETTE)
                                  for colour, (zh, en) in palette.items()}
"""The seat colours of the boards, in words (a legend names colours, not hex codes)."""


def termination(name: str | None, lang: str = "both") -> str:
    """Returns a termination in words, Chinese then English, or in `lang` (the name itself, in
    lower case, where the dictionary has none)."""
    if name is None:
        return TERMS["not_finished"].said(lang)
    found = TERMINATIONS.get(name)
    return found.said(lang) if found else name.replace("_", " ").lower()


_TERMINATION_NAME = re.compile(r"\b(" + "|".join(sorted(TERMINATIONS, key=len, reverse=True)) + r")\b")


def in_words(text: str) -> str:
    """Returns an engine's text (a board's status line) with each termination name in words, Chinese
    then English (`over: FLAG_CAPTURED` → `over: 军旗被夺 flag captured`): no enum name reaches a person."""
    return _TERMINATION_NAME.sub(lambda m: termination(m.group()), text)


def term(name: str, lang: str = "both") -> str:
    """Returns a term, Chinese then English, or in `lang` (the name itself where the dictionary has none)."""
    found = TERMS.get(name)
    return found.said(lang) if found else name.replace("_", " ")


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
