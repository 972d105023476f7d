"""Replay as a fold over a game's events (junqi.md §11): each event gives the state after it, its
derived facts and its findings (L.., M.., T.., E.. codes with the rule book's article). Each kind's
rule is a `replay.fold.Handler` over the `Audit`, which reports findings with `find`; a move in play
and its move time, nearly every event, take a direct path in `fold_event` (the speed of the commonest)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, cast

import msgspec

from replay.claims import check_claim
from replay.fold import Handler, checked_steps
from replay.junqi.board import NAMES
from replay.junqi.codes import CODES, Termination
from replay.junqi.layout import ARTICLES as LAYOUT_ARTICLES
from replay.junqi.layout import layout_problems, place
from replay.junqi.moves import ARTICLES as MOVE_ARTICLES
from replay.junqi.moves import can_move, check_move, legal_moves
from replay.junqi.pieces import FLAG, KIND_NAMES, KIND_OF, kind_of, seat_of
from replay.junqi.rules import do_move, draw_voters, finish, next_turn, offer_draw, pass_turn, resign, vote_draw
from replay.junqi.state import ALLIANCES, JunqiState, Layout, initial_state, notation, point_index, settings
from replay.protocol import CHANCE, Finding, IllegalActionError, Place, Step, found, seat_list_zh_en
from replay.values import ended
from schemas.common import DrawAnswered, DrawOffered, GameEnded, GameStarted, MoveTimeUsed, Resigned, Ruling, Skipped, TimedOut, ruling_kind
from schemas.envelope import Event
from schemas.junqi import FlagRevealed, JunqiProfile, LayoutSubmitted, Moved

replace: Final = msgspec.structs.replace

CLOCK_TOLERANCE_MS: Final = 1000
"""How far a move-time claim may differ from the timestamp gap before T03 warns (tournament.md §3)."""
AFTER_END_ALLOWED: Final = (MoveTimeUsed, FlagRevealed, GameEnded)
"""Events that may follow the end of a game without being E01 (the last move's timing, its 亮旗,
the claim); rulings, cards and disconnections carry no rule effect either way."""


@dataclass
class Audit:
    """What the fold tracks beside the game state: the clock, 亮旗 still owed, time used per seat,
    the skips the rules allow and the last declined draw offer."""

    stream: str
    last_ts: int
    pending_reveals: dict[int, tuple[int, bool]] = field(default_factory=dict)
    """Per seat whose 司令 died in the last move: its flag's point, and whether the 亮旗 is owed."""
    time_used: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    findings: list[Finding] = field(default_factory=list)
    ended: bool = False
    turn_end: int = 0
    last_turn: tuple[int, int] = (-1, 0)
    """The seq of the last turn-ending event (move, timeout, skip, layout) and its gap to the one before."""
    timed_out: tuple[int, int] = (-1, -1)
    """The seat that last timed out and the plies then: a skip of that seat before any move records
    the timeout's consequence (§7.5)."""
    skip_ruled: int = -1
    """The seat a referee's ruling allows to skip its next turn."""
    declined: tuple[int, int] | None = None
    """The seat that declined the last draw offer and the seq of its answer."""

    def end_turn(self, event: Event) -> None:
        """Notes when a turn ended, so the next move-time claim can be checked against the clock."""
        self.last_turn = (event.seq, event.ts - self.turn_end)
        self.turn_end = event.ts

    def find(self, event: Place, code: str, message: str, article: str | None = None) -> None:
        """Records the finding of `code` (`junqi.M02`) at `event`, its severity the catalogue's
        (`replay.fold.Findings`, the one way every fold reports a finding)."""
        self.findings.append(found(CODES, event, code, message, article))


def start_state(start: GameStarted) -> JunqiState:
    """Returns the state before any event after `game.started`.

    :raises TypeError: when the start event carries another game's profile.
    """
    profile = start.profile
    if not isinstance(profile, JunqiProfile):
        raise TypeError(f"game.started of {start.stream} carries a {type(profile).__name__}, not a JunqiProfile")
    first = start.first if profile.first_seat == "from_log" else int(profile.first_seat)
    return initial_state(profile, first)


def replay(events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
    """Folds a game's events (starting with `game.started`) into steps (replay.fold.checked_steps).

    :raises NoStartError: when the first event is not a junqi `game.started`.
    :raises StrictReplayError: in strict mode, at the first error finding.
    """
    return checked_steps("junqi", JunqiProfile, steps, events, strict)


def steps(start: GameStarted, it: Iterator[Event]) -> Iterator[Step]:
    """Folds the events after a checked start into steps, every finding collected."""
    state = start_state(start)
    audit = Audit(stream=start.stream, last_ts=start.ts, turn_end=start.ts)
    yield Step(event=start, state=state, facts=_counters(state, {"seat": None, "action": None}))
    for event in it:
        state, facts = fold_event(state, event, audit)
        if not audit.findings:
            yield Step(event=event, state=state, facts=facts)
            continue
        findings = tuple(audit.findings)
        audit.findings.clear()
        yield Step(event=event, state=state, facts=facts, findings=findings)


def fold_event(state: JunqiState, event: Event, audit: Audit) -> tuple[JunqiState, dict[str, Any]]:
    """Applies one event to the state, recording findings in `audit`; returns the state and facts."""
    ts = event.ts
    if ts < audit.last_ts:
        audit.find(event, "junqi.T01", f"时间戳 {ts} 早于上一事件的 {audit.last_ts} timestamp {ts} is before the previous event's {audit.last_ts}")
    else:
        audit.last_ts = ts
    # Moves in play and their timing, nearly every event, each take their own path. Events are
    # tagged Structs, a class per kind: the exact type says the kind, quicker than isinstance.
    kind = type(event)
    if state.halted is None:
        if kind is Moved and state.outcome is None:
            audit.end_turn(event)
            if audit.pending_reveals:
                _missed_reveals(event, audit)
            return _moved(state, cast(Moved, event), audit)
        if kind is MoveTimeUsed:
            return state, _move_time(state, cast(MoveTimeUsed, event), audit)
    return _other_event(state, event, kind, audit)


def _other_event(state: JunqiState, event: Event, kind: type, audit: Audit) -> tuple[JunqiState, dict[str, Any]]:
    """Applies any event but a move in play or a move-time claim (before the game is halted)."""
    facts: dict[str, Any] = {"seat": event.seat, "action": None}
    if isinstance(event, _TURN_ENDING):
        audit.end_turn(event)
    if state.halted is not None:
        facts["halted"] = state.halted
        return state, _counters(state, facts)
    if not _is_seat(event.seat):
        _no_seat(event, audit)
        return state, _counters(state, facts)
    if audit.pending_reveals and not isinstance(event, (FlagRevealed, MoveTimeUsed)):
        _missed_reveals(event, audit)
    if state.outcome is not None and not isinstance(event, AFTER_END_ALLOWED) and _has_rule_effect(event, state, audit):
        code = "junqi.M01" if isinstance(event, Moved) else "junqi.E01"
        zh, en = ended(state.outcome.termination)
        audit.find(event, code, f"对局已结束（{zh}）后又有事件 {event.kind} {event.kind} after the game ended ({en})", "第九条")
        return state, _counters(state, facts)
    handler = _HANDLERS.get(kind)
    if handler is not None:
        state = handler(state, event, audit, facts)
    return state, _counters(state, facts)


# The facts of the two commonest events, their keys in order: each event's dict is a copy filled in.
# Copying keeps CPython's compact str-keyed table and never grows it; a dict literal of that size
# would be presized as a general table, half as large again, and filling a small dict grows it twice.
_MOVE_FACTS: Final[dict[str, Any]] = dict.fromkeys((
    "seat", "action", "piece", "contact", "combat", "removed", "removed_pieces", "eliminated", "step", "quiet", "to_move",
))
_MOVE_TIME_FACTS: Final[dict[str, Any]] = dict.fromkeys(("seat", "action", "time_used", "ms", "step", "quiet", "to_move"))


def _has_rule_effect(event: Event, state: JunqiState, audit: Audit) -> bool:
    if isinstance(event, Skipped) and audit.timed_out == (event.seat, state.plies):
        return False  # the record of the timeout that ended the game
    return isinstance(event, (Moved, LayoutSubmitted, TimedOut, Skipped, Resigned, DrawOffered, DrawAnswered))


def _counters(state: JunqiState, facts: dict[str, Any]) -> dict[str, Any]:
    facts["step"] = state.step
    facts["quiet"] = state.quiet
    facts["to_move"] = state.to_move
    return facts


def _is_seat(seat: int | None) -> bool:
    """Tells whether an event names one of the game's four seats (第二条), or no seat at all."""
    return seat is None or 0 <= seat <= 3


def _no_seat(event: Event, audit: Audit) -> None:
    audit.find(event, "junqi.E04", f"事件 {event.kind} 指明座位{event.seat}，本局座位为 0–3，此事件不计 "
                                   f"{event.kind} names seat {event.seat}, not a seat of this game (0–3); the event is ignored", "第二条")


# 亮旗 is common practice (junqi.md §10, [COM]); the rule book excerpt has no article for it, so its
# findings carry no article.
def _missed_reveals(event: Event, audit: Audit) -> None:
    for owner, (_, owed) in audit.pending_reveals.items():
        if owed:
            audit.find(event, "junqi.M11", f"座位{owner}的司令阵亡，但未亮旗 seat {owner}'s 司令 died in combat but its flag was not revealed")
    audit.pending_reveals.clear()


def _layout(state: JunqiState, event: LayoutSubmitted, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    seat = event.seat
    if seat is None or state.to_move != CHANCE or state.laid[seat]:
        zh, en = _who(seat)
        audit.find(event, "junqi.M02", f"{zh}的布阵不在布阵阶段或重复提交 layout of {en} outside the layout phase or sent twice", "第六条")
        return state
    index = settings(state.profile).index
    layout = Layout(seat, tuple((index[p], KIND_OF[k]) for p, k in event.pieces), event.colour)
    problems = layout_problems(state, layout)
    for code, message in problems:
        audit.find(event, f"junqi.{code}", message, LAYOUT_ARTICLES[code])
    facts["layout_ok"] = not problems
    if problems and state.profile.illegal_layout_policy == "flag_and_stop":
        return replace(state, halted=f"junqi.{problems[0][0]}")
    return start_if_ready(place(state, layout))


def start_if_ready(state: JunqiState) -> JunqiState:
    """Hands the turn to the first seat once all four layouts are in."""
    if all(state.laid) and state.to_move == CHANCE:
        return next_turn(state, state.first, include_self=True)
    return state


def _moved(state: JunqiState, event: Moved, audit: Audit) -> tuple[JunqiState, dict[str, Any]]:
    """Checks and applies a move while the game is on; returns the state and the move's facts."""
    index = settings(state.profile).index
    frm, to = index[event.from_], index[event.to]
    action = notation(frm, to)
    seat = event.seat
    if seat is None or state.to_move == CHANCE or not 0 <= seat <= 3:
        return state, _unplayable_move(state, event, action, audit)
    try:
        check_move(state, seat, frm, to)
    except IllegalActionError as exc:
        why = exc.said
        audit.find(event, exc.code, f"座位{seat}走 {action} 不合法：{why.zh} illegal move {action} by seat {seat}: {why.en}", exc.article)
        state = _illegal(state, seat, exc.code)
        return state, _counters(state, {"seat": seat, "action": action})
    piece = KIND_NAMES[kind_of(state.board[frm])]
    before = state
    state, report = do_move(state, frm, to)
    result, removed, eliminated = report.result, report.removed, report.eliminated
    if event.result is not None and event.result != result:
        (czh, cen), (dzh, den) = COMBAT_WORDS[event.result], COMBAT_WORDS[result]
        audit.find(event, "junqi.M11", f"申报碰子结果为{czh}，推导为{dzh} claimed combat result {cen}, derived {den}", "第八条")
    if event.piece is not None and event.piece != piece:
        audit.find(event, "junqi.M11", f"申报走子为{event.piece}，{event.from_} 上的棋子是{piece} "
                                       f"claimed mover {event.piece}, the piece on {event.from_} is {piece}", "第八条")
    if report.marshal_deaths:
        audit.pending_reveals = _reveals_due(before, state, report.marshal_deaths)
    facts = _MOVE_FACTS.copy()
    facts["seat"] = seat
    facts["action"] = action
    facts["piece"] = piece
    facts["contact"] = result != "move"
    facts["combat"] = result
    facts["removed"] = len(removed)
    if removed:
        facts["removed_pieces"] = " ".join([f"{KIND_NAMES[kind_of(v)]}@{NAMES[p]}" for p, v in removed])
    if eliminated:
        facts["eliminated"] = ",".join(str(s) for s in eliminated)
    return state, _counters(state, facts)


def _unplayable_move(state: JunqiState, event: Moved, action: str, audit: Audit) -> dict[str, Any]:
    """Reports a move that names no seat of the game or comes before the layouts are in; returns its facts."""
    seat = event.seat
    if seat is None:
        audit.find(event, "junqi.M02", f"走子 {action} 未指明座位 move {action} names no seat", "第七条")
    elif not _is_seat(seat):
        _no_seat(event, audit)
    else:
        audit.find(event, "junqi.M02", f"四家布阵未齐就走子 {action} move {action} before all four layouts are in", "第七条")
    return _counters(state, {"seat": seat, "action": action})


def _reveals_due(before: JunqiState, after: JunqiState, deaths: tuple[int, ...]) -> dict[int, tuple[int, bool]]:
    """Returns, per seat whose 司令 died in the move, its flag's point and whether the 亮旗 is owed.
    The point is read before the move: a seat left with no legal move is eliminated in the same
    step and its flag leaves the board, yet the reveal is still correct (§10)."""
    required = after.profile.reveal_after_elimination == "required"
    due: dict[int, tuple[int, bool]] = {}
    for seat in deaths:
        flag = _flag_point(before, seat)
        if flag is not None:
            due[seat] = (flag, after.alive[seat] or required)
    return due


def _illegal(state: JunqiState, seat: int, code: str) -> JunqiState:
    """Continues after an illegal move by `illegal_move_policy`."""
    policy = state.profile.illegal_move_policy
    if policy == "flag_and_stop":
        return replace(state, halted=code)
    if policy == "flag_and_award_loss":
        return finish(state, Termination.ILLEGAL_MOVE, ALLIANCES[1 - seat % 2])
    return pass_turn(state, seat, timeout=False) if seat == state.to_move else state


def _flag_point(state: JunqiState, seat: int) -> int | None:
    for p, v in enumerate(state.board):
        if v and kind_of(v) == FLAG and seat_of(v) == seat:
            return p
    return None


def _flag_revealed(state: JunqiState, event: FlagRevealed, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    actual = _flag_point(state, event.owner)
    facts["revealed"] = event.owner
    due = audit.pending_reveals.pop(event.owner, None)
    if due is None:
        audit.find(event, "junqi.M11", f"座位{event.owner}亮旗，但上一步其司令并未阵亡 "
                                       f"seat {event.owner} showed its flag without its 司令 dying in the move before")
    elif point_index(event.point, state.profile) != due[0]:
        where = "stood" if actual is None else "stands"
        audit.find(event, "junqi.M11", f"亮旗显示座位{event.owner}的军旗在 {event.point}，实际在 {NAMES[due[0]]} "
                                       f"the flag shown for seat {event.owner} is on {event.point}, it {where} on {NAMES[due[0]]}")
    return state


def _move_time(state: JunqiState, event: MoveTimeUsed, audit: Audit) -> dict[str, Any]:
    """Checks a move-time claim against the limit and the clock; returns its facts."""
    seat, ms, limit = event.seat, event.ms, settings(state.profile).move_time_limit_s
    if limit is not None and ms > limit * 1000:
        zh, en = _who(seat)
        audit.find(event, "junqi.T02", f"{zh}用时 {ms} 毫秒，超过 {limit} 秒限时 {en} used {ms} ms, over the limit of {limit} s")
    seq, gap = audit.last_turn
    if event.move_seq == seq and abs(ms - gap) > CLOCK_TOLERANCE_MS:
        zh, en = _who(seat)
        audit.find(event, "junqi.T03", f"声称{zh}第 {seq} 号事件用时 {ms} 毫秒，但距上一手结束过了 {gap} 毫秒 "
                   f"{en} is said to have used {ms} ms for #{seq}, but {gap} ms passed since the previous turn ended")
    if seat is None or not 0 <= seat <= 3:
        if seat is not None:
            _no_seat(event, audit)
        return _counters(state, {"seat": seat, "action": None, "ms": ms})
    used = audit.time_used[seat] + ms
    audit.time_used[seat] = used
    facts = _MOVE_TIME_FACTS.copy()
    facts["seat"] = seat
    facts["time_used"] = used
    facts["ms"] = ms
    return _counters(state, facts)


def _timed_out(state: JunqiState, event: TimedOut, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    if event.seat is None or event.seat != state.to_move:
        (zh, en), (turn, turn_en) = _who(event.seat), _turn(state)
        audit.find(event, "junqi.M02", f"{turn}，{zh}却超时 {event.kind} of {en} but {turn_en}", "第七条")
        return state
    state = pass_turn(state, event.seat, timeout=True)
    audit.timed_out = (event.seat, state.plies)
    return state


def _skipped(state: JunqiState, event: Skipped, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    """Accepts a skip only as a consequence the rules give (§7.5, 第七条): it records a timeout, an
    eliminated seat or a seat with no legal move, or a referee's ruling allows it; any other skip of
    the seat to move is a pass by choice (M12) and meets `illegal_move_policy`."""
    seat = event.seat
    consequence = None if seat is None else _skip_consequence(state, seat, audit)
    if consequence is not None:
        facts["skip"] = consequence
        return pass_turn(state, state.to_move, timeout=False) if consequence == "ruling" else state
    if seat is None or seat != state.to_move:
        (zh, en), (turn, turn_en) = _who(seat), _turn(state)
        audit.find(event, "junqi.M02", f"{turn}，{zh}却略过 {event.kind} of {en} but {turn_en}", "第七条")
        return state
    moves = len(legal_moves(state, seat))
    audit.find(event, "junqi.M12", f"座位{seat}无故放弃行棋：有 {moves} 种合法走法且未超时 "
               f"seat {seat} passed by choice: it has {moves} legal moves and did not time out (no passing by choice)", MOVE_ARTICLES["M12"])
    return _illegal(state, seat, "junqi.M12")


def _skip_consequence(state: JunqiState, seat: int, audit: Audit) -> str | None:
    """Returns why the rules skip the seat's turn (`timeout`, `eliminated`, `no_legal_move`,
    `ruling`), or None when nothing does."""
    if state.to_move == CHANCE:
        return None
    if audit.timed_out == (seat, state.plies):
        audit.timed_out = (-1, -1)
        return "timeout"
    if not state.alive[seat]:
        return "eliminated"
    rules = settings(state.profile)
    if rules.profile.no_move_rule == "skip_turn" and not can_move(state.board, rules, seat):
        return "no_legal_move"  # the turn passed it by already
    if audit.skip_ruled == seat and seat == state.to_move:
        audit.skip_ruled = -1
        return "ruling"
    return None


def _ruling(state: JunqiState, event: Ruling, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    """Notes a referee's authorised skip (a ruling naming a seat): it allows that seat's next skip. The
    other kinds act on the result after play (replay/rulings.py)."""
    if event.seat is not None and ruling_kind(event) == "authorised_skip":
        audit.skip_ruled = event.seat
        facts["skip_allowed"] = event.seat
    return state


def _resigned(state: JunqiState, event: Resigned, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    if event.seat is None or not state.alive[event.seat]:
        zh, en = _who(event.seat)
        audit.find(event, "junqi.M03", f"{zh}认输，但它已不在对局中 resignation of {en}, which is not in the game", "第九条")
        return state
    facts["resigned"] = event.seat
    return resign(state, event.seat)


def _draw_offered(state: JunqiState, event: DrawOffered, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    profile = state.profile
    too_many = profile.max_draw_offers is not None and state.draw_offers >= profile.max_draw_offers
    if event.seat is None or state.step < profile.draw_min_step or too_many:
        zh, en = _who(event.seat)
        most = "不限" if profile.max_draw_offers is None else f"最多 {profile.max_draw_offers} 次"
        most_en = "no limit" if profile.max_draw_offers is None else f"at most {profile.max_draw_offers}"
        audit.find(event, "junqi.E03", f"{zh}在第 {state.step} 步提和不被允许（第 {state.draw_offers + 1} 次提和；第 {profile.draw_min_step} "
                                       f"步起，{most}） "
                   f"draw offer by {en} not allowed at step {state.step} "
                   f"(offer {state.draw_offers + 1}; from step {profile.draw_min_step}, {most_en})", "第九条")
        return state
    audit.declined = None
    return offer_draw(state, event.seat)


def _draw_answered(state: JunqiState, event: DrawAnswered, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    if event.seat is None or state.draw_votes is None:
        zh, en = _who(event.seat)
        audit.find(event, "junqi.E03", f"{zh}应和，但没有待答的提和 draw answer by {en} with no draw offer pending", "第九条")
        return state
    if not event.accept:
        audit.declined = (event.seat, event.seq)
    return vote_draw(state, event.seat, event.accept)


def _ended(state: JunqiState, event: GameEnded, audit: Audit, facts: dict[str, Any]) -> JunqiState:
    if audit.ended:
        audit.find(event, "junqi.E01", "第二次结果声明 a second game.ended claim", "第九条")
        return state
    audit.ended = True
    if event.termination == Termination.DRAW_AGREED and state.outcome is None:
        zh, en = _missing_votes(state, audit)
        audit.find(event, "junqi.E03", f"申报议和，但{zh} draw by agreement claimed, but {en}", "第九条")
        return state
    for finding in check_claim(CODES, "junqi.E02", event, state.outcome, "第九条"):
        audit.findings.append(finding)
    return state


def _missing_votes(state: JunqiState, audit: Audit) -> tuple[str, str]:
    """Says why no draw was agreed, in Chinese and English: no offer, a declined one, or the voters still missing (第九条)."""
    votes = state.draw_votes
    if votes is not None:
        (mzh, men), (azh, aen) = seat_list_zh_en(draw_voters(state) - set(votes)), seat_list_zh_en(votes)
        return f"{mzh}尚未同意（已同意：{azh}）", f"{men} have not accepted the offer (accepted: {aen})"
    if audit.declined is not None:
        seat, seq = audit.declined
        return f"座位{seat}在第 {seq} 号事件拒绝了提和", f"seat {seat} declined the offer at #{seq}"
    return "没有人提和", "no draw was offered"


def _turn(state: JunqiState) -> tuple[str, str]:
    """Returns whose turn it is, Chinese and English, or that no seat is to move (the layout phase, the end)."""
    if state.to_move < 0:
        return "此时不轮到任何座位", "no seat is to move"
    return f"轮到座位{state.to_move}", f"it is seat {state.to_move}'s turn"


def _who(seat: int | None) -> tuple[str, str]:
    """Returns the seat an event names, Chinese and English, or that it names none."""
    return ("未指明座位的事件", "an event naming no seat") if seat is None else (f"座位{seat}", f"seat {seat}")


COMBAT_WORDS: Final[dict[str, tuple[str, str]]] = {
    "move": ("无碰子", "no contact"), "win": ("吃子", "the mover wins"), "lose": ("被吃", "the mover loses"),
    "both": ("同归于尽", "both removed"),
}
"""A combat result (第八条) in words, Chinese and English."""


_HANDLERS: Final[dict[type, Handler[JunqiState, Audit]]] = {
    LayoutSubmitted: _layout, FlagRevealed: _flag_revealed, TimedOut: _timed_out, Skipped: _skipped,
    Resigned: _resigned, DrawOffered: _draw_offered, DrawAnswered: _draw_answered, GameEnded: _ended,
    Ruling: _ruling,
}
"""The handlers of the events other than moves and their timing, which fold_event handles itself."""
_TURN_ENDING: Final = (LayoutSubmitted, Moved, TimedOut, Skipped)
