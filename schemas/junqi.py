"""Events and rule profile of junqi (see `shared/rules/junqi.md`).

Points are written in the notation of junqi.md §2.3: an arm point is `<seat><row><col>` (`S62` is
seat S's left HQ, rows counted from the front row, columns from the owner's left unless the
profile's `official_col_origin` says otherwise), a 九宫 point is `C` plus a compass direction
(`CC`, `CNW`, `CSE` …). Pieces are named by their Chinese names (§4.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec

from schemas.envelope import Event, Seat
from schemas.profiles import Profile

POINT_IDS = (*(f"{side}{row}{col}" for side in "SWNE" for row in range(1, 7) for col in range(1, 6)),
             *(f"C{where}" for where in ("NW", "NE", "SW", "SE", "N", "S", "W", "E", "C")))
"""Every well-formed point name: `[SWNE][1-6][1-5]` and the nine `C…` points. Whether the point
exists on the board in force is the engine's question (L01)."""
if TYPE_CHECKING:
    PointId = str
else:
    # An enum rather than a regex: msgspec checks it with one hash lookup, which matters because
    # every Junqi move carries two points and an audit decodes millions of them.
    PointId = Literal[POINT_IDS]
PieceName = Literal["军旗", "地雷", "炸弹", "工兵", "排长", "连长", "营长", "团长", "旅长", "师长", "军长", "司令"]
Colour = Literal["红", "蓝", "绿", "黑"]
CombatResult = Literal["move", "win", "lose", "both"]
"""The public combat outcome of a move (QQ's four classes): no contact, the attacker wins, the
attacker is removed, both are removed."""
NonNegative = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class GamePoints(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Game points per player for a win, a draw and a loss (第十条: 5 / 3 / 1)."""

    win: int = 5
    draw: int = 3
    loss: int = 1


class JunqiProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="junqi"):
    """Rule profile of junqi: every [PARAM] of `shared/rules/junqi.md` (§12, §8.4) with its default."""

    turn_direction: Literal["clockwise", "counterclockwise"] = "clockwise"
    first_seat: Literal["from_log"] | Seat = "from_log"
    official_col_origin: Literal["owner_left", "owner_right"] = "owner_left"
    arcs_present: bool = True
    arc_model: Literal["diagonal_bypass", "through_centre_corner"] = "diagonal_bypass"
    arc_straight_for_non_engineer: bool = True
    mine_vs_officer: Literal["mine_survives", "both_removed"] = "mine_survives"
    bomb_vs_flag: Literal["both_removed_flag_captured", "bomb_stays_flag_captured"] = "both_removed_flag_captured"
    hq_freezes_any_piece: bool = True
    camp_protects_any_occupant: bool = True
    no_move_rule: Literal["eliminate", "skip_turn"] = "eliminate"
    resign_effect: Literal["eliminate_player", "alliance_loses"] = "eliminate_player"
    max_timeouts: Positive | None = None
    timeout_counts_as_step: bool = False
    move_time_limit_s: Positive | None = None
    step_unit: Literal["ply", "round"] = "ply"
    quiet_limit: Positive = 50
    quiet_trigger: Literal[">=", ">"] = ">="
    elimination_resets_quiet: bool = False
    max_steps: Positive | None = None
    draw_voters: Literal["all_four", "alive_only"] = "all_four"
    draw_min_step: NonNegative = 0
    max_draw_offers: NonNegative | None = None
    points: GamePoints = msgspec.field(default_factory=GamePoints)
    forfeit_points: int | None = None
    """Game points of a seat that resigned (认输) and whose alliance lost, in place of `points.loss`
    (§9, §13.15: no official value); None scores it as any loss. A win or a draw scores both
    partners alike (第十条)."""
    reveal_after_elimination: Literal["optional", "required"] = "optional"
    """亮旗 of a seat whose 司令 died in combat in the step that also eliminated the seat (its flag
    has left the board, §7.3, §10): `optional` accepts the reveal or its absence, `required` expects
    it as after any other 司令 death."""
    illegal_layout_policy: Literal["flag_and_stop", "flag_and_continue"] = "flag_and_stop"
    illegal_move_policy: Literal["flag_and_stop", "flag_and_skip", "flag_and_award_loss"] = "flag_and_stop"


class LayoutSubmitted(Event, frozen=True, kw_only=True, tag="junqi.layout"):
    """A seat's 布阵: its 25 pieces as (point, piece) pairs, and the seat's colour where the log gives it."""

    pieces: list[tuple[PointId, PieceName]]
    colour: Colour | None = None


class Moved(Event, frozen=True, kw_only=True, tag="junqi.moved"):
    """The acting seat moves the piece on `from` to `to`; `result` is the software's claimed combat
    outcome and `piece` the mover's identity where the software states it."""

    from_: PointId = msgspec.field(name="from")
    to: PointId
    result: CombatResult | None = None
    piece: PieceName | None = None


class FlagRevealed(Event, frozen=True, kw_only=True, tag="junqi.flag_revealed"):
    """亮旗: the software shows `owner`'s flag on `point` after that seat's 司令 died in combat."""

    owner: Seat
    point: PointId


EVENTS: tuple[type[Event], ...] = (LayoutSubmitted, Moved, FlagRevealed)
