"""Pictures of the table (paohuzi.md §3: 偎 face down, 臭偎/提 one card up): SVG and text, whole or one seat's view."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from replay.paohuzi import ENGINE
from replay.paohuzi.cards import N_VALUES
from replay.paohuzi.render import HIDDEN, SEAT_COLOURS, frame, render_svg, render_text, sheet
from replay.picture import key
from schemas.paohuzi import Discarded
from tests.paohuzi_support import start_event, table


def test_text_view_hides_what_a_seat_cannot_see() -> None:
    """§3: others' hands show as a count; another seat's 偎 is face down, its 提 and 臭偎 show one card."""
    state = table(["一二三", "四五六七", "八九"], ("偎 一", "提 壹", "臭偎 二"))
    full = render_text(state)
    assert "偎 一一一" in full and "提 壹壹壹壹" in full
    seen = render_text(state, seat=2)
    assert "[3 cards]" in seen and "[4 cards]" in seen and "hand: 八九" in seen
    assert f"偎 {HIDDEN * 3}" in seen and f"提 壹{HIDDEN * 3}" in seen and "臭偎 二二二" in seen
    assert "胡息 0" in seen.splitlines()[1]  # seat 0's hidden 偎 does not show its 胡息 to seat 2


def test_svg_is_well_formed_at_every_step() -> None:
    """Pictures: the SVG of every step of a bot deal parses, for all and for each seat."""
    events = ENGINE.bot_game(start_event(), random.Random(31))
    for step in list(ENGINE.replay(events))[::7]:
        for seat in (None, 0, 1, 2):
            root = ET.fromstring(render_svg(step.state, seat))
            assert root.tag.endswith("svg")


def test_svg_shows_wall_count_and_liangzhang() -> None:
    """Pictures: the header names the wall count and the 亮张; own-view hands are face down for others."""
    events = ENGINE.bot_game(start_event(), random.Random(32))
    state = list(ENGINE.replay(events))[6].state
    svg = render_svg(state, seat=1)
    assert f"wall {state.wall_left}" in svg and "亮张" in svg
    face_down = svg.count(f'href="#paohuzi-{key(N_VALUES)}"')
    assert face_down >= sum(state.hands[0]) + sum(state.hands[2])
    assert ENGINE.information_state_string(state, 1) == render_text(state, 1)


def test_table_fits_a_1280_px_page_and_has_a_legend() -> None:
    """Pictures: every card slot lies inside the 1,000-px table (a page 1,280 px wide holds it);
    the legend names each seat's colour, role (庄/闲) and player."""
    events = ENGINE.bot_game(start_event(), random.Random(33))
    state = list(ENGINE.replay(events))[-1].state
    drawn = sheet(state, ["ann", "bo", "cy"])
    assert drawn.width <= 1000 and all(x + 13 <= drawn.width and y + 18 <= drawn.height for x, y in drawn.slots)
    root = ET.fromstring(render_svg(state, players=["ann", "bo", "cy"]))
    ns = "{http://www.w3.org/2000/svg}"
    rows = [t.text for t in root.iter(f"{ns}text") if t.text and t.text.startswith("seat ") and " · " in t.text]
    colours = ["红", "浅蓝", "黄"]  # the legend names colours in words (issue 31 point 7)
    assert rows == [f"seat {s} · {'庄 dealer' if s == state.dealer else '闲'} {colours[s]} · {p}" for s, p in enumerate(["ann", "bo", "cy"])]


def test_refused_card_is_drawn_dashed_beside_its_seat() -> None:
    """A card action the rules refused (here a discard out of turn, 第七条) shows the card dashed
    beside the seat that tried it, on the table before it."""
    events = ENGINE.bot_game(start_event(), random.Random(34))
    state = list(ENGINE.replay(events))[8].state
    shown = frame(state, attempt=Discarded(stream="g", seq=9, ts=0, seat=2, card="d2"))
    assert [m.kind for m in shown.marks] == ["illegal"] and "被拒绝的动作 refused 座位 seat 2 打牌 discard 贰" in shown.caption
    assert shown.cells[shown.marks[0].path[0]] == key(11)


def test_final_table_shows_the_hu() -> None:
    """Issue 31 point 5 (第八条, 附录四, 附录五): a finished deal's picture writes out the 胡: who, on
    which card, 胡息, 名堂, 囤 × 番 and the score, then the decomposition, as the text `show` has it."""
    state = list(ENGINE.replay(ENGINE.bot_game(start_event(), random.Random(30))))[-1].state
    assert state.win is not None
    r = state.win.result
    texts = [t for _, _, t in frame(state).texts]
    head = next(t for t in texts if t.startswith("胡 hu："))
    assert f"座位 seat {state.win.seat}" in head and f"{r.huxi} 胡息" in head
    assert f"{r.score.tun} 囤 × {r.score.fan} 番 = {r.score.s}" in head and "名堂" in head
    groups = next(t for t in texts if t.startswith("组牌 groups："))
    assert groups.count(" · ") == len(r.groups) - 1
    assert head in frame(state).caption, "the caption under the board says it too"
    y = max(y for _, y, t in frame(state).texts if t in (head, groups))
    assert y < sheet(state).height, "written inside the table"


def test_seat_markers_carry_their_number_and_stand_out_in_grayscale() -> None:
    """Issue 31 point 7: each seat's marker on the felt carries its number, and the three seat
    colours differ in lightness from each other (grayscale print, colour-blind eyes)."""
    state = list(ENGINE.replay(ENGINE.bot_game(start_event(), random.Random(30))))[-1].state
    root = ET.fromstring(render_svg(state))
    ns = "{http://www.w3.org/2000/svg}"
    numbers = [t.text for t in root.iter(f"{ns}text") if t.get("font-weight") == "bold" and t.text in ("0", "1", "2")]
    assert numbers == ["0", "1", "2"]

    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    lum = sorted(luminance(c) for c in SEAT_COLOURS)
    assert all((b + 0.05) / (a + 0.05) >= 1.5 for a, b in zip(lum, lum[1:]))
