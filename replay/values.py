"""The engines' domain values that every game shares the shape of: a documented `Termination`
enum per game (and the shared set), and a catalogue of finding codes (`Code`) beside each engine."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NamedTuple


class DocumentedTermination(StrEnum):
    """Base of the `Termination` enums: each member is its stored string and carries a one-line `doc`."""

    doc: str

    def __new__(cls, value: str, doc: str = "") -> DocumentedTermination:
        member = str.__new__(cls, value)
        member._value_ = value
        member.doc = doc
        return member


class SharedTermination(DocumentedTermination):
    """How any game's result can end outside its own rules: by a referee's ruling or unverified."""

    RULING = "RULING", "a referee's ruling set the result (第十四条)"
    FORFEIT = "FORFEIT", "a ruling: a seat forfeits the game"
    VOID = "VOID", "a ruling voided the game: no result counts"
    REPLAY_ORDERED = "REPLAY_ORDERED", "a ruling ordered the game replayed: no result counts"
    UNVERIFIED = "UNVERIFIED", "the rules could not decide the game; the software's declared result stands in"


class Code(NamedTuple):
    """One finding code of a catalogue: its severity, the article it cites (None where the rule
    book has none), the rule in English and in Chinese, what a finding means, and the name its
    rules file gives it (None where the file names none)."""

    code: str
    severity: Literal["error", "warning"]
    article: str | None
    rule: str
    meaning: str
    rule_zh: str
    name: str | None = None


def catalogue(namespace: str, rows: list[tuple[str, str, str | None, str, str, str]]) -> dict[str, Code]:
    """Returns a namespace's codes from rows of (ID, `E` or `W`, article, rule, meaning, rule in Chinese)."""
    return {f"{namespace}.{c}": Code(f"{namespace}.{c}", "warning" if s == "W" else "error", a, r, m, zh)
            for c, s, a, r, m, zh in rows}
