"""The one dictionary of terms people read (issue 31 point 3): each term's Chinese, its English and,
for the standings columns, what it means. The HTML legends, the pages' result sentences and the
terminal legends (audit/presentation/render.py) read it, so a term has one Chinese name everywhere.

Chinese names follow the rule books (shared/seeds/): 大分, 小分, 累进分, 得分率, 军旗被夺 …"""

from __future__ import annotations

import re
from typing import NamedTuple

from replay.values import EVENT_KINDS, TERMINATION_WORDS, event_kind  # noqa: F401 - the pages' words, from the one table
from schemas.arbitration import DECISIONS
from schemas.common import RULING_WORDS


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

TERMINATION_MEANINGS: dict[str, str] = {
    "FLAG_CAPTURED": "an alliance lost both flags or all its pieces (军棋第九条)",
    "NO_LEGAL_MOVE": "an alliance had no piece left that could move",
    "TIMEOUTS": "a seat reached the profile's limit of timeouts",
    "RESIGNED": "a seat or alliance resigned",
    "ILLEGAL_MOVE": "the profile ends the game at an illegal move",
    "QUIET_LIMIT": "draw: no contact within the quiet limit (军棋第九条 2)",
    "MAX_STEPS": "draw: the whole game reached the step limit (军棋第九条 3)",
    "DRAW_AGREED": "draw by agreement of all seats",
    "HU": "a seat completed a winning hand (跑胡子第八条)",
    "WALL_EXHAUSTED": "the wall ran out without a hu: a draw",
    "ALL_HOME": "a seat filled the opposite camp (跳棋第三条)",
    "MARGIN_DRAW": "the first mover got home only one move sooner (跳棋第三条)",
    "REPETITION": "a position repeated (跳棋第三条)",
    "LEAVE_CAMP": "leave-camp deadline missed (跳棋第五条)",
    "DISCONNECTED": "a seat disconnected (跳棋第十六条)",
    "DISSOLVED": "the table was dissolved by a seat (跳棋第十六条)",
    "MAX_ROUNDS": "the game reached the profile's round limit",
    "UNJUSTIFIED_SKIP": "a seat skipped without a card or timeout to justify it (跳棋第十六条)",
    "NO_WAIT": "a seat moved faster than the minimum waiting time too often (跳棋第四条)",
    "YELLOW_CARD": "a seat lost the game on a yellow card (跳棋第十六条)",
    "RED_CARD": "a seat was disqualified by a red card (跳棋第十七条)",
    "FORFEIT": "a ruling: the seat forfeits",
    "RULING": "the result a referee's ruling sets",
    "VOID": "a ruling voided the game",
    "REPLAY_ORDERED": "a ruling ordered the game replayed",
    "UNVERIFIED": "the engine could not derive a result; the declared one stands in",
}
"""What each way a game ends means (for a legend), in English; its words are replay/values.py's."""

TERMINATIONS: dict[str, Term] = {name: Term(zh, en, TERMINATION_MEANINGS[name]) for name, (zh, en) in TERMINATION_WORDS.items()}
"""How a game ended, in words (the engines' `Outcome.termination` values): the one table of
replay/values.py (the engines' finding messages use it too), with what each means."""

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
    **{kind: Term(zh, en) for kind, (zh, en) in RULING_WORDS.items()},  # schemas.common's one table
    **{decision: Term(zh, en) for decision, (zh, en) in DECISIONS.items()},  # upheld, rejected, void_late: the checks' words
    "vote:uphold": Term("支持", "uphold"),  # a committee member's vote (schemas.common Vote), apart from the statuses
    "vote:reject": Term("驳回", "reject"),
    "vote:void": Term("逾期无效", "void as late"),
    "in_time": Term("按时提出", "filed in time"),
    "late": Term("逾期", "late"),
    "verified": Term("签名有效", "signature verified"),
    "unsigned": Term("未签名", "unsigned"),
    "bad_signature": Term("签名无效", "signature does not verify"),
    # the log and its keys (the results of init, record, verify, prove, check-proof, keygen)
    "ok": Term("核对通过", "ok"),
    "log_ok": Term("日志完好", "log ok"),
    "tree_size": Term("树大小", "tree size"),
    "root": Term("根哈希", "root"),
    "checkpoints_verified": Term("已核对检查点", "checkpoints verified"),
    "note": Term("说明", "note"),
    "public_key": Term("公钥", "public key"),
    "private_key": Term("私钥", "private key"),
    "key_id": Term("密钥标识", "key id"),
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
