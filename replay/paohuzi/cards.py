"""Cards of paohuzi (paohuzi.md §1): numbers 0–19, their notation, colour and size, and the deck."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from replay.protocol import InvalidActionError
from schemas.paohuzi import CARD_IDS, CARD_NAMES, CARD_NUMBER

N_VALUES: Final = 20
COPIES: Final = 4
DECK_SIZE: Final = N_VALUES * COPIES
HAND_SIZE: Final = 20
LIANGZHANG_INDEX: Final = 3 * HAND_SIZE
"""Index in the deck order of the 亮张: the dealer's 21st card, turned face up (paohuzi.md §2)."""
WALL_START: Final = LIANGZHANG_INDEX + 1

_IDS: Final = CARD_IDS
_NUMBER: Final = CARD_NUMBER
"""The schema's card tables, bound here where the compiled build reads them without a lookup."""

Counts = tuple[int, ...]
"""A multiset of cards: how many of each card number 0–19."""


def is_red(card: int) -> bool:
    """Tells whether a card is red: 二 七 十 / 贰 柒 拾 (paohuzi.md §1)."""
    return card % 10 in (1, 6, 9)


def is_big(card: int) -> bool:
    """Tells whether a card is a 大字 (壹…拾)."""
    return card >= 10


def card_id(card: int) -> str:
    """Returns the id notation (`x3`, `d10`) of a card number."""
    return _IDS[card]


def card_number(text: str) -> int:
    """Returns the card number of an id or Chinese name.

    :raises InvalidActionError: when the text names no card.
    """
    number = _NUMBER.get(text)
    if number is not None:
        return number
    try:
        return CARD_NUMBER[text.strip()]
    except KeyError:
        raise InvalidActionError(f"not a paohuzi card: {text!r} (expected x1..x10, d1..d10 or 一..十, 壹..拾)") from None


def card_numbers(texts: Sequence[str]) -> list[int]:
    """Returns the card numbers of ids or Chinese names, as `card_number` reads each.

    :raises InvalidActionError: when a text names no card.
    """
    try:
        return [_NUMBER[t] for t in texts]
    except KeyError:
        return [card_number(t) for t in texts]


_TOKEN = re.compile(r"[xXdD](?:10|[1-9])|\S")


def parse_cards(text: str) -> list[int]:
    """Parses cards written as comma-separated ids (`x1,x2`) or Chinese names (`一二三`, `一,二`).

    :raises InvalidActionError: on a token that names no card.
    """
    tokens = [t for t in _TOKEN.findall(text) if t not in ",，、 "]
    return [card_number(t.lower() if t[0] in "XD" else t) for t in tokens]


def names(cards: Iterable[int]) -> str:
    """Writes cards as a run of Chinese names (`一二三`)."""
    return "".join(CARD_NAMES[c] for c in cards)


def ids(cards: Iterable[int]) -> str:
    """Writes cards as concatenated ids (`x1x2x3`), the compact action notation."""
    return "".join(CARD_IDS[c] for c in cards)


def counts_of(cards: Iterable[int]) -> Counts:
    """Returns the multiset of a list of cards."""
    counts = [0] * N_VALUES
    for c in cards:
        counts[c] += 1
    return tuple(counts)


def cards_of(counts: Sequence[int]) -> list[int]:
    """Returns the cards of a multiset in ascending order."""
    return [c for c in range(N_VALUES) for _ in range(counts[c])]


def full_deck() -> list[int]:
    """Returns the 80 cards in ascending order, four copies of each."""
    return [c for c in range(N_VALUES) for _ in range(COPIES)]


def deal_hands(deck: Sequence[int], dealer: int) -> list[list[int]]:
    """Returns each seat's 20 dealt cards: deck card i goes to seat (dealer + i) mod 3, one at a
    time counter-clockwise from the dealer (第五条; the engine's reading of the deck order)."""
    dealt = tuple(deck[:LIANGZHANG_INDEX])
    return [sorted(dealt[(seat - dealer) % 3::3]) for seat in range(3)]
