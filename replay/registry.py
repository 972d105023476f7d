"""Finds a game's engine by name; each engine module exposes `ENGINE`."""

from __future__ import annotations

import importlib

from replay.protocol import GameEngine

GAMES = ("checkers", "junqi", "paohuzi")
SEATS = {"checkers": 2, "junqi": 4, "paohuzi": 3}
"""Seats at a table of each game (tournament.md §1a)."""


class UnknownGameError(ValueError):
    """No engine is registered under this name."""


def engine(name: str) -> GameEngine:
    """Returns the engine of a game.

    :raises UnknownGameError: for a name outside `GAMES`.
    """
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r}; expected one of {', '.join(GAMES)}")
    module = importlib.import_module(f"replay.{name}")
    return module.ENGINE  # type: ignore[no-any-return]
