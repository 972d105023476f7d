"""The paohuzi engine object: the `GameEngine` protocol over the rules, fold, bot and pictures."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Iterator, Sequence

from replay.paohuzi import fold, rules
from replay.paohuzi.checks import check
from replay.paohuzi.events import to_event
from replay.paohuzi.state import Action, State
from replay.picture import Frame, Sheet
from replay.protocol import CHANCE, TERMINAL, InvalidActionError, Outcome, Step
from schemas.common import GameStarted
from schemas.envelope import Event
from schemas.paohuzi import PaohuziProfile

_KINDS = frozenset({"draw", "discard", "chi", "peng", "hu", "pass"})


class PaohuziEngine:
    """竞技跑胡子: three seats, 80 cards, one deal per game."""

    name = "paohuzi"
    profile_type = PaohuziProfile

    def new_initial_state(self, start: GameStarted) -> State:
        """Returns the state before any event after `game.started`."""
        return fold.new_state(start)

    def current_player(self, state: State) -> int:
        """Returns the seat to act, `CHANCE` (board, deal, 亮张, a draw from an unknown wall) or `TERMINAL`."""
        if state.phase == "end":
            return TERMINAL
        seat = rules.current_seat(state)
        return CHANCE if seat is None else seat

    def legal_actions(self, state: State) -> list[Hashable]:
        """Returns the legal actions of the seat to act (the possible draws at a chance draw)."""
        return list(rules.legal(state))

    def apply_action(self, state: State, action: Hashable) -> State:
        """Returns the state after the action.

        :raises InvalidActionError: when the action is not a paohuzi `Action`.
        :raises IllegalActionError: when it breaks a rule here.
        """
        if not isinstance(action, Action) or action.kind not in _KINDS:
            raise InvalidActionError(f"not a paohuzi action: {action!r}")
        check(state, action)
        return fold.rules_apply(state, action)

    def is_terminal(self, state: State) -> bool:
        """Tells whether the deal is over (hu or 荒庄)."""
        return state.phase == "end"

    def outcome(self, state: State) -> Outcome | None:
        """Returns the outcome of a finished deal, else None."""
        return fold.outcome(state)

    def information_state_string(self, state: State, seat: int) -> str:
        """Describes the deal as `seat` sees it: its own hand, face-up groups, discards, the wall count."""
        from replay.paohuzi.render import render_text

        return render_text(state, seat)

    def to_event(self, state: State, action: Hashable, *, stream: str, seq: int, ts: int) -> Event:
        """Returns the event that records `action` taken in `state`."""
        if not isinstance(action, Action):
            raise InvalidActionError(f"not a paohuzi action: {action!r}")
        return to_event(state, action, stream=stream, seq=seq, ts=ts)

    def replay(self, events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
        """Folds a deal's events into steps.

        :raises StrictReplayError: in strict mode, at the first error finding.
        """
        return fold.replay(events, strict)

    def bot_game(self, start: GameStarted, rng: random.Random) -> list[Event]:
        """Plays one deal with the seeded bot from a seeded shuffle."""
        from replay.paohuzi.bot import bot_game

        return bot_game(start, rng)

    def render_svg(self, state: State, seat: int | None = None, players: Sequence[str] = ()) -> str:
        """Draws the table as SVG, from `seat`'s view when given."""
        from replay.paohuzi.render import render_svg

        return render_svg(state, seat, players)

    def sheet(self, state: State, players: Sequence[str] = ()) -> Sheet:
        """Returns the table drawn once for pictures of this deal (legend with `players`)."""
        from replay.paohuzi.render import sheet

        return sheet(state, players)

    def frame(self, state: State, attempt: Event | None = None) -> Frame:
        """Returns the table as a frame of the sheet, with a refused `attempt` dashed."""
        from replay.paohuzi.render import frame

        return frame(state, None, attempt)

    def render_board(self, state: State, seat: int | None = None) -> str:
        """Draws the table as text for people, with a legend."""
        from replay.paohuzi.render import render_board

        return render_board(state, seat)

    def render_text(self, state: State, seat: int | None = None) -> str:
        """Draws the table as text, from `seat`'s view when given."""
        from replay.paohuzi.render import render_text

        return render_text(state, seat)


ENGINE = PaohuziEngine()
