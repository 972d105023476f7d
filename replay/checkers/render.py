"""Pictures of a position (DESIGN.md replay/): an SVG of the star board with the pieces, the last
move and its hop path, and a compact text diagram for terminals."""

from __future__ import annotations

import math
from typing import Final

from replay.checkers.board import BIT, COORDS, HOLES, ROW_OF, ZONES, rowcol
from replay.checkers.state import CheckersState

SPACING: Final[float] = 24.0
MARGIN: Final[float] = 20.0
PIECE_COLOURS: Final[tuple[str, str]] = ("#c0392b", "#1f5fa8")
"""Seat 0 (north camp) red, seat 1 (south camp) blue."""
CAMP_TINT: Final[dict[str, str]] = {"N": "#f6dcd8", "S": "#d8e4f3", "C": "#fbf6ea"}
SIDE_TINT: Final[str] = "#eeeeee"
SEAT_MARK: Final[tuple[str, str]] = ("N", "S")


def _xy(i: int, flip: bool) -> tuple[float, float]:
    """Returns the screen position of a hole (§1.1: x = q + r/2, y = r·√3/2), turned 180° when `flip`."""
    q, r = COORDS[i]
    x, y = q + r / 2, r * math.sqrt(3) / 2
    if flip:
        x, y = -x, -y
    return MARGIN + (x + 8) * SPACING, MARGIN + (y + 8 * math.sqrt(3) / 2) * SPACING


def render_svg(state: CheckersState, seat: int | None = None) -> str:
    """Draws the position as SVG; from `seat`'s view its own camp is at the bottom, as on QQ."""
    flip = seat == 0
    width = 2 * MARGIN + 16 * SPACING
    height = 2 * MARGIN + 16 * math.sqrt(3) / 2 * SPACING
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
    ]
    parts.extend(_hole(state, i, flip) for i in range(HOLES))
    parts.extend(_last_move(state, flip))
    parts.append(f'<text x="{MARGIN}" y="{height - 4:.0f}" font-family="sans-serif" font-size="11">{_caption(state)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _hole(state: CheckersState, i: int, flip: bool) -> str:
    """Returns one hole: its camp tint, and the piece on it if any, with a tooltip naming it."""
    x, y = _xy(i, flip)
    tint = CAMP_TINT.get(ZONES[i], SIDE_TINT)
    title = f"<title>{i} ({rowcol(i)})</title>"
    out = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{SPACING * 0.42:.1f}" fill="{tint}" stroke="#999" stroke-width="0.6">{title}</circle>'
    for seat in (0, 1):
        if state.pieces[seat] & BIT[i]:
            out += (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{SPACING * 0.34:.1f}" fill="{PIECE_COLOURS[seat]}" '
                    f'stroke="#222" stroke-width="0.8">{title}</circle>')
    return out


def _last_move(state: CheckersState, flip: bool) -> list[str]:
    """Returns the last move's drawing: a ring on the origin and the hop path as a line with dots."""
    if not state.last:
        return []
    points = [_xy(i, flip) for i in state.last]
    ox, oy = points[0]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    out = [
        f'<circle cx="{ox:.1f}" cy="{oy:.1f}" r="{SPACING * 0.36:.1f}" fill="none" stroke="#e67e22" stroke-width="2" stroke-dasharray="3,2"/>',
        f'<polyline points="{line}" fill="none" stroke="#e67e22" stroke-width="2.5" stroke-linejoin="round" opacity="0.85"/>',
    ]
    out.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#e67e22"/>' for x, y in points[1:])
    return out


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
    """Returns the text diagram for people: each line of holes led by its row and hole ids, and a legend."""
    flip = seat == 0
    lines: dict[int, list[tuple[int, int]]] = {}
    for i, (q, r) in enumerate(COORDS):
        row, col = (-r, -(2 * q + r)) if flip else (r, 2 * q + r)
        lines.setdefault(row, []).append((col, i))
    caption, *diagram = render_text(state, seat).split("\n")
    out = [caption]
    for (_, holes), line in zip(sorted(lines.items()), diagram):
        holes.sort()
        first, last = holes[0][1], holes[-1][1]
        out.append(f"{ROW_OF[first]:>2} {first:>3}–{last:<3} {line}".rstrip())
    return "\n".join(out) + "\n" + TEXT_LEGEND + "\n"
