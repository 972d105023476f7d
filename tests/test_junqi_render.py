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
    assert "refused N23>N33 by N" in (root.find(f".//{NS}text[@class='caption']").text or "")  # type: ignore[union-attr]
