"""The immutable game state of junqi and the two kinds of action: a layout (chance) and a move."""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from replay.junqi.board import INDEX, N_POINTS, NAMES
from replay.protocol import CHANCE, Outcome
from schemas.junqi import JunqiProfile

ALLIANCES: Final = ((0, 2), (1, 3))
"""Partners sit opposite (§2.1): S with N, W with E."""


class Move(NamedTuple):
    """A move of the piece on `frm` to `to` (point indices)."""

    frm: int
    to: int

    def notation(self) -> str:
        """Returns the move as `from>to` in point names."""
        return f"{NAMES[self.frm]}>{NAMES[self.to]}"


class Layout(NamedTuple):
    """A seat's 布阵: (point, kind) placements as submitted, and its colour where given."""

    seat: int
    placements: tuple[tuple[int, int], ...]
    colour: str | None = None


class Elimination(msgspec.Struct, frozen=True):
    """A seat leaving the game (出局): why, and at which completed step."""

    seat: int
    cause: str
    step: int


class JunqiState(msgspec.Struct, frozen=True):
    """A position with everything the rules need: cells, seats still in, the seat to act, the step
    and quiet counters, timeouts, 亮旗, eliminations, a pending draw offer and the outcome; and the
    last move made, for pictures."""

    profile: JunqiProfile
    board: tuple[int, ...]
    first: int
    to_move: int = CHANCE
    laid: tuple[bool, ...] = (False, False, False, False)
    colours: tuple[str | None, ...] = (None, None, None, None)
    alive: tuple[bool, ...] = (True, True, True, True)
    plies: int = 0
    step: int = 0
    quiet: int = 0
    round_contact: bool = False
    timeouts: tuple[int, ...] = (0, 0, 0, 0)
    revealed: tuple[bool, ...] = (False, False, False, False)
    eliminations: tuple[Elimination, ...] = ()
    draw_votes: tuple[int, ...] | None = None
    draw_offers: int = 0
    outcome: Outcome | None = None
    halted: str | None = None
    last_move: tuple[int, int] | None = None

    @property
    def seats(self) -> tuple[int, ...]:
        """Returns the four seat numbers."""
        return (0, 1, 2, 3)


def initial_state(profile: JunqiProfile, first: int) -> JunqiState:
    """Returns the empty board waiting for the four layouts."""
    return JunqiState(profile=profile, board=(0,) * N_POINTS, first=first)


def partner(seat: int) -> int:
    """Returns the seat opposite (the ally)."""
    return (seat + 2) % 4


def is_enemy(a: int, b: int) -> bool:
    """Tells whether two seats belong to different alliances."""
    return (a - b) % 2 == 1


def point_index(name: str, profile: JunqiProfile) -> int:
    """Returns a point's index from its name in the log's notation (`official_col_origin`).

    :raises KeyError: for a name that is not a point.
    """
    if profile.official_col_origin == "owner_right" and name[0] in "SWNE":
        name = f"{name[:2]}{6 - int(name[2])}"
    return INDEX[name]


def point_name(point: int, profile: JunqiProfile) -> str:
    """Returns a point's name in the log's notation (`official_col_origin`)."""
    name = NAMES[point]
    if profile.official_col_origin == "owner_right" and name[0] in "SWNE":
        name = f"{name[:2]}{6 - int(name[2])}"
    return name
