"""Seeded bot games of every engine with a rule break spliced in, for the replay tests."""

from __future__ import annotations

import random

import msgspec

from audit.simulator.simulate import game_start
from replay.registry import GAMES, SEATS, engine
from schemas.envelope import Event


def bot_games(rng: random.Random) -> list[list[Event]]:
    """Returns two bot games of each game (seeded from `rng`), the second of each with an event sent
    twice under a later seq (a rule break every engine reports: its seq or turn is wrong)."""
    games = []
    for game in GAMES:
        for i in range(2):
            start = game_start(game, f"T1/r1/t{i}/{game}", [f"p{s}" for s in range(SEATS[game])], i % 2, 1_790_000_000_000)
            played = engine(game).bot_game(start, random.Random(rng.getrandbits(64)))
            if i == 1:
                played = [*played[:-1], msgspec.structs.replace(played[len(played) // 2], seq=len(played) - 1),
                          msgspec.structs.replace(played[-1], seq=len(played))]
            games.append(played)
    return games
