"""Verifiable deals (第五条): deck orders, their SHA-256 commitments, and the cross-table check
that every table of a duplicate board was dealt the same deck."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from replay.paohuzi.cards import COPIES, DECK_SIZE, N_VALUES, card_number, counts_of, names
from replay.paohuzi.codes import CODES
from replay.protocol import Finding, found, seat_list_zh_en
from schemas.envelope import Event
from schemas.paohuzi import CARD_IDS, BoardCreated, BoardRevealed, Dealt, Drawn, LiangzhangRevealed


def commitment(deck: Sequence[int], salt: str) -> str:
    """Returns the SHA-256 commitment of a deck order: `sha256(salt + "|" + ",".join(ids))`, hex."""
    text = salt + "|" + ",".join([CARD_IDS[c] for c in deck])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def deck_problem(deck: Sequence[int]) -> str | None:
    """Returns why a deck order is not 80 cards with four of each, or None if it is."""
    if len(deck) != DECK_SIZE:
        return f"整副牌有 {len(deck)} 张，应为 {DECK_SIZE} 张 the deck has {len(deck)} cards, not {DECK_SIZE}"
    counts = counts_of(deck)
    wrong = [names([c]) for c in range(N_VALUES) if counts[c] != COPIES]
    return f"{'、'.join(wrong)}不是各四张 the deck does not hold four of {', '.join(wrong)}" if wrong else None


class TableDeal:
    """What one table's log says about its board: the deck (given or revealed), its commitment,
    and the cards seen in deal order (dealer, hands, 亮张, draws)."""

    def __init__(self, events: Iterable[Event]) -> None:
        self.stream = ""
        self.board: str | None = None
        self.deck: tuple[int, ...] | None = None
        self.commitment: str | None = None
        self.dealer: int | None = None
        self.hands: tuple[tuple[int, ...], ...] | None = None
        self.seen: list[int] = []
        self.seq = 0
        for event in events:
            self._take(event)

    def _take(self, event: Event) -> None:
        self.stream = event.stream
        match event:
            case BoardCreated():
                self.board, self.commitment, self.seq = event.board, event.commitment, event.seq
                if event.deck is not None:
                    self.deck = tuple(card_number(c) for c in event.deck)
            case BoardRevealed():
                self.board = event.board
                self.deck = tuple(card_number(c) for c in event.deck)
            case Dealt():
                self.dealer = event.dealer
                self.hands = tuple(tuple(sorted(card_number(c) for c in h)) for h in event.hands)
            case LiangzhangRevealed() | Drawn():
                self.seen.append(card_number(event.card))


def check_board_deals(tables: Iterable[Iterable[Event]]) -> list[Finding]:
    """Checks the tables' logs of one board against each other: one board id, one commitment, one
    deck order, the same dealer and hands, and no table turning a different wall card (第五条).
    Findings are reported on the second and later tables, against the first."""
    deals = [TableDeal(t) for t in tables]
    findings: list[Finding] = []
    if not deals:
        return findings
    first = deals[0]
    for other in deals[1:]:
        problems = _differences(first, other)
        findings.extend(
            found(CODES, other, "paohuzi.D06", why, "第五条")
            for why in problems
        )
    return findings


def _differences(a: TableDeal, b: TableDeal) -> list[str]:
    problems = []
    if a.board != b.board:
        problems.append(f"牌局编号 {b.board} 与桌 {a.stream} 的 {a.board} 不同 board {b.board} is not board {a.board} of table {a.stream}")
    if a.commitment != b.commitment:
        problems.append(f"牌序承诺 {b.commitment} 与桌 {a.stream} 的 {a.commitment} 不同 "
                        f"commitment {b.commitment} differs from {a.commitment} at table {a.stream}")
    if a.deck is not None and b.deck is not None and a.deck != b.deck:
        at = next(i for i, (x, y) in enumerate(zip(a.deck, b.deck)) if x != y) if len(a.deck) == len(b.deck) else 0
        problems.append(f"牌序从第 {at} 张起与桌 {a.stream} 不同 deck order differs from table {a.stream} at card {at}")
    if a.dealer != b.dealer:
        problems.append(f"庄家座位{b.dealer}与桌 {a.stream} 的庄家座位{a.dealer}不同 "
                        f"dealer {b.dealer} differs from dealer {a.dealer} at table {a.stream}")
    if a.hands is not None and b.hands is not None and a.hands != b.hands:
        seats = [s for s in range(len(a.hands)) if s < len(b.hands) and a.hands[s] != b.hands[s]]
        zh, en = seat_list_zh_en(seats)
        problems.append(f"{zh}的手牌与桌 {a.stream} 不同 hands of {en} differ from table {a.stream}")
    common = min(len(a.seen), len(b.seen))
    if a.seen[:common] != b.seen[:common]:
        at = next(i for i in range(common) if a.seen[i] != b.seen[i])
        problems.append(f"墩中第 {at} 张（亮张为第 0 张）与桌 {a.stream} 不同 wall card {at} (亮张 = 0) differs from table {a.stream}")
    return problems
