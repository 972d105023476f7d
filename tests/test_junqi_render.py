"""Pictures (第五条 四暗/双明, §10 亮旗): the SVG board and the text diagram, whole or from one seat."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from msgspec.structs import replace

from replay.junqi import ENGINE
from replay.junqi.board import INDEX
from replay.junqi.perft import load_position
from replay.junqi.state import Move

NS = "{http://www.w3.org/2000/svg}"


def _labels(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for g in root.iter(f"{NS}g") for t in g.iter(f"{NS}text")]


def test_svg_draws_the_cross_board_with_rails_and_arcs() -> None:
    """§3: 196 thin roads, 88 straight rails and 4 curved arcs; 20 round camps; 100 pieces."""
    root = ET.fromstring(ENGINE.render_svg(load_position(None)))
    lines = root.findall(f"{NS}line")
    assert sum(1 for e in lines if e.get("stroke-width") == "5") == 88
    assert sum(1 for e in lines if e.get("stroke-width") == "1.5") == 196
    assert len(root.findall(f"{NS}path")) == 4
    assert len(root.findall(f"{NS}circle")) == 20
    assert len(root.findall(f"{NS}g")) == 100


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
    assert [g.get("class") for g in root.findall(f"{NS}g")].count("last-move") == 1
    assert ENGINE.render_text(state).splitlines()[0].endswith("last S23>S33")
