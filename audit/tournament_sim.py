"""A whole simulated tournament, recorded through the real recorder as competition software sends it:
registrations, a committed round-1 draw, later rounds seated by the movement rules, duplicate
boards (the same deal at every Paohuzi table), bot games with timings and claims, round closings."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from audit import seating
from audit.simulate import SEATS, START_MS, Progress, default_profile, record_events
from ledger.store import Ledger
from replay.registry import engine
from schemas.common import (
    DrawRecord, GameStarted, PlayerRegistered, RoundClosed, RoundSeated, TableSeating, TournamentOpened, TournamentRules,
)
from schemas.envelope import Event, SeatHolder

Ranker = Callable[[Path, str, int], list[str]]
"""Returns a tournament's players in rank order after a given round (the movement ranking)."""

ROUND_MS = 4 * 3_600_000


@dataclass(frozen=True)
class TournamentPlan:
    """What to simulate."""

    game: str
    players: int
    rounds: int
    games_per_round: int
    seed: int
    group_tables: int | None = None

    @property
    def tournament(self) -> str:
        return f"{self.game}-cup-{self.seed}"


class TournamentWriter:
    """Writes one tournament's events, keeping the tournament stream's sequence numbers."""

    def __init__(self, ledger: Ledger, plan: TournamentPlan) -> None:
        self.ledger = ledger
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.seq = ledger.next_seq(plan.tournament)
        self.players = [f"P{n:03d}" for n in range(1, plan.players + 1)]

    def tournament_event(self, cls: type[Event], ts: int, **fields: object) -> None:
        """Records one event of the tournament stream."""
        record_events(self.ledger, [cls(stream=self.plan.tournament, seq=self.seq, ts=ts, **fields)])
        self.seq += 1

    def open(self) -> None:
        """Records the opening and every registration."""
        plan = self.plan
        fmt = "swiss" if plan.game == "checkers" else "duplicate"
        self.tournament_event(TournamentOpened, START_MS, game=plan.game, name=f"{plan.game} cup {plan.seed}",
                              profile=default_profile(plan.game), format=fmt, rounds=plan.rounds,
                              rules=TournamentRules(group_tables=plan.group_tables))
        for p in self.players:
            self.tournament_event(PlayerRegistered, START_MS + 1, player=p, name=f"Player {p}")

    def seat_round(self, n: int, tables: list[list[str]], draw: DrawRecord | None) -> int:
        """Records a round's seating; returns the round's start time."""
        ts = START_MS + n * ROUND_MS
        rows = [TableSeating(table=t + 1, seats=[SeatHolder(seat=s, player=p) for s, p in enumerate(row)],
                             group=t // self.plan.group_tables + 1 if self.plan.group_tables else None)
                for t, row in enumerate(tables)]
        self.tournament_event(RoundSeated, ts, round=n, tables=rows, draw=draw)
        return ts

    def play(self, start: GameStarted, deck: list[int] | None = None) -> list[Event]:
        """Plays one game with the bots (a Paohuzi board's deck when given) and records it."""
        rng = random.Random(self.rng.getrandbits(64))
        if deck is not None:
            from replay.paohuzi import play_board

            events = play_board(start, deck, rng)
        else:
            events = engine(self.plan.game).bot_game(start, rng)
        record_events(self.ledger, events)
        return events


def game_start(plan: TournamentPlan, n: int, table: int, game_no: int, row: list[str], first: int, ts: int, board: str) -> GameStarted:
    """Returns the start event of one game of the tournament."""
    return GameStarted(stream=f"{plan.tournament}/r{n}/t{table}/g{game_no}", seq=0, ts=ts, profile=default_profile(plan.game),
                       seats=[SeatHolder(seat=s, player=p) for s, p in enumerate(row)], first=first,
                       tournament=plan.tournament, round=n, table=table, game_no=game_no, board=board)


def simulate_tournament(root: Path, plan: TournamentPlan, ranker: Ranker, progress: Progress | None = None) -> int:
    """Records a whole duplicate or Swiss tournament; returns the number of games played."""
    played = 0
    met: set[frozenset[str]] = set()
    with Ledger.open(root) as ledger:
        writer = TournamentWriter(ledger, plan)
        writer.open()
    for n in range(1, plan.rounds + 1):
        ranked = None if n == 1 else ranker(root, plan.tournament, n - 1)
        with Ledger.open(root) as ledger:
            writer.ledger = ledger
            tables, draw = _seating(plan, writer.players, ranked, met, n)
            ts = writer.seat_round(n, tables, draw)
            for t, row in enumerate(tables, start=1):
                met.update(frozenset((a, b)) for a in row for b in row if a < b)
            played += _play_round(writer, n, tables, ts, progress)
            writer.tournament_event(RoundClosed, ts + ROUND_MS - 1, round=n, games=played)
    return played


def _seating(plan: TournamentPlan, players: list[str], ranked: list[str] | None, met: set[frozenset[str]], n: int) -> tuple[list[list[str]], DrawRecord | None]:
    seats = SEATS[plan.game]
    if ranked is None:
        seed = f"{plan.tournament}:round-1:{plan.seed}"
        draw = DrawRecord(method=seating.DRAW_METHOD, seed=seed, commitment=seating.commitment(seed))
        return seating.draw_first_round(players, seats, seed), draw
    if plan.game == "checkers":
        return [list(p) for p in seating.swiss_pairs(ranked, met)], None
    return seating.snake(ranked, seats, plan.group_tables), None


def _play_round(writer: TournamentWriter, n: int, tables: list[list[str]], ts: int, progress: Progress | None) -> int:
    plan = writer.plan
    played = 0
    for x in range(1, plan.games_per_round + 1):
        board = f"r{n}-b{x}"
        deck = _board_deck(writer.rng) if plan.game == "paohuzi" else None
        first = writer.rng.randrange(SEATS[plan.game]) if plan.game != "checkers" else (x - 1) % 2
        for t, row in enumerate(tables, start=1):
            start = game_start(plan, n, t, x, row, first, ts + x * 3_600_000 // plan.games_per_round, board)
            writer.play(start, deck)
            played += 1
            if progress:
                progress(1)
    return played


def _board_deck(rng: random.Random) -> list[int]:
    from replay.paohuzi.cards import full_deck

    deck = full_deck()
    rng.shuffle(deck)
    return deck
