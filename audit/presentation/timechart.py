"""The time-per-move chart of a game: a bar per timed move in its seat's colour, with axes, a seat
legend and the profile's move-time limit as a line."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from audit.presentation.page import e
from replay.picture import FONT_STACK, LegendRow
from schemas.common import MoveTimeUsed

WIDTH, HEIGHT = 1000, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 34, 40


def _nice_step(top: float, ticks: int = 5) -> float:
    """Returns a round tick step (1, 2 or 5 × 10^k) giving about `ticks` ticks up to `top`."""
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _axes(top_s: float, n: int) -> str:
    """Returns the axes: seconds up the left with grid lines, timed moves along the bottom."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = _nice_step(top_s)
    out = [f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}" stroke="#000"/>',
           f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#000"/>']
    k = 0.0
    while k <= top_s + 1e-9:
        y = TOP + plot_h - k / top_s * plot_h
        out.append(f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>'
                   f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{k:g}</text>')
        k += step
    every = _nice_step(n, 10) if n > 10 else 1
    for i in range(0, n + 1, max(int(every), 1)):
        x = LEFT + i / max(n, 1) * plot_w
        out.append(f'<line x1="{x:.1f}" y1="{TOP + plot_h}" x2="{x:.1f}" y2="{TOP + plot_h + 4}" stroke="#000"/>'
                   f'<text x="{x:.1f}" y="{TOP + plot_h + 16}" font-size="11" text-anchor="middle">{i}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" font-size="12" text-anchor="middle">第几手 timed move (n)</text>'
               f'<text transform="translate(14 {TOP + plot_h / 2}) rotate(-90)" font-size="12" text-anchor="middle">用时 秒 time used (s)</text>')
    return "".join(out)


def _seat_legend(legend: Sequence[LegendRow]) -> str:
    out = []
    for i, row in enumerate(legend):
        x = LEFT + i * 190
        out.append(f'<rect x="{x}" y="8" width="12" height="12" fill="{row.colour}"/>'
                   f'<text x="{x + 16}" y="18" font-size="12">{e(f"座位 seat {row.seat} {row.letter}")}</text>')
    return "".join(out)


def _bar(i: int, t: MoveTimeUsed, width: float, top_s: float, colours: dict[int, str], codes: Sequence[str]) -> str:
    """Returns one bar, a link to its move's step (or its own), outlined and marked where it has findings."""
    plot_h = HEIGHT - TOP - BOTTOM
    x, h = LEFT + i * width, t.ms / 1000 / top_s * plot_h
    y = TOP + plot_h - h
    flag = ' stroke="#d50000" stroke-width="2.5"' if codes else ""
    mark = (f'<text x="{x + width / 2:.1f}" y="{y - 3:.1f}" font-size="12" font-weight="bold" text-anchor="middle" fill="#d50000">!</text>'
            if codes else "")
    found = f"; {', '.join(codes)}" if codes else ""
    cls = ' class="flag"' if codes else ""
    return (f'<a href="#s{t.move_seq if t.move_seq is not None else t.seq}"{cls}>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width - 1, 1):.1f}" height="{h:.1f}" fill="{colours.get(t.seat or 0, "#777")}"{flag}>'
            f'<title>seq {t.move_seq}: 座位 seat {t.seat}, {t.ms / 1000:g} s{e(found)}</title></rect>{mark}</a>')


def time_chart(timings: Sequence[MoveTimeUsed], legend: Sequence[LegendRow], limit_s: int | None,
               flagged: Mapping[int, Sequence[str]] | None = None) -> str:
    """Returns the chart as SVG, or a sentence where the game has no timing events. Each bar links
    to its move's step; a bar whose claim or move has findings (`flagged`: codes by seq) is
    outlined red and marked `!`."""
    if not timings:
        return "<p>无用时记录 No timing events.</p>"
    colours = {r.seat: r.colour for r in legend}
    top_s = max(max(t.ms for t in timings) / 1000, limit_s or 0, 1) * 1.08
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bar = plot_w / len(timings)
    bars = "".join(_bar(i, t, bar, top_s, colours, (flagged or {}).get(t.seq, ()) or (flagged or {}).get(t.move_seq or -1, ()))
                   for i, t in enumerate(timings))
    limit = ""
    if limit_s is not None:
        y = TOP + plot_h - limit_s / top_s * plot_h
        limit = (f'<g class="limit"><line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#d50000" stroke-width="2" '
                 f'stroke-dasharray="6 4"/><text x="{WIDTH - RIGHT}" y="{y - 4:.1f}" font-size="12" text-anchor="end" fill="#d50000">'
                 f'限时 limit {limit_s} s</text></g>')
    note = "" if limit_s is not None else "<p>规则未设每步限时 The profile sets no per-move time limit.</p>"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="timechart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
            f'font-family="{FONT_STACK}" role="img" aria-label="time per move">{_seat_legend(legend)}{_axes(top_s, len(timings))}{bars}{limit}'
            f'</svg>{note}')
