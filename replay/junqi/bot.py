"""The seeded bot: legal, varied layouts and purposeful moves (take the flag, win fights, guard its
own flag, run engineers on the rails at mines), with realistic move times.

The bot sees every piece (it simulates games for tests and demos; it is no opponent model), but
each seat gets its own temper so games end by flag capture, elimination or the draw rules.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from replay.junqi.board import arm_point, distances
from replay.junqi.moves import legal_moves
from replay.junqi.pieces import BOMB, ENGINEER, FLAG, MINE, combat, kind_of, seat_of
from replay.junqi.rules import draw_voters, offer_draw, pass_turn, vote_draw
from replay.junqi.state import JunqiState, Layout, Move, is_enemy, point_name
from schemas.common import DrawAnswered, DrawOffered, GameEnded, GameStarted, MoveTimeUsed, TimedOut
from schemas.envelope import Event
from schemas.junqi import FlagRevealed

VALUE = (1000, 6, 9, 4, 2, 3, 4, 5, 6, 8, 11, 15)
"""Worth of each kind to the bot: flag, mine, bomb, then 工兵 … 司令."""
COLOURS = (("红", "绿", "蓝", "黑"), ("绿", "红", "黑", "蓝"))


class _Engine(Protocol):
    def apply_action(self, state: Any, action: Any) -> Any: ...
    def new_initial_state(self, start: GameStarted) -> Any: ...
    def to_event(self, state: Any, action: Any, *, stream: str, seq: int, ts: int) -> Event: ...


def random_layout(seat: int, rng: random.Random, colour: str | None = None) -> Layout:
    """Returns a legal random layout: flag in an HQ, mines mostly round it, bombs behind the front."""
    posts = [(r, c) for r in range(1, 7) for c in range(1, 6) if (r, c) not in ((2, 2), (2, 4), (3, 3), (4, 2), (4, 4))]
    flag = rng.choice([(6, 2), (6, 4)])
    free = [p for p in posts if p != flag]
    back = [p for p in free if p[0] >= 5]
    # Guards first: the points next to the flag, then the rest of the back rows.
    near = [p for p in back if abs(p[0] - flag[0]) + abs(p[1] - flag[1]) == 1]
    pool = near + rng.sample([p for p in back if p not in near], len(back) - len(near))
    mines = rng.sample(pool[:4], 2) + [rng.choice(pool[4:])] if rng.random() < 0.7 else rng.sample(back, 3)
    free = [p for p in free if p not in mines]
    bombs = rng.sample([p for p in free if p[0] >= 2], 2)
    free = [p for p in free if p not in bombs]
    rng.shuffle(free)
    others = [k for k in range(ENGINEER, 12) for _ in range((3, 3, 3, 2, 2, 2, 2, 1, 1)[k - ENGINEER])]
    cells = [(flag, FLAG)] + [(p, MINE) for p in mines] + [(p, BOMB) for p in bombs] + list(zip(free, others))
    placements = tuple(sorted((arm_point(seat, r, c), k) for (r, c), k in cells))
    return Layout(seat, placements, colour)


def choose_move(state: JunqiState, seat: int, rng: random.Random, temper: float) -> Move:
    """Picks a move: the best by a light evaluation plus noise, or now and then any legal move."""
    moves = legal_moves(state, seat)
    if rng.random() < 0.04:
        return rng.choice(moves)
    dist = distances()
    cells = state.board
    flags = [p for p, v in enumerate(cells) if v and kind_of(v) == FLAG]
    targets = [p for p in flags if is_enemy(seat, seat_of(cells[p]))]
    own_flag = next((p for p in flags if seat_of(cells[p]) == seat), None)
    best, best_score = moves[0], -1e9
    for move in moves:
        score = _score(state, move, targets, own_flag, dist, temper) + rng.gauss(0, 1.5)
        if score > best_score:
            best, best_score = move, score
    return best


def _score(state: JunqiState, move: Move, targets: list[int], own_flag: int | None,
           dist: tuple[tuple[int, ...], ...], temper: float) -> float:
    cells, profile = state.board, state.profile
    frm, to = move
    mover, target = cells[frm], cells[to]
    akind = kind_of(mover)
    score = 0.0
    if target:
        dkind = kind_of(target)
        result = combat(akind, dkind, profile.mine_vs_officer, profile.bomb_vs_flag)
        gain = VALUE[dkind] if result in ("win", "both") else 0
        loss = VALUE[akind] if result in ("lose", "both") else 0
        guard = 3.0 if own_flag is not None and dist[own_flag][to] <= 2 else 1.0
        score += guard * gain - loss * (1.6 - temper * 0.5) + 0.5
    if targets:
        near = min(targets, key=lambda p: dist[frm][p])
        score += temper * (dist[frm][near] - dist[to][near]) * (1.2 if akind != ENGINEER else 0.5)
    if own_flag is not None and akind >= 9 and dist[frm][own_flag] <= 2 and dist[to][own_flag] > 2:
        score -= 1.5  # big pieces keep guarding the flag while enemies are near
    return score


class _Recorder:
    """Appends events with dense sequence numbers and a running clock."""

    def __init__(self, start: GameStarted) -> None:
        self.stream = start.stream
        self.events: list[Event] = [start]
        self.ts = start.ts
        self.turn_end = start.ts

    def add(self, kind: type[Event], **fields: Any) -> Event:
        event = kind(stream=self.stream, seq=len(self.events), ts=self.ts, **fields)
        self.events.append(event)
        return event


def bot_game(engine: _Engine, start: GameStarted, rng: random.Random) -> list[Event]:
    """Plays a whole game: layouts, moves with move-time events, 亮旗, now and then a timeout or a
    draw offer, and the final claim."""
    state: JunqiState = engine.new_initial_state(start)
    rec = _Recorder(start)
    colours = rng.choice(COLOURS)
    for seat in rng.sample(range(4), 4):
        rec.ts += rng.randint(5_000, 60_000)
        layout = random_layout(seat, rng, colours[seat])
        rec.turn_end = rec.ts
        rec.events.append(engine.to_event(state, layout, stream=rec.stream, seq=len(rec.events), ts=rec.ts))
        state = engine.apply_action(state, layout)
    tempers = [rng.uniform(0.4, 1.0) for _ in range(4)]
    limit = state.profile.move_time_limit_s
    cap = min(30_000, limit * 1000) if limit is not None else 30_000
    while state.outcome is None:
        roll = rng.random()
        if roll < 0.004:
            state = _time_out(state, rec, 60_000 if limit is None else limit * 1000)
        elif roll < 0.05 and state.quiet >= 15 and cap >= 15_000 and _may_offer(state):
            state = _offer_draw(state, rec, rng)
        if state.outcome is None:
            state = _move(engine, state, rec, rng, tempers, cap)
    outcome = state.outcome
    rec.ts += 500
    rec.add(GameEnded, termination=outcome.termination, winners=list(outcome.winners),
            points=[int(p) for p in outcome.points])
    return rec.events


def _move(engine: _Engine, state: JunqiState, rec: _Recorder, rng: random.Random, tempers: list[float], cap: int) -> JunqiState:
    """Plays one move with its move-time event and any 亮旗 it causes."""
    seat = state.to_move
    move = choose_move(state, seat, rng, tempers[seat])
    spent = rec.ts - rec.turn_end  # a draw offer earlier in this turn already took time
    rec.ts += max(500, min(cap - spent, 1_000 + int(rng.expovariate(1 / 5_000))))
    ms, rec.turn_end = rec.ts - rec.turn_end, rec.ts
    event = engine.to_event(state, move, stream=rec.stream, seq=len(rec.events), ts=rec.ts)
    rec.events.append(event)
    before = state.revealed
    state = engine.apply_action(state, move)
    rec.add(MoveTimeUsed, seat=seat, ms=ms, move_seq=event.seq)
    for owner in range(4):
        if state.revealed[owner] and not before[owner]:
            flag = next((p for p, v in enumerate(state.board) if v and kind_of(v) == FLAG and seat_of(v) == owner), None)
            if flag is not None:
                rec.add(FlagRevealed, owner=owner, point=point_name(flag, state.profile))
    return state


def _time_out(state: JunqiState, rec: _Recorder, wait: int) -> JunqiState:
    """The seat to move lets its clock run out (超时): the turn passes (§7.5)."""
    seat = state.to_move
    rec.ts += wait
    rec.turn_end = rec.ts
    event = rec.add(TimedOut, seat=seat)
    rec.add(MoveTimeUsed, seat=seat, ms=wait, move_seq=event.seq)
    return pass_turn(state, seat, timeout=True)


def _may_offer(state: JunqiState) -> bool:
    """Tells whether the profile allows another draw offer now (§8.4)."""
    p = state.profile
    return state.step >= p.draw_min_step and (p.max_draw_offers is None or state.draw_offers < p.max_draw_offers)


def _offer_draw(state: JunqiState, rec: _Recorder, rng: random.Random) -> JunqiState:
    """The seat to move offers a draw (提和); the other voters answer until one declines. It all
    happens inside the offering seat's turn (at most 7.5 s; offers need a clock of 15 s or more)."""
    seat = state.to_move
    rec.ts += rng.randint(1_000, 3_000)
    rec.add(DrawOffered, seat=seat)
    state = offer_draw(state, seat)
    for voter in sorted(draw_voters(state) - {seat}):
        if state.outcome is not None:
            break
        accept = rng.random() < 0.5 + state.quiet / 100  # the longer nothing happens, the likelier
        rec.ts += rng.randint(300, 1_500)
        rec.add(DrawAnswered, seat=voter, accept=accept)
        state = vote_draw(state, voter, accept)
        if not accept:
            break
    return state
