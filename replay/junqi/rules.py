"""What a move, a timeout, a resignation or a draw vote does to the state: combat (§4.2), 亮旗 (§10),
elimination (§7.3), alliance defeat (§8.1), the step and quiet counters and draws (§8.2–§8.4),
and turn order with eliminated seats skipped (§7), in the order of §8.5."""

from __future__ import annotations

from typing import Final

import msgspec

from replay.junqi.codes import Termination
from replay.junqi.moves import can_move
from replay.junqi.pieces import FLAG, MARSHAL, combat, kind_of, seat_of
from replay.junqi.state import ALLIANCES, Elimination, JunqiState, Settings, settings
from replay.protocol import TERMINAL, Outcome

replace: Final = msgspec.structs.replace

TERMINATION: Final = {
    "FLAG": Termination.FLAG_CAPTURED, "NO_MOVE": Termination.NO_LEGAL_MOVE, "TIMEOUTS": Termination.TIMEOUTS,
    "RESIGNED": Termination.RESIGNED, "ILLEGAL": Termination.ILLEGAL_MOVE,
}
"""The game's termination when an alliance falls, by the cause of the last elimination."""


class MoveReport:
    """What one move did: the combat outcome, pieces removed, seats eliminated, 司令 deaths (tuples:
    a move without contact, most of them, shares the empty one)."""

    __slots__ = ("result", "removed", "eliminated", "marshal_deaths", "mover")

    def __init__(self, result: str, removed: tuple[tuple[int, int], ...], eliminated: tuple[int, ...],
                 marshal_deaths: tuple[int, ...], mover: int) -> None:
        self.result = result
        self.removed = removed
        self.eliminated = eliminated
        self.marshal_deaths = marshal_deaths
        self.mover = mover


def do_move(state: JunqiState, frm: int, to: int) -> tuple[JunqiState, MoveReport]:
    """Applies the move of the piece on `frm` to `to`, already known to be legal, and returns the
    new state and what happened."""
    rules = settings(state.profile)
    cells = list(state.board)
    mover, target = cells[frm], cells[to]
    cells[frm] = 0
    removed: tuple[tuple[int, int], ...] = ()
    deaths: tuple[int, ...] = ()
    captured_flag: int | None = None
    if target == 0:
        result = "move"
        cells[to] = mover
    else:
        akind, dkind = kind_of(mover), kind_of(target)
        result = combat(akind, dkind, rules.mine_vs_officer, rules.bomb_vs_flag)
        if result in ("win", "both"):
            removed += ((to, target),)
            deaths += (seat_of(target),) if dkind == MARSHAL else ()
            captured_flag = seat_of(target) if dkind == FLAG else None
        if result in ("lose", "both"):
            removed += ((to, mover),)  # the attacker dies where it met the defender, not where it set out
            deaths += (seat_of(mover),) if akind == MARSHAL else ()
        cells[to] = mover if result == "win" else target if result == "lose" else 0
    board = tuple(cells)
    revealed = tuple(r or s in deaths for s, r in enumerate(state.revealed)) if deaths else state.revealed
    eliminated = () if captured_flag is None else (captured_flag,)
    report = MoveReport(result, removed, eliminated, deaths, seat_of(mover))
    if captured_flag is None:
        plain = _plain_ply(state, rules, board, revealed, (frm, to), target != 0, seat_of(mover))
        if plain is not None:
            return plain, report
    state = replace(state, board=board, revealed=revealed, last_move=(frm, to))
    if captured_flag is not None:
        state = eliminate(state, captured_flag, "FLAG", at_step=state.step + 1)  # the capturing move's step
    # The winning move is still a step, but a win has priority over the draws (§8.5).
    state = count_step(state, contact=target != 0, judge=state.outcome is None)
    if state.outcome is not None:
        return state, report
    return next_turn(state, seat_of(mover)), report


def _plain_ply(state: JunqiState, rules: Settings, board: tuple[int, ...], revealed: tuple[bool, ...],
               last_move: tuple[int, int], contact: bool, mover: int) -> JunqiState | None:
    """Returns the state after a move that eliminates nobody, counted per ply, reaching no draw and
    followed by a seat that can move, or None for any other move (do_move then takes it step by
    step). The same result as count_step then next_turn, in one `replace` of the 19 fields instead
    of three: this is almost every move of a game."""
    if rules.by_round or state.outcome is not None:
        return None
    step, quiet = state.step + 1, 0 if contact else state.quiet + 1
    if draw_reached(rules, step, quiet) is not None:
        return None
    alive, seat = state.alive, mover
    for _ in range(4):
        seat = (seat + rules.direction) % 4
        if alive[seat]:
            break
    if not alive[seat] or not can_move(board, rules, seat):
        return None
    return replace(state, board=board, revealed=revealed, last_move=last_move, plies=state.plies + 1,
                   step=step, quiet=quiet, to_move=seat)


def eliminate(state: JunqiState, seat: int, cause: str, at_step: int | None = None) -> JunqiState:
    """Takes a seat out (出局): removes all its pieces, records why and at which step (by default
    the steps completed so far), and ends the game when its alliance has no player left (§7.3, §8.1)."""
    cells = tuple(0 if v and seat_of(v) == seat else v for v in state.board)
    alive = tuple(a and s != seat for s, a in enumerate(state.alive))
    quiet = 0 if state.profile.elimination_resets_quiet and cause != "FLAG" else state.quiet
    state = replace(
        state, board=cells, alive=alive, quiet=quiet,
        eliminations=state.eliminations + (Elimination(seat, cause, state.step if at_step is None else at_step),),
    )
    for losers, winners in (ALLIANCES, ALLIANCES[::-1]):
        if not any(alive[s] for s in losers):
            return finish(state, TERMINATION[cause], winners)
    return state


def finish(state: JunqiState, termination: str, winners: tuple[int, ...]) -> JunqiState:
    """Ends the game with a termination and the winning seats (none for a draw), scoring 第十条."""
    pts = state.profile.points
    if winners:
        points = tuple(float(pts.win if s in winners else _loss_points(state, s)) for s in range(4))
    else:
        points = (float(pts.draw),) * 4
    outcome = Outcome(termination=termination, winners=tuple(sorted(winners)), points=points)
    return replace(state, outcome=outcome, to_move=TERMINAL, draw_votes=None)


def _loss_points(state: JunqiState, seat: int) -> int:
    """Returns a losing seat's points: `forfeit_points` when it resigned and the profile sets them."""
    forfeit = state.profile.forfeit_points
    if forfeit is not None and any(e.seat == seat and e.cause == "RESIGNED" for e in state.eliminations):
        return forfeit
    return state.profile.points.loss


def count_step(state: JunqiState, contact: bool, judge: bool = True) -> JunqiState:
    """Counts a completed step (§8.2): per ply it advances the step and quiet counters and, when
    `judge`, checks the draws; per round it only notes contact until the round closes."""
    if state.profile.step_unit == "round":
        return replace(state, plies=state.plies + 1, round_contact=state.round_contact or contact)
    state = replace(state, plies=state.plies + 1, step=state.step + 1, quiet=0 if contact else state.quiet + 1)
    return check_draws(state) if judge else state


def _close_round(state: JunqiState) -> JunqiState:
    """Closes a round of turns when `step_unit` is `round`: a quiet round unless a move made contact."""
    quiet = 0 if state.round_contact else state.quiet + 1
    return check_draws(replace(state, step=state.step + 1, quiet=quiet, round_contact=False))


def check_draws(state: JunqiState) -> JunqiState:
    """Declares the 50-step no-contact draw or the total step limit draw (第九条 和局 2, 3)."""
    termination = draw_reached(settings(state.profile), state.step, state.quiet)
    return state if termination is None else finish(state, termination, ())


def draw_reached(rules: Settings, step: int, quiet: int) -> str | None:
    """Returns the draw the step and quiet counters reach (`QUIET_LIMIT`, `MAX_STEPS`), or None."""
    limit, max_steps = rules.quiet_limit, rules.max_steps
    if quiet > limit or (quiet == limit and rules.quiet_trigger == ">="):
        return Termination.QUIET_LIMIT
    if max_steps is not None and step >= max_steps:
        return Termination.MAX_STEPS
    return None


def next_turn(state: JunqiState, after: int, include_self: bool = False) -> JunqiState:
    """Passes the turn on from `after` in the profile's direction, skipping eliminated seats and
    applying `no_move_rule` to a seat that cannot move (§7.2–§7.4)."""
    rules = settings(state.profile)
    direction = rules.direction
    seat = (after - direction) % 4 if include_self else after
    for _ in range(9):
        seat = (seat + direction) % 4
        if rules.by_round and seat == state.first and not include_self:
            state = _close_round(state)
            if state.outcome is not None:
                return state
        include_self = False
        if not state.alive[seat]:
            continue
        if can_move(state.board, rules, seat):
            return replace(state, to_move=seat)
        if rules.profile.no_move_rule == "eliminate":
            state = eliminate(state, seat, "NO_MOVE")
            if state.outcome is not None:
                return state
    # Under `skip_turn` every seat left may be stuck: nobody can ever move again.
    return finish(state, Termination.NO_LEGAL_MOVE, ())


def pass_turn(state: JunqiState, seat: int, timeout: bool) -> JunqiState:
    """Applies a timeout (超时) or a skipped turn (略过) of the seat to move (§7.5)."""
    profile = state.profile
    if timeout:
        timeouts = tuple(n + (s == seat) for s, n in enumerate(state.timeouts))
        state = replace(state, timeouts=timeouts)
        if profile.max_timeouts is not None and timeouts[seat] >= profile.max_timeouts:
            state = eliminate(state, seat, "TIMEOUTS")
        elif profile.timeout_counts_as_step:
            state = count_step(state, contact=False)
        if state.outcome is not None:
            return state
    return next_turn(state, seat)


def resign(state: JunqiState, seat: int) -> JunqiState:
    """Applies a resignation (认输) by `resign_effect`: the seat leaves, or its alliance loses."""
    if state.profile.resign_effect == "alliance_loses":
        # The seat leaves with its alliance: recorded, so that `forfeit_points` finds it.
        left = replace(state, eliminations=state.eliminations + (Elimination(seat, "RESIGNED", state.step),))
        return finish(left, Termination.RESIGNED, ALLIANCES[1 - seat % 2])
    state = eliminate(state, seat, "RESIGNED")
    if state.outcome is None and state.to_move == seat:
        return next_turn(state, seat)
    return state


def draw_voters(state: JunqiState) -> set[int]:
    """Returns the seats whose acceptance a draw needs (第九条: all four; or `alive_only`)."""
    if state.profile.draw_voters == "alive_only":
        return {s for s in range(4) if state.alive[s]}
    return {0, 1, 2, 3}


def vote_draw(state: JunqiState, seat: int, accept: bool) -> JunqiState:
    """Adds a seat's vote to the pending offer; the game is drawn once every voter has accepted."""
    if not accept:
        return replace(state, draw_votes=None)
    votes = tuple(sorted(set(state.draw_votes or ()) | {seat}))
    if draw_voters(state) <= set(votes):
        return finish(state, Termination.DRAW_AGREED, ())
    return replace(state, draw_votes=votes)


def offer_draw(state: JunqiState, seat: int) -> JunqiState:
    """Opens a draw offer (提和) with the offering seat's vote."""
    return vote_draw(replace(state, draw_votes=(), draw_offers=state.draw_offers + 1), seat, True)
