"""Tables for people: how a value is shown (never cut), how rows fit a terminal (wrapped or pivoted),
what each column means (in English and Chinese), and the rows of certification, standings,
explanations and findings.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from audit.presentation.engine_words import rule
from audit.presentation.rows import Rows, markdown
from audit.presentation.terms import CHECKS, COLUMNS, TERMS, term, termination
from audit.query.findings import FINDING_COLUMNS, finding_record
from replay.protocol import Finding, seat_label

if TYPE_CHECKING:
    from audit.certification.certify import Certification
    from audit.query.standings import Crosstable, Explanation, Standings


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
    """Returns milliseconds as m:ss (h:mm:ss from an hour), rounded to the millisecond, with the
    milliseconds shown when there are any (issue 31.14: `3:56.52725` was a mean's every digit)."""
    whole = int(abs(ms) + 0.5)  # half up: a mean of 0.5 ms shows as 1 ms, never as a bare 0:00
    seconds, millis = divmod(whole, 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
    return ("-" if ms < 0 and whole else "") + text + (f".{millis:03d}" if millis else "")


def boolean(value: bool) -> str:
    """Returns yes/no (是/否 in a Chinese locale): a false value is never a blank cell."""
    if is_chinese():
        return "是" if value else "否"
    return "yes" if value else "no"


TERM_COLUMNS = frozenset({"status", "counted_from", "severity", "decision", "correction", "ruling", "kind"})
"""Columns whose values are words of the dictionary (audit/presentation/terms.py): people read them in Chinese and English."""


def display_cell(value: Any, column: str = "") -> str:
    """Returns a value as people read it: durations m:ss, booleans yes/no, lists comma-separated, – for
    none, terminations and the dictionary's words in Chinese with English beside (issue 31.2)."""
    if value is None or value == []:
        return "–"
    if column == "termination" and isinstance(value, str):
        return termination(value)
    if column in TERM_COLUMNS and isinstance(value, str) and value in TERMS:
        return term(value)
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
    return max((cell_len(line) for line in text.split("\n")), default=0)


CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
"""Chinese characters and punctuation: a line may break between any two of them, as Chinese text does."""


def _longest_word(text: str) -> int:
    """Returns the widest piece of `text` a line cannot break: a word, a run of Chinese counting one character."""
    return max((max(_width(part) if part else 2 for part in CJK.split(word)) for word in text.split()), default=0)


def _header_words(header: str) -> list[str]:
    """Returns the pieces a column name may be broken into: after each underscore, at spaces."""
    return header.replace("_", "_ ").split() or [header]


def _widths(header: str, cells: list[str]) -> tuple[int, int]:
    """Returns a column's natural width and the least it may take: whole numbers, ids and words, and its
    name broken only at underscores and spaces (never mid-word: `tourn/ament`, issue 31.14)."""
    natural = max([_width(header), *(_width(c) for c in cells)])
    floor = max([*(_width(w) for w in _header_words(header)), *(_longest_word(c) for c in cells)])
    return natural, floor


def fit_widths(headers: Sequence[str], cells: Sequence[Sequence[str]], width: int, gap: int = 2) -> list[int] | None:
    """Returns the width of each column so that the table fits `width` with no value cut (the room left
    going first to the columns that need least to show whole), or None when even the narrowest layout
    is too wide."""
    columns = list(zip(*cells)) if cells else [() for _ in headers]
    pairs = [_widths(h, list(col)) for h, col in zip(headers, columns)]
    room = width - gap * (len(headers) - 1)
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
    """Returns a column name broken into lines of at most `width`, between its words (after an
    underscore, at a space); a word longer than `width` stays whole."""
    lines: list[str] = []
    for word in _header_words(name):
        joiner = "" if not lines or lines[-1].endswith("_") else " "
        if lines and _width(lines[-1] + joiner + word) <= width:
            lines[-1] += joiner + word
        else:
            lines.append(word)
    return "\n".join(lines)


def fitted_table(t: Rows, width: int) -> RenderableType:
    """Returns rows as a table fitted to `width` with the notes under it: with the column names, else
    with the short labels and a legend of them underneath, else one column apart from the next by a
    single space; pivoted (one column: value list per row) only when none of these fits. A number, id
    or example is wrapped, never cut."""
    cells = [[display_cell(v, c) for c, v in zip(t.columns, row)] for row in t.rows]
    short = [t.short.get(c, c) for c in t.columns]
    layouts = [(list(t.columns), 2)] + ([(short, 2), (short, 1)] if short != list(t.columns) else [(short, 1)])
    unwrapped = [(h, g) for h, g in layouts if _fits_whole(h, cells, width, g)]  # one line a row, where some layout allows it
    for headers, gap in unwrapped[:1] or layouts:
        widths = fit_widths(headers, cells, width, gap)
        if widths is not None:
            notes = packed_legend(t.columns, headers, width) if t.short else list(t.notes)
            return Group(_table(t.title, headers, widths, cells, gap), *(Text(n) for n in notes))
    return Group(_pivoted(t, cells, width), *(Text(n) for n in t.notes))


def _fits_whole(headers: Sequence[str], cells: Sequence[Sequence[str]], width: int, gap: int) -> bool:
    """Tells whether every column fits at its natural width: no cell wrapped."""
    columns = list(zip(*cells)) if cells else [() for _ in headers]
    return sum(_widths(h, list(col))[0] for h, col in zip(headers, columns)) + gap * (len(headers) - 1) <= width


def _table(title: str | None, headers: list[str], widths: list[int], cells: list[list[str]], gap: int) -> Table:
    out = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                collapse_padding=True, padding=(0, 1) if gap > 1 else (0, 0))
    for name, w in zip(headers, widths):
        out.add_column(wrap_header(name, w), width=w, overflow="fold")
    for row in cells:
        out.add_row(*(Text(c) for c in row))
    return out


def packed_legend(columns: Sequence[str], labels: Sequence[str], width: int) -> list[str]:
    """Returns the legend under a terminal table in lines of at most `width` cells, never breaking an
    entry (`# = rank 名次`, or `big = 大分` where the label is the column's name)."""
    entries = [f"{label} = {c} {COLUMNS[c].zh}" if label != c else f"{c} = {COLUMNS[c].zh}"
               for c, label in zip(columns, labels) if c in COLUMNS]
    items = [f"{e}," for e in entries[:-1]] + entries[-1:] + ["(matchledger standings --legend explains each)"]
    lines = ["legend:"]
    for item in items:
        if _width(f"{lines[-1]} {item}") <= width:
            lines[-1] += f" {item}"
        else:
            lines.append(f"  {item}")
    return lines


def _pivoted(t: Rows, cells: list[list[str]], width: int) -> RenderableType:
    """Returns one two-column table (column, value) per row, titled by its number and first value
    (`1. 申诉 appeal checkers-cup-11#19`): for rows too wide for the terminal."""
    parts: list[RenderableType] = [Text(t.title)] if t.title else []
    key_width = max((_width(c) for c in t.columns), default=0)
    for n, row in enumerate(cells, start=1):
        out = Table(title=f"{n}. {t.columns[0]} {row[0]}", title_justify="left", box=box.SIMPLE, show_header=False, show_edge=False,
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
    said = {c.name: [finding_said(f) for f in cert.findings + cert.warnings if f.get("check") == c.name][:len(c.examples)]
            for c in cert.checks}  # the examples as people read them (JSON keeps the check's own lines)
    titles = {c.name: f"{CHECKS[c.name]} {c.title}" if c.name in CHECKS else c.title for c in cert.checks}
    rows = [(titles[c.name], *((c.passed, c.failed, warned[c.name]) if c.applies else ("n/a", "n/a", "n/a")),
             "\n".join(said[c.name] or c.examples)) if c.ran else (titles[c.name], "not run", None, None, "\n".join(c.examples))
            for c in cert.checks]
    return Rows(["check", "passed", "failed", "warnings", "examples"], rows, title="certification")


def crosstable_rows(c: Crosstable) -> Rows:
    """Returns the crosstable: a row per player in rank order, a column per round."""
    columns = ["rank", "player", *(f"r{n}" for n in c.rounds), "total", "status"]
    rows = [[r["rank"], r["player"], *(r["rounds"].get(n, "–") for n in c.rounds), r["total"], r["status"]] for r in c.rows]
    return Rows(columns, rows, title=f"{c.tournament} 轮次对阵表 crosstable ({term(c.format)})")


def standings_rows(s: Standings, columns: Sequence[str] | None = None) -> Rows:
    """Returns the ranking with every tie-break column (or the `columns` chosen), a one-line legend
    and the short labels a narrow terminal shows."""
    shown = list(columns or s.columns)
    return Rows(shown, [[r.get(c) for c in shown] for r in s.rows], title=f"{s.tournament} ({term(s.game)}, {term(s.format)})",
                notes=[legend_line(shown)], short={c: COLUMNS[c].short for c in shown if c in COLUMNS and COLUMNS[c].short})


def explanation_rows(e: Explanation) -> list[Rows]:
    """Returns the chain from events to one player's rank, as tables."""
    tables = [Rows(list(e.rank), [list(e.rank.values())], title=f"{e.player}: rank and tie-break values")]
    for title, rows in (("games: derived and claimed", e.games), ("boards: comparison sets, MP and r", e.boards),
                        ("seating each round", e.seating)):
        if rows:
            tables.append(Rows(list(rows[0]), [list(r.values()) for r in rows], title=title))
    return tables


APPEAL_COLUMNS = ["申诉 appeal", "申诉人 player", "对局 game", "理由 grounds", "提出 filed", "时限截止 window end", "是否按时 in time",
                  "答复期限 deadline", "决定 decision", "决定于 decided", "表决 votes", "仲裁员 arbiter", "签名 signature",
                  "纠正 correction", "未结 open", "不计 ignored"]
"""The terminal's and CSV's columns of `appeals`, as the game report's appeals table names them (JSON keeps the query's keys)."""


def appeal_rows(appeals: Sequence[dict[str, Any]]) -> Rows:
    """Returns the appeals in the order filed (issue 31.13): grounds, clock times of filing, window end,
    deadline and decision, the verdict in words, the votes, the arbiter and the signature's status."""
    rows = [[f"{a['tournament']}#{a['seq']}", a["player"], a["game"], a["grounds"], clock(a["filed_ts"]), clock(a["window_end_ts"]),
             term("in_time") if a["in_time"] else term("late") if a["in_time"] is not None else None, clock(a["deadline_ts"]),
             term(a["decision"]) if a["decision"] else "待裁决 awaiting decision",
             clock(a["decided_ts"]) if a["decided_ts"] is not None else None,
             f"{a['for_decision']}/{a['committee']}" if a["committee"] else None, a["arbiter"], signature_status(a["signature"]),
             term(a["correction"]) + f" #{a['correction_seq']}" if a["correction"] else None, boolean(bool(a["open"])),
             "; ".join(a["ignored"]) or None] for a in sorted(appeals, key=lambda a: (a["filed_ts"], a["tournament"], a["seq"]))]
    return Rows(APPEAL_COLUMNS, rows, title="申诉 appeals")


def signature_status(status: str | None) -> str | None:
    """Returns whether a decision's signature verified, in words (None where nothing was signed)."""
    names = {"valid": "verified", "unsigned": "unsigned", "bad_signature": "bad_signature"}
    return None if status is None else term(names.get(status, status))


def clock(ts: int | None) -> str:
    """Returns a time of the log as people read it: UTC date and clock time, `2026-05-01 14:03:07 UTC`."""
    if ts is None:
        return "–"
    return dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def finding_said(f: Finding | dict[str, Any]) -> str:
    """Returns a finding as a terminal prints it for people (issue 31.1–2): its severity and its rule
    in Chinese first, then the code, the article, where, and the engine's message."""
    r = finding_record(f)
    code, game = str(r["code"]), str(r["code"]).partition(".")[0]
    said = rule(code)
    cited = f" ({r['article']}, {r['rule_book']})" if r["article"] and r["rule_book"] else f" ({r['article']})" if r["article"] else ""
    seat = seat_label(game, r["seat"], r["player"]) if r["seat"] is not None else None
    where = " ".join(part for part in (r["stream"], f"seq {r['seq']}" if r["seq"] is not None else None,
                                       f"seat {seat}" if seat is not None else None) if part)
    return f"{term(str(r['severity']))} {code}{' ' + said if said else ''}{cited}: {where or 'log'}: {r['message']}"


def finding_rows(findings: Sequence[Finding | dict[str, Any]]) -> Rows:
    """Returns findings as rows, for CSV, TSV and NDJSON."""
    records = [finding_record(f) for f in findings]
    return Rows(FINDING_COLUMNS, [[r[c] for c in FINDING_COLUMNS] for r in records], title="findings")


def legend_markdown() -> str:
    """Returns README's table of the standings columns, with the short label a terminal of 80 columns shows."""
    return markdown(Rows(["column", "short", "中文", "meaning"], [[f"`{name}`", f"`{c.short}`", c.zh, c.en] for name, c in COLUMNS.items()]))
