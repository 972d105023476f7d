"""The domain values of the Junqi engine: its finding codes (`CODES`) and how a game ends (`Termination`).

Codes are `junqi.<area letter><number>`: L the layout, M moves, T time, E the end and the log;
the article is the one of 竞技四国军棋竞赛规则 a finding cites by default (a few findings cite
none or another, as the fold says where it reports them)."""

from __future__ import annotations

from typing import Final

from replay.values import Code, DocumentedTermination, catalogue

CODES: Final[dict[str, Code]] = catalogue("junqi", [
    # ID, severity, article, rule, what a finding means, the rule in Chinese
    ("L01", "E", "第四条 二", "a layout has 25 pieces of the kinds and numbers of 第四条",
     "a layout's piece count or kinds are wrong", "布阵须为第四条规定的25枚棋子"),
    ("L02", "E", "第六条", "pieces are laid out in the seat's own arm",
     "a piece placed outside the seat's arm", "棋子须布在本方阵地"),
    ("L03", "E", "第六条", "行营 start empty",
     "a piece placed on a 行营", "布阵时行营不得摆放子力"),
    ("L04", "E", "第六条", "one piece a point",
     "two pieces on one point", "一个位置只放一枚棋子"),
    ("L05", "E", "第六条", "军旗 in one of the two 大本营",
     "the flag placed elsewhere", "军旗只能置于两个大本营之一"),
    ("L06", "E", "第六条", "地雷 in the last two rows",
     "a mine placed outside the last two rows", "地雷只能置于后两线"),
    ("L07", "E", "第六条", "炸弹 not in the first row",
     "a bomb placed in the first row", "炸弹不能置于第一线"),
    ("L08", "E", "第四条 十", "each seat's colour differs from the others'",
     "a layout's colour clashes with another seat's", "四家颜色各不相同"),
    ("M01", "E", "第九条", "no move after the game ended",
     "a move after the end", "棋局结束后不得行棋"),
    ("M02", "E", "第七条", "seats move in turn, after all four layouts",
     "a move or layout out of turn or outside its phase", "四家布阵完毕后依次行棋"),
    ("M03", "E", "第九条", "an eliminated seat does not move",
     "a move or resignation of a seat that is out", "已出局的一方不得行棋"),
    ("M04", "E", "第七条", "a seat moves its own piece",
     "the start point holds no piece of the seat", "只能走本方棋子"),
    ("M05", "E", "第八条", "地雷 and 军旗 never move",
     "a mine or the flag moved", "地雷和军旗不能移动"),
    ("M06", "E", "第四条 四", "pieces in a 大本营 stay",
     "a piece moved out of a 大本营", "进入大本营的棋子不可再移动"),
    ("M07", "E", "第七条", "a move goes somewhere",
     "a move from a point to itself", "行棋须离开原位"),
    ("M08", "E", "第四条 七", "a move ends on an empty point or an enemy piece",
     "the target holds an own or a partner's piece", "只能走到空位或敌方棋子上"),
    ("M09", "E", "第四条 三", "a piece in a 行营 cannot be attacked",
     "an attack on a piece in a 行营", "行营中的棋子不受攻击"),
    ("M10", "E", "第四条 五", "roads one step, railways straight (工兵 any way) and unblocked",
     "no legal route between the two points (the article names the rule broken)", "公路线只走一步，铁路线直走不转弯（工兵可转弯）且无障碍"),
    ("M11", "E", "第八条", "combat results and 亮旗 follow the ranks",
     "a claimed combat result, mover or 亮旗 differs from the derived one", "碰撞结果与亮旗须符合棋子大小"),
    ("M12", "E", "第七条", "no passing by choice",
     "a seat with legal moves skipped its turn without timing out", "不得无故放弃行棋"),
    ("T01", "E", None, "timestamps never go back",
     "an event's timestamp is before the previous event's", "时间戳不得倒退"),
    ("T02", "E", None, "a turn stays within the profile's move time limit",
     "a move time over the limit", "每步用时不得超过限时"),
    ("T03", "W", None, "claimed move times agree with the timestamps",
     "a move-time claim differs from the timestamp gap", "声称用时须与时间戳相符"),
    ("E01", "E", "第九条", "nothing happens after the end",
     "an event after the game ended, or a second result claim", "终局后不得再有事件"),
    ("E02", "E", "第九条", "the claimed result is the derived one",
     "the software's game.ended claim differs from the replay", "声称结果须与推导结果一致"),
    ("E03", "E", "第九条", "draws by agreement follow an offer all accept",
     "a draw offer, answer or agreed draw the rules do not allow", "求和须经四家全部同意"),
    ("E04", "E", "第二条", "four seats, 0–3",
     "an event names a seat the game does not have (ignored)", "只有0至3四个座位"),
])
"""Every code the Junqi fold reports, with its severity, article, rule and meaning."""


class Termination(DocumentedTermination):
    """How a Junqi game ends by its rules (junqi.md §9, 第九条)."""

    FLAG_CAPTURED = "FLAG_CAPTURED", "an alliance lost both flags or all its pieces (第九条)"
    NO_LEGAL_MOVE = "NO_LEGAL_MOVE", "an alliance had no piece left that could move (第九条)"
    TIMEOUTS = "TIMEOUTS", "a seat reached the profile's limit of timeouts and its alliance fell (第九条)"
    RESIGNED = "RESIGNED", "a seat or alliance resigned (第九条)"
    ILLEGAL_MOVE = "ILLEGAL_MOVE", "the profile ends the game at an illegal move (illegal_move_policy)"
    QUIET_LIMIT = "QUIET_LIMIT", "draw: no contact within the quiet limit, 50 steps (第九条 和局 2)"
    MAX_STEPS = "MAX_STEPS", "draw: the whole game reached the step limit (第九条 和局 3)"
    DRAW_AGREED = "DRAW_AGREED", "draw by agreement of all seats still in play (第九条)"
