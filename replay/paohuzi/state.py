"""The frozen state of one paohuzi deal, its actions, and their short notation."""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from replay.paohuzi.cards import N_VALUES, Counts, card_id, ids
from replay.paohuzi.hu import HuResult
from replay.paohuzi.melds import Group
from schemas.paohuzi import PaohuziProfile

SEATS: Final = 3


def xiajia(seat: int) -> int:
    """Returns the 下家 of a seat: the next in turn order (seats are numbered in turn order)."""
    return (seat + 1) % SEATS


class Action(NamedTuple):
    """A decision: `draw`, `discard` (card), `chi` (groups: the eaten group first, then the 比
    groups), `peng`, `hu` or `pass`. A chance draw from an unknown wall carries its card."""

    kind: str
    card: int = -1
    groups: tuple[tuple[int, ...], ...] = ()

    def notation(self) -> str:
        """Returns the compact notation: `draw`, `discard x3`, `chi x1x2x3 bi x3x4x5`, `peng`, `hu`, `pass`."""
        if self.kind == "chi":
            return "chi " + " bi ".join(ids(g) for g in self.groups)
        if self.card >= 0:
            return f"{self.kind} {card_id(self.card)}"
        return self.kind


DRAW: Final = Action("draw")
PENG: Final = Action("peng")
HU: Final = Action("hu")
PASS: Final = Action("pass")
DISCARDS: Final = tuple(Action("discard", card) for card in range(N_VALUES))
"""The discard of each card number, built once (replay reads one per discard event)."""
DRAWS: Final = tuple(Action("draw", card) for card in range(N_VALUES))
"""The chance draw of each card number from an unknown wall."""


class Pending(NamedTuple):
    """The card on offer: its owner (drawer or discarder), whether it came from the wall, and
    whether it also still lies in a hand (the 亮张 is in the dealer's hand while it is offered)."""

    card: int
    owner: int
    from_wall: bool
    in_hand: bool = False


class Offer(NamedTuple):
    """A seat's turn to answer the card on offer at one priority stage (第九条), with its choices."""

    seat: int
    stage: str
    actions: tuple[Action, ...]


class Win(NamedTuple):
    """A hu: who won, on which card, from whom and whether off the wall, and the derived hand."""

    seat: int
    card: int | None
    owner: int | None
    from_wall: bool
    result: HuResult


class State(msgspec.Struct, frozen=True, kw_only=True):
    """One deal between events: phase (`board`, `deal`, `liang` are chance; `draw`, `discard`,
    `offer`; `end`), hands as card counts (坎 included), table groups, discard rows, the wall
    and the per-seat memories the rules need (过张, 过碰, 跑/提 count, discards still exempt,
    吃/碰 and forced intakes). `settled`: the card just laid in a discard row, until the next draw,
    so a late claim on it is diagnosed by the rule it breaks."""

    profile: PaohuziProfile
    stream: str
    phase: str = "board"
    dealer: int = 0
    turn: int = 0
    board: str | None = None
    deck: tuple[int, ...] | None = None
    commitment: str | None = None
    wall: tuple[int, ...] = ()
    wall_left: int = 19
    drawn: tuple[int, ...] = ()
    hands: tuple[Counts, ...] = ()
    melds: tuple[tuple[Group, ...], ...] = ((), (), ())
    table_huxi: tuple[int, ...] = (0, 0, 0)
    discards: tuple[tuple[int, ...], ...] = ((), (), ())
    liangzhang: int | None = None
    pending: Pending | None = None
    stage: str = ""
    offers: tuple[Offer, ...] = ()
    guo_zhang: tuple[int, ...] = (0, 0, 0)
    chou: tuple[int, ...] = (0, 0, 0)
    guo_peng: tuple[int, ...] = (0, 0, 0)
    pao_ti: tuple[int, ...] = (0, 0, 0)
    skip_discard: tuple[int, ...] = (0, 0, 0)
    dead: tuple[bool, ...] = (False, False, False)
    intakes: tuple[int, ...] = (0, 0, 0)
    forced_intakes: tuple[int, ...] = (0, 0, 0)
    settled: Pending | None = None
    discards_made: int = 0
    effects: tuple[tuple[str, int, int], ...] = ()
    win: Win | None = None
    exhausted: bool = False
