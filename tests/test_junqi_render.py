"""Pictures (第五条 四暗/双明, §10 亮旗): the SVG board and the text diagram, whole or from one seat."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from msgspec.structs import replace

from replay.junqi import ENGINE, render
from replay.junqi.board import INDEX, NAMES, board
from replay.junqi.perft import load_position
from replay.junqi.state import Move
from replay.picture import KEYS, MARK_STYLES, compose
from schemas.junqi import Moved

NS = "{http://www.w3.org/2000/svg}"


def _labels(svg: str) -> list[str]:
    """Returns the names on the pieces drawn: each placed symbol's name, hidden pieces left out."""
    root = ET.fromstring(svg)
    symbols = {g.get("id"): "".join(t.text or "" for t in g.iter(f"{NS}text") if t.get("class") == "name")
               for g in root.iter(f"{NS}g") if g.get("id")}
    uses = [u.get("href", "")[1:] for u in root.iter(f"{NS}use")]
    return [symbols[u] for u in uses if symbols[u]]


def test_svg_draws_the_cross_board_with_rails_and_arcs() -> None:
    """§3: 196 thin roads, 88 straight rails and 4 curved arcs; 20 round camps; 100 pieces."""
    root = ET.fromstring(ENGINE.render_svg(load_position(None)))
    lines = root.findall(f"{NS}line")
    assert sum(1 for e in lines if e.get("stroke-width") == "5") == 88
    assert sum(1 for e in lines if e.get("stroke-width") == "1.5") == 196
    assert len(root.findall(f"{NS}path")) == 4
    assert len(root.findall(f"{NS}circle")) == 20
    assert len(root.findall(f".//{NS}g[@class='cells']/{NS}use")) == 100


def test_svg_omniscient_view_names_every_piece() -> None:
    """The arbitration view shows all 100 pieces by their Chinese names."""
    labels = _labels(ENGINE.render_svg(load_position(None)))
    assert len(labels) == 100 and labels.count("司令") == 4 and labels.count("军旗") == 4


def test_svg_four_dark_view_hides_other_seats() -> None:
    """第五条 四暗: a seat sees only its own 25 pieces."""
    assert len(_labels(ENGINE.render_svg(load_position(None), seat=0))) == 25


def test_svg_two_bright_view_shows_the_partner() -> None:
    """第五条 双明: partners see each other's pieces."""
    assert len(_labels(ENGINE.render_svg(load_position(None), seat=1, mode="双明"))) == 50


def test_revealed_flag_is_visible_to_all() -> None:
    """§10 亮旗: once revealed, a seat's flag shows in every view."""
    state = replace(load_position(None), revealed=(False, False, True, False))
    assert _labels(ENGINE.render_svg(state, seat=0)).count("军旗") == 2
    assert "nF" in ENGINE.render_text(state, seat=1)


def test_text_diagram_from_one_seat() -> None:
    """The text diagram puts S's arm at the bottom and hides other seats' pieces as `?`."""
    text = ENGINE.render_text(load_position(None), seat=0)
    lines = text.splitlines()
    assert lines[0] == "S to move; step 0, quiet 0, plies 0"
    assert lines[-1].split() == ["s2", "sF", "sM", "s1", "sM"]
    assert lines[3].split() == ["n?"] * 5
    assert ENGINE.information_state_string(load_position(None), 2).count("s?") == 25


def test_last_move_is_marked() -> None:
    """Arbitration pictures mark the move that led to the position, in the SVG and the text."""
    state = ENGINE.apply_action(load_position(None), Move(INDEX["S23"], INDEX["S33"]))
    root = ET.fromstring(ENGINE.render_svg(state))
    assert len(root.findall(f".//{NS}g[@class='mark mark-last']")) == 1
    assert ENGINE.render_text(state).splitlines()[0].endswith("last S23>S33")


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{NS}text")]


def test_every_point_is_labelled_in_the_logs_notation() -> None:
    """§2.3: each of the 129 points carries its name as the log writes it (`official_col_origin`),
    so a move such as `W23>W24` in a finding can be found on the board."""
    state = load_position(None)
    texts = _texts(ENGINE.render_svg(state))
    assert all(texts.count(name) == 1 for name in NAMES)
    flipped = replace(state, profile=replace(state.profile, official_col_origin="owner_right"))
    labels = [t for t in ET.fromstring(ENGINE.render_svg(flipped)).iter(f"{NS}text") if t.get("class") == "point"]  # point by point
    assert labels[INDEX["S11"]].text == "S15", "owner_right counts columns from the owner's right"


def test_legend_maps_colour_seat_letter_and_player() -> None:
    """第五条 colours: the legend names each seat's colour, number, compass letter and player."""
    svg = ENGINE.render_svg(load_position(None), players=["ann", "bo", "cy", "di"])
    rows = ET.fromstring(svg).findall(f"{NS}g[@class='legend-row']")
    assert [r.find(f"{NS}text").text for r in rows] == [  # type: ignore[union-attr]
        "seat 0 · S 南 红 · ann", "seat 1 · W 西 绿 · bo", "seat 2 · N 北 蓝 · cy", "seat 3 · E 东 黑 · di"]
    assert [r.find(f"{NS}rect").get("fill") for r in rows] == ["#e34a33", "#00441b", "#2166ac", "#1a1a1a"]  # type: ignore[union-attr]


def _luminance(colour: str) -> float:
    """Returns a colour's relative luminance (WCAG 2), what is left of it in grayscale print."""
    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def test_seats_are_told_apart_without_colour() -> None:
    """Issue 31 point 7: every piece carries its seat's letter (a hidden one the letter alone), the
    two alliances (第四条 十: 红蓝, 绿黑) differ in shape, and the colours stay apart in grayscale."""
    root = ET.fromstring(ENGINE.render_svg(load_position(None), seat=0))
    symbols = {g.get("id"): g for g in root.iter(f"{NS}g") if (g.get("id") or "").startswith("junqi-")}
    per_seat = len(symbols) // 4
    for seat, letter in enumerate("SWNE"):
        own = [symbols[f"junqi-{KEYS[seat * per_seat + k]}"] for k in range(per_seat)]
        assert all([t.text for t in g.iter(f"{NS}text") if t.get("class") == "seat"] == [letter] for g in own)
        assert {g.find(f"{NS}rect").get("rx") for g in own} == {"11" if seat % 2 else "2"}  # type: ignore[union-attr]
    lum = sorted(_luminance(c) for c in render.CSS.values())
    assert all((b + 0.05) / (a + 0.05) >= 1.4 for a, b in zip(lum, lum[1:])), "the four colours differ in grayscale"


def test_moves_are_drawn_along_the_rails() -> None:
    """Issue 31 point 8: a move along the railways (a 工兵's turns too) is drawn through the points
    it passed, rail by rail, never as a line across an arm; it has an arrowhead."""
    seed = 1
    print(f"seed {seed}")
    rng, state = random.Random(seed), load_position(None)
    geo = board(state.profile.arcs_present, state.profile.arc_model, state.profile.arc_straight_for_non_engineer)
    long_runs = 0
    for _ in range(300):
        actions = ENGINE.legal_actions(state)
        if not actions or ENGINE.is_terminal(state):
            break
        state = ENGINE.apply_action(state, rng.choice(actions))
        path = render.frame(state).marks[0].path if state.last_move else ()
        if len(path) > 2:
            long_runs += 1
            assert all((a, b) in geo.rail_edges or (b, a) in geo.rail_edges for a, b in zip(path, path[1:])), path
    assert long_runs > 10
    assert "marker-end" in MARK_STYLES["last"], "the last move has a direction"


def test_refused_move_is_drawn_dashed_on_the_last_legal_position() -> None:
    """An illegal move (here out of turn, 第七条) is drawn dashed from its point to its target on the
    position before it, beside the ring of the last legal move."""
    state = ENGINE.apply_action(load_position(None), Move(INDEX["S23"], INDEX["S33"]))
    refused = Moved(stream="g", seq=9, ts=0, seat=2, from_="N23", to="N33")
    frame = render.frame(state, attempt=refused)
    assert [m.kind for m in frame.marks] == ["last", "illegal"] and frame.marks[1].path == (INDEX["N23"], INDEX["N33"])
    root = ET.fromstring(compose(render.sheet(state), frame))
    line = root.find(f".//{NS}g[@class='mark mark-illegal']/{NS}polyline")
    assert line is not None and line.get("stroke-dasharray") == "8 5"
    assert "refused N23>N33 by N" in "".join(root.find(f".//{NS}text[@class='caption']").itertext())  # type: ignore[union-attr]


CVD = {  # Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
}
"""How a colour looks to eyes without red or without green cones."""


def _seen(colour: str, matrix: tuple[tuple[float, float, float], ...]) -> float:
    """Returns the luminance of a colour as an eye of the given deficiency sees it."""
    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    rgb = [linear(int(colour[i:i + 2], 16)) for i in (1, 3, 5)]
    r, g, b = (max(0.0, min(1.0, sum(m * c for m, c in zip(row, rgb)))) for row in matrix)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_opposing_alliances_stay_apart_for_colour_blind_eyes() -> None:
    """Issue 31 point 7 (S and W turned the same olive under deuteranopia): the colours of opposing
    seats (第四条 七, 十: 红蓝 against 绿黑) differ in lightness by a contrast of at least 1.5 for eyes
    without red or green cones; partners, drawn in one shape, are told apart by their letters."""
    colours = [render.CSS[c] for c in render.DEFAULT_COLOURS]
    for name, matrix in CVD.items():
        for a in range(4):
            for b in range(a + 1, 4):
                if a % 2 != b % 2:
                    x, y = sorted((_seen(colours[a], matrix), _seen(colours[b], matrix)))
                    assert (y + 0.05) / (x + 0.05) >= 1.5, f"{name}: seats {a} and {b}"
