"""`matchledger simulate … --url URL --tables N`: N tables playing at once against a running
service, each its own source with its own key, registered on the service with the log's key, each
sending its moves as they are made and checking every receipt.

A run rides out a restart of the service (each batch is sent again for `retry_for` seconds); a table
that gives up stops alone, the others play on. A run resumes where it stopped when started again with
its `tag` and `keys` (the directory its tables' keys were kept in): the games are the same, the same
registrations and batches sent again are acknowledged as recorded, and the rest follows."""

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

from audit.simulator.client import RETRY_FOR, Client, SendError, change_source
from ledger import Signer, Verifier
from ledger.sources import read_verifier_key
from schemas.envelope import Event


@dataclass
class Table:
    """One table: its source key and the events it will send, in order."""

    signer: Signer
    events: list[Event]


def make_tables(game: str, tables: int, seed: int, inject: str | None = None, tag: str | None = None,
                keys: Path | None = None) -> tuple[str, list[Table]]:
    """Returns a run tag and N tables, each a bot game of its own (`<tag>/t<n>`) and a source key
    named `<tag>-t<n>` (fresh, or the one kept in `keys` by an earlier run, which keeps new ones
    there); `inject` plants one fault (audit/simulator/faults.py) in table 1's game."""
    from audit.simulator.faults import EVENT_FAULTS, plant
    from audit.simulator.simulate import START_MS, game_start
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
        made.append(Table(_table_key(f"{tag}-t{t}", keys), events))
    return tag, made


def _table_key(name: str, keys: Path | None) -> Signer:
    """Returns a table's key: the one kept in `keys`, else a fresh one (kept there, owner-only)."""
    if keys is None:
        return Signer.generate(name)
    path = keys / f"{name}.key"
    if path.exists():
        return Signer.load(path)
    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    signer = Signer.generate(name)
    signer.save(path)
    return signer


async def register(url: str, admin: Signer, tag: str, tables: Sequence[Table]) -> None:
    """Registers each table's key as a source that may write its own streams only."""
    for n, table in enumerate(tables, start=1):
        await change_source(url, admin, {"action": "register", "name": table.signer.name, "key": str(table.signer.verifier),
                                         "streams": [f"{tag}/t{n}"]})


Acked = Callable[[int, float], None]


async def play(url: str, tables: Sequence[Table], per_batch: int, log_key: Verifier | None, acked: Acked | None = None,
               retry_for: float = RETRY_FOR) -> tuple[int, dict[int, SendError]]:
    """Sends every table's events at once, each table in order, `per_batch` events a batch; calls
    `acked(events, seconds)` per receipt; returns the tree size of the last checkpoint seen and, by
    table number, the refusal or outage that stopped a table (the others play on)."""
    connector = aiohttp.TCPConnector(limit=0)
    last = 0
    stopped: dict[int, SendError] = {}
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        async def table_loop(n: int, table: Table) -> None:
            try:
                await send_table(table)
            except SendError as exc:
                stopped[n] = exc

        async def send_table(table: Table) -> None:
            nonlocal last
            async with Client(url, table.signer, log_key, retry_for, session=session) as client:
                for i in range(0, len(table.events), per_batch):
                    chunk = table.events[i:i + per_batch]
                    start = time.perf_counter()
                    receipt = await client.send(chunk)
                    if acked:
                        acked(len(chunk), time.perf_counter() - start)
                    last = max(last, int(receipt.checkpoint.split("\n")[1]))

        await asyncio.gather(*(table_loop(n, t) for n, t in enumerate(tables, start=1)))
    return last, stopped


def simulate_live(url: str, game: str, tables: int, seed: int, admin_key: Path, log_key: Path | None, per_batch: int,
                  inject: str | None, progress: Callable[[int], None] | None = None, tag: str | None = None,
                  keys: Path | None = None, retry_for: float = RETRY_FOR) -> dict[str, Any]:
    """Runs N tables against the service (resuming the run `tag` whose keys are in `keys`); returns what was recorded.

    :raises SendError: when a table stopped (the others played on), saying how to resume.
    """
    admin = Signer.load(admin_key)
    verifier = read_verifier_key(log_key) if log_key else admin.verifier
    tag, made = make_tables(game, tables, seed, inject, tag, keys)

    def acked(events: int, _: float) -> None:
        if progress:
            progress(events)

    async def run() -> tuple[int, dict[int, SendError]]:
        await register(url, admin, tag, made)
        return await play(url, made, per_batch, verifier, acked, retry_for)

    size, stopped = asyncio.run(run())
    if stopped:
        raise _stopped(stopped, tables, tag, keys, seed)
    return {"tag": tag, "tables": tables, "games": tables, "events": sum(len(t.events) for t in made), "size": size,
            "streams": [f"{tag}/t{n}" for n in range(1, tables + 1)]}


def _stopped(stopped: dict[int, SendError], tables: int, tag: str, keys: Path | None, seed: int) -> SendError:
    """Returns the error of a run some of whose tables stopped: each table's reason, and how to resume."""
    first = stopped[min(stopped)]
    status = first.status if all(e.status for e in stopped.values()) else 0  # an outage if any table met one
    reasons = "; ".join(f"t{n}: {exc}" for n, exc in sorted(stopped.items()))
    again = (f"run it again with --seed {seed} --tag {tag} --keys {keys} to resume" if keys is not None
             else "give --keys DIR to be able to resume a run")
    return SendError(status, first.reason if status else "unreachable", f"{len(stopped)} 张桌停止 / {len(stopped)} of {tables} tables "
                     f"stopped, the others finished: {reasons}; {again}")
