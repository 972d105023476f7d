"""The main job: record a small tournament into a fresh ledger, verify it and prove one game."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger import bundle, store
from ledger.record import validate_lines
from ledger.store import Ledger
from ledger.verify import verify
from schemas import encode
from schemas.checkers import CheckersProfile
from schemas.common import GameEnded, GameStarted, PlayerRegistered, Resigned, RoundClosed, RoundSeated, TableSeating, TournamentOpened, DrawRecord
from schemas.envelope import SeatHolder

Say = Callable[[str], None] | None


def tournament_events(tournament: str = "demo-checkers", players: int = 4, start_ms: int = 1_790_000_000_000) -> list[Any]:
    """Returns the events of a one-round checkers tournament in which every game ends by resignation."""
    ts = start_ms
    events: list[Any] = [TournamentOpened(stream=tournament, seq=0, ts=ts, game="checkers", name="Demo open", profile=CheckersProfile(), format="swiss")]
    ids = [f"P{n:02d}" for n in range(1, players + 1)]
    events += [PlayerRegistered(stream=tournament, seq=i + 1, ts=ts + i, player=p, name=f"Player {p}") for i, p in enumerate(ids)]
    tables = [TableSeating(table=t + 1, seats=[SeatHolder(seat=0, player=ids[2 * t]), SeatHolder(seat=1, player=ids[2 * t + 1])]) for t in range(players // 2)]
    events.append(RoundSeated(stream=tournament, seq=len(events), ts=ts + 100, round=1, tables=tables, draw=DrawRecord(method="seeded-shuffle", seed="demo")))
    for t in tables:
        game = f"{tournament}/r1/t{t.table}/g1"
        events += [
            GameStarted(stream=game, seq=0, ts=ts + 1000, profile=CheckersProfile(), seats=t.seats, first=0, tournament=tournament, round=1, table=t.table),
            Resigned(stream=game, seq=1, ts=ts + 60_000, seat=1),
            GameEnded(stream=game, seq=2, ts=ts + 60_001, termination="RESIGNED", winners=[0], points=[1, 0]),
        ]
    events.append(RoundClosed(stream=tournament, seq=players + 2, ts=ts + 120_000, round=1, games=len(tables)))
    return events


def run_demo(root: Path, say: Say = print) -> dict[str, Any]:
    """Records the demo tournament into a fresh ledger at `root`, verifies it and proves one game."""
    emit = say or (lambda _: None)
    if root.exists():
        shutil.rmtree(root)
    pub = store.init(root)
    emit(f"created ledger {root} (public key {pub})")
    lines = [encode(e) for e in tournament_events()]
    with Ledger.open(root) as ledger:
        result = ledger.append(validate_lines(lines, ledger.config.max_entry_bytes))
        checkpoint = ledger.checkpoint()
    emit(f"recorded {result.appended} events")
    report = verify(root)
    emit(f"verify: {'ok' if report.ok else 'FAILED'}; tree size {report.size}, root {report.root}")
    emit("checkpoint:\n" + checkpoint.note)
    evidence = bundle.prove(root, "demo-checkers/r1/t1/g1")
    bundle.check_bundle(evidence, store.load_verifier(root))
    first = evidence.entries[0]
    emit(f"inclusion proof of entry {first.index} ({len(first.proof)} hashes): " + ", ".join(first.proof))
    return {"ledger": str(root), "appended": result.appended, "size": report.size, "root": report.root, "ok": report.ok}
