"""Simulation: bot games recorded through the real recorder, as competition software would send them."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from audit.simulator.faults import Planted
from ledger import Ledger, Pending
from replay.registry import SEATS, engine
from schemas import encode
from schemas.common import GameStarted
from schemas.envelope import Event, SeatHolder

START_MS = 1_790_000_000_000
Progress = Callable[[int], None]
S = TypeVar("S", bound=msgspec.Struct)


class SimulationRefused(ValueError):
    """A simulation's options do not fit each other or the ledger; nothing was written."""


@dataclass(frozen=True)
class SimResult:
    """What a simulation recorded, and where it planted its fault if it planted one."""

    games: int
    events: int
    size: int
    tournament: str | None = None
    planted: Planted | None = None


def default_profile(game: str):  # noqa: ANN201 - one of the game profiles
    """Returns a game's default rule profile."""
    return engine(game).profile_type()


def named_profile(game: str, name: str):  # noqa: ANN201 - one of the game profiles
    """Returns a game's rule profile by name: `default`, or for Paohuzi one of its regional profiles.

    :raises ValueError: for a name the game does not know.
    """
    if game == "paohuzi":
        from replay.paohuzi import PROFILES

        known = PROFILES
    else:
        known = {"default": default_profile(game)}
    if name not in known:
        raise ValueError(f"unknown {game} profile {name!r}; known: {', '.join(known)}")
    return known[name]


def with_settings(struct: S, settings: Sequence[str]) -> S:
    """Returns a profile or the tournament rules with `FIELD=VALUE` settings applied; a value is
    read as JSON (`3`, `true`, `[[20, 5]]`) and otherwise as a string (`group`).

    :raises ValueError: naming a setting whose field is unknown or whose value the field refuses.
    """
    fields = msgspec.to_builtins(struct)
    for setting in settings:
        name, _, text = setting.partition("=")
        if name not in struct.__struct_fields__:
            raise ValueError(f"unknown setting {name!r} of {type(struct).__name__}; known: {', '.join(struct.__struct_fields__)}")
        try:
            fields[name] = msgspec.json.decode(text)
        except msgspec.DecodeError:
            fields[name] = text
    try:
        return msgspec.convert(fields, type(struct))
    except msgspec.ValidationError as exc:
        raise ValueError(f"setting {', '.join(settings)}: {exc}") from None


def game_start(game: str, stream: str, players: list[str], first: int, ts: int, profile: Any = None, **where: object) -> GameStarted:
    """Returns the `game.started` event of one game, under the game's default profile unless one is given."""
    seats = [SeatHolder(seat=i, player=p) for i, p in enumerate(players)]
    return GameStarted(stream=stream, seq=0, ts=ts, profile=profile or default_profile(game), seats=seats, first=first,
                       **where)  # type: ignore[arg-type]


def record_events(ledger: Ledger, events: Iterable[Event]) -> int:
    """Appends events as one atomic batch through the recorder's own validation; returns how many."""
    batch = [Pending(n, e, encode(e)) for n, e in enumerate(events, start=1)]
    return ledger.append(batch).appended


def simulate_games(root: Path, game: str, games: int, seed: int, progress: Progress | None = None) -> SimResult:
    """Records `games` complete bot games, each in its own stream `sim-<seed>-g<n>`."""
    rng = random.Random(seed)
    eng = engine(game)
    events = 0
    with Ledger.open(root) as ledger:
        for n in range(1, games + 1):
            players = [f"P{n:03d}{chr(65 + s)}" for s in range(SEATS[game])]
            start = game_start(game, f"sim-{game}-{seed}-g{n}", players, rng.randrange(SEATS[game]), START_MS + n * 3_600_000)
            events += record_events(ledger, eng.bot_game(start, random.Random(rng.getrandbits(64))))
            if progress:
                progress(1)
        ledger.checkpoint()
        return SimResult(games, events, ledger.size)


def simulate_boards(root: Path, boards: int, tables: int, seed: int, progress: Progress | None = None) -> SimResult:
    """Records Paohuzi duplicate boards: each seeded deal played at `tables` tables (`dup-<seed>-b<n>-t<t>`)."""
    from replay.paohuzi import play_board
    from replay.paohuzi.cards import full_deck

    rng = random.Random(seed)
    events = 0
    with Ledger.open(root) as ledger:
        for b in range(1, boards + 1):
            deck = full_deck()
            rng.shuffle(deck)
            dealer = rng.randrange(SEATS["paohuzi"])
            for t in range(1, tables + 1):
                players = [f"B{b:03d}T{t}{chr(65 + s)}" for s in range(SEATS["paohuzi"])]
                start = game_start("paohuzi", f"dup-{seed}-b{b}-t{t}", players, dealer, START_MS + b * 3_600_000,
                                   table=t, board=f"dup-{seed}-b{b}")
                events += record_events(ledger, play_board(start, deck, random.Random(rng.getrandbits(64))))
                if progress:
                    progress(1)
        ledger.checkpoint()
        return SimResult(boards * tables, events, ledger.size)
