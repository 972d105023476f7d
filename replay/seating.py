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


SWISS_METHOD = "matchledger-swiss/1"
"""The Swiss pairing algorithm: with an odd field the bye first, then the lexicographically first
pairing without repeats in the given order (checkers.md §12.2)."""


def pairing_name(order: str) -> str:
    """Returns what a Swiss round records as its pairing: the algorithm, its version and the order it took."""
    return f"{SWISS_METHOD} {order}"


def swiss_pairs(ranked: Sequence[str], met: set[frozenset[str]], had_bye: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """Pairs players high with high in the given order, never twice the same pair (第18条); the
    highest unpaired player takes the next opponent it has not met, backtracking when the rest
    cannot be paired. With an odd field the lowest player without a previous bye whose absence
    leaves a pairing gets the bye (轮空, §12.1), returned last as a table of one.

    :raises ValueError: when no pairing without repeats exists.
    """
    order = list(ranked)
    candidates = [p for p in reversed(order) if p not in had_bye] if len(order) % 2 else [None]
    for bye in candidates:
        pairs = _pair([p for p in order if p != bye], met)
        if pairs is not None:
            return pairs if bye is None else [*pairs, (bye,)]
    raise ValueError(f"no Swiss pairing without repeats exists for {len(ranked)} players")


def _pair(rest: list[str], met: set[frozenset[str]]) -> list[tuple[str, ...]] | None:
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
