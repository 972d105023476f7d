"""Seating rules of tournament.md §4–5: the reproducible round-1 draw, snake seating by rank in
groups (瑞士移位法), and Swiss pairing without repeats for checkers. The simulator seats players
with these functions and the auditor recomputes the expected seating with them."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

DRAW_METHOD = "matchledger-shuffle/1"
"""The draw algorithm: players sorted by id, `random.Random(seed).shuffle`, then dealt to tables in order."""


def commitment(seed: str) -> str:
    """Returns the SHA-256 commitment (hex) published before the draw and checked after the reveal."""
    return hashlib.sha256(seed.encode()).hexdigest()


def draw_first_round(players: Sequence[str], seats: int, seed: str) -> list[list[str]]:
    """Returns round 1's tables (players in seat order) drawn reproducibly from `seed` (§4)."""
    order = sorted(players)
    random.Random(seed).shuffle(order)
    return [order[i:i + seats] for i in range(0, len(order), seats)]


def snake(ranked: Sequence[str], seats: int, group_tables: int | None = None) -> list[list[str]]:
    """Returns the tables of a round seated by rank: groups of `group_tables` tables, and within a
    group, ranks dealt across seats in order on odd tables and reversed on even ones (附录三 五.1)."""
    per_group = seats * (group_tables or max(1, len(ranked) // seats))
    tables: list[list[str]] = []
    for g in range(0, len(ranked), per_group):
        group = ranked[g:g + per_group]
        for t in range(0, len(group), seats):
            row = list(group[t:t + seats])
            tables.append(row if (t // seats) % 2 == 0 else row[::-1])
    return tables


def swiss_pairs(ranked: Sequence[str], met: set[frozenset[str]]) -> list[tuple[str, str]]:
    """Pairs players high with high in rank order, never twice the same pair (第18条); the
    highest-ranked unpaired player takes the next-ranked opponent it has not met, backtracking
    when the rest cannot be paired.

    :raises ValueError: when no pairing without repeats exists.
    """
    pairs = _pair(list(ranked), met)
    if pairs is None:
        raise ValueError(f"no Swiss pairing without repeats exists for {len(ranked)} players")
    return pairs


def _pair(rest: list[str], met: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    if not rest:
        return []
    top = rest[0]
    for i in range(1, len(rest)):
        if frozenset((top, rest[i])) in met:
            continue
        tail = _pair(rest[1:i] + rest[i + 1:], met)
        if tail is not None:
            return [(top, rest[i]), *tail]
    return None
