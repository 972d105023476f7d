"""The state of one game after each event (frozen, compared by value), its start, and the
position key and notation that findings and repetition use."""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from replay.checkers.board import BIT, HOLES, HOME, ids
from replay.protocol import Outcome
from schemas.checkers import CheckersProfile
from schemas.common import GameStarted

NOBODY: Final[int] = -1


class Undo(NamedTuple):
    """A move made instead of waiting (第四条), owed back on the seat's next turn the way it came."""

    seat: int
    frm: int
    to: int
    path: tuple[int, ...] | None
    """The path the log shows (a step, or a hop chain's witness); None for a chain logged by its ends."""
    before: int
    """Every occupied hole before the move, its origin left out: where each hop of the path was made."""


class CheckersState(msgspec.Struct, frozen=True, kw_only=True):
    """A game after some events: the pieces of each seat as hole bit sets, whose turn it is, the
    counters the competition rules read (turns, passes, timeouts, arrivals), the repetition
    history, the waiting and wall trackers, and the outcome once the game is over."""

    profile: CheckersProfile
    seats: tuple[str, str]
    first: int
    pieces: tuple[int, int] = (HOME[0], HOME[1])
    to_move: int = 0
    ply: int = 0
    turns: tuple[int, int] = (0, 0)
    passes: tuple[int, int] = (0, 0)
    timeouts: tuple[int, int] = (0, 0)
    last: tuple[int, ...] = ()
    """The path (from … to) of the latest move, for pictures; () before the first move."""
    arrived: tuple[int, int] = (0, 0)
    """Own turn number at which each seat completed its target camp; 0 while it has not."""
    evacuated_at: int = 0
    """Ply at whose end neither seat first had an own piece at home (双方出营, §7); 0 before."""
    history: tuple[int, ...] = ()
    """Position keys counted for repetition (§7), oldest first."""
    owe_wait: int = NOBODY
    """Seat that must wait this turn because its opponent timed out within the allowance (§6.1)."""
    undo: Undo | None = None
    """A move made instead of waiting, to be taken back along the same path on the seat's next turn."""
    formation: tuple[int, int] = (0, 0)
    still: tuple[int, int] = (0, 0)
    walled: tuple[bool, bool] = (False, False)
    camp_failed: tuple[bool, bool] = (False, False)
    offline: tuple[bool, bool] = (False, False)
    pass_authorised: int = NOBODY
    draw_offer: int = NOBODY
    timed_out: int = NOBODY
    """Seat whose turn just ended by a timeout: its skip record that follows is that same pass."""
    outcome: Outcome | None = None
    unverified: bool = False
    """An illegal move stopped the check (`on_illegal_move = stop_unverified`, §4.7)."""


class StartError(ValueError):
    """The `game.started` event does not describe a checkers game."""


def initial_state(start: GameStarted) -> CheckersState:
    """Returns the state before the first move: both camps full, the first mover to move (§3).

    :raises StartError: when the profile is not a checkers profile or the seats are not 0 and 1.
    """
    if not isinstance(start.profile, CheckersProfile):
        raise StartError(f"game {start.stream}: profile is {type(start.profile).__name__}, not CheckersProfile")
    holders = {h.seat: h.holder for h in start.seats}
    if sorted(holders) != [0, 1] or start.first not in (0, 1):
        raise StartError(f"game {start.stream}: seats must be 0 (north) and 1 (south), first 0 or 1")
    return CheckersState(profile=start.profile, seats=(holders[0], holders[1]), first=start.first, to_move=start.first)


def position_key(pieces: tuple[int, int], to_move: int, with_side: bool) -> int:
    """Returns an exact repetition key: both bit sets and, when the profile says so, the side to move."""
    key = pieces[0] | pieces[1] << HOLES
    return key | (to_move + 1) << (2 * HOLES) if with_side else key


def describe(state: CheckersState) -> str:
    """Returns the position as text for messages: `N:0,1,… S:111,…，轮到座位0，第 12 手 seat 0 to move, ply 12`."""
    north, south = (",".join(map(str, ids(p))) for p in state.pieces)
    return f"N:{north} S:{south}，轮到座位{state.to_move}，第 {state.ply} 手 seat {state.to_move} to move, ply {state.ply}"


def setup(profile: CheckersProfile, north: list[int], south: list[int], to_move: int, first: int = 0) -> CheckersState:
    """Returns a state with pieces placed directly (for perft fixtures and worked examples)."""
    bits = [0, 0]
    for seat, holes in enumerate((north, south)):
        for i in holes:
            bits[seat] |= BIT[i]
    return CheckersState(profile=profile, seats=("north", "south"), first=first, pieces=(bits[0], bits[1]), to_move=to_move)
