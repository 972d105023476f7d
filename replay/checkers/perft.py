"""Move-generator counts ("perft", checkers.md §14.1): the number of distinct (from, to) moves
summed over alternating turns, with no end-of-game checks, and the move-list notation it reads."""

from __future__ import annotations

from replay.checkers.board import BIT, parse_hole
from replay.checkers.moves import DEFAULT_RULES, MoveRules, all_moves, is_reachable


class MoveListError(ValueError):
    """A move list such as `3>14,115>102` is malformed or holds an illegal move."""


def perft_counts(pieces: tuple[int, int], to_move: int, depth: int, rules: MoveRules = DEFAULT_RULES) -> list[int]:
    """Returns the move counts at depths 1..depth from a position (seat 0 = north pieces)."""
    counts = [0] * depth

    def walk(own: int, other: int, seat: int, level: int) -> None:
        moves = all_moves(seat, own, own | other, rules)
        counts[level] += len(moves)
        if level + 1 < depth:
            for frm, to in moves:
                walk(other, own ^ BIT[frm] ^ BIT[to], 1 - seat, level + 1)

    if depth > 0:
        walk(pieces[to_move], pieces[1 - to_move], to_move, 0)
    return counts


def divide(pieces: tuple[int, int], to_move: int, depth: int, rules: MoveRules = DEFAULT_RULES) -> list[tuple[str, int]]:
    """Returns each first move (`from>to`) with the number of move sequences of length `depth` that
    begin with it (perft divide); they sum to the last count of `perft_counts`."""
    own, other = pieces[to_move], pieces[1 - to_move]
    split = []
    for frm, to in all_moves(to_move, own, own | other, rules):
        after = [0, 0]
        after[to_move], after[1 - to_move] = own ^ BIT[frm] ^ BIT[to], other
        below = perft_counts((after[0], after[1]), 1 - to_move, depth - 1, rules)
        split.append((f"{frm}>{to}", below[-1] if below else 1))
    return split


def parse_moves(text: str) -> list[tuple[int, int]]:
    """Reads a move list `from>to,from>to,…` (holes as ids or row-col).

    :raises MoveListError: on a move without `>` or a hole that does not exist.
    """
    out = []
    for n, item in enumerate(filter(None, (m.strip() for m in text.split(","))), start=1):
        frm, sep, to = item.partition(">")
        if not sep:
            raise MoveListError(f"move {n} {item!r}: write from>to, e.g. 3>14")
        try:
            out.append((parse_hole(frm), parse_hole(to)))
        except ValueError as exc:
            raise MoveListError(f"move {n} {item!r}: {exc}") from None
    return out


def play_moves(pieces: tuple[int, int], to_move: int, moves: list[tuple[int, int]],
               rules: MoveRules = DEFAULT_RULES) -> tuple[tuple[int, int], int]:
    """Plays moves on a bare position (no competition rules) and returns the pieces and side to move.

    :raises MoveListError: naming the first move that is not legal.
    """
    bits = list(pieces)
    for n, (frm, to) in enumerate(moves, start=1):
        own = bits[to_move]
        if not own & BIT[frm] or not is_reachable(to_move, frm, to, bits[0] | bits[1], rules):
            raise MoveListError(f"move {n} {frm}>{to} is not legal for seat {to_move}")
        bits[to_move] = own ^ BIT[frm] ^ BIT[to]
        to_move = 1 - to_move
    return (bits[0], bits[1]), to_move
