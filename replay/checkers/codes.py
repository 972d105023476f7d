"""Stable finding codes of the checkers engine and the article of the 2017 rule sheet each cites
(`shared/seeds/checkers-1v1-competition-rules.zh.txt`; codes from checkers.md where it names them)."""

from __future__ import annotations

from typing import Final, NamedTuple

ARTICLES: Final[dict[str, str | None]] = {
    # Moves: the QQ system's rules are the basis (第一条); classification of checkers.md §4.7.
    "E_NOT_YOUR_TURN": "第一条", "E_NO_OWN_PIECE": "第一条", "E_OCCUPIED": "第一条",
    "E_UNREACHABLE": "第一条", "E_LONG_HOP_ONLY": "第一条", "E_SIDE_TRIANGLE": "第一条",
    "E_GOAL_LOCK": "第一条", "E_BAD_PATH": "第一条", "E_PATH_REVISIT": "第一条", "W_PATH_REVISIT": "第一条",
    "W_LEFT_TARGET": "第一条",
    # Result (第三条).
    "W_IMPLAUSIBLY_FAST": "第三条", "E_CLAIM": "第三条", "W_DRAW_AGREEMENT": "第三条", "E_NO_RESULT": "第三条",
    # Time and waiting (第四条).
    "W_SLOW_MOVE": "第四条", "W_MOVE_TIME": "第四条", "W_TIMEOUTS": "第四条", "W_NO_WAIT": "第四条",
    # Leave camp (第五条) and walls (第六条).
    "W_LEAVE_CAMP": "第五条", "W_REENTER_OWN_CAMP": "第五条", "E_REENTER_OWN_CAMP": "第五条",
    "W_POSSIBLE_WALL": "第六条",
    # Cards (第十六条).
    "W_UNJUSTIFIED_SKIP": "第十六条", "W_DISCONNECT": "第十六条",
    # A game is between two players (第十八条(1)b: 两选手间对决): seats 0 and 1 only.
    "E_NO_SEAT": "第十八条",
    # Log anomalies with no article.
    "W_AFTER_END": None, "W_CLOCK": None, "E_SEQ": None, "E_STREAM": None, "E_FOREIGN_EVENT": None,
    "W_RESIGN_IGNORED": None,
}


class Note(NamedTuple):
    """A rule problem found while applying one event, before it is tied to the event's seq."""

    code: str
    message: str
    severity: str = "error"


def note(code: str, message: str) -> Note:
    """Returns a note whose severity follows the code: `W_…` warnings, `E_…` errors."""
    assert code in ARTICLES, code
    return Note(code, message, "warning" if code.startswith("W_") else "error")
