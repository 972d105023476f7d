"""The seeded bot (DESIGN.md replay/): goal-directed play that finishes games (random play never
does), meets the leave-camp deadlines, waits for a timed-out opponent, and writes the events a
competition server would, with realistic thinking times and an occasional timeout."""

from __future__ import annotations

import random
from typing import Final

import msgspec

from replay.checkers.board import BIT, HOLES, HOME, INDEX, NEIGHBOUR_MASK, TARGET, hex_distance, ids
from replay.checkers.codes import Termination
from replay.checkers.moves import Reach, reach
from replay.checkers.rules import Turn, derived, play_move, play_pass, win
from replay.checkers.state import CheckersState, initial_state
from schemas.checkers import Moved
from schemas.common import GameEnded, GameStarted, MoveTimeUsed, Resigned, Skipped, TimedOut
from schemas.envelope import Event

TIPS: Final[tuple[int, int]] = (INDEX[(-4, 8)], INDEX[(4, -8)])
"""The far tip of each seat's target camp: seat 0 heads south, seat 1 north."""
DISTANCE: Final[tuple[tuple[int, ...], tuple[int, ...]]] = (
    tuple(hex_distance(i, TIPS[0]) for i in range(HOLES)), tuple(hex_distance(i, TIPS[1]) for i in range(HOLES)),
)
"""Distance of every hole to each seat's far tip: the camp is exactly the holes within 3, so
lowering the sum of these distances fills it (the bot's potential)."""
TIMEOUT_CHANCE: Final[float] = 0.012
GIVE_UP_PLY: Final[int] = 800
Move = tuple[int, int, tuple[int, ...]]


def choose_move(s: CheckersState, rng: random.Random) -> Move | None:
    """Returns the bot's move for the seat to move (from, to, path), or None to pass: when it
    waits for a timed-out opponent (第四条) or has no move at all."""
    seat = s.to_move
    own = s.pieces[seat]
    occupied = own | s.pieces[1 - seat]
    rules = derived(s.profile).rules
    dist = DISTANCE[seat]
    urgent = _camp_urgency(s, seat)
    waiting = s.owe_wait == seat
    best: tuple[float, int, int, Reach] | None = None
    fallback: tuple[int, int, Reach] | None = None
    for frm in ids(own):
        r = reach(seat, frm, occupied, rules)
        for to in r.endpoints():
            leaves_home = bool(HOME[seat] & BIT[frm]) and not HOME[seat] & BIT[to]
            if waiting and not (urgent and leaves_home):
                continue
            if _is_pointless(seat, frm, to):
                fallback = fallback or (frm, to, r)
                continue
            gain = dist[frm] - dist[to]
            score = gain + 0.08 * dist[frm] + rng.random() * 0.9
            if urgent and HOME[seat] & BIT[frm] and (gain > 0 or leaves_home):
                score += 50.0 if leaves_home else 20.0
            if best is None or score > best[0]:
                best = (score, frm, to, r)
    chosen = best[1:] if best is not None else fallback
    if chosen is None:
        return None
    frm, to, r = chosen
    return frm, to, r.path(frm, to) if to in r.parents else (frm, to)


def _is_pointless(seat: int, frm: int, to: int) -> bool:
    """Tells whether a move only undoes progress the rules watch: leaving the target camp
    (W_LEFT_TARGET) or going back into the home camp (W_REENTER_OWN_CAMP)."""
    return bool(TARGET[seat] & BIT[frm] and not TARGET[seat] & BIT[to]) or bool(HOME[seat] & BIT[to] and not HOME[seat] & BIT[frm])


def _camp_urgency(s: CheckersState, seat: int) -> bool:
    """Tells whether the next leave-camp deadline (第五条) is close enough to take pieces out first."""
    k = s.turns[seat] + 1
    out = 10 - (s.pieces[seat] & HOME[seat]).bit_count()
    for turn, need in sorted(derived(s.profile).checks.items()):
        if turn >= k and out < need:
            return turn - k <= 2 * (need - out) + 5
    return False


def bot_game(start: GameStarted, rng: random.Random) -> list[Event]:
    """Plays a whole game with the bot and returns its events: `start`, each turn followed by its
    `game.move_time`, and the `game.ended` claim of the derived result."""
    s = initial_state(start)
    events: list[Event] = [start]
    ts = start.ts
    allowance = derived(s.profile).allowance
    while s.outcome is None and s.ply < GIVE_UP_PLY:
        seat = s.to_move
        if _may_time_out(s, seat, allowance) and rng.random() < TIMEOUT_CHANCE:
            think = 20_000 + rng.randrange(400)
            ts += think
            events.append(TimedOut(stream=start.stream, seq=len(events), ts=ts, seat=seat))
            turn = play_pass(s, timeout=True)
        else:
            think = _think_ms(rng)
            ts += think
            turn = _play(s, choose_move(s, rng), events, ts)
        events.append(MoveTimeUsed(stream=start.stream, seq=len(events), ts=ts, seat=seat, ms=think, move_seq=len(events) - 1))
        s = turn.state
    if s.outcome is None:
        ts += _think_ms(rng)
        events.append(Resigned(stream=start.stream, seq=len(events), ts=ts, seat=s.to_move))
        s = msgspec.structs.replace(s, outcome=win(1 - s.to_move, Termination.RESIGNED))
    assert s.outcome is not None
    events.append(GameEnded(stream=start.stream, seq=len(events), ts=ts + 1, termination=s.outcome.termination,
                            winners=list(s.outcome.winners), points=list(s.outcome.points)))
    return events


def _play(s: CheckersState, move: Move | None, events: list[Event], ts: int) -> Turn:
    """Records and applies the bot's move, or its pass when it waits or has no move."""
    stream, seq, seat = events[0].stream, len(events), s.to_move
    if move is None:
        events.append(Skipped(stream=stream, seq=seq, ts=ts, seat=seat))
        return play_pass(s, timeout=False)
    frm, to, path = move
    is_step = bool(NEIGHBOUR_MASK[frm] & BIT[to])
    events.append(Moved(stream=stream, seq=seq, ts=ts, seat=seat, from_=frm, to=to, path=None if is_step else path))
    return play_move(s, frm, to, path)


def _may_time_out(s: CheckersState, seat: int, allowance: int) -> bool:
    """Keeps the bot's timeouts within the allowance and away from leave-camp deadlines and finishes."""
    k = s.turns[seat] + 1
    return s.timeouts[seat] < allowance - 1 and (k < 15 or k > 32) and s.arrived == (0, 0) and s.owe_wait != seat


def _think_ms(rng: random.Random) -> int:
    """Returns a realistic thinking time: mostly a few seconds, rarely close to the 20-second limit."""
    return min(19_000, 1_000 + int(rng.expovariate(1 / 3_500)))

