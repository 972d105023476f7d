"""Tables for people: how a value is shown (never cut), how rows fit a terminal (wrapped or pivoted),
what each column means (in English and Chinese), and the rows of certification, standings,
explanations and findings.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from audit.output import Rows, markdown
from audit.terms import COLUMNS, term
from replay.protocol import RULE_BOOKS, Finding, code_name, finding_line, seat_label

if TYPE_CHECKING:
    from audit.certify import Certification
    from audit.standings import Crosstable, Explanation, Standings


DURATION_COLUMNS = frozenset({"ms", "time_used"})
"""Columns of milliseconds besides those named `…_ms`: shown as m:ss (raw milliseconds only in JSON)."""


def is_duration(column: str) -> bool:
    """Tells whether a column holds milliseconds, shown to people as m:ss."""
    return column in DURATION_COLUMNS or column.endswith("_ms")


def is_chinese() -> bool:
    """Tells whether the locale asks for Chinese words (是/否)."""
    lang = os.environ.get("LC_ALL") or os.environ.get("LC_MESSAGES") or os.environ.get("LANG") or ""
    return lang.lower().startswith("zh")


def duration(ms: float) -> str:
    """Returns milliseconds as m:ss (h:mm:ss from an hour), with the fraction of a second when there is one."""
    micro = round(abs(ms) * 1000)
    seconds, fraction = divmod(micro, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
    digits = f"{fraction:06d}".rstrip("0").ljust(3, "0")  # milliseconds always, finer only where there is more
    return ("-" if ms < 0 else "") + text + (f".{digits}" if fraction else "")


def boolean(value: bool) -> str:
    """Returns yes/no (是/否 in a Chinese locale): a false value is never a blank cell."""
    if is_chinese():
        return "是" if value else "否"
    return "yes" if value else "no"


def display_cell(value: Any, column: str = "") -> str:
    """Returns a value as people read it: durations m:ss, booleans yes/no, lists comma-separated, – for none."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return boolean(value)
    if isinstance(value, (int, float)) and is_duration(column):
        return duration(value)
    if isinstance(value, float):  # rates keep three decimals, large figures one
        return f"{value:.1f}" if abs(value) >= 100 or value == int(value) else f"{value:.3f}".rstrip("0")
    if isinstance(value, (list, tuple)):  # an empty list (bh_prev in round 1) is none, never a blank cell
        return ", ".join(display_cell(v, column) for v in value) or "–"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


cell_text = display_cell
"""A value as a cell of a page shows it (the tournament page's tables)."""


def machine_cell(value: Any, column: str = "") -> str:
    """Returns a value for CSV and TSV: every digit kept, durations m:ss, booleans true/false, lists as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and is_duration(column):
        return duration(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# --- fitting rows to a terminal -------------------------------------------------------------------

GAP = 2
"""Characters between two columns of a terminal table."""


def _width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((_width(word) for word in text.split()), default=0)


def _widths(header: str, cells: list[str]) -> tuple[int, int]:
    """Returns a column's natural width and the least it may take: whole numbers, ids and words, and its
    name broken at underscores (or in two)."""
    natural = max([_width(header), *(_width(c) for c in cells)])
    parts = header.replace("_", "_ ").split()
    name = max(len(p) for p in parts) if len(parts) > 1 else (len(header) + 1) // 2  # break at _, else fold in two
    floor = max([name, *(_longest_word(c) for c in cells)])
    return natural, floor


def fit_widths(headers: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Returns the width of each column so that the table fits `width` with no value cut (the room left
    going first to the columns that need least to show whole), or None when even the narrowest layout
    is too wide."""
    columns = list(zip(*cells)) if cells else [() for _ in headers]
    pairs = [_widths(h, list(col)) for h, col in zip(headers, columns)]
    room = width - GAP * (len(headers) - 1)
    if sum(n for n, _ in pairs) <= room:
        return [n for n, _ in pairs]
    widths = [f for _, f in pairs]
    if sum(widths) > room:
        return None
    spare = room - sum(widths)
    for i in sorted(range(len(pairs)), key=lambda i: pairs[i][0] - widths[i]):
        grant = min(pairs[i][0] - widths[i], spare)
        widths[i] += grant
        spare -= grant
    return widths


def wrap_header(name: str, width: int) -> str:
    """Returns a column name broken into lines of `width`, at underscores where it can."""
    if len(name) <= width:
        return name
    lines, line = [], ""
    for part in name.replace("_", "_\0").split("\0"):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return "\n".join(chunk[i:i + width] for chunk in lines for i in range(0, len(chunk), width))


def fitted_table(t: Rows, width: int) -> RenderableType:
    """Returns rows as a table fitted to `width`, or pivoted (one column: value list per row) when
    they cannot fit; a number, id or example is wrapped, never cut."""
    cells = [[display_cell(v, c) for c, v in zip(t.columns, row)] for row in t.rows]
    widths = fit_widths(t.columns, cells, width)
    if widths is None:
        return _pivoted(t, cells, width)
    out = Table(title=t.title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                collapse_padding=True)
    for name, w in zip(t.columns, widths):
        out.add_column(wrap_header(name, w), width=w, overflow="fold")
    for row in cells:
        out.add_row(*(Text(c) for c in row))
    return out


def _pivoted(t: Rows, cells: list[list[str]], width: int) -> RenderableType:
    """Returns one two-column table (column, value) per row: for rows too wide for the terminal."""
    parts: list[RenderableType] = [Text(t.title)] if t.title else []
    key_width = max((len(c) for c in t.columns), default=0)
    for n, row in enumerate(cells, start=1):
        out = Table(title=f"row {n}", title_justify="left", box=box.SIMPLE, show_header=False, show_edge=False,
                    pad_edge=False, collapse_padding=True)
        out.add_column(width=min(key_width, max(width // 3, 1)), overflow="fold", style="bold")
        out.add_column(overflow="fold")
        for name, value in zip(t.columns, row):
            out.add_row(Text(name), Text(value))
        parts.append(out)
    return Group(*parts)


def plain_table(t: Rows) -> str:
    """Returns rows as plain text for a pipe or a file: aligned columns, every value whole, one line a row."""
    cells = [[display_cell(v, c).replace("\n", "; ") for c, v in zip(t.columns, row)] for row in t.rows]
    widths = [max([len(c), *(_width(r[i]) for r in cells)]) for i, c in enumerate(t.columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v + " " * (w - _width(v)) for v, w in zip(values, widths)).rstrip()

    out = ([t.title] if t.title else []) + [line(t.columns)] + [line(r) for r in cells] + list(t.notes)
    return "\n".join(out) + "\n"


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> RenderableType:
    """Returns rows as a table fitted to the terminal."""
    from audit.output import stdout_console

    return fitted_table(Rows(list(columns), rows, title), stdout_console().width)


# --- legends --------------------------------------------------------------------------------------

def legend_rows(columns: Sequence[str]) -> Rows:
    """Returns what each column means, in English and Chinese (`standings --legend`)."""
    return Rows(["column", "zh", "meaning"], [(c, COLUMNS[c].zh, COLUMNS[c].en) for c in columns if c in COLUMNS],
                title="legend")


def legend_line(columns: Sequence[str]) -> str:
    """Returns the one-line legend under a table: `big = 大分, bh = 小分 …`."""
    return "legend: " + ", ".join(f"{c} = {COLUMNS[c].zh}" for c in columns if c in COLUMNS) + \
        " (matchledger standings --legend explains each)"


# --- the rows of each command ---------------------------------------------------------------------

def certification_rows(cert: Certification) -> Rows:
    """Returns the table of checks: passed and failed counts (n/a where a check had nothing to look
    at) and the first examples, whole."""
    warned = {c.name: sum(1 for w in cert.warnings if w.get("check") == c.name) for c in cert.checks}
    rows = [(c.title, *((c.passed, c.failed, warned[c.name]) if c.applies else ("n/a", "n/a", "n/a")), "\n".join(c.examples))
            if c.ran else (c.title, "not run", None, None, "\n".join(c.examples)) for c in cert.checks]
    return Rows(["check", "passed", "failed", "warnings", "examples"], rows, title="certification")


def crosstable_rows(c: Crosstable) -> Rows:
    """Returns the crosstable: a row per player in rank order, a column per round."""
    columns = ["rank", "player", *(f"r{n}" for n in c.rounds), "total", "status"]
    rows = [[r["rank"], r["player"], *(r["rounds"].get(n, "–") for n in c.rounds), r["total"], r["status"]] for r in c.rows]
    return Rows(columns, rows, title=f"{c.tournament} crosstable ({c.format})")


def standings_rows(s: Standings) -> Rows:
    """Returns the ranking with every tie-break column and a one-line legend."""
    return Rows(s.columns, [[r.get(c) for c in s.columns] for r in s.rows], title=f"{s.tournament} ({s.game}, {s.format})",
                notes=[legend_line(s.columns)])


def explanation_rows(e: Explanation) -> list[Rows]:
    """Returns the chain from events to one player's rank, as tables."""
    tables = [Rows(list(e.rank), [list(e.rank.values())], title=f"{e.player}: rank and tie-break values")]
    for title, rows in (("games: derived and claimed", e.games), ("boards: comparison sets, MP and r", e.boards),
                        ("seating each round", e.seating)):
        if rows:
            tables.append(Rows(list(rows[0]), [list(r.values()) for r in rows], title=title))
    return tables


FINDING_COLUMNS = ["severity", "code", "name", "article", "rule_book", "check", "stream", "seq", "seat", "player", "message"]
"""`name`: the code's name in its rules file, where it has one (checkers.md: `checkers.M03` is `E_OCCUPIED`)."""


def finding_record(f: Finding | dict[str, Any]) -> dict[str, Any]:
    """Returns a finding (an engine's, or a row of the certification) as one record of `FINDING_COLUMNS`."""
    if isinstance(f, dict):
        code = str(f.get("code", ""))
        book = f.get("rule_book") or RULE_BOOKS.get(code.partition(".")[0])
        return {**{c: f.get(c) for c in FINDING_COLUMNS}, "name": code_name(code), "rule_book": book,
                "severity": f.get("severity", "error")}
    from audit.checks import check_of

    return {"severity": f.severity, "code": f.code, "name": code_name(f.code), "article": f.article, "rule_book": f.rule_book,
            "check": check_of(f.code), "stream": f.stream, "seq": f.seq, "seat": f.seat, "player": f.player, "message": f.message}


def finding_text(f: Finding | dict[str, Any]) -> str:
    """Returns a finding as the one line every command prints."""
    r = finding_record(f)
    game = str(r["code"]).partition(".")[0]
    seat = seat_label(game, r["seat"], r["player"]) if r["seat"] is not None else None
    return finding_line(r["severity"], r["code"], r["article"], r["rule_book"], r["stream"], r["seq"], seat, r["message"])


def finding_rows(findings: Sequence[Finding | dict[str, Any]]) -> Rows:
    """Returns findings as rows, for CSV, TSV and NDJSON."""
    records = [finding_record(f) for f in findings]
    return Rows(FINDING_COLUMNS, [[r[c] for c in FINDING_COLUMNS] for r in records], title="findings")


def clock(ts: int | None) -> str:
    """Returns a time of the log as people read it: UTC date and clock time, `2026-05-01 14:03:07 UTC`."""
    if ts is None:
        return "–"
    return dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def signature_status(status: str | None) -> str:
    """Returns whether a decision's signature verified, in words (– where nothing was decided)."""
    names = {"valid": "verified", "unsigned": "unsigned", "bad_signature": "bad_signature"}
    return "–" if status is None else term(names.get(status, status))


APPEAL_COLUMNS = ["tournament", "seq", "player", "game", "grounds", "filed", "window_end", "in_time", "deadline", "decision",
                  "decided", "for_decision", "committee", "arbiter", "signature", "correction", "open", "ignored"]
"""What `appeals` lists of each appeal, in time order (Junqi 第十八–十九条): grounds, clock times, the
committee's decision, who signed it and whether the signature verified, the correction."""


def appeal_rows(appeals: Sequence[dict[str, Any]]) -> Rows:
    """Returns appeals (rows of `appeal_list`) in the order filed, with clock times and words for people."""
    shown = {"filed": "filed_ts", "window_end": "window_end_ts", "deadline": "deadline_ts", "decided": "decided_ts"}
    rows = []
    for a in sorted(appeals, key=lambda a: (a["filed_ts"], a["seq"])):
        cell = {**a, **{c: clock(a[k]) for c, k in shown.items()}, "in_time": term("in_time" if a["in_time"] else "late"),
                "decision": term(a["decision"]) if a["decision"] else "待裁决 awaiting decision",
                "arbiter": a["arbiter"] or "–", "signature": signature_status(a["signature"])}
        rows.append([cell[c] for c in APPEAL_COLUMNS])
    return Rows(APPEAL_COLUMNS, rows, title="appeals")


def legend_markdown() -> str:
    """Returns README's table of the standings columns."""
    return markdown(Rows(["column", "中文", "meaning"], [[f"`{name}`", c.zh, c.en] for name, c in COLUMNS.items()]))
