"""SQL and engines agree on simulated games: bot games of all three games recorded through the real
recorder, certified, and every SQL re-derivation (points, quiet, timing, steps, timeouts, leave
camp) equal to what the engines derived (DESIGN.md audit/; tournament.md §1, §3).

MATCHLEDGER_AGREE_GAMES sets how many games (default 1,000, a third of each game: about 15 s on a
2-core machine); MATCHLEDGER_SEED replays a run, whose seed is printed.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import audit.certification.certify
from audit.certification.certify import Certification, certify
from audit.query.db import AuditDB
from audit.query.session import Session, open_verified_session
from audit.simulator.simulate import START_MS, record_events, simulate_games
from ledger.store import Ledger, init
from ledger.verify import VerifyReport
from replay.registry import SEATS, engine
from schemas.checkers import CheckersProfile
from schemas.common import GameStarted
from schemas.envelope import SeatHolder
from schemas.junqi import JunqiProfile

GAMES = int(os.environ.get("MATCHLEDGER_AGREE_GAMES", "1000"))
AGREEING = ("points", "quiet", "timing", "steps", "timeouts", "leave-camp")
"""The checks in which SQL re-derives what an engine derived."""
_DERIVED = re.compile(r" seat (\d+) \(.*\): SQL derives (\S+) points")


def _seed() -> int:
    seed = int(os.environ.get("MATCHLEDGER_SEED", "20261129"))  # fixed by default so CI is repeatable
    print(f"seed={seed}")
    return seed


def _certify(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Certification, Session]:
    """Certifies a ledger and keeps the session the certification opened."""
    opened: list[Session] = []

    def keep(*args: Any, **kwargs: Any) -> tuple[VerifyReport, Session | None]:
        report, session = open_verified_session(*args, **kwargs)
        assert session is not None
        opened.append(session)
        return report, session

    monkeypatch.setattr(audit.certification.certify, "open_verified_session", keep)
    return certify(root), opened[0]


def _failures(cert: Certification) -> dict[str, list[str]]:
    return {c.name: c.examples for c in cert.checks if c.name in AGREEING and c.failed}


def sql_points(tables: dict[str, pa.Table]) -> dict[tuple[str, int], float | None]:
    """Returns the points the `points` query derives for every seat, read from its findings
    against a copy of the projection in which no seat has engine points."""
    seats = tables["seats"]  # `points` checks the result of play, before rulings: `derived_points`
    blank = seats.set_column(seats.schema.get_field_index("derived_points"), "derived_points", pa.nulls(len(seats), pa.float64()))
    derived = {}
    for row in AuditDB({**tables, "seats": blank}).run("points"):
        seat, points = _DERIVED.search(row["message"]).groups()  # type: ignore[union-attr]
        derived[(row["stream"], int(seat))] = None if points == "none" else float(points)
    return derived


def engine_points(tables: dict[str, pa.Table]) -> dict[tuple[str, int], float | None]:
    """Returns every seat's engine points, leaving out UNVERIFIED games (they keep the claim)."""
    unverified = {g["stream"] for g in tables["games"].to_pylist() if g["termination"] == "UNVERIFIED"}
    return {(s["stream"], s["seat"]): s["points"] for s in tables["seats"].to_pylist() if s["stream"] not in unverified}


def test_sql_and_engines_agree_on_simulated_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check in which SQL re-derives an engine's result passes on every simulated game, and
    every seat's SQL points equal its engine points (tournament.md §1)."""
    seed = _seed()
    counts = {"junqi": GAMES // 3, "checkers": GAMES // 3, "paohuzi": GAMES - 2 * (GAMES // 3)}
    root = tmp_path / "ledger"
    init(root)
    for game, n in counts.items():
        simulate_games(root, game, n, seed)
    cert, session = _certify(root, monkeypatch)
    tables = session.projection.tables()
    print(sorted(Counter((g["game"], g["termination"]) for g in tables["games"].to_pylist()).items()))
    assert _failures(cert) == {}
    checked = {c.name: c.checked for c in cert.checks}
    assert cert.games == GAMES
    assert (checked["quiet"], checked["steps"], checked["leave-camp"], checked["timeouts"]) == (
        counts["junqi"], counts["junqi"], counts["checkers"], GAMES)
    assert checked["points"] == 4 * counts["junqi"] + 2 * counts["checkers"] + 3 * counts["paohuzi"]
    assert checked["timing"] > 0
    assert sql_points(tables) == engine_points(tables)


PROFILES: dict[str, list[JunqiProfile | CheckersProfile]] = {
    "junqi": [JunqiProfile(quiet_limit=8), JunqiProfile(quiet_limit=6, quiet_trigger=">"), JunqiProfile(max_steps=60),
              JunqiProfile(quiet_limit=12, max_steps=90), JunqiProfile(quiet_limit=10, timeout_counts_as_step=True, max_steps=80),
              JunqiProfile(max_timeouts=2)],
    "checkers": [CheckersProfile(stage="qf"), CheckersProfile(stage="final"), CheckersProfile(turn_counter="moves_only"),
                 CheckersProfile(persistent_after_deadline=True), CheckersProfile(leave_camp_check_time="end_of_round")],
}
"""Non-default profiles the bots reach the limits of: QUIET_LIMIT and MAX_STEPS draws (timeouts
counted as steps or not), Junqi max_timeouts, the knockout timeout allowances and the leave-camp
variants."""


def _simulate_profiles(root: Path, per_profile: int, seed: int) -> int:
    """Records `per_profile` bot games under each profile of PROFILES; returns how many."""
    rng = random.Random(seed)
    n = 0
    with Ledger.open(root) as ledger:
        for game, profiles in PROFILES.items():
            for p, profile in enumerate(profiles):
                for k in range(per_profile):
                    n += 1
                    seats = [SeatHolder(seat=s, player=f"V{p}{k:03d}{chr(65 + s)}") for s in range(SEATS[game])]
                    start = GameStarted(stream=f"var-{game}-{seed}-p{p}-g{k}", seq=0, ts=START_MS + n * 3_600_000,
                                        profile=profile, seats=seats, first=rng.randrange(SEATS[game]))
                    record_events(ledger, engine(game).bot_game(start, random.Random(rng.getrandbits(64))))
        ledger.checkpoint()
    return n


def test_sql_and_engines_agree_under_non_default_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quiet and step-limit draws (junqi.md §8.2, §8.3) and the knockout timeout allowances
    (checkers.md §6) re-derived in SQL agree with the engines where the bots reach them."""
    seed = _seed()
    root = tmp_path / "ledger"
    init(root)
    games = _simulate_profiles(root, max(2, GAMES // 50), seed)
    cert, session = _certify(root, monkeypatch)
    tables = session.projection.tables()
    ended = Counter(g["termination"] for g in tables["games"].to_pylist())
    print(sorted(ended.items()))
    assert _failures(cert) == {}
    assert cert.games == games and ended["QUIET_LIMIT"] > 0 and ended["MAX_STEPS"] > 0
    assert sql_points(tables) == engine_points(tables)
