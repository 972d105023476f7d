"""Matches of checkers as pure functions for the tournament layer (checkers.md §8, §11, §12.7):
who moves first in each game (第二条), when a match of up to K games is decided (第七条), knockout
tie-break batches, round points (第十八条(4)), the timeout allowance of a stage (第四条), breaks
(第十条) and withdrawal (第十二条).

The two players of a match are 0 (`a`, the higher seed) and 1 (`b`). Game points are counted in
half points (win 2, draw 1, loss 0) so that no float is ever compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

from schemas.checkers import CheckersProfile

Stage = Literal["swiss", "qf", "sf", "final", "third"]
BREAK_MS: Final[int] = 5 * 60 * 1000
"""第十条: a break lasts 5 minutes, and a player must be at the table within 5 minutes of the
referee's start signal."""


class GameResult(NamedTuple):
    """One finished game of a match: who moved first and each player's half points (2/1/0)."""

    first: int
    half_points: tuple[int, int]


class NextGame(NamedTuple):
    """The next game of an undecided match: its batch (0 = the base games), its number in the
    batch (1-based) and the player who moves first."""

    batch: int
    game: int
    first: int


class MatchStatus(NamedTuple):
    """Where a match stands: whether it is decided, the winner (None for a drawn match), the half
    points so far, and the next game when it goes on."""

    decided: bool
    winner: int | None
    half_points: tuple[int, int]
    next: NextGame | None


def timeout_allowance(profile: CheckersProfile, stage: Stage | None = None) -> int:
    """Returns the timeouts a player may have per game at a stage (第四条: 4, 6 or 8); the stage
    defaults to the profile's."""
    return getattr(profile.timeouts_allowed, stage or profile.stage)  # type: ignore[no-any-return]


def game1_first_mover(profile: CheckersProfile, firsts_so_far: tuple[int, int], lot: int) -> int:
    """Returns who moves first in a match's first game (第二条 and §11 `first_move_policy`):
    `swiss_alternate` gives it to the player who has moved first less often in earlier rounds
    (the lot breaks a tie); `match_alternate` draws it by lot every match."""
    if profile.first_move_policy == "swiss_alternate" and firsts_so_far[0] != firsts_so_far[1]:
        return 0 if firsts_so_far[0] < firsts_so_far[1] else 1
    return lot


def match_status(profile: CheckersProfile, results: list[GameResult], game1_first: int, *, knockout: bool,
                 lots: Mapping[int, int] | None = None) -> MatchStatus:
    """Returns the state of a match after its games so far: up to `match_games` base games that
    stop once decided (第七条); a tied Swiss match is drawn (第十八条(1)b: no tie-break games); a
    tied knockout match goes on in batches of `tiebreak_batch_size`, each stopping once decided,
    and after `max_batches` in single sudden-death games. First moves alternate within the base
    games and within each batch, restarting per batch (第二条) as `tiebreak_first_mover` says;
    `lots` gives the drawn first mover of each batch when that setting is `lot`.

    :raises KeyError: when a batch needs a lot that `lots` does not give.
    """
    total = _sum(results)
    base = profile.match_games
    base_score = _sum(results[:base])
    if len(results) <= base:
        if _decided(base_score, base - len(results)):
            return MatchStatus(True, _leader(base_score), total, None)
        if len(results) < base:
            return MatchStatus(False, None, total, NextGame(0, len(results) + 1, _alternate(game1_first, len(results))))
        if not knockout:
            return MatchStatus(True, _leader(base_score), total, None)
    return _tiebreak_status(profile, results, game1_first, lots or {})


def _tiebreak_status(profile: CheckersProfile, results: list[GameResult], game1_first: int,
                     lots: Mapping[int, int]) -> MatchStatus:
    """Follows the tie-break batches of a knockout match tied after its base games (§12.7)."""
    size = profile.tiebreak_batch_size
    played = results[profile.match_games:]
    consumed = profile.match_games
    batch = 1
    while True:
        sudden = profile.max_batches is not None and batch > profile.max_batches
        length = 1 if sudden else size
        games = played[:length]
        score = _sum(games)
        if _decided(score, length - len(games)) or (len(games) == length and score[0] != score[1]):
            return MatchStatus(True, _leader(score), _sum(results), None)
        if len(games) < length:
            first = _batch_first(profile, results, game1_first, batch, lots, sudden, consumed)
            return MatchStatus(False, None, _sum(results), NextGame(batch, len(games) + 1, _alternate(first, len(games))))
        played = played[length:]
        consumed += length
        batch += 1


def _batch_first(profile: CheckersProfile, results: list[GameResult], game1_first: int, batch: int,
                 lots: Mapping[int, int], sudden: bool, games_before: int) -> int:
    """Returns who moves first in a batch's first game (第二条: 视为不同批次的加赛，不做连贯交替);
    sudden-death games simply keep alternating."""
    if sudden or profile.tiebreak_first_mover == "continue":
        return 1 - results[games_before - 1].first
    if profile.tiebreak_first_mover == "lot":
        return lots[batch]
    return game1_first


def round_points(status: MatchStatus) -> tuple[int, int]:
    """Returns the round points of a decided match in half points: win 2, draw 1, loss 0 (第十八条(4))."""
    if not status.decided:
        raise ValueError("the match is not decided yet")
    if status.winner is None:
        return (1, 1)
    return (2, 0) if status.winner == 0 else (0, 2)


def _sum(results: list[GameResult]) -> tuple[int, int]:
    return sum(r.half_points[0] for r in results), sum(r.half_points[1] for r in results)


def _decided(score: tuple[int, int], games_left: int) -> bool:
    """Tells whether the games left (2 half points each) can no longer change the leader."""
    return abs(score[0] - score[1]) > 2 * games_left


def _leader(score: tuple[int, int]) -> int | None:
    return None if score[0] == score[1] else (0 if score[0] > score[1] else 1)


def _alternate(first: int, games_before: int) -> int:
    return first if games_before % 2 == 0 else 1 - first


def quarterfinal_pairs(ranking: list[str], profile: CheckersProfile) -> list[tuple[str, str]]:
    """Returns the quarter-final pairs from a Swiss ranking by the profile's bracket (§11: 1–8, 4–5, 2–7, 3–6)."""
    return [(ranking[a - 1], ranking[b - 1]) for a, b in profile.qf_bracket]


class BreakRecord(NamedTuple):
    """A break a player took (第十条): in which base match or tie-break batch (0 = base games),
    whether the current game had ended when it was asked, the referee's start signal and when the
    player sat down again (ms)."""

    player: str
    match: str
    batch: int
    game_ended: bool
    signal_ts: int
    seated_ts: int


class BreakViolation(NamedTuple):
    """A break that breaks 第十条, a yellow card under 第十六条(4)."""

    player: str
    match: str
    reason: str
    article: str = "第十条"


def break_violations(breaks: list[BreakRecord]) -> list[BreakViolation]:
    """Returns every break that breaks 第十条: a second break in one base match, a break in
    tie-break games, a break asked before the game ended, a return more than 5 minutes after the
    start signal."""
    out = []
    taken: set[tuple[str, str]] = set()
    for b in breaks:
        if b.batch > 0:
            out.append(BreakViolation(b.player, b.match, "no break is allowed in tie-break games"))
        elif (b.player, b.match) in taken:
            out.append(BreakViolation(b.player, b.match, "a second break in the same base match"))
        taken.add((b.player, b.match))
        if not b.game_ended:
            out.append(BreakViolation(b.player, b.match, "the break was taken before the current game ended"))
        if b.seated_ts - b.signal_ts > BREAK_MS:
            late = (b.seated_ts - b.signal_ts) / 1000
            out.append(BreakViolation(b.player, b.match, f"back at the table {late:.0f} s after the start signal, over 300 s"))
    return out


class ScheduledMatch(NamedTuple):
    """A match of the event's schedule: round, players, and whether it has been played."""

    round: int
    a: str
    b: str
    played: bool


class Forfeit(NamedTuple):
    """A match awarded without play (第十二条: 未赛场次均判对手胜): winner 2 half points, loser 0."""

    round: int
    winner: str
    loser: str
    half_points: tuple[int, int] = (2, 0)
    article: str = "第十二条"


def withdrawal_forfeits(schedule: list[ScheduledMatch], withdrawn: str) -> list[Forfeit]:
    """Returns the forfeits of a player who leaves mid-way: matches played stand, every match not
    yet played is awarded to the opponent (第十二条)."""
    return [Forfeit(m.round, m.b if m.a == withdrawn else m.a, withdrawn)
            for m in schedule if not m.played and withdrawn in (m.a, m.b)]
