"""The star board's pictures (issue 31 point 7 and 8): seats told apart without colour, hole numbers
never hidden by a mark, moves with a direction."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from replay.checkers.render import PIECE_COLOURS, PIECE_RINGS, sheet
from replay.picture import MARK_STYLES

NS = "{http://www.w3.org/2000/svg}"


def _luminance(colour: str) -> float:
    """Returns a colour's relative luminance (WCAG 2), what is left of it in grayscale print."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_two_sides_differ_in_grayscale_and_in_outline() -> None:
    """Issue 31 point 7: red and blue turned the same grey in print; now the two sides' pieces differ
    in lightness by a contrast of at least 3, and seat 1's pieces also carry a thick dark ring."""
    light, dark = sorted((_luminance(c) for c in PIECE_COLOURS), reverse=True)
    assert (light + 0.05) / (dark + 0.05) >= 3
    drawn = sheet(None)
    pieces = [ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{body}</svg>')[0] for body in drawn.symbols]
    assert [p.get("stroke") for p in pieces] == list(PIECE_RINGS)
    assert float(pieces[1].get("stroke-width") or 0) >= 2 * float(pieces[0].get("stroke-width") or 0)


def test_hole_numbers_are_drawn_over_the_marks() -> None:
    """Issue 31 point 8: a finding names holes (`119>116`); the hole numbers are the sheet's overlay,
    drawn after the pieces and the marks, so no ring or line hides them; moves carry an arrowhead."""
    drawn = sheet(None)
    root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{drawn.overlay}</svg>')
    assert len(root.findall(f"{NS}text")) == 121
    assert all("marker-end" in style for style in MARK_STYLES.values())
