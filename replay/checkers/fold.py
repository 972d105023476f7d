"""Replay of one game as a fold over its events (DESIGN.md replay/): each event yields the state
after it, its derived facts and its findings; the software's game.ended claim is compared
with the derived outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from replay.checkers.board import HOME, TARGET, rowcol
from replay.checkers.check import check_move
from replay.checkers.codes import ARTICLES, CATALOGUE, Note, Termination, note, public
from replay.checkers.rules import NO_NOTES, Turn, both_lose, count_timeout, derived, draw, play_move, play_pass, settle_by_search, win
from replay.checkers.state import NOBODY, CheckersState, StartError, describe, initial_state, position_key
from replay.claims import check_claim
from replay.fold import checked_steps
from replay.protocol import Finding, InvalidActionError, Outcome, Step, found
from replay.values import SharedTermination
from schemas.checkers import CheckersProfile, Moved
from schemas.common import (
    Disconnected,
    DrawAnswered,
    DrawOffered,
    GameEnded,
    GameStarted,
    MoveTimeUsed,
    PenaltyCard,
    Resigned,
    Ruling,
    Skipped,
    TimedOut,
    ruling_kind,
)
from schemas.envelope import Event

Facts = dict[str, Any]
Result = tuple[CheckersState, Facts, tuple[Note, ...] | list[Note] | list[Finding]]  # a result claim's check gives findings
UNVERIFIED = SharedTermination.UNVERIFIED


class Clock:
    """The timing side of the fold (kept out of the state so that `apply_action`, which has no
    timestamps, and replay reach equal states): turn ends, the last turn's gap, time used."""

    __slots__ = ("prev_ts", "turn_end", "last_gap", "last_seat", "used")

    def __init__(self, ts: int) -> None:
        self.prev_ts = ts
        self.turn_end = ts
        self.last_gap = -1
        self.last_seat: int | None = None
        self.used = [0, 0]

    def turn(self, seat: int | None, ts: int) -> int:
        """Closes a turn at `ts` and returns the time it took since the previous turn's end."""
        gap = ts - self.turn_end
        self.turn_end, self.last_gap, self.last_seat = ts, gap, seat
        return gap


def replay(events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
    """Folds a game's events (starting with `game.started`) into steps (replay.fold.checked_steps).

    :raises NoStartError: when the first event is not a checkers `game.started`.
    :raises InvalidActionError: when the start seats the game impossibly.
    :raises StrictReplayError: in strict mode, at the first error finding.
    """
    return checked_steps("checkers", CheckersProfile, steps, events, strict)


def steps(start: GameStarted, it: Iterator[Event]) -> Iterator[Step]:
    """Folds the events after a checked start into steps, every finding collected.

    :raises InvalidActionError: when the start seats the game impossibly.
    """
    try:
        state = initial_state(start)
    except StartError as exc:
        raise InvalidActionError(str(exc)) from None
    clock = Clock(start.ts)
    yield Step(event=start, state=state, facts={"seat": None, "action": None, "first": start.first})
    expected = start.seq + 1
    stream = start.stream
    for ev in it:
        kind, seat, seq, ts = type(ev), ev.seat, ev.seq, ev.ts
        if (seat is not None and seat > 1) or kind in _CLAIMS:
            handler = _on_no_seat if _outside_seats(ev) else _HANDLERS[kind]
        else:
            handler = _HANDLERS.get(kind, _on_foreign)
        state, facts, notes = handler(state, ev, clock)
        if seq != expected or ts < clock.prev_ts or ev.stream != stream:
            notes = [*_envelope_notes(start, ev, expected, clock), *notes]
        expected = seq + 1
        if ts > clock.prev_ts:
            clock.prev_ts = ts
        findings = tuple(_finding(ev, n, state) for n in notes) if notes else ()
        yield Step(event=ev, state=state, facts=facts, findings=findings)


def _finding(ev: Event, n: Note | Finding, state: CheckersState) -> Finding:
    """Ties a note to its event: the seq, the rule's article, and for a turn the position after it."""
    if isinstance(n, Finding):
        return n
    message = n.message  # the finding's line names the seq (replay.protocol.finding_line)
    if type(ev) in _TURN_EVENTS and "position" not in n.message:
        message += f"; position after it {describe(state)}"
    return found(CATALOGUE, ev, public(n.code), message, ARTICLES[n.code])


def _envelope_notes(start: GameStarted, ev: Event, expected: int, clock: Clock) -> list[Note]:
    """Checks the envelope: the game's stream, dense sequence numbers, timestamps that never go back."""
    out = []
    if ev.stream != start.stream:
        out.append(note("E_STREAM", f"{ev.kind} belongs to stream {ev.stream}, not {start.stream}"))  # type: ignore[attr-defined]
    if ev.seq != expected:
        out.append(note("E_SEQ", f"sequence number {ev.seq} where {expected} was expected"))
    if ev.ts < clock.prev_ts:
        out.append(note("W_CLOCK", f"timestamp {ev.ts} is before the previous event's {clock.prev_ts}"))
    return out


def _outside_seats(ev: Event) -> list[int]:
    """Returns the seats beyond 0 and 1 that an event names: its acting seat, and the winners and
    points of a claim or a ruling (a seat 2 or 3 is valid in the schema, shared with Junqi)."""
    named = set(getattr(ev, "winners", None) or ())
    named.update(range(len(getattr(ev, "points", None) or ())))
    if ev.seat is not None:
        named.add(ev.seat)
    return sorted(x for x in named if x > 1)


def _on_no_seat(s: CheckersState, ev: Event, clock: Clock) -> Result:
    """Ignores an event that names a seat the game does not have (E_NO_SEAT): applied, it would
    change the result (a card to seat 2 would make seat 1 lose)."""
    facts: Facts = {"seat": ev.seat, "action": None, "ignored": True}
    message = f"{ev.kind} names seat {', '.join(map(str, _outside_seats(ev)))}; the game has seats 0 and 1, so it is ignored"  # type: ignore[attr-defined]
    return s, facts, (note("E_NO_SEAT", message),)


def _after_end(s: CheckersState, ev: Event, facts: Facts) -> Result:
    """Reports and ignores a turn event after the game is over (§8: W_AFTER_END); in a game
    stopped as unverified, later events are ignored silently."""
    facts["ignored"] = True
    if s.unverified:
        return s, facts, NO_NOTES
    assert s.outcome is not None
    return s, facts, (note("W_AFTER_END", f"{ev.kind} of seat {ev.seat} after the game ended ({s.outcome.termination})"),)  # type: ignore[attr-defined]


def _move_facts(s: CheckersState, seat: int, action: str | None, think: int, hops: int) -> Facts:
    """Returns the facts of a turn: counters, pieces out of camp and home, hops, thinking time."""
    pieces = s.pieces[seat]
    return {
        "seat": seat, "action": action, "ply": s.ply, "turn": s.turns[seat],
        "out": 10 - (pieces & HOME[seat]).bit_count(), "home": (pieces & TARGET[seat]).bit_count(),
        "hops": hops, "think_ms": think,
    }


def _on_moved(s: CheckersState, ev: Moved, clock: Clock) -> Result:
    frm, to, seat = ev.from_, ev.to, ev.seat
    action = f"{frm}>{to}"
    think = clock.turn(seat, ev.ts)
    if s.outcome is not None:
        return _after_end(s, ev, {"seat": seat, "action": action})
    verdict = check_move(s, seat, frm, to, ev.path)
    if verdict.code is not None:
        return _illegal(s, ev, verdict.code, verdict.why, action, think)
    turn = play_move(s, frm, to, verdict.path, shown=ev.path is not None)
    p = s.profile
    if not ev.system and think > p.move_time_limit_s * 1000 + p.time_tolerance_ms:
        turn = _slow(turn, ev, think)
    notes = turn.notes
    if verdict.notes:
        notes = (*verdict.notes, *notes)
    return turn.state, _move_facts(turn.state, seat, action, think, verdict.hops), notes


def _slow(turn: Turn, ev: Moved, think: int) -> Turn:
    """Reports a move over the 20-second limit (第四条, §6: W_SLOW_MOVE), counted as a timeout
    when the profile derives timeouts from timestamps."""
    p = turn.state.profile
    slow = note("W_SLOW_MOVE", f"seat {ev.seat} took {think} ms for {ev.from_}>{ev.to}, over the {p.move_time_limit_s} s limit")
    if not p.derive_timeouts_from_timestamps or turn.state.outcome is not None:
        return Turn(turn.state, (*turn.notes, slow))
    counted = count_timeout(turn.state, ev.seat)
    return Turn(counted.state, (*turn.notes, slow, *counted.notes))


def _illegal(s: CheckersState, ev: Moved, code: str, why: str, action: str, think: int) -> Result:
    """Reports an illegal move and goes on as `on_illegal_move` says (§4.7): stop the check and
    mark the game unverified, or apply a move that can be applied and flag it."""
    shown = f"{ev.from_}>{ev.to} ({rowcol(ev.from_)}>{rowcol(ev.to)})"
    found = note(code, f"seat {ev.seat} moved {shown}: {why}; position {describe(s)}")
    facts: Facts = {"seat": ev.seat, "action": action, "ply": s.ply, "illegal": code}
    appliable = code not in ("E_NOT_YOUR_TURN", "E_NO_OWN_PIECE", "E_OCCUPIED")
    if s.profile.on_illegal_move == "flag_and_apply" and appliable:
        turn = play_move(s, ev.from_, ev.to, ev.path or (ev.from_, ev.to), shown=ev.path is not None)
        return turn.state, {**_move_facts(turn.state, ev.seat, action, think, 0), "illegal": code}, [found, *turn.notes]
    if s.profile.on_illegal_move == "stop_unverified":
        s = msgspec.structs.replace(s, unverified=True, outcome=Outcome(termination=UNVERIFIED, winners=(), points=(0.0, 0.0)))
    return s, facts, (found,)


def _on_timed_out(s: CheckersState, ev: TimedOut, clock: Clock) -> Result:
    facts: Facts = {"seat": ev.seat, "action": None, "think_ms": clock.turn(ev.seat, ev.ts)}
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    if ev.seat != s.to_move:
        return s, facts, (note("E_NOT_YOUR_TURN", f"timeout of seat {ev.seat} while seat {s.to_move} is to move"),)
    turn = play_pass(s, timeout=True) if s.profile.on_timeout == "pass" else count_timeout(s, s.to_move)
    seat = s.to_move
    facts = {**_move_facts(turn.state, seat, None, facts["think_ms"], 0), "timeouts": turn.state.timeouts[seat]}
    return turn.state, facts, turn.notes


def _on_skipped(s: CheckersState, ev: Skipped, clock: Clock) -> Result:
    facts: Facts = {"seat": ev.seat, "action": None}
    if s.timed_out == ev.seat != s.to_move or (s.outcome is not None and s.timed_out == ev.seat):
        facts["auto_skip"] = True
        return msgspec.structs.replace(s, timed_out=NOBODY), facts, NO_NOTES
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    if ev.seat is not None and ev.seat != s.to_move and s.arrived[ev.seat]:
        facts["finished"] = True
        return s, facts, NO_NOTES
    facts["think_ms"] = clock.turn(ev.seat, ev.ts)
    if ev.seat != s.to_move:
        return s, facts, (note("E_NOT_YOUR_TURN", f"略过 of seat {ev.seat} while seat {s.to_move} is to move"),)
    turn = play_pass(s, timeout=False)
    seat = s.to_move
    facts = {**_move_facts(turn.state, seat, None, facts["think_ms"], 0), "passes": turn.state.passes[seat]}
    return turn.state, facts, turn.notes


def _on_move_time(s: CheckersState, ev: MoveTimeUsed, clock: Clock) -> Result:
    """Checks the competition clock's time for the last turn against the timestamp gap (§6)."""
    seat = ev.seat if ev.seat is not None else clock.last_seat
    facts: Facts = {"seat": seat, "action": None, "ms": ev.ms}
    if seat is not None:
        clock.used[seat] += ev.ms
        facts["time_used"] = clock.used[seat]
    gap = clock.last_gap
    if gap >= 0 and not s.unverified and abs(ev.ms - gap) > s.profile.time_tolerance_ms:
        return s, facts, (note("W_MOVE_TIME", f"clock says seat {seat} used {ev.ms} ms, the timestamps say {gap} ms"),)
    return s, facts, NO_NOTES


def _on_disconnected(s: CheckersState, ev: Disconnected, clock: Clock) -> Result:
    """A disconnect is reported; a table that ends while a seat is offline was dissolved (§8)."""
    facts: Facts = {"seat": ev.seat, "action": None, "reconnected": ev.reconnected}
    if ev.seat is None:
        return s, facts, (note("E_NO_SEAT", "game.disconnected names no seat"),)
    s = msgspec.structs.replace(s, offline=_put(s.offline, ev.seat, not ev.reconnected))
    if ev.reconnected or s.outcome is not None:
        return s, facts, NO_NOTES
    if s.profile.disconnect_without_dissolve == "yellow":
        s = msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination.DISCONNECTED))
    return s, facts, (note("W_DISCONNECT", f"seat {ev.seat} disconnected at ply {s.ply}"),)


def _on_penalty(s: CheckersState, ev: PenaltyCard, clock: Clock) -> Result:
    """A yellow card loses the game (第十六条), a red card disqualifies (第十七条)."""
    facts: Facts = {"seat": ev.seat, "action": None, "card": ev.card}
    if ev.seat is None:
        return s, facts, (note("E_NO_SEAT", "game.penalty names no seat"),)
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    return msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination(f"{ev.card.upper()}_CARD"))), facts, NO_NOTES


def _on_resigned(s: CheckersState, ev: Resigned, clock: Clock) -> Result:
    facts: Facts = {"seat": ev.seat, "action": None}
    if ev.seat is None:
        return s, facts, (note("E_NO_SEAT", "game.resigned names no seat"),)
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    if not s.profile.resign_allowed:
        return s, facts, (note("W_RESIGN_IGNORED", f"seat {ev.seat} resigned; the profile does not end games by resignation"),)
    return msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination.RESIGNED)), facts, NO_NOTES


def _on_draw_offered(s: CheckersState, ev: DrawOffered, clock: Clock) -> Result:
    """A draw offer; with `repetition_auto = false` it is also the claim of a repetition (§7)."""
    facts: Facts = {"seat": ev.seat, "action": None}
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    p = s.profile
    if not p.repetition_auto and s.history:
        key = position_key(s.pieces, s.to_move, derived(p).with_side)
        triggered = s.evacuated_at > 0 if derived(p).trigger_ply < 0 else s.ply >= derived(p).trigger_ply
        if triggered and s.history.count(key) >= p.repetition_count:
            return msgspec.structs.replace(s, outcome=draw(Termination.REPETITION)), facts, NO_NOTES
    return msgspec.structs.replace(s, draw_offer=ev.seat if ev.seat is not None else NOBODY), facts, NO_NOTES


def _on_draw_answered(s: CheckersState, ev: DrawAnswered, clock: Clock) -> Result:
    facts: Facts = {"seat": ev.seat, "action": None, "accept": ev.accept}
    if s.outcome is not None:
        return _after_end(s, ev, facts)
    offered = s.draw_offer not in (NOBODY, ev.seat)
    s = msgspec.structs.replace(s, draw_offer=NOBODY)
    if not (ev.accept and offered):
        return s, facts, NO_NOTES
    if s.profile.agreed_draw:
        return msgspec.structs.replace(s, outcome=draw(Termination.DRAW_AGREED)), facts, NO_NOTES
    return s, facts, (note("W_DRAW_AGREEMENT", "a draw was agreed; the sheet draws only by the margin rule or repetition, so play goes on"),)


def _on_ruling(s: CheckersState, ev: Ruling, clock: Clock) -> Result:
    """A referee's ruling: a result override during play ends the game with it, an authorised skip
    allows the named seat's next 略过 (§8); a correction after the end and the other kinds act on
    the result after play (replay/rulings.py), so the claim is held to the result of play."""
    kind = ruling_kind(ev)
    facts: Facts = {"seat": ev.seat, "action": None, "corrects": ev.corrects, "ruling": kind}
    if kind == "authorised_skip":
        return msgspec.structs.replace(s, pass_authorised=ev.seat if ev.seat is not None else NOBODY), facts, NO_NOTES
    if kind != "result_override" or s.outcome is not None:
        return s, facts, NO_NOTES
    winners = tuple(ev.winners or ())
    if ev.points is not None:
        points = tuple(float(x) for x in ev.points)
    else:
        points = win(winners[0], "").points if len(winners) == 1 else (0.5, 0.5) if not winners else (0.0, 0.0)
    ruled = Outcome(termination=ev.termination or SharedTermination.RULING, winners=winners, points=points)
    return msgspec.structs.replace(s, outcome=ruled), facts, NO_NOTES


def _on_ended(s: CheckersState, ev: GameEnded, clock: Clock) -> Result:
    """Compares the software's claim with the derived result, settling first a pending
    equaliser by search (§5.2) and a table dissolved by a disconnect (第十六条(1))."""
    facts: Facts = {"seat": ev.seat, "action": None, "claimed": ev.termination}
    if s.unverified:
        facts["unverified"] = True
        return _adopt_claim(s, ev), facts, NO_NOTES
    if s.outcome is None and s.arrived != (0, 0) and s.profile.equalizer_source != "log_only":
        s = settle_by_search(s)
        facts["equalizer"] = "computed"
    if s.outcome is None and any(s.offline) and "dissolve" in s.profile.auto_cards:
        s = msgspec.structs.replace(s, outcome=_dissolved(s))
    if s.outcome is None:
        facts["unverified"] = True
        return _adopt_claim(s, ev), {**facts, "derived": None}, (_no_result(s, ev),)
    claimed = check_claim(CATALOGUE, public("E_CLAIM"), ev, s.outcome, ARTICLES["E_CLAIM"])
    facts["derived"] = s.outcome.termination if s.outcome else None
    return s, facts, claimed


def _adopt_claim(s: CheckersState, ev: GameEnded) -> CheckersState:
    """Keeps the software's declared result for the standings under the termination UNVERIFIED
    (§4.7, §5.4a): the rules could not decide the game, and the standings must not drop it."""
    adopted = Outcome(termination=UNVERIFIED, winners=tuple(ev.winners), points=tuple(float(x) for x in ev.points))
    return msgspec.structs.replace(s, unverified=True, outcome=adopted)


def _no_result(s: CheckersState, ev: GameEnded) -> Note:
    """Flags a log that ends while the rules still have the game going on (§5.4a: UNVERIFIED,
    compared with the claim), naming what the software declared."""
    return note("E_NO_RESULT", f"the log ends after ply {s.ply} without a result (seat {s.to_move} to move); the claimed "
                               f"{ev.termination}, winners {list(ev.winners)}, points {list(ev.points)} is kept for the "
                               f"standings as UNVERIFIED")


def _dissolved(s: CheckersState) -> Outcome:
    """Returns the result of a table dissolved while seats were offline: a yellow card each (第十六条(1))."""
    if all(s.offline):
        return both_lose(Termination.DISSOLVED, s.profile.double_forfeit)
    return win(1 if s.offline[0] else 0, Termination.DISSOLVED)


def _on_foreign(s: CheckersState, ev: Event, clock: Clock) -> Result:
    return s, {"seat": ev.seat, "action": None}, (note("E_FOREIGN_EVENT", f"{ev.kind} is not an event of a checkers game"),)  # type: ignore[attr-defined]


def _put(pair: tuple[bool, bool], seat: int, value: bool) -> tuple[bool, bool]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


_TURN_EVENTS: frozenset[type] = frozenset({Moved, TimedOut, Skipped})
_CLAIMS: frozenset[type] = frozenset({GameEnded, Ruling})
"""Events that name seats beyond their acting one (winners, points)."""
_HANDLERS: dict[type, Callable[[CheckersState, Any, Clock], Result]] = {
    Moved: _on_moved, TimedOut: _on_timed_out, Skipped: _on_skipped, MoveTimeUsed: _on_move_time,
    Disconnected: _on_disconnected, PenaltyCard: _on_penalty, Resigned: _on_resigned,
    DrawOffered: _on_draw_offered, DrawAnswered: _on_draw_answered, Ruling: _on_ruling, GameEnded: _on_ended,
}
