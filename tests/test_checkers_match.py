"""Matches as pure functions (checkers.md §8, §11, §12.7): first moves (第二条), matches of up to
K games that stop once decided (第七条), knockout tie-break batches, round points (第十八条(4)),
timeout allowance by stage (第四条), breaks (第十条) and withdrawal (第十二条)."""

from __future__ import annotations

import pytest

from replay.checkers.match import (
    BreakRecord,
    GameResult,
    NextGame,
    ScheduledMatch,
    break_violations,
    game1_first_mover,
    match_status,
    quarterfinal_pairs,
    round_points,
    timeout_allowance,
    withdrawal_forfeits,
)
from schemas.checkers import CheckersProfile

WIN_A, WIN_B, DRAW = (2, 0), (0, 2), (1, 1)


def _games(first: int, *points: tuple[int, int]) -> list[GameResult]:
    """Returns games with first moves alternating from `first`."""
    return [GameResult(first if i % 2 == 0 else 1 - first, p) for i, p in enumerate(points)]


@pytest.mark.parametrize(
    ("k", "points", "knockout", "decided", "winner", "next_game"),
    [
        (2, [], False, False, None, NextGame(0, 1, 0)),
        (2, [WIN_A], False, False, None, NextGame(0, 2, 1)),
        (2, [WIN_A, DRAW], False, True, 0, None),
        (2, [WIN_A, WIN_B], False, True, None, None),
        (3, [WIN_A, WIN_A], False, True, 0, None),
        (3, [WIN_A, DRAW], False, False, None, NextGame(0, 3, 0)),
        (4, [WIN_B, WIN_B, DRAW], False, True, 1, None),
    ],
    ids=["start", "after-one", "decided-after-two", "swiss-drawn", "k3-stops-early", "k3-goes-on", "k4-stops-after-3"],
)
def test_match_of_up_to_k_games_stops_once_decided(k: int, points: list[tuple[int, int]], knockout: bool, decided: bool,
                                                   winner: int | None, next_game: NextGame | None) -> None:
    """第七条: 若每场上限盘数内可分出胜负，余下的盘数可不比; first moves alternate (第二条)."""
    status = match_status(CheckersProfile(match_games=k), _games(0, *points), 0, knockout=knockout)
    assert (status.decided, status.winner, status.next) == (decided, winner, next_game)


@pytest.mark.parametrize(
    ("setting", "points", "next_game"),
    [
        ("same_as_game1", [WIN_A, WIN_B], NextGame(1, 1, 0)),
        ("same_as_game1", [WIN_A, WIN_B, DRAW], NextGame(1, 2, 1)),
        ("same_as_game1", [WIN_A, WIN_B, DRAW, DRAW], NextGame(2, 1, 0)),
        ("continue", [WIN_A, WIN_B], NextGame(1, 1, 0)),
        ("continue", [WIN_A, WIN_B, DRAW, DRAW], NextGame(2, 1, 0)),
        ("lot", [WIN_A, WIN_B], NextGame(1, 1, 1)),
    ],
    ids=["batch-1", "batch-1-game-2", "batch-2-restarts", "continue", "continue-batch-2", "lot"],
)
def test_knockout_tie_break_batches_restart_the_alternation(setting: str, points: list[tuple[int, int]], next_game: NextGame) -> None:
    """第二条: alternation in the base games and in every tie-break batch, restarting per batch
    (加赛2盘未果后再加赛2盘，视为不同批次的加赛，不做连贯交替); §11 `tiebreak_first_mover`."""
    profile = CheckersProfile(tiebreak_first_mover=setting)  # type: ignore[arg-type]
    status = match_status(profile, _games(0, *points), 0, knockout=True, lots={1: 1})
    assert status.next == next_game and not status.decided


def test_tie_break_batch_decides_and_sudden_death_follows_max_batches() -> None:
    """§12.7: a batch decides the knockout match; after `max_batches` single games decide."""
    profile = CheckersProfile(max_batches=1)
    decided = match_status(profile, _games(0, WIN_A, WIN_B, WIN_B, DRAW), 0, knockout=True)
    assert (decided.decided, decided.winner, decided.half_points) == (True, 1, (3, 5))
    sudden = match_status(profile, _games(0, WIN_A, WIN_B, DRAW, DRAW), 0, knockout=True)
    assert sudden.next == NextGame(2, 1, 0)
    over = match_status(profile, _games(0, WIN_A, WIN_B, DRAW, DRAW, WIN_A), 0, knockout=True)
    assert (over.decided, over.winner) == (True, 0)
    assert round_points(over) == (2, 0) and round_points(match_status(CheckersProfile(), _games(0, DRAW, DRAW), 0, knockout=False)) == (1, 1)


def test_first_mover_of_game_1() -> None:
    """§11 `first_move_policy`: swiss_alternate balances first moves over rounds; match_alternate draws."""
    assert game1_first_mover(CheckersProfile(), (2, 1), lot=0) == 1
    assert game1_first_mover(CheckersProfile(), (1, 1), lot=1) == 1
    assert game1_first_mover(CheckersProfile(first_move_policy="match_alternate"), (2, 1), lot=0) == 0


@pytest.mark.parametrize(("stage", "allowed"), [("swiss", 4), ("qf", 6), ("sf", 6), ("final", 8), ("third", 8)])
def test_timeout_allowance_of_each_stage(stage: str, allowed: int) -> None:
    """第四条: 赛程前期 4, 1/4决赛、半决赛 6, 决赛（含季军赛）8."""
    assert timeout_allowance(CheckersProfile(), stage) == allowed  # type: ignore[arg-type]
    assert timeout_allowance(CheckersProfile(stage=stage)) == allowed  # type: ignore[arg-type]


def test_break_violations() -> None:
    """第十条: one 5-minute break per base match after the game ends, none in tie-break games,
    back at the table within 5 minutes of the start signal; each breach is a yellow card (第十六条(4))."""
    breaks = [
        BreakRecord("A", "r1", 0, True, 1_000, 200_000),
        BreakRecord("A", "r1", 0, True, 500_000, 650_000),
        BreakRecord("B", "r1", 1, True, 0, 1_000),
        BreakRecord("C", "r2", 0, False, 0, 1_000),
        BreakRecord("D", "r2", 0, True, 0, 301_000),
    ]
    assert [(v.player, v.reason) for v in break_violations(breaks)] == [
        ("A", "a second break in the same base match"),
        ("B", "no break is allowed in tie-break games"),
        ("C", "the break was taken before the current game ended"),
        ("D", "back at the table 301 s after the start signal, over 300 s"),
    ]


def test_withdrawal_awards_unplayed_matches_to_the_opponents() -> None:
    """第十二条: 中途退出比赛者，已赛场次均有效，未赛场次均判对手胜."""
    schedule = [ScheduledMatch(1, "A", "B", True), ScheduledMatch(2, "C", "A", False), ScheduledMatch(3, "A", "D", False),
                ScheduledMatch(3, "B", "C", False)]
    assert [(f.round, f.winner, f.loser) for f in withdrawal_forfeits(schedule, "A")] == [(2, "C", "A"), (3, "D", "A")]


def test_quarterfinal_bracket() -> None:
    """§11: quarter-finals 1–8, 4–5, 2–7, 3–6 from the Swiss ranking."""
    ranking = [f"P{i}" for i in range(1, 9)]
    assert quarterfinal_pairs(ranking, CheckersProfile()) == [("P1", "P8"), ("P4", "P5"), ("P2", "P7"), ("P3", "P6")]
