"""Hu evaluations per second on random 21-card Paohuzi hands (the best decomposition of a hand
taken as complete, as `matchledger hu` evaluates it), beside python-chess generating the legal
moves of random positions in the same run. The issue sets no goal: the figure is recorded.

    python bench/hu_paohuzi.py [--hands 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chess  # noqa: E402

from bench.common import best_rate, chess_games  # noqa: E402
from replay.paohuzi import DEFAULT, hu  # noqa: E402
from replay.paohuzi.cards import counts_of, full_deck  # noqa: E402


def random_hands(n: int, seed: int) -> list[list[int]]:
    """Returns n hands of 21 cards dealt from shuffled 80-card decks."""
    rng = random.Random(seed)
    deck = full_deck()
    return [rng.sample(deck, 21) for _ in range(n)]


def complete_hands(n: int, seed: int) -> list[list[int]]:
    """Returns n hands of 21 cards made of 7 random groups (sequences, 二七十 and triples of one
    card), the hands whose decomposition search runs to the end."""
    rng = random.Random(seed)
    hands: list[list[int]] = []
    while len(hands) < n:
        counts = [0] * 20
        for _ in range(7):
            base = rng.choice((0, 10))
            shape = rng.choice(("sequence", "sequence", "two_seven_ten", "triple"))
            if shape == "sequence":
                first = base + rng.randrange(8)
                group = [first, first + 1, first + 2]
            elif shape == "two_seven_ten":
                group = [base + 1, base + 6, base + 9]
            else:
                group = [base + rng.randrange(10)] * 3
            for card in group:
                counts[card] += 1
        if max(counts) <= 4:
            hands.append([c for c in range(20) for _ in range(counts[c])])
    return hands


def chess_positions(n: int, seed: int) -> list[chess.Board]:
    """Returns n positions met in random legal games."""
    boards = []
    for moves in chess_games(n // 40 + 1, seed):
        board = chess.Board()
        for uci in moves[:40]:
            board.push_uci(uci)
            boards.append(board.copy(stack=False))
    return boards[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    hands = [counts_of(h) for h in random_hands(args.hands, seed=2026)]
    complete = [counts_of(h) for h in complete_hands(args.hands // 10, seed=2026)]
    boards = chess_positions(args.hands, seed=2026)
    wins = sum(hu.winning_hand(DEFAULT, [], h) is not None for h in hands)

    def evaluate(batch: list) -> int:  # type: ignore[type-arg]
        for h in batch:
            hu.best_hand(DEFAULT, [], h)
        return len(batch)

    def generate() -> int:
        for board in boards:
            list(board.legal_moves)
        return len(boards)

    ours, peer = best_rate(lambda: evaluate(hands), args.repeat), best_rate(generate, args.repeat)
    full = best_rate(lambda: evaluate(complete), args.repeat)
    build = "pure Python" if (hu.__file__ or "").endswith(".py") else "compiled by mypyc"
    print(f"hu evaluations ({build}): {ours:,.0f} hands/s over {len(hands):,} random 21-card hands ({wins} win); "
          f"{full:,.0f} hands/s over {len(complete):,} complete hands (7 groups, full decomposition search)")
    print(f"python-chess {chess.__version__} legal move generation: {peer:,.0f} positions/s over {len(boards):,} positions")
    print(f"hu_paohuzi: ratio {ours / peer:.2f} (no goal set; recorded)")


if __name__ == "__main__":
    main()
