"""Every finding code matchledger reports: its severity, the article of the rule book it cites, the
rule and what the finding means. README's table of codes is generated from here (`python -m
audit.codes`) and a test holds both to the codes the engines and checks can emit.

The scheme: `<namespace>.<ID>`, the namespace a game (`junqi`, `paohuzi`, `checkers`), `audit`
(SQL and tournament checks) or `ledger` (the log); the ID, stable once published, is a letter for
the area and a number (`junqi.L06`: layout rule 6), the severity a field of its own. Checkers codes
also keep the name their rules file gives them (`checkers.M03` is `E_OCCUPIED`, checkers.md §4.7),
shown beside the code so that an arbiter reading checkers.md can trace a finding.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from audit.output import Rows, markdown
from replay.checkers.codes import CODES as CHECKERS_CODES
from replay.checkers.codes import severity as checkers_severity
from replay.protocol import RULE_BOOKS


class Code(NamedTuple):
    """One finding code: severity, article (None where the rule books have none), rule, meaning, and
    the name its rules file gives it (None where the file names none)."""

    code: str
    severity: Literal["error", "warning"]
    article: str | None
    rule: str
    meaning: str
    name: str | None = None


def _codes(namespace: str, rows: list[tuple[str, str, str | None, str, str]]) -> list[Code]:
    return [Code(f"{namespace}.{c}", "warning" if s == "W" else "error", a, r, m) for c, s, a, r, m in rows]


_JUNQI = _codes("junqi", [
    ("L01", "E", "第四条 二", "a layout has 25 pieces of the kinds and numbers of 第四条", "a layout's piece count or kinds are wrong"),
    ("L02", "E", "第六条", "pieces are laid out in the seat's own arm", "a piece placed outside the seat's arm"),
    ("L03", "E", "第六条", "行营 start empty", "a piece placed on a 行营"),
    ("L04", "E", "第六条", "one piece a point", "two pieces on one point"),
    ("L05", "E", "第六条", "军旗 in one of the two 大本营", "the flag placed elsewhere"),
    ("L06", "E", "第六条", "地雷 in the last two rows", "a mine placed outside the last two rows"),
    ("L07", "E", "第六条", "炸弹 not in the first row", "a bomb placed in the first row"),
    ("L08", "E", "第四条 十", "each seat's colour differs from the others'", "a layout's colour clashes with another seat's"),
    ("M01", "E", "第九条", "no move after the game ended", "a move after the end"),
    ("M02", "E", "第七条", "seats move in turn, after all four layouts", "a move or layout out of turn or outside its phase"),
    ("M03", "E", "第九条", "an eliminated seat does not move", "a move or resignation of a seat that is out"),
    ("M04", "E", "第七条", "a seat moves its own piece", "the start point holds no piece of the seat"),
    ("M05", "E", "第八条", "地雷 and 军旗 never move", "a mine or the flag moved"),
    ("M06", "E", "第四条 四", "pieces in a 大本营 stay", "a piece moved out of a 大本营"),
    ("M07", "E", "第七条", "a move goes somewhere", "a move from a point to itself"),
    ("M08", "E", "第四条 七", "a move ends on an empty point or an enemy piece", "the target holds an own or a partner's piece"),
    ("M09", "E", "第四条 三", "a piece in a 行营 cannot be attacked", "an attack on a piece in a 行营"),
    ("M10", "E", "第四条 五", "roads one step, railways straight (工兵 any way) and unblocked",
     "no legal route between the two points (the article names the rule broken)"),
    ("M11", "E", "第八条", "combat results and 亮旗 follow the ranks", "a claimed combat result, mover or 亮旗 differs from the derived one"),
    ("M12", "E", "第七条", "no passing by choice", "a seat with legal moves skipped its turn without timing out"),
    ("T01", "E", None, "timestamps never go back", "an event's timestamp is before the previous event's"),
    ("T02", "E", None, "a turn stays within the profile's move time limit", "a move time over the limit"),
    ("T03", "W", None, "claimed move times agree with the timestamps", "a move-time claim differs from the timestamp gap"),
    ("E01", "E", "第九条", "nothing happens after the end", "an event after the game ended, or a second result claim"),
    ("E02", "E", "第九条", "the claimed result is the derived one", "the software's game.ended claim differs from the replay"),
    ("E03", "E", "第九条", "draws by agreement follow an offer all accept", "a draw offer, answer or agreed draw the rules do not allow"),
    ("E04", "E", "第二条", "four seats, 0–3", "an event names a seat the game does not have (ignored)"),
])

_PAOHUZI = _codes("paohuzi", [
    ("T01", "E", "第七条", "seats act in turn, each action in its phase", "an action out of turn or outside its phase"),
    ("T02", "E", "第九条", "a seat answers its own earlier offer first", "a claim before the seat answered its earlier offer"),
    ("P01", "E", "第九条", "priority: 胡 over 碰/跑 over 吃, nearest seat first", "an action taken over a seat with priority"),
    ("A10", "E", "第七条", "a seat discards a card it holds", "a discard of a card not in hand"),
    ("A11", "E", "第四条(九) 坎", "a 坎 is never broken up", "a discard from a 坎"),
    ("A20", "E", "第七条", "only the next seat (or the drawer) may 吃", "a 吃 by a seat that may not 吃 this card"),
    ("A21", "E", "第七条", "a 吃 uses cards in hand, not a 坎", "a 吃 with cards not in hand or from a 坎"),
    ("A22", "E", "第七条", "a 吃 group is a sequence, 二七十 or a mixed pair", "the groups are not a valid 吃"),
    ("A23", "E", "第四条(二十) 比牌", "every other copy of the card in hand is 比'd", "a 吃 without the compulsory 比"),
    ("A24", "E", "第七条", "a card passed or discarded earlier is not taken (过张/臭牌)", "a 吃 of a card the seat passed"),
    ("A25", "E", "第七条", "a 吃 leaves a card to discard", "a 吃 that leaves nothing to discard"),
    ("A26", "E", "第七条", "a seat discards after an intake", "a missing or extra discard"),
    ("A30", "E", "第七条", "a 碰 needs a pair in hand", "a 碰 without the pair"),
    ("A31", "E", "第七条", "a 碰 passed is not taken later (臭碰)", "a 碰 of a card the seat passed"),
    ("A32", "E", "第七条", "a 碰 leaves a card to discard", "a 碰 that leaves nothing to discard"),
    ("A40", "E", "第八条", "胡 needs a complete hand and the minimum 胡息", "a hu without a winning hand (the derived 胡息 given)"),
    ("A41", "E", "第八条", "胡 on a discard only where the profile allows it", "a hu on a discard the rules refuse"),
    ("A42", "E", "第八条", "胡 is compulsory where the profile says so", "a winning hand not declared"),
    ("F01", "E", "第四条 术语定义", "偎, 提, 跑 happen when the rules force them", "a logged forced action the rules do not derive"),
    ("F02", "E", "第四条 术语定义", "a forced action comes first", "an action that skips a derived forced action"),
    ("H01", "E", "第四条(二十四) 胡息, 附录四", "the claimed 胡息 is the derived one", "claimed 胡息 differ"),
    ("H02", "E", "附录五", "the claimed 名堂 are the derived ones", "claimed 名堂 differ"),
    ("H03", "E", "第十一条", "the claimed deal score is the derived one", "claimed score differs"),
    ("H04", "E", "第八条", "the claimed decomposition is a derived one", "claimed decomposition differs"),
    ("H05", "E", "第八条", "the claimed winner and card are the derived ones", "claimed winner differs"),
    ("D01", "E", "第五条", "the deck is 80 cards of 20 kinds", "a deck that is not the game's 80 cards"),
    ("D02", "E", "第五条", "the revealed deck is the committed one", "the revealed deck differs from its commitment"),
    ("D03", "E", "第五条", "hands are dealt from the deck", "a dealt hand differs from the deck"),
    ("D04", "E", "第六条", "亮张 is the deck's next card", "a 亮张 that is not the deck's"),
    ("D05", "E", "第五条", "wall cards are drawn in deck order", "a draw that is not the wall's next card"),
    ("D06", "E", "第五条", "every table of a board gets the same deal", "a table's deal differs from the board's"),
    ("D07", "E", "第五条", "three hands of 20 (the dealer 21)", "a deal of the wrong shape"),
    ("D08", "E", "第五条", "the dealer is the board's", "a deal with another dealer"),
    ("C01", "E", "第五条", "the 80 cards are conserved", "a card appears twice or vanishes"),
    ("E01", "E", "第十条", "the claimed result is the derived one", "the game.ended claim differs from the replay"),
    ("E02", "E", "第十条", "荒庄 only when the wall is exhausted", "荒庄 claimed with cards left"),
    ("X01", "E", "第十条", "nothing happens after the end", "an action after the deal is over"),
    ("X02", "E", None, "a game starts with game.started", "an event before the start"),
    ("X03", "E", "第二条 竞技跑胡子定义 (三人对抗)", "three seats, 0–2", "an event of a seat the game does not have (ignored)"),
    ("W01", "W", None, "the claimed move time agrees with the timestamps", "a move time differs from the timestamp gap"),
])

_CHECKERS_MEANINGS: dict[str, tuple[str, str]] = {
    "E_NOT_YOUR_TURN": ("sides move in turn", "a move by the side not to move"),
    "E_NO_OWN_PIECE": ("a side moves its own piece", "`from` holds no own piece"),
    "E_OCCUPIED": ("a move ends on an empty hole", "`to` is occupied"),
    "E_UNREACHABLE": ("steps and hops of the profile", "`to` is not reachable under any profile"),
    "E_LONG_HOP_ONLY": ("hops of the profile's hop_mode", "legal only with equidistant long hops"),
    "E_SIDE_TRIANGLE": ("side triangles as the profile says", "legal only with side triangles allowed"),
    "E_GOAL_LOCK": ("the goal lock of the profile", "legal only without the goal lock"),
    "E_BAD_PATH": ("the hop path is a path of hops", "the endpoints are legal, the witness path is not"),
    "E_PATH_REVISIT": ("a hop path visits a hole once", "a hop path revisits a hole (the profile forbids it)"),
    "W_PATH_REVISIT": ("a hop path visits a hole once", "a hop path revisits a hole (the profile allows it)"),
    "W_LEFT_TARGET": ("pieces that arrived stay", "a piece left the target camp"),
    "W_IMPLAUSIBLY_FAST": ("results are plausible", "a game ended faster than the rules allow"),
    "E_CLAIM": ("the claimed result is the derived one", "the game.ended claim differs from the replay"),
    "W_DRAW_AGREEMENT": ("draws by agreement as the sheet allows", "an agreed draw to check by hand"),
    "E_NO_RESULT": ("a game ends with a result", "no result derivable or claimed"),
    "W_SLOW_MOVE": ("a move within the move time", "a move over the time allowed"),
    "W_MOVE_TIME": ("the claimed move time agrees with the timestamps", "a move time differs from the timestamp gap"),
    "W_TIMEOUTS": ("timeouts within the stage's allowance", "more timeouts than the stage allows"),
    "W_NO_WAIT": ("a turn waits its minimum", "a move faster than the waiting time"),
    "W_LEAVE_CAMP": ("pieces leave the camp by the deadlines", "a leave-camp deadline missed"),
    "W_REENTER_OWN_CAMP": ("pieces do not go back into their camp", "a piece re-entered its own camp (allowed by the profile)"),
    "E_REENTER_OWN_CAMP": ("pieces do not go back into their camp", "a piece re-entered its own camp"),
    "W_POSSIBLE_WALL": ("no wall (堵门)", "a possible wall to check by hand"),
    "W_UNJUSTIFIED_SKIP": ("a skip is justified by a card or timeout", "a skip without a reason"),
    "W_DISCONNECT": ("disconnections are handled by the cards rule", "a disconnection recorded"),
    "E_NO_SEAT": ("two seats, 0 and 1", "an event of a seat the game does not have"),
    "W_AFTER_END": ("nothing happens after the end", "an event after the game ended"),
    "W_CLOCK": ("timestamps never go back", "a timestamp before the previous event's"),
    "E_SEQ": ("a stream's seqs are dense", "a sequence gap or repeat"),
    "E_STREAM": ("a game's events are of its stream", "an event of another stream"),
    "E_FOREIGN_EVENT": ("a game's events are of its game", "an event of another game's kind"),
    "W_RESIGN_IGNORED": ("a resignation ends the game", "a resignation the profile ignores"),
}

_CHECKERS = sorted((Code(f"checkers.{code}", checkers_severity(name), article, *_CHECKERS_MEANINGS[name], name=name)  # type: ignore[arg-type]
                    for name, (code, article) in CHECKERS_CODES.items()), key=lambda c: c.code)

_AUDIT = _codes("audit", [
    ("C01", "E", None, "claimed results equal the derived ones (SQL)", "a game.ended claim differs from the derived result"),
    ("C02", "E", "第八条", "the claimed 胡息 and deal score are the derived ones (SQL, Paohuzi)", "a 胡's claimed 胡息 or score differs"),
    ("P01", "E", "tournament.md §1", "game points follow from the result and the profile (SQL)", "SQL and the engine give different game points"),
    ("O01", "E", "第九条 / 第四条", "timeouts within the allowance (SQL)", "more timeouts than the allowance"),
    ("T01", "E", "tournament.md §3", "claimed move times agree with the timestamps (SQL)", "a move time differs from the timestamp gap"),
    ("T02", "E", "tournament.md §3", "SQL and the engines agree on each seat's move time", "the totals differ"),
    ("L01", "E", "第五条", "checkers leave-camp deadlines (SQL)", "SQL and the engine disagree on a leave-camp deadline"),
    ("Q01", "E", "第九条", "Junqi 50-step no-contact count (SQL)", "SQL and the engine disagree on the quiet count"),
    ("Q02", "E", "第九条", "Junqi quiet-limit end (SQL)", "SQL and the engine disagree on a QUIET_LIMIT end"),
    ("S01", "E", "第九条", "Junqi total step limit (SQL)", "SQL and the engine disagree on the step limit"),
    ("G01", "E", None, "every stream opens a game or a tournament", "a stream that is neither: its events are not replayed"),
    ("A01", "E", "第十八条 2", "an appeal is filed within the window (24 h online, 3 h at a venue), or declared void as late",
     "an appeal filed late but not declared void, or declared void though in time"),
    ("A02", "E", "第十九条 1, 第十三条 三", "decided once, by a majority of an odd committee of at least three",
     "a decision without a valid majority, by too small or even a committee, or a second decision"),
    ("A03", "E", "第十九条 1", "decided within the deadline (2 working days by default)", "an appeal decided late or not at all"),
    ("A04", "E", "第十四条 (1)", "a result is changed after the game's end only on an upheld appeal",
     "a result override after the end with no upheld appeal of that game"),
    ("A05", "E", "第十四条 (1)", "every upheld appeal is carried out by a ruling", "an upheld appeal with no correction"),
    ("A06", "E", "第十四条", "rulings and decisions are signed by a registered arbiter of the right role",
     "a ruling or decision unsigned, by an unknown key or role, or with a bad signature"),
    ("A07", "E", "第十四条", "a ruling states what its kind needs", "a ruling that cannot be applied (points of another game size …)"),
    ("E01", "E", None, "the live audit folds every event of a game", "an engine stopped on an event; later events are not folded live"),
    ("E02", "E", None, "the live audit runs the round's checks at its close", "a round check failed to run live (the batch audit still runs it)"),
    ("W01", "E", "附录三", "the round-1 draw is reproducible from its seed", "no seed, a seed missing its commitment, or an unknown method"),
    ("W02", "E", "第十八条", "Swiss pairing by the tournament rules' algorithm, no repeats", "a pairing or algorithm other than the rules give"),
    ("W03", "E", "附录三", "each game seats the players of the round's seating", "a game's seat holds another player than the seating"),
    ("W04", "E", "附录三", "snake seating by rank (瑞士移位法); where ties leave the order open, any order among the tied",
     "a table seated otherwise than the movement allows"),
])

_LEDGER = _codes("ledger", [
    ("V01", "E", None, "the log verifies: frames, tree, tiles, checkpoints, signatures", "the log is damaged (the audit stops there)"),
])

CODES: dict[str, Code] = {c.code: c for c in [*_JUNQI, *_PAOHUZI, *_CHECKERS, *_AUDIT, *_LEDGER]}


def rule_book(code: str) -> str:
    """Returns the rule book a code's article is from."""
    namespace = code.partition(".")[0]
    return RULE_BOOKS.get(namespace, "the tournament's game's rule book" if namespace == "audit" else "–")


def markdown_table() -> str:
    """Returns README's table of every finding code."""
    return markdown(Rows(["code", "name", "severity", "article", "rule", "a finding means"],
                         [[f"`{c.code}`", f"`{c.name}`" if c.name else "–", c.severity, c.article or "–", c.rule, c.meaning]
                          for c in CODES.values()]))


if __name__ == "__main__":
    print(markdown_table(), end="")
