"""What the arbitration report knows of one game, loaded by `audit/presentation/report.py` and read by its
summary (`audit/presentation/verdict.py`): its own module so that neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger import EvidenceBundle
from replay.protocol import Step
from schemas.common import GameEnded, GameStarted
from schemas.envelope import Event


@dataclass
class GameRecord:
    """Everything the report shows about one game."""

    stream: str
    start: GameStarted
    steps: list[Step]
    claim: GameEnded | None
    proof: EvidenceBundle
    proof_ok: str
    related: list[Event]
    """Events of the game's tournament stream that name the game (appeals, rulings filed there)."""
    appeals: list[dict[str, Any]] = field(default_factory=list)
    """The game's appeals as `appeal_list` gives them (window, deadline, decision, signature status)."""
    unsigned: list[Event] = field(default_factory=list)
    """The game's events after the newest signed checkpoint: not certified, never replayed or shown as fact."""
