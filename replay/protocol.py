"""The protocol every game engine follows (named after OpenSpiel), and the values replay yields.

An engine is a set of pure functions over frozen states: `apply_action` returns a new state and
never mutates its input. Replay is a fold over a game's events: for each event it yields a `Step`
with the state after it, the derived facts and any findings.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol

import msgspec

from replay.picture import Frame, Sheet
from replay.values import Code
from schemas.common import GameStarted
from schemas.envelope import Event
from schemas.profiles import Profile

CHANCE = -1
"""`current_player` while the game waits for a chance event (a layout, a deal)."""
TERMINAL = -4
"""`current_player` once the game is over."""


RULE_BOOKS: dict[str, str] = {
    "junqi": "竞技四国军棋竞赛规则",
    "paohuzi": "竞技跑胡子竞赛规则(试行)",
    "checkers": "传统1v1跳棋竞赛规则(2017)",
}
"""The rule book (shared/seeds/) whose articles a game's findings cite."""
SEAT_LETTERS: dict[str, str] = {"junqi": "SWNE", "checkers": "NS", "paohuzi": ""}
"""The compass letter of each seat, in seat order (Paohuzi's rule book names no compass points: 上家, 下家)."""


def seat_label(game: str, seat: int, player: str | None = None) -> str:
    """Returns how every command shows a seat: its number, compass letter and player, `2 N/p07`."""
    letters = SEAT_LETTERS.get(game, "")
    letter = f" {letters[seat]}" if 0 <= seat < len(letters) else ""
    return f"{seat}{letter}" + (f"/{player}" if player else "")


class Said(NamedTuple):
    """A message people read, in Chinese and in English: shown Chinese first, English beside (issue 31)."""

    zh: str
    en: str

    def __str__(self) -> str:
        return f"{self.zh} {self.en}"


def seats_zh_en(values: Sequence[object]) -> tuple[str, str]:
    """Returns per-seat values (points) as people read them, Chinese and English: `座位0 −1、座位1 1`, `seat 0 -1, seat 1 1`."""
    shown = [_number(v) for v in values]
    zh = "、".join(f"座位{s} {v.replace('-', '−')}" for s, v in enumerate(shown))
    return zh or "无", ", ".join(f"seat {s} {v}" for s, v in enumerate(shown)) or "none"


def seat_list_zh_en(seats: Iterable[int]) -> tuple[str, str]:
    """Returns seats (winners) as people read them, Chinese and English: `座位0、座位2`, `seats 0 and 2`; none is 无 (a draw)."""
    listed = sorted(seats)
    if not listed:
        return "无（和局）", "none (a draw)"
    en = f"seat {listed[0]}" if len(listed) == 1 else "seats " + ", ".join(map(str, listed[:-1])) + f" and {listed[-1]}"
    return "、".join(f"座位{s}" for s in listed), en


def _number(value: object) -> str:
    """Returns a number without a needless `.0`."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def finding_line(severity: str, code: str, article: str | None, book: str | None, stream: str | None, seq: int | None,
                 seat: str | None, message: str) -> str:
    """Returns a finding as one line, the same for every game and check:
    `error junqi.M10 (第四条 五, 竞技四国军棋竞赛规则): r1-t2-g1 seq 57 seat 2 N/p07: message`; a code
    with a rules-file name shows it after the code: `error checkers.M03 (E_OCCUPIED) (第一条, …): …`."""
    name = code_name(code)
    cited = (f" ({name})" if name else "") + (f" ({article}, {book})" if article and book else f" ({article})" if article else "")
    where = " ".join(part for part in (stream, f"seq {seq}" if seq is not None else None,
                                       f"seat {seat}" if seat is not None else None) if part)
    return f"{severity} {code}{cited}: {where or 'log'}: {message}"


def code_name(code: str) -> str | None:
    """Returns the name the rules file gives a code, where it gives one (checkers.md: `checkers.M03`
    is `E_OCCUPIED`), else None."""
    if not code.startswith("checkers."):
        return None
    from replay.checkers.codes import NAMES  # here, not at the top: the checkers package imports this module

    return NAMES.get(code)


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """A rule problem at one event: stable code, the rule book's article where there is one, and why;
    with the acting seat and its player once replay has tied the finding to the game's seating."""

    stream: str
    seq: int
    code: str
    message: str
    article: str | None = None
    severity: Literal["error", "warning"] = "error"
    seat: int | None = None
    player: str | None = None
    book: str | None = None
    """The rule book the article is from, when it is not the one of the code's game (tournament findings)."""

    @property
    def game(self) -> str:
        """The code's namespace: a game, `audit` or `ledger`."""
        return self.code.partition(".")[0]

    @property
    def rule_book(self) -> str | None:
        """The rule book the article cites."""
        return self.book or RULE_BOOKS.get(self.game)

    def line(self) -> str:
        """Returns the one line every command prints a finding as (see `finding_line`)."""
        seat = seat_label(self.game, self.seat, self.player) if self.seat is not None else None
        return finding_line(self.severity, self.code, self.article, self.rule_book, self.stream, self.seq, seat, self.message)

    def __str__(self) -> str:
        return self.line()


class Place(Protocol):
    """Where a finding is: an event, or a summary of one (a table's deal), by its stream and seq."""

    @property
    def stream(self) -> str: ...

    @property
    def seq(self) -> int: ...


def found(codes: Mapping[str, Code], event: Place, code: str, message: str, article: str | None = None) -> Finding:
    """Returns the finding of `code` at `event`, its severity read from the game's catalogue: the
    one way every fold reports a finding."""
    return Finding(stream=event.stream, seq=event.seq, code=code, message=message, article=article,
                   severity=codes[code].severity)


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How a game ended: the termination reason (a member of the game's `Termination` or of
    `SharedTermination`, or a ruling's own string), the winning seats (empty for a draw) and the
    game points of every seat."""

    termination: str
    winners: tuple[int, ...]
    points: tuple[float, ...]


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a replay: the state after it, the facts derived from it, and its findings."""

    event: Event
    state: Any
    facts: dict[str, Any]
    findings: tuple[Finding, ...] = ()


class ReplayError(Exception):
    """Base of the errors an engine raises."""


class InvalidActionError(ReplayError):
    """The input is malformed: not an action of this game at all (bad notation, unknown point)."""


class NoStartError(InvalidActionError):
    """A game's events do not open with a `game.started` of that game (the same refusal for every game)."""


class IllegalActionError(ReplayError):
    """The action is well formed but breaks a rule in this state; carries the rule's code and article."""

    def __init__(self, code: str, message: str | Said, article: str | None = None) -> None:
        name = code_name(code)
        super().__init__(f"{code}{f' ({name})' if name else ''}{f' ({article})' if article else ''}: {message}")
        self.code = code
        self.article = article
        self.said = message if isinstance(message, Said) else Said("", message)
        """Why, in Chinese and English, for a finding to quote (English only for a plain-text message)."""
        self.detail = str(message)


class StrictReplayError(ReplayError):
    """Raised by a strict replay at its first finding."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(str(finding))
        self.finding = finding


class GameEngine(Protocol):
    """One game's rules, replay, bot and pictures."""

    name: str

    @property
    def profile_type(self) -> type[Profile]:
        """The game's rule profile (read only: each engine names its own subclass)."""
        ...

    def new_initial_state(self, start: GameStarted) -> Any:
        """Returns the state before any event after `game.started`."""

    def current_player(self, state: Any) -> int:
        """Returns the seat to act, `CHANCE` or `TERMINAL`."""

    def legal_actions(self, state: Any) -> list[Hashable]:
        """Returns every legal action of the player to act, in a stable order."""

    def apply_action(self, state: Any, action: Hashable) -> Any:
        """Returns the state after the action; the input state is left unchanged.

        :raises InvalidActionError: when the action is malformed.
        :raises IllegalActionError: when the action breaks a rule in this state.
        """

    def is_terminal(self, state: Any) -> bool:
        """Tells whether the game is over."""

    def outcome(self, state: Any) -> Outcome | None:
        """Returns the outcome of a finished game, else None."""

    def information_state_string(self, state: Any, seat: int) -> str:
        """Describes the state as `seat` may know it, hiding what it cannot see."""

    def to_event(self, state: Any, action: Hashable, *, stream: str, seq: int, ts: int) -> Event:
        """Returns the event that records `action` taken in `state`."""

    def replay(self, events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
        """Folds a game's events (starting with `game.started`) into steps.

        :raises StrictReplayError: in strict mode, at the first finding.
        """

    def bot_game(self, start: GameStarted, rng: random.Random) -> list[Event]:
        """Plays a whole game with the seeded bot: `start` (seq 0), every setup, move and timing
        event with realistic timestamps, and the software's `game.ended` claim last."""

    def render_svg(self, state: Any, seat: int | None = None, players: Sequence[str] = ()) -> str:
        """Draws the position as SVG, from `seat`'s view when given, its legend naming `players`."""

    def sheet(self, state: Any, players: Sequence[str] = ()) -> Sheet:
        """Returns what every picture of the game shares (board, labels, legend naming `players`,
        symbols), drawn from a state that knows the seats' colours and roles."""

    def frame(self, state: Any, attempt: Event | None = None) -> Frame:
        """Returns the position on the sheet, all-seeing, with `attempt` (an event the rules
        refused at this position) drawn dashed where it names a move or a card."""

    def render_text(self, state: Any, seat: int | None = None) -> str:
        """Draws the position as a compact text diagram (the information-state string and golden transcripts)."""

    def render_board(self, state: Any, seat: int | None = None) -> str:
        """Draws the position as text for people (`show`): the diagram with coordinates and a legend."""
