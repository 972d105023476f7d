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
from replay.junqi.state import JunqiState, Layout, Move, is_enemy, point_name
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
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


def bot_game(engine: _Engine, start: GameStarted, rng: random.Random) -> list[Event]:
    """Plays a whole game: layouts, moves with move-time events, 亮旗 and the final claim."""
    state: JunqiState = engine.new_initial_state(start)
    events: list[Event] = [start]
    ts = start.ts
    colours = rng.choice(COLOURS)
    for seat in rng.sample(range(4), 4):
        ts += rng.randint(5_000, 60_000)
        layout = random_layout(seat, rng, colours[seat])
        events.append(engine.to_event(state, layout, stream=start.stream, seq=len(events), ts=ts))
        state = engine.apply_action(state, layout)
    tempers = [rng.uniform(0.4, 1.0) for _ in range(4)]
    limit = state.profile.move_time_limit_s
    cap = min(30_000, limit * 1000) if limit is not None else 30_000
    while state.outcome is None:
        seat = state.to_move
        move = choose_move(state, seat, rng, tempers[seat])
        ms = min(cap, 1_000 + int(rng.expovariate(1 / 5_000)))
        ts += ms
        event = engine.to_event(state, move, stream=start.stream, seq=len(events), ts=ts)
        events.append(event)
        before = state.revealed
        state = engine.apply_action(state, move)
        events.append(MoveTimeUsed(stream=start.stream, seq=len(events), ts=ts, seat=seat, ms=ms, move_seq=event.seq))
        for owner in range(4):
            if state.revealed[owner] and not before[owner]:
                flag = next((p for p, v in enumerate(state.board) if v and kind_of(v) == FLAG and seat_of(v) == owner), None)
                if flag is not None:
                    events.append(_reveal(start.stream, len(events), ts, owner, flag, state))
    outcome = state.outcome
    events.append(GameEnded(stream=start.stream, seq=len(events), ts=ts + 500, termination=outcome.termination,
                            winners=list(outcome.winners), points=[int(p) for p in outcome.points]))
    return events


def _reveal(stream: str, seq: int, ts: int, owner: int, flag: int, state: JunqiState) -> FlagRevealed:
    return FlagRevealed(stream=stream, seq=seq, ts=ts, owner=owner, point=point_name(flag, state.profile))
