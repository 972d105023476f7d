"""Rulings applied to a game's result, the same way for every game (Junqi 第十四条, 第十六条; checkers
第十二条, 第十六条): the engine derives the result of play, then each result-changing `game.ruling`
of the game, in log order, amends it. Nothing recorded is edited: the derived result is kept beside
the ruled one, and every change names its ruling."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from replay.protocol import Finding, Outcome
from replay.registry import game_of
from replay.values import SharedTermination
from schemas.common import RULING_WORDS, GameStarted, Ruling, ruling_kind
from schemas.envelope import Event

ARTICLE = "第十四条"
RESULT_KINDS = frozenset({"result_override", "forfeit", "penalty", "void_game", "replay_from", "score_correction"})
"""The kinds that change a game's result (the others allow a skip or concern the tournament)."""
VOID = SharedTermination.VOID
REPLAY_ORDERED = SharedTermination.REPLAY_ORDERED


def apply_rulings(start: GameStarted, derived: Outcome | None, events: Iterable[Event]) -> tuple[Outcome | None, list[dict[str, Any]], list[Finding]]:
    """Returns the game's result after its rulings, what each ruling changed, and the findings of
    rulings that cannot be applied (audit.A07)."""
    outcome = derived
    applied: list[dict[str, Any]] = []
    findings: list[Finding] = []
    for ev in events:
        if not isinstance(ev, Ruling) or ruling_kind(ev) not in RESULT_KINDS:
            continue
        try:
            ruled = _apply(start, outcome, ev)
        except ValueError as exc:
            findings.append(Finding(stream=ev.stream, seq=ev.seq, code="audit.A07", article=ARTICLE,
                                    message=f"第 {ev.seq} 号事件的裁决（{RULING_WORDS[ruling_kind(ev)][0]}）无法执行：{exc.args[0]} "
                                            f"the {ruling_kind(ev).replace('_', ' ')} ruling at seq {ev.seq} cannot be applied: {exc.args[-1]}"))
            continue
        applied.append({"seq": ev.seq, "ruling": ruling_kind(ev), "arbiter": ev.arbiter,
                        "termination": ruled.termination if ruled else None, "points": list(ruled.points) if ruled else None,
                        "before": list(outcome.points) if outcome else None})
        outcome = ruled
    return outcome, applied, findings


def _apply(start: GameStarted, outcome: Outcome | None, ev: Ruling) -> Outcome | None:
    """Returns the result after one ruling.

    :raises ValueError: when the ruling lacks what its kind needs, or names points of another game size (args: Chinese, English).
    """
    kind, seats = ruling_kind(ev), len(start.seats)
    named = [*(ev.winners or ()), *([] if ev.seat is None else [ev.seat])]
    if any(s >= seats for s in named):
        raise ValueError(f"裁决指明座位{max(named)}，本局座位为 0–{seats - 1}", f"it names seat {max(named)}, and the game has seats 0–{seats - 1}")
    given = _points(ev, seats)
    if kind in ("void_game", "replay_from"):
        return Outcome(termination=VOID if kind == "void_game" else REPLAY_ORDERED, winners=(), points=())
    if kind == "penalty":
        if given is None:
            return outcome  # a card: recorded, no points change
        if outcome is None or not outcome.points:
            raise ValueError("对没有得分的对局罚分", "penalty points on a game without points")
        return Outcome(termination=outcome.termination, winners=outcome.winners, points=tuple(a + b for a, b in zip(outcome.points, given)))
    if kind == "score_correction":
        if given is None:
            raise ValueError("更正得分的裁决未写明得分", "a score correction names no points")
        winners = tuple(ev.winners) if ev.winners is not None else (outcome.winners if outcome else ())
        return Outcome(termination=outcome.termination if outcome else SharedTermination.RULING, winners=winners, points=given)
    if kind == "forfeit":
        if ev.seat is None:
            raise ValueError("判负裁决未指明被判负的座位", "a forfeit names no seat (the seat that forfeits)")
        winners = tuple(s for s in range(seats) if not _allied(start, s, ev.seat))
        return Outcome(termination=ev.termination or SharedTermination.FORFEIT, winners=winners,
                       points=given if given is not None else _default_points(start, winners, forfeit=ev.seat))
    winners = tuple(ev.winners or ())
    return Outcome(termination=ev.termination or SharedTermination.RULING, winners=winners,
                   points=given if given is not None else _default_points(start, winners))


def _points(ev: Ruling, seats: int) -> tuple[float, ...] | None:
    if ev.points is None:
        return None
    if len(ev.points) != seats:
        raise ValueError(f"裁决写明 {len(ev.points)} 个得分，本局有 {seats} 个座位", f"it names {len(ev.points)} points for a game of {seats} seats")
    return tuple(float(p) for p in ev.points)


def _allied(start: GameStarted, a: int, b: int) -> bool:
    """Tells whether two seats play on one side: the same seat, or Junqi partners (0–2, 1–3)."""
    return a == b or (game_of(start) == "junqi" and a % 2 == b % 2)


def _default_points(start: GameStarted, winners: tuple[int, ...], forfeit: int | None = None) -> tuple[float, ...]:
    """Returns the points the rules give a result: checkers 1 / ½ / 0 (第十八条(4)); Junqi the
    profile's win / draw / loss points, and `forfeit_points` to a forfeiting alliance when set (第十条).
    Paohuzi deal scores depend on the hand, so a Paohuzi ruling must state them.

    :raises ValueError: for a Paohuzi ruling without points.
    """
    game, seats = game_of(start), len(start.seats)
    if game == "checkers":
        return tuple(0.5 for _ in range(seats)) if not winners else tuple(1.0 if s in winners else 0.0 for s in range(seats))
    if game == "junqi":
        p = start.profile.points  # type: ignore[union-attr]
        if not winners:
            return tuple(float(p.draw) for _ in range(seats))
        lost = float(p.loss)
        forfeited = start.profile.forfeit_points  # type: ignore[union-attr]
        return tuple(float(p.win) if s in winners else
                     float(forfeited) if forfeit is not None and forfeited is not None else lost for s in range(seats))
    raise ValueError("此项目的裁决须写明每个座位的得分", f"a {game} ruling must state the points of every seat")
