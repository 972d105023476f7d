"""The checkers engine behind the `GameEngine` protocol: OpenSpiel-style state functions, replay,
bot, pictures, and the perft and show helpers the command line calls."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Final

from replay.checkers import bot, fold, render
from replay.checkers.board import BIT, HOME, NEIGHBOUR_MASK, ids
from replay.checkers.check import check_move
from replay.checkers.codes import public
from replay.checkers.moves import MoveRules, all_moves
from replay.checkers.perft import divide, parse_moves, perft_counts, play_moves
from replay.checkers.rules import derived, play_move, play_pass
from replay.checkers.state import CheckersState, initial_state
from replay.picture import Frame, Sheet
from replay.protocol import TERMINAL, IllegalActionError, InvalidActionError, Outcome, Step
from schemas.checkers import CheckersProfile, Moved
from schemas.common import GameStarted, Skipped
from schemas.envelope import Event

PASS: Final[str] = "pass"
"""The action of a seat with no legal move (§4.8): recorded as a justified 略过."""
Action = tuple[int, int] | str


class CheckersEngine:
    """传统1v1跳棋: the rules of `shared/rules/checkers.md` under a `CheckersProfile`."""

    name = "checkers"
    profile_type = CheckersProfile

    def new_initial_state(self, start: GameStarted) -> CheckersState:
        """Returns the state before the first move."""
        return initial_state(start)

    def current_player(self, state: CheckersState) -> int:
        """Returns the seat to move, or `TERMINAL`."""
        return TERMINAL if state.outcome is not None else state.to_move

    def legal_actions(self, state: CheckersState) -> list[Hashable]:
        """Returns every (from, to) move of the seat to move, or [PASS] when it has none (§4.8)."""
        if state.outcome is not None:
            return []
        seat = state.to_move
        moves: list[Hashable] = list(all_moves(seat, state.pieces[seat], state.pieces[0] | state.pieces[1], derived(state.profile).rules))
        return moves or [PASS]

    def apply_action(self, state: CheckersState, action: Hashable) -> CheckersState:
        """Returns the state after a move (from, to) or PASS.

        :raises InvalidActionError: when the action is not a pair of holes 0–120 or PASS.
        :raises IllegalActionError: when the move breaks a rule in this state (§4.7 codes).
        """
        if state.outcome is not None:
            raise IllegalActionError(public("W_AFTER_END"), f"{action!r} after the game ended ({state.outcome.termination})")
        if action == PASS:
            return play_pass(state, timeout=False).state
        frm, to = _as_move(action)
        verdict = check_move(state, state.to_move, frm, to, None)
        if verdict.code is not None:
            raise IllegalActionError(public(verdict.code), f"{frm}>{to}: {verdict.why}")
        return play_move(state, frm, to, verdict.path).state

    def is_terminal(self, state: CheckersState) -> bool:
        """Tells whether the game is over."""
        return state.outcome is not None

    def outcome(self, state: CheckersState) -> Outcome | None:
        """Returns the result with its reason (ALL_HOME, MARGIN_DRAW, REPETITION, LEAVE_CAMP …)."""
        return state.outcome

    def information_state_string(self, state: CheckersState, seat: int) -> str:
        """Describes the position; checkers hides nothing, so every seat sees the same."""
        north, south = (",".join(map(str, ids(p))) for p in state.pieces)
        return f"N:{north} S:{south} to_move:{state.to_move} ply:{state.ply}"

    def to_event(self, state: CheckersState, action: Hashable, *, stream: str, seq: int, ts: int) -> Event:
        """Returns the `checkers.moved` (with its hop path) or `game.skipped` event of an action."""
        if action == PASS:
            return Skipped(stream=stream, seq=seq, ts=ts, seat=state.to_move)
        frm, to = _as_move(action)
        verdict = check_move(state, state.to_move, frm, to, None)
        path = verdict.path if verdict.code is None and not NEIGHBOUR_MASK[frm] & BIT[to] else None
        return Moved(stream=stream, seq=seq, ts=ts, seat=state.to_move, from_=frm, to=to, path=path)

    def replay(self, events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
        """Folds a game's events into steps (state, facts, findings).

        :raises StrictReplayError: in strict mode, at the first error finding.
        """
        return fold.replay(events, strict)

    def bot_game(self, start: GameStarted, rng: random.Random) -> list[Event]:
        """Plays a whole seeded bot game and returns its events, ending with the `game.ended` claim."""
        return bot.bot_game(start, rng)

    def render_svg(self, state: CheckersState, seat: int | None = None, players: Sequence[str] = ()) -> str:
        """Draws the star board as SVG with the last move's hop path."""
        return render.render_svg(state, seat, players)

    def sheet(self, state: CheckersState, players: Sequence[str] = ()) -> Sheet:
        """Returns the star board drawn once for pictures of this game (legend with `players`)."""
        return render.sheet(None, players)

    def frame(self, state: CheckersState, attempt: Event | None = None) -> Frame:
        """Returns the position as a frame of the sheet, with a refused `attempt` dashed."""
        return render.frame(state, attempt)

    def render_board(self, state: CheckersState, seat: int | None = None) -> str:
        """Draws the position as text for people: framed with coordinates, with a legend."""
        return render.render_board(state, seat)

    def render_text(self, state: CheckersState, seat: int | None = None) -> str:
        """Draws the board as a compact text diagram."""
        return render.render_text(state, seat)

    def perft(self, depth: int, moves: str | None = None, profile: CheckersProfile | None = None) -> list[int]:
        """Returns the move counts for depths 1..depth (§14.1) from the initial position (north
        moves first), or after the moves `3>14,115>102,…`.

        :raises MoveListError: when the move list is malformed or holds an illegal move.
        """
        rules = MoveRules.of(profile or CheckersProfile())
        pieces, to_move = play_moves(HOME, 0, parse_moves(moves or ""), rules)
        return perft_counts(pieces, to_move, depth, rules)

    def perft_divide(self, depth: int, moves: str | None = None, profile: CheckersProfile | None = None) -> list[tuple[str, int]]:
        """Returns each first move with the move sequences of length `depth` below it (perft divide).

        :raises MoveListError: when the move list is malformed or holds an illegal move.
        """
        rules = MoveRules.of(profile or CheckersProfile())
        pieces, to_move = play_moves(HOME, 0, parse_moves(moves or ""), rules)
        return divide(pieces, to_move, depth, rules)

    def state_at(self, events: Iterable[Event], seq: int | None = None) -> Step:
        """Returns the replay step of the event with sequence number `seq` (the last one when None),
        for `show`: its state renders with `render_svg` or `render_text`.

        :raises KeyError: when no event has that sequence number.
        """
        last = None
        for step in self.replay(events):
            last = step
            if step.event.seq == seq:
                return step
        if last is None or seq is not None:
            raise KeyError(f"no event with seq {seq}")
        return last


def _as_move(action: Hashable) -> tuple[int, int]:
    """Returns a (from, to) pair of holes.

    :raises InvalidActionError: when the action is not one.
    """
    if (isinstance(action, tuple) and len(action) == 2 and all(type(x) is int and 0 <= x <= 120 for x in action)):
        return action  # type: ignore[return-value]
    raise InvalidActionError(f"{action!r} is not a move: expected (from, to) with holes 0-120, or {PASS!r}")


ENGINE: Final[CheckersEngine] = CheckersEngine()
