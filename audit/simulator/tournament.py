"""A whole simulated tournament, recorded through the real recorder as competition software sends it:
registrations, a committed round-1 draw, later rounds seated by the movement rules, duplicate
boards (the same deal at every Paohuzi table), checkers matches that stop once decided, bot games
with timings and claims, round closings, and optionally one planted fault."""

from __future__ import annotations

import dataclasses
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from audit.simulator import faults
from audit.simulator.simulate import START_MS, Progress, SimResult, SimulationRefused, game_start, named_profile, record_events, with_settings
from ledger import Ledger
from replay import seating
from replay.registry import SEATS, engine
from schemas.common import (
    DrawRecord,
    GameEnded,
    GameStarted,
    PlayerRegistered,
    RoundClosed,
    RoundSeated,
    TableSeating,
    TournamentOpened,
    TournamentRules,
)
from schemas.envelope import Event, SeatHolder

FAULTS = faults.FAULTS
Ranker = Callable[[Path, str, int], list[str]]
"""Returns a tournament's players in movement order after a given round."""

DEAL_KINDS = ("paohuzi.board_created", "paohuzi.dealt")
"""The events that carry a Paohuzi deal: where a tampered deck shows."""
ROUND_MS = 6 * 3_600_000
GAME_MS = 3_600_000


@dataclass(frozen=True)
class TournamentPlan:
    """What to simulate: game, field, rounds, boards (or match length) per round, seed, movement
    groups, an optional fault to plant, the named rule profile and settings (`FIELD=VALUE`) of the
    tournament rules or, for a field they lack, of the game's profile."""

    game: str
    players: int
    rounds: int
    games_per_round: int
    seed: int
    group_tables: int | None = None
    inject: str | None = None
    profile_name: str = "default"
    settings: tuple[str, ...] = ()
    withdrawals: tuple[tuple[str, int], ...] = ()
    """Players who leave mid-way (checkers 第十二条) and the first round they do not play: the pairing
    still seats them, and their matches from then on are not played (a ruling awards them)."""

    @property
    def tournament(self) -> str:
        return f"{self.game}-cup-{self.seed}"

    def rules(self) -> TournamentRules:
        """Returns the tournament rules in force: the defaults, the movement groups, then the settings.

        :raises ValueError: for a value the field refuses.
        """
        return with_settings(TournamentRules(group_tables=self.group_tables), [s for s in self.settings if _is_rule(s)])

    def profile(self):  # noqa: ANN201 - the game's profile Struct
        """Returns the rule profile in force: the named profile, a checkers match of
        `games_per_round` base games, then the settings the tournament rules lack.

        :raises ValueError: for an unknown profile name, or a setting no field takes.
        """
        profile = named_profile(self.game, self.profile_name)
        if self.game == "checkers":
            profile = msgspec.structs.replace(profile, match_games=self.games_per_round)
        return with_settings(profile, [s for s in self.settings if not _is_rule(s)])

    def expected_games(self) -> int:
        """Returns how many games the plan plays at most (the progress bar's total)."""
        return self.rounds * self.games_per_round * (self.players // SEATS[self.game])

    def check(self) -> None:
        """Refuses a plan the seating rules cannot serve.

        :raises ValueError: naming the problem.
        """
        seats = SEATS[self.game]
        if self.players % seats and self.game != "checkers":  # an odd checkers field gives a bye each round
            raise ValueError(f"{self.game} seats {seats} players per table: {self.players} players do not fill the tables")
        if self.inject is not None:
            faults.check_fault(self.inject, self.game, self.players // seats, self.rounds)


def _is_rule(setting: str) -> bool:
    """Tells whether a `FIELD=VALUE` setting names a field of the tournament rules (else of the game's profile)."""
    return setting.partition("=")[0] in TournamentRules.__struct_fields__


class TournamentWriter:
    """Writes one tournament's events, keeping the tournament stream's sequence numbers."""

    def __init__(self, ledger: Ledger, plan: TournamentPlan) -> None:
        self.ledger = ledger
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.seq = ledger.next_seq(plan.tournament)
        self.players = [f"P{n:03d}" for n in range(1, plan.players + 1)]
        self.events = 0
        self.games = 0
        self.firsts: dict[str, int] = {p: 0 for p in self.players}
        self.target = random.Random(plan.seed ^ 0x5EED).randrange(plan.expected_games() // max(plan.rounds, 1)) if plan.inject else -1
        self.planted: faults.Planted | None = None
        if self.seq:
            raise SimulationRefused(f"ledger already holds tournament {plan.tournament} ({self.seq} events): a second "
                                    f"simulation would open it again; use another --seed or another --ledger")

    def tournament_event(self, cls: type[Event], ts: int, **fields: Any) -> None:
        """Records one event of the tournament stream."""
        self.events += record_events(self.ledger, [cls(stream=self.plan.tournament, seq=self.seq, ts=ts, **fields)])
        self.seq += 1

    def open(self) -> None:
        """Records the opening and every registration."""
        plan = self.plan
        self.tournament_event(TournamentOpened, START_MS, game=plan.game, name=f"{plan.game} cup {plan.seed}",
                              profile=plan.profile(), format="swiss" if plan.game == "checkers" else "duplicate",
                              rounds=plan.rounds, rules=plan.rules())
        for p in self.players:
            self.tournament_event(PlayerRegistered, START_MS + 1, player=p, name=f"Player {p}")

    def seat_round(self, n: int, tables: list[list[str]], draw: DrawRecord | None, pairing: str | None) -> int:
        """Records a round's seating; returns the round's start time."""
        ts = START_MS + n * ROUND_MS
        gt = self.plan.group_tables
        rows = [TableSeating(table=t + 1, seats=[SeatHolder(seat=s, player=p) for s, p in enumerate(row)],
                             group=t // gt + 1 if gt else None) for t, row in enumerate(tables)]
        self.tournament_event(RoundSeated, ts, round=n, tables=rows, draw=draw, pairing=pairing)
        return ts

    def play(self, start: GameStarted, deck: list[int] | None = None) -> list[Event]:
        """Plays one game with the bots (a Paohuzi board's deck when given), plants the fault in
        the chosen game of round 1, and records it."""
        rng = random.Random(self.rng.getrandbits(64))
        if deck is not None:
            from replay.paohuzi import play_board

            events = play_board(start, deck, rng)
        else:
            events = engine(self.plan.game).bot_game(start, rng)
        if self.games == self.target and self.plan.inject in faults.EVENT_FAULTS:
            events, self.planted = faults.plant(self.plan.inject, events, rng)
        elif self.games == self.target and deck is not None and self.plan.inject == "tampered-deal":
            dealt = next(e for e in events if e.kind in DEAL_KINDS)
            self.planted = faults.Planted("tampered-deal", dealt.stream, dealt.seq)
        self.events += record_events(self.ledger, events)
        self.games += 1
        return events


def tournament_game_start(plan: TournamentPlan, n: int, table: int, game_no: int, row: list[str], first: int, ts: int,
                          board: str) -> GameStarted:
    """Returns the start event of one game of the tournament, under the tournament's profile."""
    return game_start(plan.game, f"{plan.tournament}/r{n}/t{table}/g{game_no}", row, first, ts, plan.profile(),
                      tournament=plan.tournament, round=n, table=table, game_no=game_no, board=board)


def simulate_tournament(root: Path, plan: TournamentPlan, ranker: Ranker, progress: Progress | None = None) -> SimResult:
    """Records a whole duplicate or Swiss tournament.

    :raises ValueError: before writing anything, for a plan the seating rules cannot serve.
    """
    plan.check()
    if plan.game == "checkers" and plan.rounds > plan.players // 2:
        _rehearse(plan, ranker)
    return _play(root, plan, ranker, progress)


def _rehearse(plan: TournamentPlan, ranker: Ranker) -> None:
    """Plays the plan into a scratch ledger first. Up to ⌊players/2⌋ rounds a Swiss pairing without
    repeats always exists (each player has at least half the field left to meet: Dirac's theorem
    gives a perfect matching); beyond that it depends on the results, which only playing shows.

    :raises ValueError: naming the round that cannot be paired (checkers.md §12.2: no repeat pairings).
    """
    from ledger import init

    with tempfile.TemporaryDirectory(prefix="matchledger-rehearsal-") as scratch:
        root = Path(scratch) / "ledger"
        init(root)
        try:
            _play(root, dataclasses.replace(plan, inject=None if plan.inject == "bad-byte" else plan.inject), ranker, None)
        except ValueError as exc:
            raise ValueError(f"{plan.players} players cannot play {plan.rounds} Swiss rounds with seed {plan.seed}: {exc} "
                             f"(checkers.md §12.2: no repeat pairings; {plan.players // 2} rounds can always be paired); "
                             f"nothing was written") from None


def _play(root: Path, plan: TournamentPlan, ranker: Ranker, progress: Progress | None) -> SimResult:
    met: set[frozenset[str]] = set()
    had_bye: set[str] = set()
    with Ledger.open(root) as ledger:
        writer = TournamentWriter(ledger, plan)
        writer.open()
    for n in range(1, plan.rounds + 1):
        ranked = None if n == 1 else ranker(root, plan.tournament, n - 1)
        with Ledger.open(root) as ledger:
            writer.ledger = ledger
            try:
                tables, draw = _seating(plan, writer.players, ranked, met, had_bye)
            except ValueError as exc:
                raise ValueError(f"round {n}: {exc}") from None
            if plan.inject == "wrong-seating" and n == 2:
                tables = faults.misseat(tables)
                writer.planted = faults.Planted("wrong-seating", plan.tournament, writer.seq)
            pairing = seating.pairing_name(plan.rules().swiss_pairing_order) if plan.game == "checkers" and draw is None else None
            ts = writer.seat_round(n, tables, draw, pairing)
            had_bye |= {row[0] for row in tables if len(row) == 1}
            met.update(frozenset((a, b)) for row in tables for a in row for b in row if a < b)
            before = writer.games
            if plan.game == "checkers":
                _play_matches(writer, n, tables, ts, progress)
            else:
                _play_boards(writer, n, tables, ts, progress)
            writer.tournament_event(RoundClosed, ts + ROUND_MS - 1, round=n, games=writer.games - before)
            size = ledger.size
    if plan.inject == "bad-byte":
        writer.planted = faults.Planted("bad-byte", None, None, faults.flip_byte(root, random.Random(plan.seed)))
    return SimResult(writer.games, writer.events, size, plan.tournament, writer.planted)


def _seating(plan: TournamentPlan, players: list[str], ranked: list[str] | None, met: set[frozenset[str]],
             had_bye: set[str]) -> tuple[list[list[str]], DrawRecord | None]:
    seats = SEATS[plan.game]
    if ranked is None:
        seed = f"{plan.tournament}:round-1:{plan.seed}"
        draw = DrawRecord(method=seating.DRAW_METHOD, seed=seed, commitment=seating.commitment(seed))
        return seating.draw_first_round(players, seats, seed), draw
    if plan.game == "checkers":
        return [list(p) for p in seating.swiss_pairs(ranked, met, frozenset(had_bye))], None
    return seating.snake(ranked, seats, plan.group_tables), None


def _play_boards(writer: TournamentWriter, n: int, tables: list[list[str]], ts: int, progress: Progress | None) -> None:
    """Plays the round's boards: the same game number (Junqi) or the same deck (Paohuzi) at every table."""
    plan = writer.plan
    for x in range(1, plan.games_per_round + 1):
        deck = _board_deck(writer.rng) if plan.game == "paohuzi" else None
        first = writer.rng.randrange(SEATS[plan.game])
        for t, row in enumerate(tables, start=1):
            start = tournament_game_start(plan, n, t, x, row, first, ts + x * GAME_MS, f"r{n}-b{x}")
            table_deck = deck
            if deck is not None and plan.inject == "tampered-deal" and writer.games == writer.target:
                table_deck = faults.tamper_deck(deck)
            writer.play(start, table_deck)
            if progress:
                progress(1)


def _play_matches(writer: TournamentWriter, n: int, tables: list[list[str]], ts: int, progress: Progress | None) -> None:
    """Plays each table's checkers match until it is decided, first moves alternating (第二条, 第七条)."""
    from replay.checkers.match import GameResult, game1_first_mover, match_status

    profile = writer.plan.profile()
    for t, row in enumerate(tables, start=1):
        if len(row) == 1:  # the bye (轮空): no match
            continue
        a, b = row
        if any(p in row and n >= r for p, r in writer.plan.withdrawals):
            continue  # a withdrawn player's match is not played (第十二条)
        first = game1_first_mover(profile, (writer.firsts[a], writer.firsts[b]), writer.rng.randrange(2))
        writer.firsts[(a, b)[first]] += 1
        results: list[GameResult] = []
        status = match_status(profile, results, first, knockout=False)
        while status.next is not None:
            x = len(results) + 1
            events = writer.play(tournament_game_start(writer.plan, n, t, x, [a, b], status.next.first, ts + x * GAME_MS, f"r{n}-t{t}"))
            claim = events[-1]
            assert isinstance(claim, GameEnded)
            points = claim.points  # the claim of the bot's own game, as the software would tally it
            results.append(GameResult(status.next.first, (int(2 * points[0]), int(2 * points[1]))))
            status = match_status(profile, results, first, knockout=False)
            if progress:
                progress(1)


def _board_deck(rng: random.Random) -> list[int]:
    from replay.paohuzi.cards import full_deck

    deck = full_deck()
    rng.shuffle(deck)
    return deck
