"""Position files and perft: counts of move sequences from a position, the data-driven check of the
move generator (see README.md in this package for the file format)."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from replay.junqi.board import INDEX, N_POINTS, NAMES, owner_of
from replay.junqi.codes import Termination
from replay.junqi.moves import legal_moves
from replay.junqi.pieces import ASCII, KIND_NAMES, SHORT, cell, kind_of, seat_of
from replay.junqi.rules import check_draws, do_move, finish, next_turn
from replay.junqi.state import ALLIANCES, JunqiState, initial_state
from schemas.junqi import JunqiProfile

SEATS = "SWNE"
PIECES: dict[str, int] = {**{n: k for k, n in enumerate(KIND_NAMES)}, **{n: k for k, n in enumerate(SHORT)},
                          **{n: k for k, n in enumerate(ASCII)}}
"""Piece spellings a position file accepts: full Chinese name, one character, or ASCII (F M B 1–9)."""

STANDARD = """\
# The standard perft position: the same layout in all four arms, S to move.
turn S
S rows 63725/1o8o3/2Bo49/5o1o6/3BM74/2FM1M
W rows 63725/1o8o3/2Bo49/5o1o6/3BM74/2FM1M
N rows 63725/1o8o3/2Bo49/5o1o6/3BM74/2FM1M
E rows 63725/1o8o3/2Bo49/5o1o6/3BM74/2FM1M
"""


class PositionError(ValueError):
    """A position file does not describe a position."""


def parse_position(text: str, profile: JunqiProfile | None = None, where: str = "position") -> JunqiState:
    """Reads a position: `turn <seat>`, optional `step n` / `quiet n`, and per seat `rows r1/…/r6`
    arm grids or `point=piece` tokens.

    :raises PositionError: naming the line and the bad token.
    """
    cells = [0] * N_POINTS
    turn = 0
    counters = {"step": 0, "quiet": 0}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        try:
            if line[0] == "turn":
                turn = SEATS.index(line[1])
                continue
            if line[0] in counters:
                counters[line[0]] = int(line[1])
                continue
            seat = SEATS.index(line[0])
            if line[1] == "rows":
                _place_rows(cells, seat, line[2])
            else:
                for token in line[1:]:
                    point, piece = token.split("=")
                    cells[INDEX[point]] = cell(seat, PIECES[piece])
        except (ValueError, IndexError, KeyError) as exc:
            raise PositionError(f"{where} line {number}: cannot read {raw.strip()!r} ({exc})") from None
    profile = profile or JunqiProfile()
    state = replace(initial_state(profile, turn), board=tuple(cells), laid=(True,) * 4,
                    plies=counters["step"], **counters)
    alive = tuple(any(v and (v - 1) & 3 == s for v in cells) for s in range(4))
    state = _decided(replace(state, alive=alive))
    return state if state.outcome is not None else next_turn(state, turn, include_self=True)


def _decided(state: JunqiState) -> JunqiState:
    """Ends a position the rules have already decided (§8.1–§8.3): an alliance with no piece left
    has lost (第九条 全部子力退出战场; both alliances: nobody wins), and counters at a limit have drawn."""
    for losers, winners in (ALLIANCES, ALLIANCES[::-1]):
        if not any(state.alive[s] for s in losers):
            return finish(state, Termination.NO_LEGAL_MOVE, winners if any(state.alive[s] for s in winners) else ())
    return check_draws(state)


def _place_rows(cells: list[int], seat: int, grid: str) -> None:
    rows = grid.split("/")
    if len(rows) != 6 or any(len(r) != 5 for r in rows):
        raise ValueError("an arm grid is 6 rows of 5, front row first")
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in ".o":
                point = 30 * seat + 5 * r + c
                assert owner_of(point) == seat
                cells[point] = cell(seat, PIECES[ch])


def format_position(state: JunqiState) -> str:
    """Writes a position in the file format `parse_position` reads (point=piece tokens per seat)."""
    lines = [f"turn {SEATS[state.to_move] if state.to_move >= 0 else 'S'}", f"step {state.step}", f"quiet {state.quiet}"]
    for seat in range(4):
        tokens = [f"{NAMES[p]}={KIND_NAMES[kind_of(v)]}" for p, v in enumerate(state.board) if v and seat_of(v) == seat]
        if tokens:
            lines.append(f"{SEATS[seat]} " + " ".join(tokens))
    return "\n".join(lines) + "\n"


def load_position(setup: str | None, profile: JunqiProfile | None = None) -> JunqiState:
    """Reads a position file, or the standard position when `setup` is None.

    :raises PositionError: when the file does not describe a position.
    """
    if setup is None:
        return parse_position(STANDARD, profile, "standard position")
    return parse_position(Path(setup).read_text(encoding="utf-8"), profile, setup)


def count(state: JunqiState, depth: int, totals: list[int], ply: int = 0) -> None:
    """Adds, for each ply up to `depth`, the number of move sequences reaching it to `totals`."""
    if depth == ply or state.outcome is not None:
        return
    for move in legal_moves(state, state.to_move):
        totals[ply] += 1
        count(do_move(state, move.frm, move.to)[0], depth, totals, ply + 1)


def perft(depth: int, setup: str | None = None) -> list[int]:
    """Returns the number of move sequences of length 1..depth from the position file `setup`.

    :raises PositionError: when the file does not describe a position.
    """
    totals = [0] * depth
    count(load_position(setup), depth, totals)
    return totals


def divide(depth: int, setup: str | None = None) -> list[tuple[str, int]]:
    """Returns each legal first move (`from-to`, point names as in `junqi.moved`) with the number of
    move sequences of length `depth` that begin with it (perft divide); they sum to perft's count.

    :raises PositionError: when the file does not describe a position.
    """
    state = load_position(setup)
    if state.outcome is not None:
        return []
    split = []
    for move in legal_moves(state, state.to_move):
        totals = [0] * (depth - 1)
        count(do_move(state, move.frm, move.to)[0], depth - 1, totals)
        split.append((f"{NAMES[move.frm]}-{NAMES[move.to]}", totals[-1] if totals else 1))
    return split
