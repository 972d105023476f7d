"""Stable finding codes of the checkers engine and the article of the 2017 rule sheet each cites
(`shared/seeds/checkers-1v1-competition-rules.zh.txt`).

Codes follow the scheme of every game: `checkers.<area letter><number>` (M moves, E the end and
the result, T time, C the camps, P penalty cards, X the log), the severity a field of its own. Each
code keeps the name checkers.md gives it (§4.7 and after: `E_OCCUPIED` …) as its `name`, shown
beside the code, so that an arbiter reading the rules file can trace a finding; the engine's
checks speak in these names, and `public` turns one into the published code.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from replay.values import Code, DocumentedTermination

CODES: Final[dict[str, tuple[str, str | None]]] = {
    # name: (ID, article). Moves: the QQ system's rules are the basis (第一条); classification of checkers.md §4.7.
    "E_NOT_YOUR_TURN": ("M01", "第一条"), "E_NO_OWN_PIECE": ("M02", "第一条"), "E_OCCUPIED": ("M03", "第一条"),
    "E_UNREACHABLE": ("M04", "第一条"), "E_LONG_HOP_ONLY": ("M05", "第一条"), "E_SIDE_TRIANGLE": ("M06", "第一条"),
    "E_GOAL_LOCK": ("M07", "第一条"), "E_BAD_PATH": ("M08", "第一条"), "E_PATH_REVISIT": ("M09", "第一条"),
    "W_PATH_REVISIT": ("M10", "第一条"), "W_LEFT_TARGET": ("M11", "第一条"),
    # The end and the result (第三条); nothing after the end, resignation as the profile has it.
    "E_CLAIM": ("E01", "第三条"), "E_NO_RESULT": ("E02", "第三条"), "W_DRAW_AGREEMENT": ("E03", "第三条"),
    "W_IMPLAUSIBLY_FAST": ("E04", "第三条"), "W_AFTER_END": ("E05", None), "W_RESIGN_IGNORED": ("E06", None),
    # Time and waiting (第四条); timestamps.
    "W_SLOW_MOVE": ("T01", "第四条"), "W_MOVE_TIME": ("T02", "第四条"), "W_TIMEOUTS": ("T03", "第四条"),
    "W_NO_WAIT": ("T04", "第四条"), "W_CLOCK": ("T05", None),
    # Leave camp (第五条) and walls (第六条).
    "W_LEAVE_CAMP": ("C01", "第五条"), "W_REENTER_OWN_CAMP": ("C02", "第五条"), "E_REENTER_OWN_CAMP": ("C03", "第五条"),
    "W_POSSIBLE_WALL": ("C04", "第六条"),
    # Cards (第十六条).
    "W_UNJUSTIFIED_SKIP": ("P01", "第十六条"), "W_DISCONNECT": ("P02", "第十六条"),
    # The log: a game is between two players (第十八条(1)b: 两选手间对决), seats 0 and 1; anomalies with no article.
    "E_NO_SEAT": ("X01", "第十八条"), "E_SEQ": ("X02", None), "E_STREAM": ("X03", None), "E_FOREIGN_EVENT": ("X04", None),
}
"""Every code by its rules-file name: the code's ID and the article it cites (None where the sheet has none)."""

MEANINGS: Final[dict[str, tuple[str, str, str]]] = {
    # name: (rule, what a finding means, the rule in Chinese)
    "E_NOT_YOUR_TURN": ("sides move in turn", "a move by the side not to move", "双方轮流行棋"),
    "E_NO_OWN_PIECE": ("a side moves its own piece", "`from` holds no own piece", "只能走本方棋子"),
    "E_OCCUPIED": ("a move ends on an empty hole", "`to` is occupied", "只能走到空位"),
    "E_UNREACHABLE": ("steps and hops of the profile", "`to` is not reachable under any profile", "按规则平移或跳跃"),
    "E_LONG_HOP_ONLY": ("hops of the profile's hop_mode", "legal only with equidistant long hops", "按规定的跳法跳跃"),
    "E_SIDE_TRIANGLE": ("side triangles as the profile says", "legal only with side triangles allowed", "边角营按规则处理"),
    "E_GOAL_LOCK": ("the goal lock of the profile", "legal only without the goal lock", "按规定锁定目标营"),
    "E_BAD_PATH": ("the hop path is a path of hops", "the endpoints are legal, the witness path is not", "跳跃路线须由合法的跳组成"),
    "E_PATH_REVISIT": ("a hop path visits a hole once", "a hop path revisits a hole (the profile forbids it)", "跳跃路线不得重复经过同一孔"),
    "W_PATH_REVISIT": ("a hop path visits a hole once", "a hop path revisits a hole (the profile allows it)", "跳跃路线不得重复经过同一孔"),
    "W_LEFT_TARGET": ("pieces that arrived stay", "a piece left the target camp", "已进营的棋子不得离开"),
    "E_CLAIM": ("the claimed result is the derived one", "the game.ended claim differs from the replay", "声称结果须与推导结果一致"),
    "E_NO_RESULT": ("a game ends with a result", "no result derivable or claimed", "对局须有结果"),
    "W_DRAW_AGREEMENT": ("draws by agreement as the sheet allows", "an agreed draw to check by hand", "和棋须符合规则"),
    "W_IMPLAUSIBLY_FAST": ("results are plausible", "a game ended faster than the rules allow", "结果须合乎常理"),
    "W_AFTER_END": ("nothing happens after the end", "an event after the game ended", "终局后不得再有事件"),
    "W_RESIGN_IGNORED": ("a resignation ends the game", "a resignation the profile ignores", "认输即终局"),
    "W_SLOW_MOVE": ("a move within the move time", "a move over the time allowed", "单步用时不得超过限时"),
    "W_MOVE_TIME": ("the claimed move time agrees with the timestamps", "a move time differs from the timestamp gap", "声称用时须与时间戳相符"),
    "W_TIMEOUTS": ("timeouts within the stage's allowance", "more timeouts than the stage allows", "超时次数不得超过允许次数"),
    "W_NO_WAIT": ("a turn waits its minimum", "a move faster than the waiting time", "须等待规定的时间"),
    "W_CLOCK": ("timestamps never go back", "a timestamp before the previous event's", "时间戳不得倒退"),
    "W_LEAVE_CAMP": ("pieces leave the camp by the deadlines", "a leave-camp deadline missed", "按规定回合出营"),
    "W_REENTER_OWN_CAMP": ("pieces do not go back into their camp", "a piece re-entered its own camp (allowed by the profile)", "棋子不得退回本营"),
    "E_REENTER_OWN_CAMP": ("pieces do not go back into their camp", "a piece re-entered its own camp", "棋子不得退回本营"),
    "W_POSSIBLE_WALL": ("no wall (堵门)", "a possible wall to check by hand", "禁止砌墙"),
    "W_UNJUSTIFIED_SKIP": ("a skip is justified by a card or timeout", "a skip without a reason", "略过须因黄牌或超时"),
    "W_DISCONNECT": ("disconnections are handled by the cards rule", "a disconnection recorded", "掉线按黄牌规定处理"),
    "E_NO_SEAT": ("two seats, 0 and 1", "an event of a seat the game does not have", "只有0和1两个座位"),
    "E_SEQ": ("a stream's seqs are dense", "a sequence gap or repeat", "事件序号须连续"),
    "E_STREAM": ("a game's events are of its stream", "an event of another stream", "事件须属于本局"),
    "E_FOREIGN_EVENT": ("a game's events are of its game", "an event of another game's kind", "事件须属于本局的棋种"),
}

ARTICLES: Final[dict[str, str | None]] = {name: article for name, (_, article) in CODES.items()}
"""The article each code cites, by name."""

NAMES: Final[dict[str, str]] = {f"checkers.{code}": name for name, (code, _) in CODES.items()}
"""The rules-file name of each published code (`checkers.M03` → `E_OCCUPIED`)."""


CATALOGUE: Final[dict[str, Code]] = {
    code.code: code for code in sorted((Code(f"checkers.{ident}", "warning" if name.startswith("W_") else "error", article,
                                             *MEANINGS[name], name=name) for name, (ident, article) in CODES.items()),
                                       key=lambda code: code.code)
}
"""Every published code with its severity (its name spells it: `W_…` warnings, `E_…` errors), article, rule and meaning."""


def public(name: str) -> str:
    """Returns the published code of a rules-file name (`E_OCCUPIED` → `checkers.M03`)."""
    return f"checkers.{CODES[name][0]}"


def severity(name: str) -> str:
    """Returns a code's severity, read from the catalogue by its rules-file name."""
    return CATALOGUE[public(name)].severity


class Note(NamedTuple):
    """A rule problem found while applying one event, before it is tied to the event's seq."""

    code: str
    """The code's rules-file name (`E_OCCUPIED`); `public` gives the published code."""
    message: str
    """Chinese first, English beside (issue 31)."""
    severity: str = "error"


def note(code: str, message: object) -> Note:
    """Returns a note whose severity follows the code: `W_…` warnings, `E_…` errors; `message` is text or a
    `replay.protocol.Said` (not imported: replay.protocol reads this catalogue)."""
    assert code in CODES, code
    return Note(code, str(message), severity(code))


class Termination(DocumentedTermination):
    """How a checkers game ends by its rules (checkers.md §5, 第三条 and after)."""

    ALL_HOME = "ALL_HOME", "a side filled the opposite camp (第三条)"
    MARGIN_DRAW = "MARGIN_DRAW", "draw: the first mover got home only one move sooner (第三条)"
    REPETITION = "REPETITION", "draw: a position repeated as often as the profile allows (第三条)"
    MAX_ROUNDS = "MAX_ROUNDS", "draw: the game reached the profile's round limit"
    LEAVE_CAMP = "LEAVE_CAMP", "lost: a side did not leave its camp by the deadline (第五条)"
    TIMEOUTS = "TIMEOUTS", "lost: a side reached the stage's allowance of timeouts (第四条)"
    NO_WAIT = "NO_WAIT", "lost: a side moved faster than the minimum waiting time too often (第四条)"
    UNJUSTIFIED_SKIP = "UNJUSTIFIED_SKIP", "lost: a side skipped without a card or timeout to justify it (第十六条)"
    RESIGNED = "RESIGNED", "a side resigned, where the profile allows it"
    DRAW_AGREED = "DRAW_AGREED", "draw by agreement, where the profile allows it"
    DISCONNECTED = "DISCONNECTED", "lost by disconnection (第十六条)"
    DISSOLVED = "DISSOLVED", "lost: the table was dissolved while a side was offline (第十六条(1))"
    YELLOW_CARD = "YELLOW_CARD", "lost: a yellow card (第十六条)"
    RED_CARD = "RED_CARD", "lost: a red card, disqualified (第十七条)"
