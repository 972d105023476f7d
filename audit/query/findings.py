"""A finding as one record of `FINDING_COLUMNS` (with the check it belongs to and its rule book) and
as the one line every command prints: below the certification, whose examples are these lines, and
the presentation, which prints them."""

from __future__ import annotations

from typing import Any

from audit.query.checks import check_of
from replay.protocol import RULE_BOOKS, Finding, code_name, finding_line, seat_label

FINDING_COLUMNS = ["severity", "code", "name", "article", "rule_book", "check", "stream", "seq", "seat", "player", "message"]
"""`name`: the code's name in its rules file, where it has one (checkers.md: `checkers.M03` is `E_OCCUPIED`)."""


def finding_record(f: Finding | dict[str, Any]) -> dict[str, Any]:
    """Returns a finding (an engine's, or a row of the certification) as one record of `FINDING_COLUMNS`."""
    if isinstance(f, dict):
        code = str(f.get("code", ""))
        book = f.get("rule_book") or RULE_BOOKS.get(code.partition(".")[0])
        return {**{c: f.get(c) for c in FINDING_COLUMNS}, "name": code_name(code), "rule_book": book,
                "severity": f.get("severity", "error")}
    return {"severity": f.severity, "code": f.code, "name": code_name(f.code), "article": f.article, "rule_book": f.rule_book,
            "check": check_of(f.code), "stream": f.stream, "seq": f.seq, "seat": f.seat, "player": f.player, "message": f.message}


def finding_text(f: Finding | dict[str, Any]) -> str:
    """Returns a finding as the one line every command prints."""
    r = finding_record(f)
    game = str(r["code"]).partition(".")[0]
    seat = seat_label(game, r["seat"], r["player"]) if r["seat"] is not None else None
    return finding_line(r["severity"], r["code"], r["article"], r["rule_book"], r["stream"], r["seq"], seat, r["message"])
