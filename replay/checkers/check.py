"""The legality check of one logged move in a state (checkers.md §4.7): turn, piece, target
hole, then the witness path or the endpoint, and the classification of what fails."""

from __future__ import annotations

import msgspec

from replay.checkers.board import BIT, HOME, NEIGHBOUR_MASK, rowcol
from replay.checkers.codes import Note, note
from replay.checkers.moves import DEFAULT_RULES, MoveRules, check_path, classify, hop_path, is_reachable, reach, step_problem
from replay.checkers.rules import NO_NOTES, derived
from replay.checkers.state import CheckersState
from replay.protocol import Said

LEGAL = Said("", "")
"""The reason of a legal move's verdict: none."""


class Verdict(msgspec.Struct, frozen=True):
    """The verdict on a move: the §4.7 code and reason when illegal (None when legal), the path
    it takes, its hop count, and warnings about a legal move. A frozen msgspec struct, not a
    NamedTuple: one is made for every move, and a NamedTuple's constructor runs as Python code,
    about five times slower (replay speed, bench/replay_cli.py)."""

    code: str | None
    why: Said
    """Why the move is illegal, Chinese and English (`LEGAL`, empty, for a legal move)."""
    path: tuple[int, ...]
    hops: int
    notes: tuple[Note, ...] = NO_NOTES


def check_move(s: CheckersState, seat: int, frm: int, to: int, path: tuple[int, ...] | None) -> Verdict:
    """Checks a move of `seat` from `frm` to `to` with an optional witness path."""
    if seat != s.to_move:
        return Verdict("E_NOT_YOUR_TURN", Said(f"轮到座位{s.to_move}走", f"it is seat {s.to_move}'s turn"), (), 0)
    own = s.pieces[seat]
    occupied = own | s.pieces[1 - seat]
    if not own & BIT[frm]:
        return Verdict("E_NO_OWN_PIECE", Said(f"{frm} 号孔（{rowcol(frm)}）没有座位{seat}的棋子",
                                              f"hole {frm} ({rowcol(frm)}) holds no piece of seat {seat}"), (), 0)
    if frm == to:
        return Verdict("E_UNREACHABLE", Said("停在原孔不算一步棋", "ending on the origin hole is not a move"), (), 0)
    if occupied & BIT[to]:
        return Verdict("E_OCCUPIED", Said(f"{to} 号孔（{rowcol(to)}）已有棋子", f"hole {to} ({rowcol(to)}) is occupied"), (), 0)
    p = s.profile
    rules = derived(p).rules
    reentry = _reentry(s, seat, frm, to) if p.reentry_own_home_after_deadline == "illegal" else None
    if reentry is not None:
        return Verdict("E_REENTER_OWN_CAMP", reentry, (), 0)
    if path is not None:
        return _check_witness(s, seat, frm, to, path, occupied, rules)
    if NEIGHBOUR_MASK[frm] & BIT[to]:
        if step_problem(seat, frm, to, occupied, rules) is None:
            return Verdict(None, LEGAL, (frm, to), 0)
    elif rules is DEFAULT_RULES or rules == DEFAULT_RULES:
        found = hop_path(frm, to, occupied)
        if found is not None:
            return Verdict(None, LEGAL, found, len(found) - 1)
    else:
        r = reach(seat, frm, occupied, rules)
        if to in r.hops:
            path = r.path(frm, to)
            return Verdict(None, LEGAL, path, len(path) - 1)
    code = classify(seat, frm, to, occupied, p)
    return Verdict(code, Said(f"按本赛制设置，从 {frm} 号孔（{rowcol(frm)}）到不了 {to} 号孔（{rowcol(to)}）",
                              f"hole {to} ({rowcol(to)}) cannot be reached from {frm} ({rowcol(frm)}) under this profile"), (), 0)


def _check_witness(s: CheckersState, seat: int, frm: int, to: int, path: tuple[int, ...], occupied: int, rules: MoveRules) -> Verdict:
    """Checks a move given with its path: each segment in the position before the move (§4.7)."""
    p = s.profile
    if path[0] != frm or path[-1] != to:
        problem: Said | None = Said(f"路径 {_shown(path)} 不是从 {frm} 到 {to}", f"path {_shown(path)} does not run from {frm} to {to}")
        checked = None
    else:
        checked = check_path(seat, path, occupied, rules)
        if checked.problem is None and not checked.revisits:
            return Verdict(None, LEGAL, path, checked.hops)  # the common case: no message to build
        problem = checked.problem and Said(f"路径 {_shown(path)}：{checked.problem.zh}", f"path {_shown(path)}: {checked.problem.en}")
    if problem is not None:
        if is_reachable(seat, frm, to, occupied, rules):
            return Verdict("E_BAD_PATH", problem, (), 0)
        # The path is evidence of how the piece went: classify by it when it runs from `frm` to `to`.
        return Verdict(classify(seat, frm, to, occupied, p, path if checked else None), problem, (), 0)
    assert checked is not None
    if checked.revisits:
        message = Said(f"路径 {_shown(path)} 两次落在同一孔", f"path {_shown(path)} lands twice on one hole")
        if p.path_revisit_policy == "error":
            return Verdict("E_PATH_REVISIT", message, (), 0)
        return Verdict(None, LEGAL, path, checked.hops, (note("W_PATH_REVISIT", message),))
    return Verdict(None, LEGAL, path, checked.hops)


def _shown(path: tuple[int, ...]) -> str:
    return ">".join(map(str, path))


def _reentry(s: CheckersState, seat: int, frm: int, to: int) -> Said | None:
    """Returns why a move back into the own home camp is illegal after the last leave-camp
    deadline (`reentry_own_home_after_deadline = illegal`, §9), or None."""
    if s.profile.reentry_own_home_after_deadline != "illegal":
        return None
    last = derived(s.profile).last_check[0]
    if s.turns[seat] >= last and HOME[seat] & BIT[to] and not HOME[seat] & BIT[frm]:
        return Said(f"第 {last} 回合后棋子不得回到本方营", f"a piece may not re-enter its home camp after turn {last}")
    return None

