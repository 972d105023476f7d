"""Rows a command prints, as data: named columns, the rows, a title, notes and short labels; and the
Markdown of them. No layout (audit/presentation/render.py fits rows to a terminal, output.py prints
them), so both import this and neither the other's back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rows:
    """Rows a command prints: named columns, the rows, a title above and notes (a legend) below;
    `short` labels for a terminal too narrow for the names (a legend of them goes underneath)."""

    columns: list[str]
    rows: Sequence[Sequence[Any]]
    title: str | None = None
    notes: Sequence[str] = ()
    short: Mapping[str, str] = field(default_factory=dict)

    def records(self) -> list[dict[str, Any]]:
        """Returns every row as a column → value mapping."""
        return [dict(zip(self.columns, row)) for row in self.rows]


def markdown(t: Rows) -> str:
    """Returns rows as a Markdown table (README's generated tables), cells as given."""
    rows = [t.columns, *t.rows]
    lines = ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(t.columns))
    return "\n".join(lines) + "\n"
