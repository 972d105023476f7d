"""The competition layer on top of the moves (checkers.md §5–§10): what a move, a pass or a
timeout does to the counters, and the result checks after each ply in the order of §5.4 —
cards, arrival and the first-mover margin, leave-camp, repetition, walls, round limit."""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from replay.checkers.board import BIT, HOME, NEAR_CAMPS, NEAR_HOME, NEIGHBOUR_MASK, TARGET
from replay.checkers.codes import Note, Termination, note
from replay.checkers.match import timeout_allowance
from replay.checkers.moves import MoveRules, all_moves, can_arrive_within, can_retrace, is_stuck
from replay.checkers.state import NOBODY, CheckersState, Undo, position_key
from replay.protocol import Outcome, Said
from schemas.checkers import CheckersProfile

NO_NOTES: Final[tuple[Note, ...]] = ()


class Derived(NamedTuple):
    """Values a profile implies, computed once per profile instead of at every ply."""

    rules: MoveRules
    checks: dict[int, int]
    last_check: tuple[int, int]
    allowance: int
    trigger_ply: int
    with_side: bool
    camp_every_turn: bool
    """Whether the leave-camp check must run after every turn, not only at the check turns."""


_DERIVED: dict[int, tuple[CheckersProfile, Derived]] = {}
_LAST: list = [None, None]  # type: ignore[type-arg]
"""The most recently used profile and its values: a replay asks for the same one at every ply."""


def derived(profile: CheckersProfile) -> Derived:
    """Returns the values a profile implies (cached by identity; profiles are immutable)."""
    if profile is _LAST[0]:
        return _LAST[1]
    hit = _DERIVED.get(id(profile))
    if hit is not None and hit[0] is profile:
        _LAST[:] = hit
        return hit[1]
    if len(_DERIVED) > 256:
        _DERIVED.clear()
    checks = dict(profile.leave_camp_checks)
    last = max(profile.leave_camp_checks, default=(0, 0))
    value = Derived(
        rules=MoveRules.of(profile),
        checks=checks,
        last_check=last,
        allowance=timeout_allowance(profile),
        trigger_ply={"both_fully_evacuated": -1, "after_round_30": 2 * last[0], "always": 0}[profile.repetition_trigger],
        with_side=profile.repetition_key_includes_side_to_move,
        camp_every_turn=(profile.persistent_after_deadline or profile.turn_counter == "moves_only"
                         or profile.leave_camp_check_time == "end_of_round"),
    )
    _DERIVED[id(profile)] = (profile, value)
    _LAST[:] = (profile, value)
    return value


def win(seat: int, termination: str) -> Outcome:
    """Returns a win for `seat`: 1 point to it, 0 to the other (第十八条(4))."""
    return Outcome(termination=termination, winners=(seat,), points=(1.0, 0.0) if seat == 0 else (0.0, 1.0))


def draw(termination: str) -> Outcome:
    """Returns a draw: half a point each."""
    return Outcome(termination=termination, winners=(), points=(0.5, 0.5))


def both_lose(termination: str, setting: str) -> Outcome:
    """Returns the result when both seats lose (`double_forfeit` / `both_fail_same_round`)."""
    return draw(termination) if setting == "draw" else Outcome(termination=termination, winners=(), points=(0.0, 0.0))


class Turn(msgspec.Struct, frozen=True):
    """The state after one event, with the notes it raised. A struct, as `check.Verdict` is."""

    state: CheckersState
    notes: tuple[Note, ...] = NO_NOTES


def _inc(pair: tuple[int, int], seat: int, by: int = 1) -> tuple[int, int]:
    return (pair[0] + by, pair[1]) if seat == 0 else (pair[0], pair[1] + by)


def _put(pair: tuple, seat: int, value: object) -> tuple:  # type: ignore[type-arg]
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def play_move(s: CheckersState, frm: int, to: int, path: tuple[int, ...], shown: bool = True) -> Turn:
    """Applies an already-validated move of the seat to move and runs the end-of-ply checks;
    `shown` tells whether the log shows `path` (False for a hop chain logged by its ends)."""
    seat = s.to_move
    own = s.pieces[seat] ^ BIT[frm] ^ BIT[to]
    pieces = (own, s.pieces[1]) if seat == 0 else (s.pieces[0], own)
    notes: list[Note] = []
    if TARGET[seat] & BIT[frm] and not TARGET[seat] & BIT[to]:
        notes.append(note("W_LEFT_TARGET", f"座位{seat}的 {frm}>{to} 离开目标营 move {frm}>{to} of seat {seat} leaves its target camp"))
    d = derived(s.profile)
    if HOME[seat] & BIT[to] and not HOME[seat] & BIT[frm] and s.turns[seat] >= d.last_check[0] \
            and s.profile.reentry_own_home_after_deadline == "flag":
        notes.append(note("W_REENTER_OWN_CAMP", f"座位{seat}的 {frm}>{to} 在第 {d.last_check[0]} 回合后回到本方营 "
                                                  f"move {frm}>{to} of seat {seat} re-enters its home camp after turn {d.last_check[0]}"))
    if s.undo is None and s.owe_wait != seat:
        undo, owe_wait, outcome = None, s.owe_wait, None  # the waiting rule has nothing to say (most plies)
    else:
        undo, owe_wait, outcome = _waiting(s, seat, Played(frm, to, path if shown else None), notes)
    return _end_turn(s, seat, pieces, path, True, notes, undo, owe_wait, outcome, d)


def play_pass(s: CheckersState, timeout: bool) -> Turn:
    """Applies a pass of the seat to move: a timeout (auto-pass, §6) or a 略过 (§8), with the
    yellow cards these can earn."""
    seat, p = s.to_move, s.profile
    notes: list[Note] = []
    outcome = None
    timeouts = s.timeouts
    if timeout:
        timeouts, outcome = _count_timeout(s, seat, notes)
    elif not _pass_is_justified(s, seat):
        if "unjustified_pass" in p.auto_cards:
            outcome = win(1 - seat, Termination.UNJUSTIFIED_SKIP)
        else:
            notes.append(note("W_UNJUSTIFIED_SKIP", f"座位{seat}有合法着法却按了略过 seat {seat} pressed skip while it had a legal move"))
    undo, owe_wait, waited = _waiting(s, seat, None, notes)
    if timeout and outcome is None and p.waiting_rule != "off":
        owe_wait = 1 - seat
    s = msgspec.structs.replace(s, timeouts=timeouts, timed_out=seat if timeout else NOBODY, pass_authorised=NOBODY)
    return _end_turn(s, seat, s.pieces, s.last, False, notes, undo, owe_wait, outcome or waited)


def count_timeout(s: CheckersState, seat: int) -> Turn:
    """Counts a timeout that does not end the turn (`on_timeout = auto_move`, or one derived from
    timestamps), with the card for exceeding the allowance."""
    notes: list[Note] = []
    timeouts, outcome = _count_timeout(s, seat, notes)
    return Turn(msgspec.structs.replace(s, timeouts=timeouts, outcome=outcome), tuple(notes))


def _count_timeout(s: CheckersState, seat: int, notes: list[Note]) -> tuple[tuple[int, int], Outcome | None]:
    """Adds a timeout; past the stage's allowance it is a timing breach, a yellow card (第四条, 第十六条)."""
    timeouts = _inc(s.timeouts, seat)
    allowance = derived(s.profile).allowance
    if timeouts[seat] <= allowance:
        return timeouts, None
    if "timeout_overflow" in s.profile.auto_cards:
        return timeouts, win(1 - seat, Termination.TIMEOUTS)
    notes.append(note("W_TIMEOUTS", f"座位{seat}超时 {timeouts[seat]} 次，超过本阶段允许的 {allowance} 次 "
                                   f"seat {seat} timed out {timeouts[seat]} times, over the {s.profile.stage} allowance of {allowance}"))
    return timeouts, None


def _pass_is_justified(s: CheckersState, seat: int) -> bool:
    """Tells whether a 略过 has a cause the profile accepts: no legal move, waiting for a
    timed-out opponent (第四条), or a referee's authorisation (§8)."""
    causes = s.profile.justified_pass
    if "waiting" in causes and s.owe_wait == seat:
        return True
    if "referee" in causes and s.pass_authorised == seat:
        return True
    occupied = s.pieces[0] | s.pieces[1]
    return "no_legal_move" in causes and not all_moves(seat, s.pieces[seat], occupied, derived(s.profile).rules)


class Played(NamedTuple):
    """A move as the waiting rule reads it: its ends and the path the log shows (None when unknown)."""

    frm: int
    to: int
    path: tuple[int, ...] | None


def _waiting(s: CheckersState, seat: int, move: Played | None, notes: list[Note]) -> tuple[Undo | None, int, Outcome | None]:
    """Applies the waiting rule (第四条, §6.1): after an opponent's timeout the seat passes, or
    moves and takes the move back along the same path on its next turn (原路退回), unless the
    move serves a leave-camp deadline."""
    undo, owe_wait, outcome = s.undo, s.owe_wait, None
    if undo is not None and undo.seat == seat:
        problem = _take_back_problem(s, undo, move)
        if problem:
            message = (f"座位{seat}没有等待而走了 {undo.frm}>{undo.to}，且{problem.zh} "
                       f"seat {seat} moved {undo.frm}>{undo.to} instead of waiting and {problem.en}")
            if s.profile.waiting_rule == "yellow_card":
                outcome = win(1 - seat, Termination.NO_WAIT)
            else:
                notes.append(note("W_NO_WAIT", message))
        undo = None
    if owe_wait == seat:
        owe_wait = NOBODY
        if move is not None and not _deadline_excuses(s, seat, move):
            before = (s.pieces[0] | s.pieces[1]) & ~BIT[move.frm]
            undo = Undo(seat, move.frm, move.to, move.path, before)
    return undo, owe_wait, outcome


def _take_back_problem(s: CheckersState, undo: Undo, move: Played | None) -> Said | None:
    """Returns how a turn fails to take back the move made instead of waiting, or '': the same
    piece must go back along the same path (原路退回; a step back is always that)."""
    if move is None or (move.frm, move.to) != (undo.to, undo.frm):
        return Said("没有原路退回", "did not take it back")
    if NEIGHBOUR_MASK[undo.frm] & BIT[undo.to]:
        return None
    back = move.path[::-1] if move.path is not None else None
    if undo.path is not None and back is not None:
        same = undo.path == back
    else:
        after = (s.pieces[0] | s.pieces[1]) & ~BIT[undo.to]
        same = can_retrace(undo.frm, undo.to, undo.before, after, derived(s.profile).rules.long_hops, undo.path or back)
    if same:
        return None
    came = ">".join(map(str, undo.path)) if undo.path else None
    went = ">".join(map(str, move.path)) if move.path else None
    return Said(f"沿 {went or '无法原路返回的连跳'} 退回，不是原路（{came or '原路径'}）",
                f"took it back along {went or 'a chain that cannot retrace it'}, not the way it came ({came or 'its path'})")


def _deadline_excuses(s: CheckersState, seat: int, move: Played) -> bool:
    """Tells whether a move that did not wait takes a piece out of camp for a leave-camp deadline
    within the seat's next two turns (第四条: 如因等对方妨碍己方出营，可不等而出营)."""
    k = s.turns[seat] + 1
    home = HOME[seat]
    soon = any(k <= turn <= k + 1 for turn in derived(s.profile).checks)
    return soon and bool(home & BIT[move.frm]) and not home & BIT[move.to]


def _end_turn(s: CheckersState, seat: int, pieces: tuple[int, int], last: tuple[int, ...], moved: bool,
              notes: list[Note], undo: Undo | None, owe_wait: int, outcome: Outcome | None, d: Derived | None = None) -> Turn:
    """Closes a ply: counters, then arrival and margin, leave-camp, repetition, walls and the
    round limit, each only while the game is still undecided (§5.4); `d` is the profile's `derived`."""
    p = s.profile
    if d is None:
        d = derived(p)
    ply = s.ply + 1
    turns = (s.turns[0] + 1, s.turns[1]) if seat == 0 else (s.turns[0], s.turns[1] + 1)
    passes = s.passes if moved else _inc(s.passes, seat)
    arrived = s.arrived
    if moved and pieces[seat] == TARGET[seat] and not arrived[seat]:
        arrived = _put(arrived, seat, turns[seat])
        if p.implausible_fast_turns and turns[seat] < p.implausible_fast_turns:
            notes.append(note("W_IMPLAUSIBLY_FAST", f"座位{seat}在自己的第 {turns[seat]} 回合就全部进营，早于第 {p.implausible_fast_turns} 回合 "
                                                    f"seat {seat} completed its target camp on its turn {turns[seat]}, "
                                                    f"before turn {p.implausible_fast_turns} (30 moves is the known minimum game)"))
    if outcome is None and arrived != (0, 0):
        outcome = decide_margin(p, s.first, seat, arrived, turns)
    nxt = 1 - seat
    if p.margin_model == "own_moves" and arrived[nxt] and outcome is None:
        nxt = seat
    camp_failed = s.camp_failed
    if outcome is None and (moved or p.turn_counter == "turns_incl_passes") and (
            turns[seat] in d.checks or d.camp_every_turn):
        outcome, camp_failed = _leave_camp(s, seat, pieces, turns, passes, camp_failed, notes)
    evacuated_at, history, formation, still, walled = s.evacuated_at, s.history, s.formation, s.still, s.walled
    if not evacuated_at and not pieces[0] & HOME[0] and not pieces[1] & HOME[1]:
        evacuated_at = ply
    triggered = evacuated_at > 0 if d.trigger_ply < 0 else ply >= d.trigger_ply
    if outcome is None and (triggered or p.count_before_trigger):
        key = position_key(pieces, nxt, d.with_side)
        history = history + (key,)
        if triggered and p.repetition_auto and history.count(key) >= p.repetition_count:
            outcome = draw(Termination.REPETITION)
    if outcome is None and evacuated_at:
        formation, still, walled = _track_wall(s, seat, pieces, ply, notes)
    if outcome is None and p.max_rounds and ply >= 2 * p.max_rounds:
        outcome = draw(Termination.MAX_ROUNDS)
    quiet = (moved and outcome is None and arrived is s.arrived and camp_failed is s.camp_failed and undo is s.undo
             and owe_wait == s.owe_wait and s.draw_offer == NOBODY and s.timed_out == NOBODY)
    if quiet:
        # Most plies change only the pieces, the counters and the repetition and wall trackers:
        # naming only those keeps the copy cheap (replay speed, bench/replay_checkers.py).
        state = msgspec.structs.replace(
            s, pieces=pieces, to_move=nxt, ply=ply, turns=turns, last=last, history=history,
        ) if not evacuated_at else msgspec.structs.replace(
            s, pieces=pieces, to_move=nxt, ply=ply, turns=turns, last=last, history=history,
            evacuated_at=evacuated_at, formation=formation, still=still, walled=walled,
        )
        return Turn(state, tuple(notes) if notes else NO_NOTES)
    state = msgspec.structs.replace(
        s, pieces=pieces, to_move=nxt, ply=ply, turns=turns, passes=passes, last=last, arrived=arrived,
        evacuated_at=evacuated_at, history=history, owe_wait=owe_wait, undo=undo, formation=formation,
        still=still, walled=walled, camp_failed=camp_failed, draw_offer=NOBODY, outcome=outcome,
        timed_out=s.timed_out if not moved else NOBODY,
    )
    if outcome is None and arrived != (0, 0) and p.equalizer_source == "search_only":
        state = settle_by_search(state)
    return Turn(state, tuple(notes) if notes else NO_NOTES)


def decide_margin(p: CheckersProfile, first: int, seat: int, arrived: tuple[int, int], turns: tuple[int, int]) -> Outcome | None:
    """Returns the result once a seat has arrived, under the profile's reading of 第三条
    (先手者至少快2步进营为胜，快1步进营者为平，后进营者为负; §5.2), or None while it is open."""
    f, g = first, 1 - first
    nf, ng = arrived[f], arrived[g]
    if p.margin_model == "own_moves":
        if ng and not nf:
            return win(g, Termination.ALL_HOME)
        if nf and ng:
            return win(g, Termination.ALL_HOME) if ng == nf and p.own_moves_equal_result == "second_wins" else draw(Termination.MARGIN_DRAW)
        return win(f, Termination.ALL_HOME) if seat == g and turns[g] >= nf + 1 else None
    if nf and ng:
        return draw(Termination.MARGIN_DRAW)
    if ng:
        if p.margin_model == "timeline":
            return win(g, Termination.ALL_HOME)
        return win(g, Termination.ALL_HOME) if seat == f and turns[f] >= ng + 1 else None
    return win(f, Termination.ALL_HOME) if seat == g and turns[g] >= nf else None


def settle_by_search(s: CheckersState) -> CheckersState:
    """Decides a game whose log ends while the other seat still has its equalising turn(s): does
    it have moves that complete its camp (§5.2, EQUALIZER_COMPUTED)?"""
    p = s.profile
    seat = 1 - s.first if s.arrived[s.first] else s.first
    allowed = 2 if p.margin_model == "own_moves" else 1
    n = can_arrive_within(seat, s.pieces[seat], s.pieces[1 - seat], allowed, derived(p).rules)
    turns = _inc(s.turns, seat, n or allowed)
    arrived = _put(s.arrived, seat, turns[seat]) if n else s.arrived
    return msgspec.structs.replace(s, outcome=decide_margin(p, s.first, seat, arrived, turns))


def _leave_camp(s: CheckersState, seat: int, pieces: tuple[int, int], turns: tuple[int, int], passes: tuple[int, int],
                camp_failed: tuple[bool, bool], notes: list[Note]) -> tuple[Outcome | None, tuple[bool, bool]]:
    """Checks 第五条 (5, 8, 10 pieces out of camp by own turns 20, 25, 30; §9) for the seat that
    just played, and at the end of a round when the profile checks then."""
    p = s.profile
    d = derived(p)
    k = turns[seat] - (passes[seat] if p.turn_counter == "moves_only" else 0)
    need = d.checks.get(k)
    if need is None and p.persistent_after_deadline and k > d.last_check[0]:
        need = d.last_check[1]
    out = 10 - (pieces[seat] & HOME[seat]).bit_count()
    failed = need is not None and out < need
    if failed and p.leave_camp_penalty == "flag":
        notes.append(note("W_LEAVE_CAMP", f"座位{seat}第 {k} 回合后出营 {out} 子，应出 {need} 子 "
                                          f"seat {seat} has {out} pieces out of camp after its turn {k}, {need} required"))
        failed = False
    if p.leave_camp_check_time == "after_own_turn":
        return (win(1 - seat, "LEAVE_CAMP") if failed else None), camp_failed
    camp_failed = _put(camp_failed, seat, camp_failed[seat] or failed)
    if seat == s.first:
        return None, camp_failed
    if camp_failed[0] and camp_failed[1]:
        return both_lose("LEAVE_CAMP", p.both_fail_same_round), (False, False)
    if camp_failed[0] or camp_failed[1]:
        return win(1 if camp_failed[0] else 0, "LEAVE_CAMP"), (False, False)
    return None, (False, False)


def _track_wall(s: CheckersState, seat: int, pieces: tuple[int, int], ply: int, notes: list[Note]) -> tuple[
        tuple[int, int], tuple[int, int], tuple[bool, bool]]:
    """Follows the blocker's formation, its pieces within distance 2 of either camp (the victim's
    target or home, §10): when it stays put for more than `wall_cycles` of the blocker's turns
    while the victim is stuck, raises W_POSSIBLE_WALL once (with `wall_test = at_gate`, only
    for a formation in front of the victim's target with the victim waiting at that gate)."""
    form = pieces[seat] & NEAR_CAMPS
    at_gate = s.profile.wall_test == "at_gate"
    held = form and form == s.formation[seat] and (not at_gate or form & NEAR_HOME[seat])
    still_n = s.still[seat] + 1 if held else 0
    walled_now = s.walled[seat] and still_n > 0
    victim = 1 - seat
    waiting = not at_gate or not pieces[victim] & ~TARGET[victim] & ~NEAR_HOME[seat]
    if still_n > s.profile.wall_cycles and not walled_now and waiting:
        if is_stuck(victim, pieces[victim], pieces[0] | pieces[1], HOME[victim], derived(s.profile).rules):
            walled_now = True
            notes.append(note("W_POSSIBLE_WALL", f"座位{seat}在营前以同样的棋子堵了 {still_n} 回合，座位{victim}无法进入目标营（第 {ply} 手） "
                                                 f"seat {seat} has held the same pieces in front of its camp for {still_n} "
                                                 f"turns while seat {victim} cannot enter its target camp, at ply {ply}"))
    if seat == 0:
        return (form, s.formation[1]), (still_n, s.still[1]), (walled_now, s.walled[1])
    return (s.formation[0], form), (s.still[0], still_n), (s.walled[0], walled_now)
