"""Events and rule profile of 传统1v1跳棋 (see `shared/rules/checkers.md`).

Holes are canonical ids 0–120 (checkers.md §1.1: holes sorted by row, then left to right; 0 is
the top tip, 120 the bottom tip). Seat 0 starts in the north camp, seat 1 in the south camp
(tournament.md §1a); who moves first is named by `game.started`.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.envelope import Event, Seat
from schemas.profiles import Profile

Hole = Annotated[int, msgspec.Meta(ge=0, le=120)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]
AutoCard = Literal["timeout_overflow", "unjustified_pass", "dissolve"]
PassCause = Literal["no_legal_move", "referee", "waiting"]
TieBreak = Literal["PTS", "BH", "PS", "DE", "WINS", "WINRATE", "BH_PREV", "SEED"]


class TimeoutAllowance(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Timeouts allowed per player per game by stage (第四条: early rounds 4, 1/4 and semi-finals 6,
    final and third place 8); the next one is a timing breach."""

    swiss: NonNegative = 4
    qf: NonNegative = 6
    sf: NonNegative = 6
    final: NonNegative = 8
    third: NonNegative = 8


class CheckersProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="checkers"):
    """Rule profile of checkers: every [PARAM] of `shared/rules/checkers.md` (§13 and the sections
    it cites) with its default."""

    # Board and moves (§1.5, §4)
    pieces_per_side: Literal[10] = 10
    hop_mode: Literal["adjacent", "equidistant"] = "adjacent"
    side_triangles: Literal["free", "pass_through_only", "forbidden"] = "free"
    goal_lock: Literal["off", "across_turns", "within_chain"] = "off"
    path_revisit_policy: Literal["warn", "error"] = "warn"
    on_illegal_move: Literal["stop_unverified", "flag_and_apply"] = "stop_unverified"
    # Result (§5)
    margin_model: Literal["timeline", "own_moves", "symmetric"] = "timeline"
    own_moves_equal_result: Literal["second_wins", "draw"] = "second_wins"
    equalizer_source: Literal["log_then_search", "log_only", "search_only"] = "log_then_search"
    double_forfeit: Literal["double_loss", "draw"] = "double_loss"
    max_rounds: PositiveInt | None = None
    implausible_fast_turns: PositiveInt | None = 15
    resign_allowed: bool = True
    agreed_draw: bool = False
    # Time (§6, §6.1)
    stage: Literal["swiss", "qf", "sf", "final", "third"] = "swiss"
    move_time_limit_s: PositiveInt = 20
    timeouts_allowed: TimeoutAllowance = msgspec.field(default_factory=TimeoutAllowance)
    on_timeout: Literal["pass", "auto_move"] = "pass"
    time_tolerance_ms: NonNegative = 1000
    derive_timeouts_from_timestamps: bool = False
    waiting_rule: Literal["flag", "off", "yellow_card"] = "flag"
    # Repetition (§7)
    repetition_count: Annotated[int, msgspec.Meta(ge=2)] = 3
    repetition_key_includes_side_to_move: bool = True
    repetition_trigger: Literal["both_fully_evacuated", "after_round_30", "always"] = "both_fully_evacuated"
    count_before_trigger: bool = False
    repetition_auto: bool = True
    # Passes, disconnects and cards (§8)
    auto_cards: tuple[AutoCard, ...] = ("timeout_overflow", "unjustified_pass", "dissolve")
    # checkers.md §8 lists only "no legal move; referee authorised", but the sheet (第四条) makes a
    # player wait for a timed-out opponent, and §6.1 reads waiting as passing: the seed wins, so a
    # waiting 略过 is justified by default rather than a yellow card under 第十六条(2).
    justified_pass: tuple[PassCause, ...] = ("no_legal_move", "referee", "waiting")
    disconnect_without_dissolve: Literal["flag", "yellow"] = "flag"
    # Leave camp (§9)
    leave_camp_checks: tuple[tuple[PositiveInt, NonNegative], ...] = ((20, 5), (25, 8), (30, 10))
    turn_counter: Literal["turns_incl_passes", "moves_only"] = "turns_incl_passes"
    leave_camp_check_time: Literal["after_own_turn", "end_of_round"] = "after_own_turn"
    both_fail_same_round: Literal["double_loss", "draw"] = "double_loss"
    leave_camp_penalty: Literal["loss", "flag"] = "loss"
    persistent_after_deadline: bool = False
    reentry_own_home_after_deadline: Literal["flag", "allow", "illegal"] = "flag"
    # Walls (§10)
    wall_policy: Literal["flag_only"] = "flag_only"
    wall_cycles: PositiveInt = 3
    wall_test: Literal["at_gate", "stuck_only"] = "at_gate"
    """When a held formation counts as a wall (§10, 第六条 砌双层墙导致对手无法逾越): `at_gate` also asks
    that some of the blocker's pieces stand in front of the victim's target camp and that every
    unfinished piece of the victim wait at that gate; `stuck_only` is the rules file's stuck test
    alone, which holds through most of a middle game."""
    # Matches and stages (§11, §12.7)
    # 第七条 says the rest of a decided match *may* be skipped (可不比); `match.match_status`
    # reports the match decided and the tournament layer stops it there.
    match_games: PositiveInt = 2
    first_move_policy: Literal["swiss_alternate", "match_alternate"] = "swiss_alternate"
    tiebreak_first_mover: Literal["same_as_game1", "lot", "continue"] = "same_as_game1"
    tiebreak_batch_size: PositiveInt = 2
    max_batches: PositiveInt | None = None
    qf_bracket: tuple[tuple[PositiveInt, PositiveInt], ...] = ((1, 8), (4, 5), (2, 7), (3, 6))
    # Swiss standings (§12)
    bye_points: Literal["win", "draw", "loss"] = "win"
    tiebreak_order: tuple[TieBreak, ...] = ("PTS", "BH", "PS", "DE", "WINS", "WINRATE", "BH_PREV", "SEED")
    bh_unplayed: Literal["actual_opponents_only", "fide_2023"] = "actual_opponents_only"
    de_incomplete: Literal["skip", "fide"] = "skip"
    winrate_denominator: Literal["games_played", "rounds"] = "games_played"
    bh_prev: Literal["snapshot", "truncated"] = "snapshot"
    cut_after_round: PositiveInt | None = None
    cut_per_round: PositiveInt | None = None
    cut_keep: PositiveInt | None = None
    dq_past_results: Literal["stand", "void"] = "stand"


class Moved(Event, frozen=True, kw_only=True, tag="checkers.moved"):
    """The acting seat moves its piece on `from` to `to` (one step, or a chain of hops); `path`
    is the optional witness from `from` to `to` inclusive, and `system` marks a move the
    platform made for a timed-out player (`on_timeout = auto_move`)."""

    seat: Seat
    from_: Hole = msgspec.field(name="from")
    to: Hole
    path: tuple[Hole, ...] | None = None
    system: bool = False


EVENTS: tuple[type[Event], ...] = (Moved,)
