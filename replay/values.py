"""The engines' domain values that every game shares the shape of: a documented `Termination`
enum per game (and the shared set), and a catalogue of finding codes (`Code`) beside each engine."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NamedTuple


class DocumentedTermination(StrEnum):
    """Base of the `Termination` enums: each member is its stored string and carries a one-line `doc`."""

    doc: str

    def __new__(cls, value: str, doc: str = "") -> DocumentedTermination:
        member = str.__new__(cls, value)
        member._value_ = value
        member.doc = doc
        return member


class SharedTermination(DocumentedTermination):
    """How any game's result can end outside its own rules: by a referee's ruling or unverified."""

    RULING = "RULING", "a referee's ruling set the result (第十四条)"
    FORFEIT = "FORFEIT", "a ruling: a seat forfeits the game"
    VOID = "VOID", "a ruling voided the game: no result counts"
    REPLAY_ORDERED = "REPLAY_ORDERED", "a ruling ordered the game replayed: no result counts"
    UNVERIFIED = "UNVERIFIED", "the rules could not decide the game; the software's declared result stands in"


TERMINATION_WORDS: dict[str, tuple[str, str]] = {
    "FLAG_CAPTURED": ("军旗被夺", "flag captured"), "NO_LEGAL_MOVE": ("无子可走", "no legal move"),
    "TIMEOUTS": ("超时判负", "lost on timeouts"), "RESIGNED": ("认输", "resigned"),
    "ILLEGAL_MOVE": ("违规判负", "lost by an illegal move"), "QUIET_LIMIT": ("五十步无接触和棋", "draw: no contact in 50 steps"),
    "MAX_STEPS": ("达到规定步数和棋", "draw: step limit reached"), "DRAW_AGREED": ("议和", "draw agreed"),
    "HU": ("胡牌", "hu (a winning hand)"), "WALL_EXHAUSTED": ("荒庄", "wall exhausted"), "ALL_HOME": ("全部进营", "all pieces home"),
    "MARGIN_DRAW": ("进营差一步和棋", "draw: home within one move"), "REPETITION": ("重复行棋和棋", "draw by repetition"),
    "LEAVE_CAMP": ("未按时出营判负", "lost: did not leave camp in time"), "DISCONNECTED": ("掉线判负", "lost by disconnection"),
    "DISSOLVED": ("解散判负", "lost: table dissolved"), "MAX_ROUNDS": ("达到回合上限", "round limit reached"),
    "UNJUSTIFIED_SKIP": ("无故略过判负", "lost: skipped without a reason"), "NO_WAIT": ("未按最短等待时间判负", "lost: moved too fast too often"),
    "YELLOW_CARD": ("黄牌判负", "lost: a yellow card"), "RED_CARD": ("红牌取消资格", "lost: a red card"), "FORFEIT": ("弃权判负", "forfeit"),
    "RULING": ("裁判判定", "decided by a ruling"), "VOID": ("判为无效", "voided by a ruling"),
    "REPLAY_ORDERED": ("判令重赛", "replay ordered"), "UNVERIFIED": ("未验证", "unverified"),
}
"""How a game ended in words, Chinese and English: the one table of these words, read by the engines'
finding messages, the audit's SQL checks (`termination_words`) and audit/presentation/terms.py."""


EVENT_KINDS: dict[str, str] = {
    "game.started": "开局", "game.ended": "结果声明", "game.move_time": "用时", "game.timed_out": "超时", "game.resigned": "认输",
    "game.skipped": "略过", "game.disconnected": "掉线", "game.draw_offered": "求和", "game.draw_answered": "答复求和",
    "game.penalty": "判罚", "game.ruling": "裁决", "junqi.layout": "布阵", "junqi.moved": "行棋", "junqi.flag_revealed": "亮旗",
    "checkers.moved": "行棋", "paohuzi.board_created": "建副", "paohuzi.board_revealed": "公开牌序", "paohuzi.dealt": "发牌",
    "paohuzi.liangzhang": "亮张", "paohuzi.drawn": "摸牌", "paohuzi.discarded": "打牌", "paohuzi.chi": "吃", "paohuzi.peng": "碰",
    "paohuzi.wei": "偎", "paohuzi.chou_wei": "臭偎", "paohuzi.ti": "提", "paohuzi.pao": "跑", "paohuzi.passed": "过",
    "paohuzi.hu": "胡", "paohuzi.huangzhuang": "荒庄", "appeal.filed": "申诉", "appeal.decided": "申诉决定",
    "arbiter.registered": "登记仲裁员", "tournament.opened": "赛事开幕", "tournament.player_registered": "选手报名",
    "tournament.round_seated": "编排座位", "tournament.round_closed": "本轮结束",
}
"""Each event kind in Chinese (the timeline, the appeals table and the findings show it beside the kind)."""


def event_kind(kind: str) -> str:
    """Returns an event kind as people read it: its Chinese, then the kind as the log writes it."""
    zh = EVENT_KINDS.get(kind)
    return f"{zh} {kind}" if zh else kind


def ended(termination: str) -> tuple[str, str]:
    """Returns a termination in words, Chinese and English (an unknown one, a claim's own string, lower-cased)."""
    words = termination.replace("_", " ").lower()
    return TERMINATION_WORDS.get(termination) or (f"「{words}」", words)


class Code(NamedTuple):
    """One finding code of a catalogue: its severity, the article it cites (None where the rule
    book has none), the rule in English and in Chinese, what a finding means, and the name its
    rules file gives it (None where the file names none)."""

    code: str
    severity: Literal["error", "warning"]
    article: str | None
    rule: str
    meaning: str
    rule_zh: str
    name: str | None = None


def catalogue(namespace: str, rows: list[tuple[str, str, str | None, str, str, str]]) -> dict[str, Code]:
    """Returns a namespace's codes from rows of (ID, `E` or `W`, article, rule, meaning, rule in Chinese)."""
    return {f"{namespace}.{c}": Code(f"{namespace}.{c}", "warning" if s == "W" else "error", a, r, m, zh)
            for c, s, a, r, m, zh in rows}
