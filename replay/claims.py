"""Compares the competition software's `game.ended` claim with the outcome an engine derives."""

from __future__ import annotations

from collections.abc import Mapping

from replay.protocol import Finding, Outcome, found
from replay.values import Code
from schemas.common import GameEnded


def check_claim(codes: Mapping[str, Code], code: str, claim: GameEnded, derived: Outcome | None,
                article: str | None = None) -> list[Finding]:
    """Returns a finding under `code` for each part of the claim that differs from the derived outcome."""

    def finding(message: str) -> Finding:
        return found(codes, claim, code, message, article)

    if derived is None:
        return [finding(f"software claims the game ended ({claim.termination}) but the rules say it goes on")]
    differences = []
    if claim.termination != derived.termination:
        differences.append(finding(f"claimed termination {claim.termination}, derived {derived.termination}"))
    if sorted(claim.winners) != sorted(derived.winners):
        differences.append(finding(f"claimed winners {sorted(claim.winners)}, derived {list(derived.winners)}"))
    if [float(p) for p in claim.points] != [float(p) for p in derived.points]:
        differences.append(finding(f"claimed points {list(claim.points)}, derived {list(derived.points)}"))
    return differences
