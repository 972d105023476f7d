"""Pictures of a position (DESIGN.md replay/): an SVG of the star board (on the sheet of
replay/picture.py: every hole numbered, a legend of seats) with the pieces, the last move and its
hop path, and a compact text diagram for terminals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import msgspec

from replay.checkers.board import BIT, COORDS, HOLES, ROW_OF, ZONES, rowcol
from replay.checkers.state import CheckersState
from replay.picture import AS_CLAIMED, CAPTION_HEIGHT, EMPTY, Frame, LegendRow, Mark, Sheet, compose, key, legend_svg
from schemas.checkers import Moved
from schemas.envelope import Event

SPACING: Final[float] = 30.0
MARGIN: Final[float] = 20.0
PIECE_COLOURS: Final[tuple[str, str]] = ("#b2182b", "#92c5de")
"""Seat 0 (north camp) dark red, seat 1 (south camp) light blue: apart in lightness, so that they
stay apart in grayscale print and for colour-blind eyes; seat 1's pieces are also ringed dark
(`PIECE_RINGS`), so colour is never the only mark."""
PIECE_RINGS: Final[tuple[str, str]] = ("#222", "#08306b")
PALETTE: Final[dict[str, tuple[str, str]]] = {PIECE_COLOURS[0]: ("深红", "dark red"), PIECE_COLOURS[1]: ("浅蓝", "light blue")}
"""Each colour in words, Chinese and English (the legends name colours, not codes)."""
CAMP_TINT: Final[dict[str, str]] = {"N": "#f6dcd8", "S": "#d8e4f3", "C": "#fbf6ea"}
SIDE_TINT: Final[str] = "#eeeeee"
SEAT_MARK: Final[tuple[str, str]] = ("N", "S")
COMPASS: Final[tuple[str, str]] = ("北", "南")


def _xy(i: int, flip: bool) -> tuple[float, float]:
    """Returns the screen position of a hole (§1.1: x = q + r/2, y = r·√3/2), turned 180° when `flip`."""
    q, r = COORDS[i]
    x, y = q + r / 2, r * math.sqrt(3) / 2
    if flip:
        x, y = -x, -y
    return MARGIN + (x + 8) * SPACING, MARGIN + (y + 8 * math.sqrt(3) / 2) * SPACING


def legend(players: Sequence[str] = ()) -> tuple[LegendRow, ...]:
    """Returns the legend: each seat's colour, number, camp letter and holder."""
    return tuple(LegendRow(PIECE_COLOURS[s], s, f"{SEAT_MARK[s]} {COMPASS[s]} {PALETTE[PIECE_COLOURS[s]][0]}", players[s] if s < len(players) else "")
                 for s in (0, 1))


def _hole(i: int, flip: bool) -> str:
    """Returns one empty hole in its camp's tint, with a tooltip naming it."""
    x, y = _xy(i, flip)
    return (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{SPACING * 0.42:.1f}" fill="{CAMP_TINT.get(ZONES[i], SIDE_TINT)}" stroke="#999" '
            f'stroke-width="0.6"><title>{i} ({rowcol(i)})</title></circle>')


def _hole_label(i: int, flip: bool) -> str:
    """Returns the hole's number (the log's notation, `119>116`), haloed so it reads on a piece too."""
    x, y = _xy(i, flip)
    return (f'<text x="{x:.1f}" y="{y + 3:.1f}" font-size="8" text-anchor="middle" fill="#111" stroke="#fff" stroke-width="2" '
            f'paint-order="stroke">{i}</text>')


def sheet(seat: int | None = None, players: Sequence[str] = ()) -> Sheet:
    """Returns the star board drawn once from `seat`'s side (its own camp at the bottom, as on QQ):
    every hole tinted by camp and numbered, the legend, and a symbol per seat's piece."""
    flip = seat == 0
    width = 2 * MARGIN + 16 * SPACING
    height = 2 * MARGIN + 16 * math.sqrt(3) / 2 * SPACING
    base = f'<rect width="{width:.0f}" height="{height + CAPTION_HEIGHT:.0f}" fill="#ffffff"/>' + "".join(_hole(i, flip) for i in range(HOLES))
    base += legend_svg(legend(players), 6, 16)
    symbols = (f'<circle r="{SPACING * 0.34:.1f}" fill="{PIECE_COLOURS[0]}" stroke="{PIECE_RINGS[0]}" stroke-width="0.8"/>',
               f'<circle r="{SPACING * 0.30:.1f}" fill="{PIECE_COLOURS[1]}" stroke="{PIECE_RINGS[1]}" stroke-width="2.6"/>')
    overlay = "".join(_hole_label(i, flip) for i in range(HOLES))
    slots = tuple((round(x, 1), round(y, 1)) for x, y in (_xy(i, flip) for i in range(HOLES)))
    return Sheet("checkers", round(width), round(height), base, symbols, slots, legend(players), overlay, ring=SPACING * 0.45)


def frame(state: CheckersState, attempt: Event | None = None) -> Frame:
    """Returns the position as a frame: the pieces, the last move's hop path, and `attempt` (a move
    the rules refused) dashed on this last legal position."""
    cells = "".join(key(0) if state.pieces[0] & BIT[i] else key(1) if state.pieces[1] & BIT[i] else EMPTY for i in range(HOLES))
    marks = [Mark("last", tuple(state.last))] if state.last else []
    caption = _board_caption(state)
    if isinstance(attempt, Moved):
        marks.append(Mark("illegal", tuple(attempt.path or (attempt.from_, attempt.to))))
        caption += f"；被拒绝的着法 refused {attempt.from_}>{attempt.to} by seat {attempt.seat}"
    return Frame(cells, tuple(marks), caption=caption)


def as_claimed(state: CheckersState, event: Event) -> CheckersState | None:
    """Returns the board after a move as the log claims it, taken without the rules (the view beyond
    a check stopped by an illegal move, never a derived position): the piece on `from` (the mover's
    where the hole is empty) goes to `to`; None where the event is not a move between holes."""
    if not isinstance(event, Moved) or not (0 <= event.from_ < HOLES and 0 <= event.to < HOLES):
        return None
    owner = next((s for s in (0, 1) if state.pieces[s] & BIT[event.from_]), event.seat)
    pieces = [p & ~BIT[event.from_] & ~BIT[event.to] for p in state.pieces]
    pieces[owner] |= BIT[event.to]
    path = tuple(h for h in (event.path or (event.from_, event.to)) if 0 <= h < HOLES)
    return msgspec.structs.replace(state, pieces=(pieces[0], pieces[1]), last=path, ply=state.ply + 1, to_move=1 - event.seat)


def claimed_frame(state: CheckersState, event: Event) -> Frame:
    """Returns a position as the log claims it, its caption saying so and naming the move."""
    shown = frame(state)
    what = f"{event.from_}>{event.to}" if isinstance(event, Moved) else event.kind
    return Frame(shown.cells, shown.marks, shown.texts, f"{AS_CLAIMED}: seq {event.seq} {what}; {shown.caption}")


def render_svg(state: CheckersState, seat: int | None = None, players: Sequence[str] = ()) -> str:
    """Draws the position as SVG with its legend and hole numbers; from `seat`'s view its own camp
    is at the bottom, as on QQ."""
    return compose(sheet(seat, players), frame(state))


def _board_caption(state: CheckersState) -> str:
    """Returns the board's caption, Chinese with English beside: the ply, the side to move or who won
    (the summary says how, in words)."""
    if state.unverified:
        return f"第 {state.ply} 手 ply {state.ply}：检查停止，未验证 the check stopped: unverified"
    if state.outcome is not None:
        won = "、".join(f"座位 {w} {SEAT_MARK[w]}" for w in state.outcome.winners)
        return f"第 {state.ply} 手 ply {state.ply}：终局 over，" + (f"{won} 胜 won" if won else "和棋 draw")
    s = state.to_move
    return f"第 {state.ply} 手 ply {state.ply}：座位 {s} {COMPASS[s]}方行棋 seat {s} ({SEAT_MARK[s]}) to move"


def _caption(state: CheckersState) -> str:
    """Returns the one-line caption: ply, side to move or the result."""
    if state.outcome is not None:
        won = ", ".join(f"seat {w}" for w in state.outcome.winners) or "nobody"
        return f"ply {state.ply}: {state.outcome.termination}, won by {won}"
    return f"ply {state.ply}: seat {state.to_move} ({SEAT_MARK[state.to_move]}) to move"


def render_text(state: CheckersState, seat: int | None = None) -> str:
    """Draws the position as text: `N`/`S` pieces of seats 0/1 (lower case where the last move
    landed), `o` the last move's origin, `.` an empty hole; rows of the board top to bottom."""
    flip = seat == 0
    grid: dict[int, dict[int, str]] = {}
    origin, landing = (state.last[0], state.last[-1]) if state.last else (-1, -1)
    for i, (q, r) in enumerate(COORDS):
        mark = "."
        for s in (0, 1):
            if state.pieces[s] & BIT[i]:
                mark = SEAT_MARK[s].lower() if i == landing else SEAT_MARK[s]
        if i == origin and mark == ".":
            mark = "o"
        row, col = (-r, -(2 * q + r)) if flip else (r, 2 * q + r)
        grid.setdefault(row, {})[col + 16] = mark
    lines = []
    for row in sorted(grid):
        cells = grid[row]
        lines.append("".join(cells.get(c, " ") for c in range(max(cells) + 1)).rstrip())
    return "\n".join([_caption(state), *lines])


TEXT_LEGEND = (
    "legend: N seat 0's pieces (north camp), S seat 1's (south camp), lower case where the last move\n"
    "        landed; o the last move's origin; . an empty hole\n"
    "holes:  each line starts with its row (1 = the tip of the north camp) and the ids of its first and last\n"
    "        holes; ids run 0–120 row by row, left to right (row-col notation: 9-5 is hole 60)"
)
"""What the text diagram's letters mean and how its holes are numbered."""


def render_board(state: CheckersState, seat: int | None = None) -> str:
    """Returns the text diagram for people: the caption in words, each line of holes led by its row
    and hole ids, and a legend."""
    flip = seat == 0
    lines: dict[int, list[tuple[int, int]]] = {}
    for i, (q, r) in enumerate(COORDS):
        row, col = (-r, -(2 * q + r)) if flip else (r, 2 * q + r)
        lines.setdefault(row, []).append((col, i))
    _, *diagram = render_text(state, seat).split("\n")
    out = [_board_caption(state)]  # in words, as under the SVG (render_text's caption is the golden transcripts')
    for (_, holes), line in zip(sorted(lines.items()), diagram):
        holes.sort()
        first, last = holes[0][1], holes[-1][1]
        out.append(f"{ROW_OF[first]:>2} {first:>3}–{last:<3} {line}".rstrip())
    return "\n".join(out) + "\n" + TEXT_LEGEND + "\n"
