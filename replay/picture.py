"""Pictures of a position, shared by the three engines (DESIGN.md replay/: each engine renders a
position as SVG).

An engine draws a game on a `Sheet`: the parts that never change within a game, drawn once (the
board with the coordinate label of every point or hole, the seat legend) and one symbol per piece
or card. A position is a `Frame` on that sheet: which symbol lies on which slot, the last move, an
illegal attempt, free texts and a caption. `compose` turns a sheet and a frame into SVG; the
arbitration report ships the sheet once and every step's frame as compact data that its script
composes with the same symbols and mark styles, so a 400-event game is a small page.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from html import escape
from typing import Final, NamedTuple

FONT_STACK: Final = ("'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', 'PingFang SC', 'Hiragino Sans GB', "
                     "'Microsoft YaHei', 'WenQuanYi Micro Hei', sans-serif")
"""Fonts for Chinese text: the Noto/Source Han CJK faces first, then the system faces of macOS,
Windows and older Linux desktops, so that no glyph falls back to an empty box."""
EMPTY: Final = "."
"""The cell of an empty slot in `Frame.cells`."""
KEYS: Final = string.ascii_letters + string.digits
"""Symbol keys, one character each (safe inside HTML, JSON and a script element)."""
CAPTION_HEIGHT: Final = 44
"""Room for the caption's two lines under a board (`caption_lines`)."""
AS_CLAIMED: Final = "按记录所称，未经推导 as the log claims, not derived"
"""The caption's opening words on a board beyond a halted replay (every engine's claimed frames)."""
MARK_STYLES: Final[dict[str, dict[str, str]]] = {
    "last": {"stroke": "#f9a825", "stroke-width": "4", "fill": "#f9a825", "fill-opacity": "0.3", "stroke-linejoin": "round",
             "marker-end": "url(#mark-arrow-last)"},
    "illegal": {"stroke": "#d50000", "stroke-width": "4", "fill": "none", "stroke-dasharray": "8 5",
                "marker-end": "url(#mark-arrow)"},
}
"""How each kind of mark is stroked: the last legal move solid amber, its ends tinted, an illegal
attempt dashed red; each with an arrowhead giving its direction (a line is never filled)."""
ARROW: Final = ('<marker id="mark-arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" '
                'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#d50000"/></marker>'
                '<marker id="mark-arrow-last" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="4" markerHeight="4" '
                'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#e65100"/></marker>')


class LegendRow(NamedTuple):
    """One seat in the legend: its colour, number, compass letter (or role) and who holds it."""

    colour: str
    seat: int
    letter: str
    holder: str = ""


class Mark(NamedTuple):
    """A move drawn over the pieces along slots: `last` (the last legal move) or `illegal` (an attempt
    the rules refused, drawn dashed on the last legal position)."""

    kind: str
    path: tuple[int, ...]


@dataclass(frozen=True)
class Sheet:
    """What a game's pictures share: size, the static board and overlay markup, a symbol per piece,
    the slots pieces stand on, and the legend."""

    name: str
    width: float
    height: float
    base: str
    symbols: tuple[str, ...]
    slots: tuple[tuple[float, float], ...]
    legend: tuple[LegendRow, ...]
    overlay: str = ""
    """Markup drawn over the pieces (labels that must stay readable on an occupied point)."""
    ring: float = 19
    """The radius of the rings that mark a move's ends."""

    def symbol_id(self, key: str) -> str:
        """Returns the element id of the symbol with this key."""
        return f"{self.name}-{key}"

    def defs(self, with_board: bool = False) -> str:
        """Returns the `<defs>` of the symbols and the arrow marker, shared by every frame; a page
        of many boards also keeps the board and its overlay there, once (`with_board`)."""
        groups = "".join(f'<g id="{self.symbol_id(KEYS[i])}">{body}</g>' for i, body in enumerate(self.symbols))
        board = f'<g id="{self.name}-base">{self.base}</g><g id="{self.name}-overlay">{self.overlay}</g>' if with_board else ""
        return f"<defs>{ARROW}{groups}{board}</defs>"

    def page_defs(self) -> str:
        """Returns an invisible SVG holding the defs, with the board, for every board of a page."""
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" style="position:absolute" aria-hidden="true" '
                f'font-family="{FONT_STACK}">{self.defs(with_board=True)}</svg>')


@dataclass(frozen=True)
class Frame:
    """A position on a sheet: one cell per slot (`EMPTY` or a symbol key), marks, texts and a caption."""

    cells: str
    marks: tuple[Mark, ...] = ()
    texts: tuple[tuple[float, float, str], ...] = ()
    caption: str = ""


def key(index: int) -> str:
    """Returns the one-character key of the symbol at `index`."""
    return KEYS[index]


def legend_svg(rows: tuple[LegendRow, ...], x: float, y: float, title: str = "图例 legend") -> str:
    """Returns the legend as SVG rows from (x, y): a swatch, the seat, its letter and holder."""
    out = [f'<text x="{x}" y="{y}" font-size="12" font-weight="bold">{escape(title)}</text>']
    for i, row in enumerate(rows):
        ty = y + 16 * (i + 1)
        label = f"seat {row.seat} · {row.letter}" + (f" · {row.holder}" if row.holder else "")
        out.append(f'<g class="legend-row"><rect x="{x}" y="{ty - 10}" width="12" height="12" fill="{row.colour}" stroke="#000"/>'
                   f'<text x="{x + 17}" y="{ty}" font-size="12">{escape(label)}</text></g>')
    return "".join(out)


def caption_lines(caption: str) -> tuple[str, str]:
    """Returns a caption as the two lines drawn under a board: up to its first clause break (`；` or
    `; `), then the rest, so that a refused move or a claimed result is never cut off at the edge;
    report.js splits it the same way."""
    breaks = [i for i in (caption.find("；"), caption.find("; ")) if i >= 0]
    if not breaks:
        return caption, ""
    at = min(breaks)
    return caption[:at + 1], caption[at + 1:].lstrip()


def _attrs(kind: str, ring: bool = False) -> str:
    """Returns a mark's stroke attributes; a ring carries no arrowhead, a line no fill."""
    return " ".join(f'{k}="{"none" if k == "fill" and not ring else v}"' for k, v in MARK_STYLES[kind].items()
                    if not (ring and k == "marker-end") and not (not ring and k == "fill-opacity"))


def mark_svg(sheet: Sheet, mark: Mark) -> str:
    """Returns a mark: rings on its first and last slot and a line along its path."""
    points = [sheet.slots[i] for i in mark.path]
    ends = points if len(points) == 1 else [points[0], points[-1]]
    rings = "".join(f'<circle cx="{x:g}" cy="{y:g}" r="{sheet.ring:g}" {_attrs(mark.kind, ring=True)}/>' for x, y in ends)
    line = ""
    if len(points) > 1:
        line = f'<polyline points="{" ".join(f"{x:g},{y:g}" for x, y in points)}" {_attrs(mark.kind)}/>'
    return f'<g class="mark mark-{mark.kind}">{rings}{line}</g>'


def frame_svg(sheet: Sheet, frame: Frame) -> str:
    """Returns the moving parts of a frame: the pieces, the marks, the texts and the caption."""
    uses = "".join(f'<use href="#{sheet.symbol_id(c)}" x="{sheet.slots[i][0]:g}" y="{sheet.slots[i][1]:g}"/>'
                   for i, c in enumerate(frame.cells) if c != EMPTY)
    marks = "".join(mark_svg(sheet, m) for m in frame.marks)
    texts = "".join(f'<text x="{x:g}" y="{y:g}" font-size="11" fill="#fff">{escape(t)}</text>' for x, y, t in frame.texts)
    lines = "".join(f'<tspan x="10" dy="{dy}">{escape(line)}</tspan>' for dy, line in zip((0, 18), caption_lines(frame.caption)))
    caption = f'<text class="caption" x="10" y="{sheet.height + 18:g}" font-size="14">{lines}</text>'
    return f'<g class="cells">{uses}</g><g class="marks">{marks}</g><g class="texts">{texts}</g>{caption}'


def compose(sheet: Sheet, frame: Frame, standalone: bool = True, element_id: str = "") -> str:
    """Returns the SVG of a frame on its sheet; a page that holds the sheet's `page_defs` once
    passes `standalone=False` and its boards refer to them."""
    h = sheet.height + CAPTION_HEIGHT
    if standalone:
        defs, base, overlay = sheet.defs(), sheet.base, sheet.overlay
    else:
        defs, base, overlay = "", f'<use href="#{sheet.name}-base"/>', f'<use href="#{sheet.name}-overlay"/>'
    ident = f' id="{element_id}"' if element_id else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg"{ident} class="board" viewBox="0 0 {sheet.width:g} {h:g}" width="{sheet.width:g}" '
            f'height="{h:g}" font-family="{FONT_STACK}" role="img" aria-label="{escape(frame.caption)}">'
            f'{defs}{base}{frame_svg(sheet, frame)}{overlay}</svg>\n')
