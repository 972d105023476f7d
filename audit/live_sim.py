"""`matchledger simulate … --url URL --tables N`: N tables playing at once against a running
service, each its own source with its own key, registered on the service with the log's key, each
sending its moves as they are made and checking every receipt."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from audit.client import Client, change_source
from ledger import Signer, Verifier, read_verifier_key
from schemas.envelope import Event


@dataclass
class Table:
    """One table: its source key and the events it will send, in order."""

    signer: Signer
    events: list[Event]


def make_tables(game: str, tables: int, seed: int, inject: str | None = None, tag: str | None = None) -> tuple[str, list[Table]]:
    """Returns a run tag and N tables, each a bot game of its own (`<tag>/t<n>`) and a fresh source
    key named `<tag>-t<n>`; `inject` plants one fault (audit/faults.py) in table 1's game."""
    from audit.faults import EVENT_FAULTS, plant
    from audit.simulate import START_MS, game_start
    from replay.registry import SEATS, engine

    if inject is not None and inject not in EVENT_FAULTS:
        raise ValueError(f"--inject with --url plants a fault in one game's events: one of {', '.join(sorted(EVENT_FAULTS))}")
    tag = tag or f"live-{game}-{seed}-{uuid.uuid4().hex[:6]}"
    rng = random.Random(seed)
    made = []
    for t in range(1, tables + 1):
        players = [f"{tag}-t{t}{chr(65 + s)}" for s in range(SEATS[game])]
        start = game_start(game, f"{tag}/t{t}", players, rng.randrange(SEATS[game]), START_MS + t * 1000, table=t)
        events = list(engine(game).bot_game(start, random.Random(rng.getrandbits(64))))
        if inject and t == 1:
            events, _ = plant(inject, events, rng)
        made.append(Table(Signer.generate(f"{tag}-t{t}"), events))
    return tag, made


async def register(url: str, admin: Signer, tag: str, tables: Sequence[Table]) -> None:
    """Registers each table's key as a source that may write its own streams only."""
    for n, table in enumerate(tables, start=1):
        await change_source(url, admin, {"action": "register", "name": table.signer.name, "key": str(table.signer.verifier),
                                         "streams": [f"{tag}/t{n}"]})


Acked = Callable[[int, float], None]


async def play(url: str, tables: Sequence[Table], per_batch: int, log_key: Verifier | None, acked: Acked | None = None) -> int:
    """Sends every table's events at once, each table in order, `per_batch` events a batch; calls
    `acked(events, seconds)` per receipt; returns the tree size of the last checkpoint seen."""
    connector = aiohttp.TCPConnector(limit=0)
    last = 0
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        async def table_loop(table: Table) -> None:
            nonlocal last
            async with Client(url, table.signer, log_key, session=session) as client:
                for i in range(0, len(table.events), per_batch):
                    chunk = table.events[i:i + per_batch]
                    start = time.perf_counter()
                    receipt = await client.send(chunk)
                    if acked:
                        acked(len(chunk), time.perf_counter() - start)
                    last = max(last, int(receipt.checkpoint.split("\n")[1]))

        await asyncio.gather(*(table_loop(t) for t in tables))
    return last


def simulate_live(url: str, game: str, tables: int, seed: int, admin_key: Path, log_key: Path | None, per_batch: int,
                  inject: str | None, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Runs N tables against the service; returns what was recorded."""
    admin = Signer.load(admin_key)
    verifier = read_verifier_key(log_key) if log_key else admin.verifier
    tag, made = make_tables(game, tables, seed, inject)

    def acked(events: int, _: float) -> None:
        if progress:
            progress(events)

    async def run() -> int:
        await register(url, admin, tag, made)
        return await play(url, made, per_batch, verifier, acked)

    size = asyncio.run(run())
    return {"tag": tag, "tables": tables, "games": tables, "events": sum(len(t.events) for t in made), "size": size,
            "streams": [f"{tag}/t{n}" for n in range(1, tables + 1)]}
