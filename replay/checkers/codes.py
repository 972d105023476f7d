"""Stable finding codes of the checkers engine and the article of the 2017 rule sheet each cites
(`shared/seeds/checkers-1v1-competition-rules.zh.txt`).

Codes follow the scheme of every game: `checkers.<area letter><number>` (M moves, E the end and
the result, T time, C the camps, P penalty cards, X the log), the severity a field of its own. Each
code keeps the name checkers.md gives it (§4.7 and after: `E_OCCUPIED` …) as its `name`, shown
beside the code, so that an arbiter reading the rules file can trace a finding; the engine's
checks speak in these names, and `public` turns one into the published code.
"""

from __future__ import annotations

from typing import Final, NamedTuple

CODES: Final[dict[str, tuple[str, str | None]]] = {
    # name: (ID, article). Moves: the QQ system's rules are the basis (第一条); classification of checkers.md §4.7.
    "E_NOT_YOUR_TURN": ("M01", "第一条"), "E_NO_OWN_PIECE": ("M02", "第一条"), "E_OCCUPIED": ("M03", "第一条"),
    "E_UNREACHABLE": ("M04", "第一条"), "E_LONG_HOP_ONLY": ("M05", "第一条"), "E_SIDE_TRIANGLE": ("M06", "第一条"),
    "E_GOAL_LOCK": ("M07", "第一条"), "E_BAD_PATH": ("M08", "第一条"), "E_PATH_REVISIT": ("M09", "第一条"),
    "W_PATH_REVISIT": ("M10", "第一条"), "W_LEFT_TARGET": ("M11", "第一条"),
    # The end and the result (第三条); nothing after the end, resignation as the profile has it.
    "E_CLAIM": ("E01", "第三条"), "E_NO_RESULT": ("E02", "第三条"), "W_DRAW_AGREEMENT": ("E03", "第三条"),
    "W_IMPLAUSIBLY_FAST": ("E04", "第三条"), "W_AFTER_END": ("E05", None), "W_RESIGN_IGNORED": ("E06", None),
    # Time and waiting (第四条); timestamps.
    "W_SLOW_MOVE": ("T01", "第四条"), "W_MOVE_TIME": ("T02", "第四条"), "W_TIMEOUTS": ("T03", "第四条"),
    "W_NO_WAIT": ("T04", "第四条"), "W_CLOCK": ("T05", None),
    # Leave camp (第五条) and walls (第六条).
    "W_LEAVE_CAMP": ("C01", "第五条"), "W_REENTER_OWN_CAMP": ("C02", "第五条"), "E_REENTER_OWN_CAMP": ("C03", "第五条"),
    "W_POSSIBLE_WALL": ("C04", "第六条"),
    # Cards (第十六条).
    "W_UNJUSTIFIED_SKIP": ("P01", "第十六条"), "W_DISCONNECT": ("P02", "第十六条"),
    # The log: a game is between two players (第十八条(1)b: 两选手间对决), seats 0 and 1; anomalies with no article.
    "E_NO_SEAT": ("X01", "第十八条"), "E_SEQ": ("X02", None), "E_STREAM": ("X03", None), "E_FOREIGN_EVENT": ("X04", None),
}
"""Every code by its rules-file name: the code's ID and the article it cites (None where the sheet has none)."""

ARTICLES: Final[dict[str, str | None]] = {name: article for name, (_, article) in CODES.items()}
"""The article each code cites, by name."""

NAMES: Final[dict[str, str]] = {f"checkers.{code}": name for name, (code, _) in CODES.items()}
"""The rules-file name of each published code (`checkers.M03` → `E_OCCUPIED`)."""


def public(name: str) -> str:
    """Returns the published code of a rules-file name (`E_OCCUPIED` → `checkers.M03`)."""
    return f"checkers.{CODES[name][0]}"


def severity(name: str) -> str:
    """Returns a code's severity, which its rules-file name spells: `W_…` warnings, `E_…` errors."""
    return "warning" if name.startswith("W_") else "error"


class Note(NamedTuple):
    """A rule problem found while applying one event, before it is tied to the event's seq."""

    code: str
    """The code's rules-file name (`E_OCCUPIED`); `public` gives the published code."""
    message: str
    severity: str = "error"


def note(code: str, message: str) -> Note:
    """Returns a note whose severity follows the code: `W_…` warnings, `E_…` errors."""
    assert code in CODES, code
    return Note(code, message, severity(code))
