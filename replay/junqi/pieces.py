"""Pieces, their ranks and counts (junqi.md §4.1, 第四条 二) and combat (§4.2, 第八条).

A board cell is an int: 0 when empty, else `1 + seat + 4 * kind`, with kinds ordered so that a
ranked piece's rank is `kind - 2` (工兵 1 … 司令 9).
"""

from __future__ import annotations

from typing import Final, Literal

FLAG: Final = 0
MINE: Final = 1
BOMB: Final = 2
ENGINEER: Final = 3
MARSHAL: Final = 11
KIND_NAMES: Final = ("军旗", "地雷", "炸弹", "工兵", "排长", "连长", "营长", "团长", "旅长", "师长", "军长", "司令")
KIND_OF: Final[dict[str, int]] = {name: k for k, name in enumerate(KIND_NAMES)}
SHORT: Final = ("旗", "雷", "炸", "兵", "排", "连", "营", "团", "旅", "师", "军", "司")
"""One-character labels for diagrams."""
ASCII: Final = ("F", "M", "B", "1", "2", "3", "4", "5", "6", "7", "8", "9")
"""ASCII labels: flag, mine, bomb, then ranks 1 (工兵) to 9 (司令)."""
COUNTS: Final = (1, 3, 2, 3, 3, 3, 2, 2, 2, 2, 1, 1)
"""Pieces of each kind per seat (25 in all)."""

Result = Literal["move", "win", "lose", "both"]


def cell(seat: int, kind: int) -> int:
    """Returns the board cell value of a seat's piece."""
    return 1 + seat + 4 * kind


def seat_of(value: int) -> int:
    """Returns the seat owning a non-empty cell."""
    return (value - 1) & 3


def kind_of(value: int) -> int:
    """Returns the piece kind of a non-empty cell."""
    return (value - 1) >> 2


def is_movable(kind: int) -> bool:
    """Tells whether a kind may move at all: every piece but 地雷 and 军旗."""
    return kind >= BOMB


def combat(
    attacker: int,
    defender: int,
    mine_vs_officer: str = "mine_survives",
    bomb_vs_flag: str = "both_removed_flag_captured",
) -> Result:
    """Resolves an attack of kind `attacker` on kind `defender` by the first matching row of §4.2.

    Flag capture is a "win" (or "both" for a 炸弹 by default); the caller eliminates the flag's owner.
    """
    if attacker == BOMB and defender == FLAG and bomb_vs_flag == "bomb_stays_flag_captured":
        return "win"
    if attacker == BOMB or defender == BOMB:
        return "both"
    if defender == FLAG:
        return "win"
    if defender == MINE:
        if attacker == ENGINEER:
            return "win"
        return "both" if mine_vs_officer == "both_removed" else "lose"
    if attacker == defender:
        return "both"
    return "win" if attacker > defender else "lose"
