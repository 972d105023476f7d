"""Pictures of a position: an SVG of the cross-shaped board (on the sheet of replay/picture.py: every
point labelled in the log's notation, a legend of seats) and a 17×17 text diagram, each from an
omniscient view or from one seat's view in 四暗 or 双明 (第五条), with 亮旗 flags shown to all."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from msgspec.structs import replace

from replay.junqi.board import CENTRE, IS_CAMP, IS_HQ, KIND, N_POINTS, NAMES, XY, board
from replay.junqi.pieces import ASCII, FLAG, KIND_NAMES, kind_of, seat_of
from replay.junqi.state import JunqiState, partner, point_index, point_name
from replay.picture import AS_CLAIMED, CAPTION_HEIGHT, EMPTY, Frame, LegendRow, Mark, Sheet, compose, key, legend_svg
from replay.protocol import CHANCE, TERMINAL
from schemas.envelope import Event
from schemas.junqi import JunqiProfile, Moved

SEAT_NAMES = "SWNE"
COMPASS = "南西北东"
CSS = {"红": "#e34a33", "蓝": "#2166ac", "绿": "#00441b", "黑": "#1a1a1a"}
"""The four colours of 第四条 十, apart in lightness so that they stay apart in grayscale print and
for colour-blind eyes; every piece also carries its seat's letter, and the two alliances differ in
shape (红蓝 square corners, 绿黑 round), so colour is never the only mark."""
PALETTE = {CSS["红"]: ("红", "red"), CSS["蓝"]: ("蓝", "blue"), CSS["绿"]: ("绿", "green"), CSS["黑"]: ("黑", "black")}
"""Each colour in words, Chinese and English (the legends name colours, not codes)."""
DEFAULT_COLOURS = ("红", "绿", "蓝", "黑")
UNIT, MARGIN = 40, 30


def is_visible(state: JunqiState, value: int, viewer: int | None, mode: str) -> bool:
    """Tells whether `viewer` may see a piece's identity: its own, its partner's in 双明, a revealed flag."""
    if viewer is None:
        return True
    owner = seat_of(value)
    if owner == viewer or (mode == "双明" and owner == partner(viewer)):
        return True
    return kind_of(value) == FLAG and state.revealed[owner]


def _status(state: JunqiState) -> str:
    if state.outcome is not None:
        o = state.outcome
        return f"over: {o.termination} winners={','.join(SEAT_NAMES[s] for s in o.winners) or '-'}"
    if state.halted is not None:
        return f"replay stopped at {state.halted}"
    if state.to_move == CHANCE:
        return "layout (布阵) phase"
    return f"{SEAT_NAMES[state.to_move]} to move" if state.to_move != TERMINAL else "over"


def render_text(state: JunqiState, seat: int | None = None, mode: str = "四暗") -> str:
    """Returns the 17×17 diagram of §2.4: `s9` = S's 司令, `nF` = N's flag, `w?` = a hidden W piece,
    `.` post, `o` camp, `H` HQ, `+` 九宫; then the step, quiet and seat status."""
    grid = [["   "] * 17 for _ in range(17)]
    for p in range(N_POINTS):
        x, y = XY[p]
        value = state.board[p]
        if value:
            label = ASCII[kind_of(value)] if is_visible(state, value, seat, mode) else "?"
            grid[y][x] = f" {SEAT_NAMES[seat_of(value)].lower()}{label}"[-3:]
        else:
            grid[y][x] = "  " + ("o" if IS_CAMP[p] else "H" if IS_HQ[p] else "+" if KIND[p] == CENTRE else ".")
    lines = ["".join(row).rstrip() for row in grid]
    out = [f"{_status(state)}; step {state.step}, quiet {state.quiet}, plies {state.plies}"]
    if state.last_move is not None:
        out[0] += f"; last {NAMES[state.last_move[0]]}>{NAMES[state.last_move[1]]}"
    out.append("out: " + (", ".join(f"{SEAT_NAMES[e.seat]} ({e.cause} @{e.step})" for e in state.eliminations) or "-"))
    if seat is not None:
        out.append(f"view of {SEAT_NAMES[seat]} ({mode})")
    return "\n".join(out + lines) + "\n"


def _px(p: int) -> tuple[float, float]:
    x, y = XY[p]
    return MARGIN + x * UNIT, MARGIN + y * UNIT


def _edge_svg(a: int, b: int, rail: bool) -> str:
    (x1, y1), (x2, y2) = _px(a), _px(b)
    style = 'stroke="#222" stroke-width="5"' if rail else 'stroke="#777" stroke-width="1.5"'
    ax, ay = XY[a]
    bx, by = XY[b]
    if rail and abs(ax - bx) == 1 and abs(ay - by) == 1:
        # An arc (§3.3): a quarter circle round the empty corner cell outside the 九宫.
        cx, cy = (ax, by) if not (6 <= ax <= 10 and 6 <= by <= 10) else (bx, ay)
        cx, cy = MARGIN + cx * UNIT, MARGIN + cy * UNIT
        k = 0.5523
        c1 = (x1 + k * (x2 - cx), y1 + k * (y2 - cy))
        c2 = (x2 + k * (x1 - cx), y2 + k * (y1 - cy))
        return (f'<path d="M{x1},{y1} C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {x2},{y2}" '
                f'fill="none" {style}/>')
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" {style}/>'


def _point_svg(p: int) -> str:
    x, y = _px(p)
    if IS_CAMP[p]:
        return f'<circle cx="{x}" cy="{y}" r="13" fill="#fff8e1" stroke="#555"/>'
    if IS_HQ[p]:
        return f'<rect x="{x - 16}" y="{y - 11}" width="32" height="22" rx="9" fill="#ffe0b2" stroke="#555"/>'
    return f'<rect x="{x - 5}" y="{y - 5}" width="10" height="10" fill="#fafafa" stroke="#555"/>'


def _label_svg(p: int, profile: JunqiProfile) -> str:
    """The point's name in the log's notation, in the gap below the point, so that a move such as
    `W23>W24` in a finding can be found on the board."""
    x, y = _px(p)
    return (f'<text class="point" x="{x}" y="{y + 22}" font-size="10" text-anchor="middle" fill="#222" stroke="#e8f0d8" stroke-width="2.5" '
            f'paint-order="stroke">{point_name(p, profile)}</text>')


def seat_colour(state: JunqiState, seat: int) -> str:
    """Returns the colour a seat plays (its layout's, else the default of its seat) as a CSS colour."""
    return CSS[state.colours[seat] or DEFAULT_COLOURS[seat]]


def legend(state: JunqiState, players: Sequence[str] = ()) -> tuple[LegendRow, ...]:
    """Returns the legend: each seat's colour, number, compass letter (方位) and holder."""
    return tuple(LegendRow(seat_colour(state, s), s, f"{SEAT_NAMES[s]} {COMPASS[s]} {state.colours[s] or DEFAULT_COLOURS[s]}",
                           players[s] if s < len(players) else "") for s in range(4))


def _symbol(colour: str, label: str, seat: int) -> str:
    """Returns a piece: its seat's colour and shape (the alliance of seats 1 and 3 round), its name,
    and its seat's letter in a badge (on a hidden piece, the letter alone, large)."""
    letter = SEAT_NAMES[seat]
    shape = f'<rect x="-17" y="-11" width="34" height="22" rx="{11 if seat % 2 else 2}" fill="{colour}" stroke="#fff" stroke-width="1.5"/>'
    if not label:
        return shape + f'<text class="seat" y="5" font-size="14" font-weight="bold" text-anchor="middle" fill="#fff">{letter}</text>'
    badge = (f'<circle cx="-15" cy="-10" r="6" fill="#fff" stroke="#000" stroke-width="0.8"/>'
             f'<text class="seat" x="-15" y="-7" font-size="8.5" font-weight="bold" text-anchor="middle" fill="#000">{letter}</text>')
    return shape + f'<text class="name" x="2" y="5" font-size="13" text-anchor="middle" fill="#fff">{label}</text>' + badge


def sheet(state: JunqiState, players: Sequence[str] = ()) -> Sheet:
    """Returns the board drawn once: roads thin, rails thick, arcs curved, camps round, every point
    labelled, the legend in the north-west corner, and a symbol per seat and piece (and hidden)."""
    geo = board(state.profile.arcs_present, state.profile.arc_model, state.profile.arc_straight_for_non_engineer)
    size = 2 * MARGIN + 16 * UNIT
    parts = [f'<rect width="{size}" height="{size + CAPTION_HEIGHT}" fill="#e8f0d8"/>']
    parts += [_edge_svg(a, b, False) for a, b in sorted(geo.road_edges)]
    parts += [_edge_svg(a, b, True) for a, b in sorted(geo.rail_edges)]
    parts += [_point_svg(p) for p in range(N_POINTS)]
    parts.append(legend_svg(legend(state, players), 8, 16))
    labels = "".join(_label_svg(p, state.profile) for p in range(N_POINTS))  # over the marks: a mark never hides a point's name
    symbols = tuple(_symbol(seat_colour(state, s), name, s) for s in range(4) for name in (*KIND_NAMES, ""))
    return Sheet("junqi", size, size, "".join(parts), symbols, tuple(_px(p) for p in range(N_POINTS)), legend(state, players), labels)


def _cell(state: JunqiState, p: int, viewer: int | None, mode: str) -> str:
    value = state.board[p]
    if not value:
        return EMPTY
    owner = seat_of(value)
    shown = kind_of(value) if is_visible(state, value, viewer, mode) else len(KIND_NAMES)
    return key(owner * (len(KIND_NAMES) + 1) + shown)


def _attempt(state: JunqiState, event: Event | None) -> tuple[int, int] | None:
    """Returns the points of an attempted move, where the event is a move between points of the board."""
    if not isinstance(event, Moved):
        return None
    try:
        return point_index(event.from_, state.profile), point_index(event.to, state.profile)
    except KeyError:
        return None


def route(state: JunqiState, start: int, end: int) -> tuple[int, ...]:
    """Returns the points a move went through: one road step, a straight run along a railway, or
    else (a 工兵 turning) the shortest way along the railways through points empty now, so that the
    picture follows the rails rather than a line across an arm."""
    geo = board(state.profile.arcs_present, state.profile.arc_model, state.profile.arc_straight_for_non_engineer)
    if (start, end) in geo.road_edges or (end, start) in geo.road_edges:
        return start, end
    for between in geo.between.get((start, end), ()):
        if not any(state.board[p] for p in between):
            return (start, *between, end)
    came: dict[int, int] = {start: start}
    queue = deque([start])
    while queue:
        p = queue.popleft()
        if p == end:
            path = [end]
            while path[-1] != start:
                path.append(came[path[-1]])
            return tuple(reversed(path))
        for q in geo.rail_neighbours[p]:
            if q not in came and (q == end or not state.board[q]):
                came[q] = p
                queue.append(q)
    return start, end


def _caption(state: JunqiState) -> str:
    """Returns the board's caption, Chinese with English beside: who is to move, or the end (who won;
    the summary says how, in words), or where the replay stopped; the step and quiet counters."""
    if state.outcome is not None:
        won = "".join(SEAT_NAMES[s] for s in state.outcome.winners)
        head = f"终局 over：{won} 胜 won" if won else "终局 over：和棋 draw"
    elif state.halted is not None:
        head = f"重放停止于 {state.halted} replay stopped at {state.halted}"
    elif state.to_move == CHANCE:
        head = "布阵阶段 layout phase"
    elif state.to_move == TERMINAL:
        head = "终局 over"
    else:
        head = f"{SEAT_NAMES[state.to_move]} {COMPASS[state.to_move]}家行棋 {SEAT_NAMES[state.to_move]} to move"
    return f"{head}；第 {state.step} 步 step {state.step}，连续无接触 {state.quiet} 步 quiet {state.quiet}"


def frame(state: JunqiState, seat: int | None = None, mode: str = "四暗", attempt: Event | None = None) -> Frame:
    """Returns the position as a frame: every piece (hidden from `seat` where `mode` hides it), the
    last move, and `attempt` (a move the rules refused) dashed on this last legal position."""
    cells = "".join(_cell(state, p, seat, mode) for p in range(N_POINTS))
    marks = [Mark("last", route(state, *state.last_move))] if state.last_move is not None else []
    caption = _caption(state)
    tried = _attempt(state, attempt)
    if tried is not None and isinstance(attempt, Moved):
        marks.append(Mark("illegal", tried))
        caption += f"；被拒绝的着法 refused {attempt.from_}>{attempt.to} by {SEAT_NAMES[attempt.seat] if attempt.seat is not None else '?'}"
    if seat is not None:
        caption += f"；{SEAT_NAMES[seat]} 的视角 view of {SEAT_NAMES[seat]} ({mode})"
    return Frame(cells, tuple(marks), caption=caption)


def as_claimed(state: JunqiState, event: Event) -> JunqiState | None:
    """Returns the board after a move as the log claims it, its claimed combat result taken without
    the rules (the view beyond a halted replay, never a derived position); None where the event is
    not a move between points of the board."""
    tried = _attempt(state, event)
    if tried is None or not isinstance(event, Moved):
        return None
    start, end = tried
    cells = list(state.board)
    mover, result = cells[start], event.result or ("win" if cells[end] else "move")
    cells[start] = 0
    if result in ("move", "win"):
        cells[end] = mover
    elif result == "both":
        cells[end] = 0
    return replace(state, board=tuple(cells), last_move=(start, end))


def claimed_frame(state: JunqiState, event: Event) -> Frame:
    """Returns a position as the log claims it, its caption saying so and naming the move."""
    shown = frame(state)
    what = f"{event.from_}>{event.to}" if isinstance(event, Moved) else event.kind
    return Frame(shown.cells, shown.marks, shown.texts, f"{AS_CLAIMED}: seq {event.seq} {what}; {shown.caption}")


def render_svg(state: JunqiState, seat: int | None = None, mode: str = "四暗", players: Sequence[str] = ()) -> str:
    """Returns an SVG of the board with its legend and point labels: pieces in their seat's colour
    with Chinese names, hidden from `seat` where `mode` hides them, the last move ringed."""
    return compose(sheet(state, players), frame(state, seat, mode))


TEXT_LEGEND = (
    "legend: s w n e = the piece's seat (S W N E); F 军旗, M 地雷, B 炸弹,\n"
    "        1–9 工兵 排长 连长 营长 团长 旅长 师长 军长 司令; ? a piece this view cannot see;\n"
    "        . post (兵站), o 行营, H 大本营, + 九宫\n"
    "points: arm letter, row (1 = front), column (1 = the arm owner's left): N24 is N's\n"
    "        row 2, column 4; the margins give each arm's rows (r) and columns (c);\n"
    "        the 九宫 points are CNW CN CNE CW CC CE CSW CS CSE"
)
"""What the text diagram's letters mean and how its points are named."""


def _margins() -> tuple[list[str], list[str], list[str]]:
    """Returns the top and bottom labels of each grid column and the right label of each grid row:
    the rows and columns of the arms that cross them."""
    top, bottom = ["   "] * 17, ["   "] * 17
    right: list[list[str]] = [[] for _ in range(17)]
    for p in range(N_POINTS):
        name = NAMES[p]
        if name[0] not in SEAT_NAMES:
            continue
        arm, r, c = name[0], name[1], name[2]
        x, y = XY[p]
        if arm in "NS":
            (top if arm == "N" else bottom)[x] = f" c{c}"
            label = f"{arm} r{r}"
        else:
            top[x] = bottom[x] = f" r{r}"
            label = f"{arm} c{c}"
        if label not in right[y]:
            right[y].append(label)
    return top, bottom, ["  ".join(labels) for labels in right]


def render_board(state: JunqiState, seat: int | None = None, mode: str = "四暗") -> str:
    """Returns the text diagram for people: the caption in words and the status lines, the board
    framed with each arm's rows and columns, and a legend of its letters."""
    text = render_text(state, seat, mode).rstrip("\n").split("\n")
    last = f"；上一着 last {NAMES[state.last_move[0]]}>{NAMES[state.last_move[1]]}" if state.last_move is not None else ""
    text[0] = _caption(state) + last  # in words, as under the SVG (render_text's status line is the golden transcripts')
    grid_at = len(text) - 17
    top, bottom, right = _margins()
    rows = [f"{line:<51}  {label}".rstrip() for line, label in zip(text[grid_at:], right)]
    framed = ["".join(top).rstrip(), *rows, "".join(bottom).rstrip()]
    return "\n".join(text[:grid_at] + framed) + "\n" + TEXT_LEGEND + "\n"
