"""Compares the competition software's `game.ended` claim with the outcome an engine derives."""

from __future__ import annotations

from collections.abc import Mapping

from replay.protocol import Finding, Outcome, found, seat_list_zh_en, seats_zh_en
from replay.values import Code, ended
from schemas.common import GameEnded


def check_claim(codes: Mapping[str, Code], code: str, claim: GameEnded, derived: Outcome | None,
                article: str | None = None) -> list[Finding]:
    """Returns a finding under `code` for each part of the claim that differs from the derived outcome."""

    def finding(message: str) -> Finding:
        return found(codes, claim, code, message, article)

    if derived is None:
        zh, en = ended(claim.termination)
        return [finding(f"软件申报对局已结束（{zh}），但按规则对局仍在继续 software claims the game ended ({en}) but the rules say it goes on")]
    differences = []
    if claim.termination != derived.termination:
        (czh, cen), (dzh, den) = ended(claim.termination), ended(derived.termination)
        differences.append(finding(f"申报终局方式为{czh}，推导为{dzh} claimed termination {cen}, derived {den}"))
    if sorted(claim.winners) != sorted(derived.winners):
        (czh, cen), (dzh, den) = seat_list_zh_en(claim.winners), seat_list_zh_en(derived.winners)
        differences.append(finding(f"申报胜方为{czh}，推导为{dzh} claimed winners {cen}, derived {den}"))
    if [float(p) for p in claim.points] != [float(p) for p in derived.points]:
        (czh, cen), (dzh, den) = seats_zh_en(claim.points), seats_zh_en(derived.points)
        differences.append(finding(f"申报得分与推导不符：申报 {czh}，推导 {dzh} claimed points {cen}, derived {den}"))
    return differences
