"""The board as the log claims it beyond the refused event that stopped a game's replay (issue 31
point 6): where each engine's replay stops deriving the log, and the boards beyond it taken as the
log states them, never derived; the report's viewer, `show --at` and the summary read them here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from replay.picture import Frame
from replay.protocol import Step
from schemas.envelope import Event


def claimed_boards(steps: list[Step], game: str) -> Iterator[tuple[Any, Frame | None] | None]:
    """Yields, per step, None where its board is derived (or the engine cannot draw a claim), else
    the board as the log claims it after the step and the frame of the move it made (None where it
    moved nothing): beyond a halted replay, each move taken as the log states it (a Paohuzi claim
    starts with the refused action itself: the log went on as if it had been taken)."""
    view = claimed_view(game)
    halt = halted_at(steps, game)
    claimed = None
    for i, step in enumerate(steps):
        if view is None or halt is None or i <= halt:
            yield None
            continue
        seeded = None
        if claimed is None and view.start is not None:
            seeded = claimed = view.start(steps, halt)
        moved = view.apply(claimed or step.state, step.event)
        claimed = moved or claimed
        if moved is None and seeded is not None:
            yield seeded, view.frame(seeded, steps[halt].event)
            continue
        yield claimed or step.state, (view.frame(moved, step.event) if moved is not None else None)


def is_stopped(state: Any) -> bool:
    """Tells whether a replay derives nothing more: Junqi halted (flag_and_stop), checkers' check
    stopped as unverified (stop_unverified)."""
    return getattr(state, "halted", None) is not None or bool(getattr(state, "unverified", False))


def halted_at(steps: list[Step], game: str) -> int | None:
    """Returns the index of the refused step after which the replay derives no more of the log: Junqi
    halted, checkers stopped as unverified, or Paohuzi's play refused from there on; None where none."""
    view = claimed_view(game)
    if view is not None and view.stop is not None:
        return view.stop(steps)
    return next((i for i, s in enumerate(steps) if is_stopped(s.state) and any(f.severity == "error" for f in s.findings)), None)


def beyond_halt(steps: list[Step], game: str) -> list[bool]:
    """Tells, per step, whether it lies beyond the event that stopped the replay: what the log
    claims there is not derived."""
    halt = halted_at(steps, game)
    return [halt is not None and i > halt for i in range(len(steps))]


class ClaimedView(NamedTuple):
    """How a game draws the board as the log claims it beyond the refused event that stopped its replay."""

    apply: Callable[[Any, Event], Any]
    """The board after an event as the log claims it; None where the event moves nothing."""
    frame: Callable[[Any, Event], Frame]
    """The frame of a claimed board, its caption saying so and naming the event."""
    stop: Callable[[list[Step]], int | None] | None = None
    """Where the replay stopped deriving the log, where the state does not say it (Paohuzi)."""
    start: Callable[[list[Step], int], Any] | None = None
    """The claim's first board from the steps and the halt, where it is not the halted state (Paohuzi:
    the refused action taken as claimed, the table having been left as it was)."""


def claimed_view(game: str) -> ClaimedView | None:
    """Returns how a game draws the board as the log claims it beyond a halted replay, where it can."""
    if game == "junqi":
        from replay.junqi.render import as_claimed, claimed_frame

        return ClaimedView(as_claimed, claimed_frame)
    if game == "checkers":
        from replay.checkers.render import as_claimed as checkers_claimed
        from replay.checkers.render import claimed_frame as checkers_frame

        return ClaimedView(checkers_claimed, checkers_frame)
    if game == "paohuzi":
        from replay.paohuzi.render import as_claimed as paohuzi_claimed
        from replay.paohuzi.render import claimed_frame as paohuzi_frame
        from replay.paohuzi.render import start_claim, stopped_at

        return ClaimedView(paohuzi_claimed, paohuzi_frame, stopped_at, start_claim)
    return None
