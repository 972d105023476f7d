"""Replay of one game as a fold over its events (DESIGN.md replay/): each event yields the state
after it, its derived facts and its findings; the software's game.ended claim is compared
with the derived outcome. Each kind's rule is a `replay.fold.Handler` over the `Clock`, which
reports findings with `find` (`replay.fold.Findings`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from replay.checkers.board import HOME, TARGET, rowcol
from replay.checkers.check import check_move
from replay.checkers.codes import ARTICLES, CATALOGUE, Note, Termination, note, public
from replay.checkers.rules import Turn, both_lose, count_timeout, derived, draw, play_move, play_pass, settle_by_search, win
from replay.checkers.state import NOBODY, CheckersState, StartError, describe, initial_state, position_key
from replay.claims import check_claim
from replay.fold import Facts, Handler, checked_steps
from replay.protocol import Finding, InvalidActionError, Outcome, Place, Said, Step, found, seat_list_zh_en, seats_zh_en
from replay.values import SharedTermination, ended
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

UNVERIFIED = SharedTermination.UNVERIFIED


class Clock:
    """The timing side of the fold (kept out of the state so that `apply_action`, which has no
    timestamps, and replay reach equal states): turn ends, the last turn's gap, time used; and the
    findings of the event being folded (`replay.fold.Findings`)."""

    __slots__ = ("prev_ts", "turn_end", "last_gap", "last_seat", "used", "findings")

    def __init__(self, ts: int) -> None:
        self.prev_ts = ts
        self.turn_end = ts
        self.last_gap = -1
        self.last_seat: int | None = None
        self.used = [0, 0]
        self.findings: list[Finding] = []

    def find(self, event: Place, code: str, message: str, article: str | None = None) -> None:
        """Records the finding of `code` at `event` (its severity is the catalogue's)."""
        self.findings.append(found(CATALOGUE, event, code, message, article))

    def note(self, event: Place, *notes: Note) -> None:
        """Records the rules' notes (sheet names, checkers.md) as findings at `event`, with their articles."""
        for n in notes:
            self.find(event, public(n.code), n.message, ARTICLES[n.code])

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
    pending = clock.findings
    for ev in it:
        kind, seat, seq, ts = type(ev), ev.seat, ev.seq, ev.ts
        if seq != expected or ts < clock.prev_ts or ev.stream != stream:
            _envelope(start, ev, expected, clock)
        if (seat is not None and seat > 1) or kind in _CLAIMS:
            handler = _on_no_seat if _outside_seats(ev) else _HANDLERS[kind]
        else:
            handler = _HANDLERS.get(kind, _on_foreign)
        facts: Facts = {"seat": seat, "action": None}
        state = handler(state, ev, clock, facts)
        expected = seq + 1
        if ts > clock.prev_ts:
            clock.prev_ts = ts
        if not pending:
            yield Step(event=ev, state=state, facts=facts)
            continue
        findings = tuple(_at_position(f, state) for f in pending) if kind in _TURN_EVENTS else tuple(pending)
        pending.clear()
        yield Step(event=ev, state=state, facts=facts, findings=findings)


def _at_position(finding: Finding, state: CheckersState) -> Finding:
    """Ties a turn's finding to the position after the turn (its line names the seq already,
    replay.protocol.finding_line)."""
    if "position" in finding.message:
        return finding
    return msgspec.structs.replace(finding, message=f"{finding.message}；此后局面 position after it {describe(state)}")


def _envelope(start: GameStarted, ev: Event, expected: int, clock: Clock) -> None:
    """Checks the envelope: the game's stream, dense sequence numbers, timestamps that never go back."""
    if ev.stream != start.stream:
        clock.note(ev, note("E_STREAM", f"事件 {ev.kind} 属于流 {ev.stream}，不是 {start.stream} "  # type: ignore[attr-defined]
                                        f"{ev.kind} belongs to stream {ev.stream}, not {start.stream}"))
    if ev.seq != expected:
        clock.note(ev, note("E_SEQ", f"序号为 {ev.seq}，应为 {expected} sequence number {ev.seq} where {expected} was expected"))
    if ev.ts < clock.prev_ts:
        clock.note(ev, note("W_CLOCK", f"时间戳 {ev.ts} 早于上一事件的 {clock.prev_ts} timestamp {ev.ts} is before the previous event's "
                                       f"{clock.prev_ts}"))


def _outside_seats(ev: Event) -> list[int]:
    """Returns the seats beyond 0 and 1 that an event names: its acting seat, and the winners and
    points of a claim or a ruling (a seat 2 or 3 is valid in the schema, shared with Junqi)."""
    named = set(getattr(ev, "winners", None) or ())
    named.update(range(len(getattr(ev, "points", None) or ())))
    if ev.seat is not None:
        named.add(ev.seat)
    return sorted(x for x in named if x > 1)


def _on_no_seat(s: CheckersState, ev: Event, clock: Clock, facts: Facts) -> CheckersState:
    """Ignores an event that names a seat the game does not have (E_NO_SEAT): applied, it would
    change the result (a card to seat 2 would make seat 1 lose)."""
    facts["ignored"] = True
    named = ", ".join(map(str, _outside_seats(ev)))
    message = (f"事件 {ev.kind} 指明座位{named}，本局只有座位0和1，此事件不计 "  # type: ignore[attr-defined]
               f"{ev.kind} names seat {named}; the game has seats 0 and 1, so it is ignored")
    clock.note(ev, note("E_NO_SEAT", message))
    return s


def _after_end(s: CheckersState, ev: Event, clock: Clock, facts: Facts) -> CheckersState:
    """Reports and ignores a turn event after the game is over (§8: W_AFTER_END); in a game
    stopped as unverified, later events are ignored silently."""
    facts["ignored"] = True
    if s.unverified:
        return s
    assert s.outcome is not None
    zh, en = ended(s.outcome.termination)
    clock.note(ev, note("W_AFTER_END", f"对局已结束（{zh}）后座位{ev.seat}仍有事件 {ev.kind} "  # type: ignore[attr-defined]
                                       f"{ev.kind} of seat {ev.seat} after the game ended ({en})"))
    return s


def _move_facts(facts: Facts, s: CheckersState, seat: int, action: str | None, think: int, hops: int) -> None:
    """Adds the facts of a turn to `facts` (whose keys are the seat and action): counters, pieces
    out of camp and home, hops, thinking time; filled in place, the commonest step's one dict."""
    pieces = s.pieces[seat]
    facts["seat"] = seat
    facts["action"] = action
    facts["ply"] = s.ply
    facts["turn"] = s.turns[seat]
    facts["out"] = 10 - (pieces & HOME[seat]).bit_count()
    facts["home"] = (pieces & TARGET[seat]).bit_count()
    facts["hops"] = hops
    facts["think_ms"] = think


def _on_moved(s: CheckersState, ev: Moved, clock: Clock, facts: Facts) -> CheckersState:
    frm, to, seat = ev.from_, ev.to, ev.seat
    action = f"{frm}>{to}"
    facts["action"] = action
    think = clock.turn(seat, ev.ts)
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    verdict = check_move(s, seat, frm, to, ev.path)
    if verdict.code is not None:
        return _illegal(s, ev, verdict.code, verdict.why, action, think, clock, facts)
    turn = play_move(s, frm, to, verdict.path, shown=ev.path is not None)
    p = s.profile
    if not ev.system and think > p.move_time_limit_s * 1000 + p.time_tolerance_ms:
        turn = _slow(turn, ev, think)
    if verdict.notes:
        clock.note(ev, *verdict.notes)
    if turn.notes:
        clock.note(ev, *turn.notes)
    _move_facts(facts, turn.state, seat, action, think, verdict.hops)
    return turn.state


def _slow(turn: Turn, ev: Moved, think: int) -> Turn:
    """Reports a move over the 20-second limit (第四条, §6: W_SLOW_MOVE), counted as a timeout
    when the profile derives timeouts from timestamps."""
    p = turn.state.profile
    slow = note("W_SLOW_MOVE", f"座位{ev.seat}走 {ev.from_}>{ev.to} 用时 {think} 毫秒，超过 {p.move_time_limit_s} 秒限时 "
                               f"seat {ev.seat} took {think} ms for {ev.from_}>{ev.to}, over the {p.move_time_limit_s} s limit")
    if not p.derive_timeouts_from_timestamps or turn.state.outcome is not None:
        return Turn(turn.state, (*turn.notes, slow))
    counted = count_timeout(turn.state, ev.seat)
    return Turn(counted.state, (*turn.notes, slow, *counted.notes))


def _illegal(s: CheckersState, ev: Moved, code: str, why: Said, action: str, think: int, clock: Clock,
             facts: Facts) -> CheckersState:
    """Reports an illegal move and goes on as `on_illegal_move` says (§4.7): stop the check and
    mark the game unverified, or apply a move that can be applied and flag it."""
    shown = f"{ev.from_}>{ev.to} ({rowcol(ev.from_)}>{rowcol(ev.to)})"
    clock.note(ev, note(code, f"座位{ev.seat}走 {shown} 不合法：{why.zh} seat {ev.seat} moved {shown}: {why.en}；局面 position {describe(s)}"))
    appliable = code not in ("E_NOT_YOUR_TURN", "E_NO_OWN_PIECE", "E_OCCUPIED")
    if s.profile.on_illegal_move == "flag_and_apply" and appliable:
        turn = play_move(s, ev.from_, ev.to, ev.path or (ev.from_, ev.to), shown=ev.path is not None)
        if turn.notes:
            clock.note(ev, *turn.notes)
        _move_facts(facts, turn.state, ev.seat, action, think, 0)
        facts["illegal"] = code
        return turn.state
    facts["ply"] = s.ply
    facts["illegal"] = code
    if s.profile.on_illegal_move == "stop_unverified":
        s = msgspec.structs.replace(s, unverified=True, outcome=Outcome(termination=UNVERIFIED, winners=(), points=(0.0, 0.0)))
    return s


def _on_timed_out(s: CheckersState, ev: TimedOut, clock: Clock, facts: Facts) -> CheckersState:
    think = clock.turn(ev.seat, ev.ts)
    if s.outcome is not None or ev.seat != s.to_move:
        facts["think_ms"] = think
        if s.outcome is not None:
            return _after_end(s, ev, clock, facts)
        clock.note(ev, note("E_NOT_YOUR_TURN", f"轮到座位{s.to_move}走时座位{ev.seat}超时 "
                                               f"timeout of seat {ev.seat} while seat {s.to_move} is to move"))
        return s
    turn = play_pass(s, timeout=True) if s.profile.on_timeout == "pass" else count_timeout(s, s.to_move)
    seat = s.to_move
    _move_facts(facts, turn.state, seat, None, think, 0)
    facts["timeouts"] = turn.state.timeouts[seat]
    if turn.notes:
        clock.note(ev, *turn.notes)
    return turn.state


def _on_skipped(s: CheckersState, ev: Skipped, clock: Clock, facts: Facts) -> CheckersState:
    if s.timed_out == ev.seat != s.to_move or (s.outcome is not None and s.timed_out == ev.seat):
        facts["auto_skip"] = True
        return msgspec.structs.replace(s, timed_out=NOBODY)
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    if ev.seat is not None and ev.seat != s.to_move and s.arrived[ev.seat]:
        facts["finished"] = True
        return s
    think = clock.turn(ev.seat, ev.ts)
    if ev.seat != s.to_move:
        facts["think_ms"] = think
        clock.note(ev, note("E_NOT_YOUR_TURN", f"轮到座位{s.to_move}走时座位{ev.seat}略过 skip of seat {ev.seat} while seat {s.to_move} is to move"))
        return s
    turn = play_pass(s, timeout=False)
    seat = s.to_move
    _move_facts(facts, turn.state, seat, None, think, 0)
    facts["passes"] = turn.state.passes[seat]
    if turn.notes:
        clock.note(ev, *turn.notes)
    return turn.state


def _on_move_time(s: CheckersState, ev: MoveTimeUsed, clock: Clock, facts: Facts) -> CheckersState:
    """Checks the competition clock's time for the last turn against the timestamp gap (§6)."""
    seat = ev.seat if ev.seat is not None else clock.last_seat
    facts["seat"] = seat
    facts["ms"] = ev.ms
    if seat is not None:
        clock.used[seat] += ev.ms
        facts["time_used"] = clock.used[seat]
    gap = clock.last_gap
    if gap >= 0 and not s.unverified and abs(ev.ms - gap) > s.profile.time_tolerance_ms:
        clock.note(ev, note("W_MOVE_TIME", f"计时称座位{seat}用时 {ev.ms} 毫秒，时间戳为 {gap} 毫秒 "
                                           f"clock says seat {seat} used {ev.ms} ms, the timestamps say {gap} ms"))
    return s


def _on_disconnected(s: CheckersState, ev: Disconnected, clock: Clock, facts: Facts) -> CheckersState:
    """A disconnect is reported; a table that ends while a seat is offline was dissolved (§8)."""
    facts["reconnected"] = ev.reconnected
    if ev.seat is None:
        clock.note(ev, note("E_NO_SEAT", "掉线事件未指明座位 game.disconnected names no seat"))
        return s
    s = msgspec.structs.replace(s, offline=_put(s.offline, ev.seat, not ev.reconnected))
    if ev.reconnected or s.outcome is not None:
        return s
    if s.profile.disconnect_without_dissolve == "yellow":
        s = msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination.DISCONNECTED))
    clock.note(ev, note("W_DISCONNECT", f"座位{ev.seat}在第 {s.ply} 手掉线 seat {ev.seat} disconnected at ply {s.ply}"))
    return s


def _on_penalty(s: CheckersState, ev: PenaltyCard, clock: Clock, facts: Facts) -> CheckersState:
    """A yellow card loses the game (第十六条), a red card disqualifies (第十七条)."""
    facts["card"] = ev.card
    if ev.seat is None:
        clock.note(ev, note("E_NO_SEAT", "判罚事件未指明座位 game.penalty names no seat"))
        return s
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    return msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination(f"{ev.card.upper()}_CARD")))


def _on_resigned(s: CheckersState, ev: Resigned, clock: Clock, facts: Facts) -> CheckersState:
    if ev.seat is None:
        clock.note(ev, note("E_NO_SEAT", "认输事件未指明座位 game.resigned names no seat"))
        return s
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    if not s.profile.resign_allowed:
        clock.note(ev, note("W_RESIGN_IGNORED", f"座位{ev.seat}认输，但本赛制设置不以认输结束对局 "
                                                f"seat {ev.seat} resigned; the profile does not end games by resignation"))
        return s
    return msgspec.structs.replace(s, outcome=win(1 - ev.seat, Termination.RESIGNED))


def _on_draw_offered(s: CheckersState, ev: DrawOffered, clock: Clock, facts: Facts) -> CheckersState:
    """A draw offer; with `repetition_auto = false` it is also the claim of a repetition (§7)."""
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    p = s.profile
    if not p.repetition_auto and s.history:
        key = position_key(s.pieces, s.to_move, derived(p).with_side)
        triggered = s.evacuated_at > 0 if derived(p).trigger_ply < 0 else s.ply >= derived(p).trigger_ply
        if triggered and s.history.count(key) >= p.repetition_count:
            return msgspec.structs.replace(s, outcome=draw(Termination.REPETITION))
    return msgspec.structs.replace(s, draw_offer=ev.seat if ev.seat is not None else NOBODY)


def _on_draw_answered(s: CheckersState, ev: DrawAnswered, clock: Clock, facts: Facts) -> CheckersState:
    facts["accept"] = ev.accept
    if s.outcome is not None:
        return _after_end(s, ev, clock, facts)
    offered = s.draw_offer not in (NOBODY, ev.seat)
    s = msgspec.structs.replace(s, draw_offer=NOBODY)
    if not (ev.accept and offered):
        return s
    if s.profile.agreed_draw:
        return msgspec.structs.replace(s, outcome=draw(Termination.DRAW_AGREED))
    clock.note(ev, note("W_DRAW_AGREEMENT", "双方议和，但规则只按进营差或重复行棋判和，对局继续 "
                                          "a draw was agreed; the sheet draws only by the margin rule or repetition, so play goes on"))
    return s


def _on_ruling(s: CheckersState, ev: Ruling, clock: Clock, facts: Facts) -> CheckersState:
    """A referee's ruling: a result override during play ends the game with it, an authorised skip
    allows the named seat's next 略过 (§8); a correction after the end and the other kinds act on
    the result after play (replay/rulings.py), so the claim is held to the result of play."""
    kind = ruling_kind(ev)
    facts["corrects"] = ev.corrects
    facts["ruling"] = kind
    if kind == "authorised_skip":
        return msgspec.structs.replace(s, pass_authorised=ev.seat if ev.seat is not None else NOBODY)
    if kind != "result_override" or s.outcome is not None:
        return s
    winners = tuple(ev.winners or ())
    if ev.points is not None:
        points = tuple(float(x) for x in ev.points)
    else:
        points = win(winners[0], "").points if len(winners) == 1 else (0.5, 0.5) if not winners else (0.0, 0.0)
    ruled = Outcome(termination=ev.termination or SharedTermination.RULING, winners=winners, points=points)
    return msgspec.structs.replace(s, outcome=ruled)


def _on_ended(s: CheckersState, ev: GameEnded, clock: Clock, facts: Facts) -> CheckersState:
    """Compares the software's claim with the derived result, settling first a pending
    equaliser by search (§5.2) and a table dissolved by a disconnect (第十六条(1))."""
    facts["claimed"] = ev.termination
    if s.unverified:
        facts["unverified"] = True
        return _adopt_claim(s, ev)
    if s.outcome is None and s.arrived != (0, 0) and s.profile.equalizer_source != "log_only":
        s = settle_by_search(s)
        facts["equalizer"] = "computed"
    if s.outcome is None and any(s.offline) and "dissolve" in s.profile.auto_cards:
        s = msgspec.structs.replace(s, outcome=_dissolved(s))
    if s.outcome is None:
        facts["unverified"] = True
        facts["derived"] = None
        clock.note(ev, _no_result(s, ev))
        return _adopt_claim(s, ev)
    clock.findings.extend(check_claim(CATALOGUE, public("E_CLAIM"), ev, s.outcome, ARTICLES["E_CLAIM"]))
    facts["derived"] = s.outcome.termination if s.outcome else None
    return s


def _adopt_claim(s: CheckersState, ev: GameEnded) -> CheckersState:
    """Keeps the software's declared result for the standings under the termination UNVERIFIED
    (§4.7, §5.4a): the rules could not decide the game, and the standings must not drop it."""
    adopted = Outcome(termination=UNVERIFIED, winners=tuple(ev.winners), points=tuple(float(x) for x in ev.points))
    return msgspec.structs.replace(s, unverified=True, outcome=adopted)


def _no_result(s: CheckersState, ev: GameEnded) -> Note:
    """Flags a log that ends while the rules still have the game going on (§5.4a: UNVERIFIED,
    compared with the claim), naming what the software declared."""
    (tzh, ten), (wzh, wen), (pzh, pen) = ended(ev.termination), seat_list_zh_en(ev.winners), seats_zh_en(ev.points)
    return note("E_NO_RESULT", f"记录在第 {s.ply} 手后结束而没有结果（轮到座位{s.to_move}走）；申报的{tzh}、胜方{wzh}、得分 {pzh} "
                               f"作为未验证结果计入排名 the log ends after ply {s.ply} without a result (seat {s.to_move} to move); "
                               f"the claimed {ten}, winners {wen}, points {pen} is kept for the standings as unverified")


def _dissolved(s: CheckersState) -> Outcome:
    """Returns the result of a table dissolved while seats were offline: a yellow card each (第十六条(1))."""
    if all(s.offline):
        return both_lose(Termination.DISSOLVED, s.profile.double_forfeit)
    return win(1 if s.offline[0] else 0, Termination.DISSOLVED)


def _on_foreign(s: CheckersState, ev: Event, clock: Clock, facts: Facts) -> CheckersState:
    clock.note(ev, note("E_FOREIGN_EVENT", f"{ev.kind} 不是跳棋对局的事件 {ev.kind} is not an event of a checkers game"))  # type: ignore[attr-defined]
    return s


def _put(pair: tuple[bool, bool], seat: int, value: bool) -> tuple[bool, bool]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


_TURN_EVENTS: frozenset[type] = frozenset({Moved, TimedOut, Skipped})
_CLAIMS: frozenset[type] = frozenset({GameEnded, Ruling})
"""Events that name seats beyond their acting one (winners, points)."""
_HANDLERS: dict[type, Handler[CheckersState, Clock]] = {
    Moved: _on_moved, TimedOut: _on_timed_out, Skipped: _on_skipped, MoveTimeUsed: _on_move_time,
    Disconnected: _on_disconnected, PenaltyCard: _on_penalty, Resigned: _on_resigned,
    DrawOffered: _on_draw_offered, DrawAnswered: _on_draw_answered, Ruling: _on_ruling, GameEnded: _on_ended,
}
