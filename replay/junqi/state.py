"""The immutable game state of junqi and the two kinds of action: a layout (chance) and a move."""

from __future__ import annotations

import functools
from typing import Final, NamedTuple

import msgspec

from replay.junqi.board import N_POINTS, NAMES, Board, board
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
        return notation(self.frm, self.to)


def notation(frm: int, to: int) -> str:
    """Returns the move from `frm` to `to` as `from>to` in point names."""
    return f"{NAMES[frm]}>{NAMES[to]}"


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
    return settings(profile).index[name]


def point_name(point: int, profile: JunqiProfile) -> str:
    """Returns a point's name in the log's notation (`official_col_origin`)."""
    return _log_name(NAMES[point], profile.official_col_origin)


def _log_name(name: str, origin: str) -> str:
    if origin == "owner_right" and name[0] in "SWNE":
        name = f"{name[:2]}{6 - int(name[2])}"
    return name


@functools.cache
def _log_index(origin: str) -> dict[str, int]:
    """Returns the point indices by name in a notation; built once per notation (a replay builds
    the settings of each game's profile)."""
    return {_log_name(name, origin): point for point, name in enumerate(NAMES)}


class Settings:
    """A profile's settings as the rules read them at every move, with its board graph and its
    point notation. Compiled code reads a field of a msgspec Struct (the profile) by a generic
    attribute lookup, and the fields of this class directly: a replay reads them at every move."""

    profile: JunqiProfile
    geo: Board
    index: dict[str, int]
    """Point names in the log's notation (`official_col_origin`) to point indices."""
    direction: int
    """+1 clockwise, -1 counterclockwise (`turn_direction`)."""
    by_round: bool
    """`step_unit` is `round`."""
    mine_vs_officer: str
    bomb_vs_flag: str
    quiet_limit: int
    quiet_trigger: str
    max_steps: int | None
    move_time_limit_s: int | None

    def __init__(self, profile: JunqiProfile) -> None:
        self.profile = profile
        self.geo = board(profile.arcs_present, profile.arc_model, profile.arc_straight_for_non_engineer)
        self.index = _log_index(profile.official_col_origin)
        self.direction = 1 if profile.turn_direction == "clockwise" else -1
        self.by_round = profile.step_unit == "round"
        self.mine_vs_officer = profile.mine_vs_officer
        self.bomb_vs_flag = profile.bomb_vs_flag
        self.quiet_limit = profile.quiet_limit
        self.quiet_trigger = profile.quiet_trigger
        self.max_steps = profile.max_steps
        self.move_time_limit_s = profile.move_time_limit_s


class _LastSettings:
    """The settings of the profile last asked about: a replay asks at every move, always about its
    game's profile."""

    def __init__(self) -> None:
        self.settings = Settings(JunqiProfile())


_LAST: Final = _LastSettings()


def settings(profile: JunqiProfile) -> Settings:
    """Returns the profile's settings."""
    last = _LAST.settings  # one attribute, carrying its profile: threads never pair a profile with another's settings
    if last.profile is not profile:
        last = Settings(profile)
        _LAST.settings = last
    return last
