"""The rule profile covers checkers.md §13: every [PARAM] there is a `CheckersProfile` field with
the default the table gives (read from `../shared/rules/checkers.md` beside the repository)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

import schemas
from schemas.checkers import CheckersProfile, Moved

RULES = Path(__file__).resolve().parents[1].parent / "shared" / "rules" / "checkers.md"
TRANSLATED = {"bye_points": "win", "timeouts_allowed": None, "auto_cards": None, "justified_pass": None,
              "leave_camp_checks": None, "tiebreak_order": None, "winrate_denominator": None}
"""Defaults written differently here: bye 1 point is `win` (no floats); lists and structs are
checked by their own tests."""


def _section_13() -> list[tuple[list[str], str]]:
    if not RULES.exists():
        pytest.skip(f"{RULES} is not there")
    text = RULES.read_text()
    table = text[text.index("## 13. Parameter table"):text.index("### 13.1")]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`([a-z_0-9]+)`", cells[0]) if len(cells) >= 2 else []
        if names:
            rows.append((names, cells[1]))
    return rows


def test_every_section_13_parameter_is_a_profile_field_with_its_default() -> None:
    """§13: the profile names each setting as the rules file does, with the recommended default."""
    fields = {f.name: f.default for f in msgspec.structs.fields(CheckersProfile)}
    rows = _section_13()
    assert len(rows) >= 40
    for names, default in rows:
        for name in names:
            assert name in fields, f"§13 parameter {name} is missing from CheckersProfile"
        if len(names) != 1 or TRANSLATED.get(names[0], "") is None:
            continue
        expected = TRANSLATED.get(names[0]) or _default(default)
        if expected is not UNREAD:
            assert fields[names[0]] == expected, f"{names[0]}: default {fields[names[0]]!r}, §13 says {default}"


UNREAD = object()


def _default(cell: str) -> object:
    """Reads a §13 default cell: a leading `code` word, a bare integer, `none`, or `true`."""
    if m := re.match(r"`([a-z_0-9]+)`", cell):
        return m.group(1)
    if cell.isdigit():
        return int(cell)
    return {"none": None, "true": True, "false": False}.get(cell, UNREAD)


def test_timeout_allowance_defaults() -> None:
    """§6 / 第四条: swiss 4, qf/sf 6, final/third 8."""
    allowance = CheckersProfile().timeouts_allowed
    assert (allowance.swiss, allowance.qf, allowance.sf, allowance.final, allowance.third) == (4, 6, 6, 8, 8)
    assert CheckersProfile().leave_camp_checks == ((20, 5), (25, 8), (30, 10))


def test_moved_event_round_trips_with_its_path() -> None:
    """The `checkers.moved` contract: `from`/`to` canonical ids, optional path, seat required."""
    line = b'{"kind":"checkers.moved","stream":"g","seq":3,"ts":9,"seat":1,"from":115,"to":102,"path":[115,102]}'
    event = schemas.decode(line)
    assert isinstance(event, Moved) and event.from_ == 115 and event.path == (115, 102)
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int` <= 120 - at `\$.to`"):
        schemas.decode(line.replace(b'"to":102', b'"to":121'))
    with pytest.raises(msgspec.ValidationError, match=r"Object missing required field `seat`"):
        schemas.decode(line.replace(b'"seat":1,', b""))
