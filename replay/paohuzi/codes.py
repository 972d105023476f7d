"""The domain values of the Paohuzi engine: its finding codes (`CODES`) and how a deal ends (`Termination`).

Codes are `paohuzi.<area letter><number>`: T turns, P priority, A actions, F forced actions,
H claims of a hu, D the deal, C card conservation, E the end, X the log, W time; the article is
the one of 竞技跑胡子竞赛规则(试行) a finding cites."""

from __future__ import annotations

from typing import Final

from replay.values import Code, DocumentedTermination, catalogue

CODES: Final[dict[str, Code]] = catalogue("paohuzi", [
    # ID, severity, article, rule, what a finding means, the rule in Chinese
    ("T01", "E", "第七条", "seats act in turn, each action in its phase",
     "an action out of turn or outside its phase", "依次行动，各按其阶段"),
    ("T02", "E", "第九条", "a seat answers its own earlier offer first",
     "a claim before the seat answered its earlier offer", "须先回应自己先前的选择"),
    ("P01", "E", "第九条", "priority: 胡 over 碰/跑 over 吃, nearest seat first",
     "an action taken over a seat with priority", "优先次序：胡先于碰、跑，碰、跑先于吃，近者优先"),
    ("A10", "E", "第七条", "a seat discards a card it holds",
     "a discard of a card not in hand", "只能打出手中的牌"),
    ("A11", "E", "第四条(九) 坎", "a 坎 is never broken up",
     "a discard from a 坎", "坎不得拆开"),
    ("A20", "E", "第七条", "only the next seat (or the drawer) may 吃",
     "a 吃 by a seat that may not 吃 this card", "只有下家（或摸牌者）可以吃"),
    ("A21", "E", "第七条", "a 吃 uses cards in hand, not a 坎",
     "a 吃 with cards not in hand or from a 坎", "吃牌须用手中的牌，不得用坎"),
    ("A22", "E", "第七条", "a 吃 group is a sequence, 二七十 or a mixed pair",
     "the groups are not a valid 吃", "吃的牌型须为顺子、二七十或大小搭"),
    ("A23", "E", "第四条(二十) 比牌", "every other copy of the card in hand is 比'd",
     "a 吃 without the compulsory 比", "手中相同的牌须一起比出"),
    ("A24", "E", "第七条", "a card passed or discarded earlier is not taken (过张/臭牌)",
     "a 吃 of a card the seat passed", "过张、臭牌不得再吃"),
    ("A25", "E", "第七条", "a 吃 leaves a card to discard",
     "a 吃 that leaves nothing to discard", "吃牌后须留有可打的牌"),
    ("A26", "E", "第七条", "a seat discards after an intake",
     "a missing or extra discard", "吃、碰后须打出一张牌"),
    ("A30", "E", "第七条", "a 碰 needs a pair in hand",
     "a 碰 without the pair", "碰须手中有一对"),
    ("A31", "E", "第七条", "a 碰 passed is not taken later (臭碰)",
     "a 碰 of a card the seat passed", "臭碰不得再碰"),
    ("A32", "E", "第七条", "a 碰 leaves a card to discard",
     "a 碰 that leaves nothing to discard", "碰后须留有可打的牌"),
    ("A40", "E", "第八条", "胡 needs a complete hand and the minimum 胡息",
     "a hu without a winning hand (the derived 胡息 given)", "胡牌须牌型完整且胡息达到要求"),
    ("A41", "E", "第八条", "胡 on a discard only where the profile allows it",
     "a hu on a discard the rules refuse", "点炮胡须规则允许"),
    ("A42", "E", "第八条", "胡 is compulsory where the profile says so",
     "a winning hand not declared", "规则规定必须胡时须胡"),
    ("F01", "E", "第四条 术语定义", "偎, 提, 跑 happen when the rules force them",
     "a logged forced action the rules do not derive", "偎、提、跑须在规则强制时进行"),
    ("F02", "E", "第四条 术语定义", "a forced action comes first",
     "an action that skips a derived forced action", "强制动作优先"),
    ("H01", "E", "第四条(二十四) 胡息, 附录四", "the claimed 胡息 is the derived one",
     "claimed 胡息 differ", "声称胡息须与推导一致"),
    ("H02", "E", "附录五", "the claimed 名堂 are the derived ones",
     "claimed 名堂 differ", "声称名堂须与推导一致"),
    ("H03", "E", "第十一条", "the claimed deal score is the derived one",
     "claimed score differs", "声称得分须与推导一致"),
    ("H04", "E", "第八条", "the claimed decomposition is a derived one",
     "claimed decomposition differs", "声称的组牌须为可推导的组合"),
    ("H05", "E", "第八条", "the claimed winner and card are the derived ones",
     "claimed winner differs", "声称的胡牌者和胡的牌须与推导一致"),
    ("D01", "E", "第五条", "the deck is 80 cards of 20 kinds",
     "a deck that is not the game's 80 cards", "一副牌为20种共80张"),
    ("D02", "E", "第五条", "the revealed deck is the committed one",
     "the revealed deck differs from its commitment", "公开的牌序须与承诺一致"),
    ("D03", "E", "第五条", "hands are dealt from the deck",
     "a dealt hand differs from the deck", "手牌须从牌序发出"),
    ("D04", "E", "第六条", "亮张 is the deck's next card",
     "a 亮张 that is not the deck's", "亮张须为牌序的下一张"),
    ("D05", "E", "第五条", "wall cards are drawn in deck order",
     "a draw that is not the wall's next card", "底牌须按牌序摸出"),
    ("D06", "E", "第五条", "every table of a board gets the same deal",
     "a table's deal differs from the board's", "同一副牌各桌发牌相同"),
    ("D07", "E", "第五条", "three hands of 20 (the dealer 21)",
     "a deal of the wrong shape", "三家各20张（庄家21张）"),
    ("D08", "E", "第五条", "the dealer is the board's",
     "a deal with another dealer", "庄家须为该副牌规定的庄家"),
    ("C01", "E", "第五条", "the 80 cards are conserved",
     "a card appears twice or vanishes", "80张牌总数不变"),
    ("E01", "E", "第十条", "the claimed result is the derived one",
     "the game.ended claim differs from the replay", "声称结果须与推导结果一致"),
    ("E02", "E", "第十条", "荒庄 only when the wall is exhausted",
     "荒庄 claimed with cards left", "底牌摸完才为荒庄"),
    ("X01", "E", "第十条", "nothing happens after the end",
     "an action after the deal is over", "终局后不得再有事件"),
    ("X02", "E", None, "a game starts with game.started",
     "an event before the start", "对局须以开局事件开始"),
    ("X03", "E", "第二条 竞技跑胡子定义 (三人对抗)", "three seats, 0–2",
     "an event of a seat the game does not have (ignored)", "只有0至2三个座位"),
    ("W01", "W", None, "the claimed move time agrees with the timestamps",
     "a move time differs from the timestamp gap", "声称用时须与时间戳相符"),
])
"""Every code the Paohuzi fold reports, with its severity, article, rule and meaning."""


class Termination(DocumentedTermination):
    """How a Paohuzi deal ends by its rules (paohuzi.md §10, 第十条)."""

    HU = "HU", "a seat completed a winning hand (胡牌, 第八条)"
    WALL_EXHAUSTED = "WALL_EXHAUSTED", "the wall ran out without a hu: 荒庄, a draw (第十条)"
