"""Tables for people: certification checks, standings, explanations and query results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from audit.certify import Certification
from audit.standings import Crosstable, Explanation, Standings


def cell_text(value: Any) -> str:
    """Returns a value as a table cell shows it: – for none, rates to three decimals."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):  # rates keep three decimals, large figures one
        return f"{value:.1f}" if abs(value) >= 100 or value == int(value) else f"{value:.3f}".rstrip("0")
    return str(value)


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> Table:
    """Returns a rich table of rows."""
    out = Table(title=title, title_justify="left")
    for column in columns:
        out.add_column(column)
    for row in rows:
        out.add_row(*(cell_text(v) for v in row))
    return out


def certification_table(cert: Certification) -> Table:
    """Returns the table of checks: passed and failed counts and the worst examples."""
    out = Table(title="certification", title_justify="left")
    for column in ("check", "passed", "failed", "examples"):
        out.add_column(column)
    for c in cert.checks:
        status = ("not run", "–") if not c.ran else (str(c.passed), str(c.failed)) if c.applies else ("n/a", "n/a")
        out.add_row(c.title, *status, "\n".join(c.examples))
    return out


def standings_table(s: Standings) -> Table:
    """Returns the ranking with every tie-break column."""
    return table(s.columns, [[r.get(c) for c in s.columns] for r in s.rows], title=f"{s.tournament} ({s.game}, {s.format})")


def explanation_tables(e: Explanation) -> list[Table]:
    """Returns the chain from events to one player's rank, as tables."""
    tables = [table(list(e.rank), [list(e.rank.values())], title=f"{e.player}: rank and tie-break values")]
    for title, rows in (("games: derived and claimed", e.games), ("boards: comparison sets, MP and r", e.boards),
                        ("seating each round", e.seating)):
        if rows:
            tables.append(table(list(rows[0]), [list(r.values()) for r in rows], title=title))
    return tables


def crosstable_table(c: Crosstable) -> Table:
    """Returns the crosstable: a row per player in rank order, a column per round."""
    columns = ["rank", "player", *(f"r{n}" for n in c.rounds), "total", "status"]
    rows = [[r["rank"], r["player"], *(r["rounds"].get(n, "–") for n in c.rounds), r["total"], r["status"]] for r in c.rows]
    return table(columns, rows, title=f"{c.tournament} crosstable ({c.format})")
