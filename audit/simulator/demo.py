"""The main job: simulate a small tournament of each game into a fresh ledger, then verify,
replay, audit, prove one game and show the standings and the certification summary."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from audit.certification.certify import Certification, certify
from audit.query.accelerators import Accelerator, accelerators, summary
from audit.query.session import movement_ranking, open_session
from audit.query.standings import Standings, standings
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import EvidenceBundle, LedgerError, VerifyReport, check_bundle, init, load_verifier, prove, verify
from ledger.layout import CONFIG, load_config

ORIGIN = "matchledger.demo/local"
PLANS = (
    TournamentPlan("junqi", players=8, rounds=3, games_per_round=2, seed=2026),
    TournamentPlan("paohuzi", players=6, rounds=3, games_per_round=2, seed=2026),
    TournamentPlan("checkers", players=6, rounds=3, games_per_round=2, seed=2026),
)
Progress = Callable[[str, int], Callable[[int], None]]


class Demo:
    """What the demo produced, step by step."""

    def __init__(self) -> None:
        self.tournaments: list[str] = []
        self.log: VerifyReport | None = None
        self.certification: Certification | None = None
        self.standings: list[Standings] = []
        self.proof: EvidenceBundle | None = None
        self.accelerators: list[Accelerator] = accelerators()

    def accelerator_line(self) -> str:
        """Returns the accelerators this run used, as one line."""
        return summary(self.accelerators)

    def summary(self) -> dict[str, Any]:
        """Returns the machine-readable summary printed by `demo --json`."""
        assert self.log and self.certification
        return {"ok": self.log.ok and self.certification.ok, "size": self.log.size, "root": self.log.root,
                "tournaments": self.tournaments, "games": self.certification.games,
                "findings": len(self.certification.findings),
                "checks": {c.name: {"passed": c.passed, "failed": c.failed} for c in self.certification.checks},
                "accelerators": {a.name: a.in_use for a in self.accelerators}}


def fresh_ledger(root: Path) -> Path:
    """Creates the demo ledger, replacing an earlier demo ledger but never anything else.

    :raises LedgerError: when `root` holds something that is not a demo ledger.
    """
    if root.exists() and any(root.iterdir()):
        if not (root / CONFIG).exists() or load_config(root).origin != ORIGIN:
            raise LedgerError(f"{root} is not empty and not a demo ledger; give another --ledger DIR")
        shutil.rmtree(root)
    return init(root, ORIGIN)


def run_demo(root: Path, progress: Progress) -> Demo:
    """Runs the whole demo into `root`."""
    demo = Demo()
    fresh_ledger(root)
    for plan in PLANS:
        advance = progress(f"simulating the {plan.game} tournament", plan.expected_games())
        demo.tournaments.append(simulate_tournament(root, plan, movement_ranking, advance).tournament or plan.tournament)
    demo.log = verify(root)
    games = sum(p.expected_games() for p in PLANS)
    demo.certification = certify(root, progress=progress("replaying and auditing", games))
    session = open_session(root)
    demo.standings = [standings(session, t) for t in demo.tournaments]
    first_game = next(g["stream"] for g in session.projection.games)
    demo.proof = prove(root, first_game)
    check_bundle(demo.proof, load_verifier(root))
    return demo
