"""Events every game and tournament shares: registration, seating, start, timing, cards,
draws, resignation, the software's claims, rulings and round closing."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.arbitration import ArbitrationRules, KeyName, Ref, Signature
from schemas.checkers import CheckersProfile
from schemas.envelope import Event, Millis, PlayerId, Program, Seat, SeatHolder, SeqNo, StreamId
from schemas.junqi import JunqiProfile
from schemas.paohuzi import PaohuziProfile

GameName = Literal["junqi", "paohuzi", "checkers"]
AnyProfile = CheckersProfile | JunqiProfile | PaohuziProfile
Round = Annotated[int, msgspec.Meta(ge=1)]
Points = int | float


class TournamentRules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The [PARAM]s of `shared/rules/tournament.md` (scoring, ranking and movement) with their defaults."""

    mp_field: Literal["all_tables", "group"] = "all_tables"
    """Which tables a board's MP compares (§2): every table of the round, or those of the same movement group."""
    r_accumulation: Literal["mean_of_boards", "mean_of_round_means"] = "mean_of_boards"
    r_compare: Literal["rounded_1dp", "exact"] = "rounded_1dp"
    opponents: Literal["distinct", "per_game"] = "distinct"
    """Tie-breaks 1 and 2 (§3): an opponent met in several games counts once (`distinct`) or once per game (`per_game`)."""
    trimmed_few_games: Literal["none", "all_games"] = "none"
    """Tie-break 4 (§3) for a player with two games or fewer, where dropping the longest and the
    shortest game leaves nothing: no value, so it separates nobody and the tie goes on to 加赛
    (`none`, the rules' words), or the mean of every game (`all_games`)."""
    lone_board: Literal["exclude"] = "exclude"
    """A board played at one table only (N = 1) has no r; it is reported and left out (§2)."""
    final_tiebreak: Literal["player_number"] = "player_number"
    """Movement ranks ties left after criteria 1–4 by player number (§4)."""
    group_tables: Annotated[int, msgspec.Meta(ge=1)] | None = None
    """Tables per movement group (4N players in Junqi, 3N in Paohuzi); None: one group."""
    move_time_tolerance_ms: Annotated[int, msgspec.Meta(ge=0)] = 1000
    """How far a claimed move time may differ from the timestamp gap before it is a finding (§3)."""
    swiss_pairing_order: Literal["points_seed", "tiebreak_chain"] = "points_seed"
    """The order in which Swiss pairing takes the players (checkers.md §12.2, 第十八条(2)): by total
    points, then player number (`points_seed`, the reference generator), or by the standings' full
    tie-break chain (`tiebreak_chain`)."""
    arbitration: ArbitrationRules = msgspec.field(default_factory=ArbitrationRules)
    """The appeal procedure: window, committee, deadline (Junqi 第十八–十九条)."""
    void_game: Literal["met", "unplayed"] = "met"
    """What a game voided by a ruling leaves (Swiss and duplicate alike): it scores nothing either way;
    under `met` its players still met (Buchholz and opponents' R count each other, direct encounter
    and the no-repeat pairing rule too: they were paired, as forfeits are, checkers.md §12.3), under
    `unplayed` they did not meet at all. Swiss progressive score carries the running total over the
    round either way (§12.3: the sum of the running totals after each round)."""


class TournamentOpened(Event, frozen=True, kw_only=True, tag="tournament.opened"):
    """A tournament opens: its game, the rule profile in force, the stage (预赛, 决赛 …) and the
    tournament rules."""

    game: GameName
    name: str
    profile: AnyProfile
    stage: str = "preliminary"
    format: Literal["duplicate", "swiss", "knockout"] = "duplicate"
    rounds: Annotated[int, msgspec.Meta(ge=1)] | None = None
    rules: TournamentRules = msgspec.field(default_factory=TournamentRules)


class PlayerRegistered(Event, frozen=True, kw_only=True, tag="tournament.player_registered"):
    """A participant is registered with a fixed player number; an AI entrant names its program."""

    player: PlayerId
    name: str
    team: str | None = None
    program: Program | None = None


class DrawRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The random draw behind a seating: the seed, or its SHA-256 commitment before the reveal."""

    method: str
    seed: str | None = None
    commitment: str | None = None


class TableSeating(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One table of a round: its number, group, and who holds each seat; in a Swiss round a table
    with one player is that player's bye (轮空, checkers.md §12.1)."""

    table: Annotated[int, msgspec.Meta(ge=1)]
    seats: list[SeatHolder]
    group: int | None = None


class RoundSeated(Event, frozen=True, kw_only=True, tag="tournament.round_seated"):
    """The seating of a round: tables, seats, players, and the draw it came from."""

    round: Round
    tables: list[TableSeating]
    draw: DrawRecord | None = None
    pairing: str | None = None
    """The Swiss pairing algorithm and its version, e.g. `matchledger-swiss/1 points_seed`, so that an
    auditor can reproduce the round (checkers.md §12.2)."""


class GameStarted(Event, frozen=True, kw_only=True, tag="game.started"):
    """A game starts at a table: where it belongs, who sits where, who moves first, which rules."""

    profile: AnyProfile
    seats: list[SeatHolder]
    first: Seat
    tournament: StreamId | None = None
    round: Round | None = None
    table: Annotated[int, msgspec.Meta(ge=1)] | None = None
    game_no: Annotated[int, msgspec.Meta(ge=1)] = 1
    board: str | None = None


class MoveTimeUsed(Event, frozen=True, kw_only=True, tag="game.move_time"):
    """Time the acting seat used for its turn, by the competition clock."""

    ms: Millis
    move_seq: SeqNo | None = None


class TimedOut(Event, frozen=True, kw_only=True, tag="game.timed_out"):
    """The acting seat let its turn clock run out (超时)."""


class Skipped(Event, frozen=True, kw_only=True, tag="game.skipped"):
    """The acting seat's turn was skipped (略过), e.g. after a timeout."""


class Disconnected(Event, frozen=True, kw_only=True, tag="game.disconnected"):
    """The acting seat's client disconnected (断线); `reconnected` marks its return."""

    reconnected: bool = False


class PenaltyCard(Event, frozen=True, kw_only=True, tag="game.penalty"):
    """A referee shows the acting seat a yellow or red card, citing the rule."""

    card: Literal["yellow", "red"]
    reason: str
    article: str | None = None


class DrawOffered(Event, frozen=True, kw_only=True, tag="game.draw_offered"):
    """The acting seat offers a draw (提和)."""


class DrawAnswered(Event, frozen=True, kw_only=True, tag="game.draw_answered"):
    """The acting seat accepts or declines the pending draw offer."""

    accept: bool


class Resigned(Event, frozen=True, kw_only=True, tag="game.resigned"):
    """The acting seat resigns (认输)."""


class GameEnded(Event, frozen=True, kw_only=True, tag="game.ended"):
    """The competition software's claim of a game's end: termination, winning seats, points per seat."""

    termination: str
    winners: list[Seat]
    points: list[Points]


RulingKind = Literal["result_override", "authorised_skip", "penalty", "forfeit", "withdrawal", "void_game",
                     "replay_from", "score_correction"]
"""What a ruling does: set a game's result (`result_override`, after an upheld appeal), allow a seat's
next 略过 (`authorised_skip`), add penalty points (`penalty`, points added per seat, negative to
deduct), award the game against a seat (`forfeit`: 判负, the points the rules give unless stated),
record a player's withdrawal from a round on (`withdrawal`, checkers 第十二条: matches not played are
awarded to the opponents), annul the game (`void_game`), order it replayed from the position after
`from_seq` (`replay_from`: this game's result is void, the replay is a new game), or correct a scoring
error (`score_correction`, 第十四条 (1): the points replace the game's)."""


RULING_WORDS: dict[str, tuple[str, str]] = {
    "result_override": ("改判结果", "result overridden"), "authorised_skip": ("准许跳过", "skip authorised"),
    "penalty": ("判罚", "penalty"), "forfeit": ("判负", "forfeit"), "withdrawal": ("退赛", "withdrawal"),
    "void_game": ("判为无效", "game voided"), "replay_from": ("判令重赛", "replay ordered"),
    "score_correction": ("更正得分", "score corrected"),
}
"""Each ruling kind in Chinese (the seed's 判罚, tournament.md's 判负) and English: the one table the pages,
the terminal and the engines' messages read."""


class Ruling(Event, frozen=True, kw_only=True, tag="game.ruling"):
    """A referee's ruling that corrects or amends an earlier event of the same stream; nothing is edited.

    A ruling recorded before `ruling` existed has no kind; `ruling_kind` reads it as the engines
    always did: a `result_override` when it names a termination, winners or points, else an
    `authorised_skip` of its seat."""

    corrects: Annotated[int, msgspec.Meta(ge=0)]
    article: str | None = None
    text: str
    termination: str | None = None
    winners: list[Seat] | None = None
    points: list[Points] | None = None
    ruling: RulingKind | None = None
    appeal: Ref | None = None
    """The `appeal.decided` this ruling carries out (an upheld appeal's correction, 第十四条 (1))."""
    player: PlayerId | None = None
    """The player a `withdrawal` concerns."""
    from_round: Round | None = None
    """The first round a `withdrawal` leaves unplayed."""
    from_seq: SeqNo | None = None
    """The event after which a `replay_from` ruling orders the game replayed."""
    arbiter: KeyName | None = None
    signature: Signature | None = None


def ruling_kind(ruling: Ruling) -> RulingKind:
    """Returns what a ruling does; one without a kind (recorded before kinds existed) is read as before."""
    if ruling.ruling is not None:
        return ruling.ruling
    if ruling.termination is None and ruling.winners is None and ruling.points is None:
        return "authorised_skip"
    return "result_override"


class RoundClosed(Event, frozen=True, kw_only=True, tag="tournament.round_closed"):
    """A round closes; `games` counts the games the software says were played in it."""

    round: Round
    games: Annotated[int, msgspec.Meta(ge=0)] | None = None


EVENTS: tuple[type[Event], ...] = (
    TournamentOpened, PlayerRegistered, RoundSeated, GameStarted, MoveTimeUsed, TimedOut,
    Skipped, Disconnected, PenaltyCard, DrawOffered, DrawAnswered, Resigned, GameEnded, Ruling,
    RoundClosed,
)
