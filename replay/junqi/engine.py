"""The junqi engine behind the `GameEngine` protocol: state functions, replay, bot, pictures, perft."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import cast

from replay.junqi import bot, fold, perft, render
from replay.junqi.layout import ARTICLES as LAYOUT_ARTICLES
from replay.junqi.layout import layout_problems, place
from replay.junqi.moves import check_move, legal_moves
from replay.junqi.pieces import KIND_NAMES, combat, kind_of
from replay.junqi.rules import do_move
from replay.junqi.state import JunqiState, Layout, Move, point_name
from replay.picture import Frame, Sheet
from replay.protocol import TERMINAL, IllegalActionError, InvalidActionError, Outcome, Step
from schemas.common import GameStarted
from schemas.envelope import Event
from schemas.junqi import JunqiProfile, LayoutSubmitted, Moved


class JunqiEngine:
    """竞技四国军棋: four layouts (chance), then moves in turn order until an alliance falls or a draw."""

    name = "junqi"
    profile_type = JunqiProfile

    def new_initial_state(self, start: GameStarted) -> JunqiState:
        """Returns the empty board waiting for the four layouts."""
        return fold.start_state(start)

    def current_player(self, state: JunqiState) -> int:
        """Returns the seat to move, `CHANCE` while layouts are missing, or `TERMINAL`."""
        return TERMINAL if state.halted is not None else state.to_move

    def legal_actions(self, state: JunqiState) -> list[Hashable]:
        """Returns the legal moves of the seat to move (none at chance or terminal states)."""
        seat = self.current_player(state)
        return list(legal_moves(state, seat)) if seat >= 0 else []

    def apply_action(self, state: JunqiState, action: Hashable) -> JunqiState:
        """Returns the state after a layout or a move.

        :raises InvalidActionError: for anything that is neither a `Layout` nor a `Move`.
        :raises IllegalActionError: with the L or M code of the broken rule.
        """
        if isinstance(action, Layout):
            problems = layout_problems(state, action)
            if problems:
                code, message = problems[0]
                raise IllegalActionError(f"junqi.{code}", message, LAYOUT_ARTICLES[code])
            if state.laid[action.seat] or state.to_move >= 0:
                raise IllegalActionError("junqi.M02", f"座位{action.seat}的布阵不在布阵阶段 "
                                                      f"layout of seat {action.seat} outside the layout phase", "第六条")
            return fold.start_if_ready(place(state, action))
        if isinstance(action, tuple) and len(action) == 2 and all(isinstance(p, int) and 0 <= p < 129 for p in action):
            move = Move(*action)
            if state.to_move < 0:
                raise IllegalActionError("junqi.M02", f"走子 {move.notation()} 时没有轮到任何座位 "
                                                      f"move {move.notation()} while no seat is to move", "第七条")
            check_move(state, state.to_move, move.frm, move.to)
            return do_move(state, move.frm, move.to)[0]
        raise InvalidActionError(f"not a junqi action: {action!r}")

    def is_terminal(self, state: JunqiState) -> bool:
        """Tells whether the game is over (or its replay stopped at an illegal event)."""
        return state.outcome is not None or state.halted is not None

    def outcome(self, state: JunqiState) -> Outcome | None:
        """Returns the derived outcome of a finished game."""
        return state.outcome

    def information_state_string(self, state: JunqiState, seat: int) -> str:
        """Describes the position as `seat` sees it in 四暗: its own pieces, others face down."""
        return render.render_text(state, seat)

    def to_event(self, state: JunqiState, action: Hashable, *, stream: str, seq: int, ts: int) -> Event:
        """Returns the event recording a layout or a move, with the derived combat result as claim."""
        profile = state.profile
        if isinstance(action, Layout):
            pieces = [(point_name(p, profile), KIND_NAMES[k]) for p, k in action.placements]
            return LayoutSubmitted(stream=stream, seq=seq, ts=ts, seat=action.seat, pieces=pieces, colour=action.colour)  # type: ignore[arg-type]
        frm, to = cast(tuple[int, int], action)
        mover, target = state.board[frm], state.board[to]
        result = "move" if target == 0 else combat(kind_of(mover), kind_of(target), profile.mine_vs_officer, profile.bomb_vs_flag)
        return Moved(stream=stream, seq=seq, ts=ts, seat=state.to_move, from_=point_name(frm, profile),
                     to=point_name(to, profile), result=result, piece=KIND_NAMES[kind_of(mover)])

    def replay(self, events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
        """Folds a game's events into steps with facts and findings.

        :raises StrictReplayError: in strict mode, at the first error finding.
        """
        return fold.replay(events, strict)

    def bot_game(self, start: GameStarted, rng: random.Random) -> list[Event]:
        """Plays a whole seeded bot game and returns its events, `start` first and the claim last."""
        return bot.bot_game(self, start, rng)

    def render_svg(self, state: JunqiState, seat: int | None = None, players: Sequence[str] = (), mode: str = "四暗") -> str:
        """Draws the cross-shaped board as SVG, hiding what `seat` cannot see in `mode` (四暗/双明)."""
        return render.render_svg(state, seat, mode, players)

    def sheet(self, state: JunqiState, players: Sequence[str] = ()) -> Sheet:
        """Returns the board drawn once for pictures of this game (legend with `players`)."""
        return render.sheet(state, players)

    def frame(self, state: JunqiState, attempt: Event | None = None) -> Frame:
        """Returns the omniscient position as a frame of the sheet, with a refused `attempt` dashed."""
        return render.frame(state, None, "四暗", attempt)

    def render_board(self, state: JunqiState, seat: int | None = None, mode: str = "四暗") -> str:
        """Draws the position as text for people: framed with coordinates, with a legend."""
        return render.render_board(state, seat, mode)

    def render_text(self, state: JunqiState, seat: int | None = None, mode: str = "四暗") -> str:
        """Draws the position as a 17×17 text diagram, from `seat`'s view when given."""
        return render.render_text(state, seat, mode)

    def perft(self, depth: int, setup: str | None = None) -> list[int]:
        """Counts the move sequences of 1..depth plies from a position file (or the standard position).

        :raises perft.PositionError: when the file does not describe a position.
        """
        return perft.perft(depth, setup)

    def perft_divide(self, depth: int, setup: str | None = None) -> list[tuple[str, int]]:
        """Returns each first move with the move sequences of length `depth` below it (perft divide).

        :raises perft.PositionError: when the file does not describe a position.
        """
        return perft.divide(depth, setup)


ENGINE = JunqiEngine()
