"""Finds a game's engine by name; each engine module exposes `ENGINE`."""

from __future__ import annotations

import importlib

from replay.protocol import GameEngine
from schemas.common import GameStarted

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


def game_of(start: GameStarted) -> str:
    """Returns the game a start event names: the tag of its rule profile (the one place that reads it)."""
    return str(start.profile.__struct_config__.tag)  # type: ignore[attr-defined]


def engine_for(start: GameStarted) -> GameEngine:
    """Returns the engine of the game a start event names.

    :raises UnknownGameError: for a profile of no registered game.
    """
    return engine(game_of(start))
