"""How commands print: one renderer for rows (a table for people, CSV, TSV, JSON or NDJSON for
machines), lines for people, errors and progress on stderr.

A terminal gets rich tables fitted to its width (wrapped or pivoted, never cut); a pipe or a file
gets plain text, so `matchledger standings … | grep` and `> out.txt` see every value.
"""

from __future__ import annotations

import csv
import enum
import io
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO, Self

import msgspec
from rich.cells import cell_len
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from audit.presentation.rows import Rows


class Format(str, enum.Enum):
    """The output formats of every command that prints rows."""

    table = "table"
    csv = "csv"
    tsv = "tsv"
    json = "json"
    ndjson = "ndjson"


def stdout_console() -> Console:
    """Returns a console on stdout, made when printing so that COLUMNS and TTY_COMPATIBLE are read then."""
    return Console(highlight=False, soft_wrap=True)


def stderr_console() -> Console:
    """Returns a console on stderr (errors, notes, progress)."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


console = stdout_console()
err_console = stderr_console()


def is_terminal() -> bool:
    """Tells whether stdout is a terminal (else output stays plain: no boxes, no wrapping)."""
    return stdout_console().is_terminal


class Folded(str):
    """A line a terminal folds at its width rather than wraps between words (a long path, a root)."""


class Result(msgspec.Struct, kw_only=True, dict=True):
    """A command's typed result (audit/cli/results.py): its fields are the `--json` keys, declared once;
    `lines()` is what a person reads."""

    def lines(self) -> Sequence[str | Rows]:
        """Returns what a terminal prints, in order: lines and tables (none where the command prints its own)."""
        return []

    def told(self, **text: Any) -> Self:
        """Returns the result with what only its lines say (a path, a board): attributes, not `--json` keys."""
        self.__dict__.update(text)
        return self

    def aside(self, name: str, default: Any = None) -> Any:
        """Returns a value given to `told` (or `default`)."""
        return self.__dict__.get(name, default)


def chosen(json: bool) -> Format:
    """Returns the format a command with only `--json` prints in."""
    return Format.json if json else Format.table


def emit_json(obj: Any) -> None:
    """Prints one JSON object on stdout."""
    sys.stdout.write(msgspec.json.encode(obj).decode() + "\n")
    sys.stdout.flush()


def emit(tables: Result | Rows | Sequence[Rows], fmt: Format, document: Any = None) -> None:
    """Prints a command's result or rows in a format: a result as one JSON object or its lines;
    rows as `document` (or the columns and rows) in one JSON object, one JSON object per row
    (NDJSON), CSV or TSV with a header line, or tables for people."""
    if isinstance(tables, Result):
        if fmt in (Format.json, Format.ndjson):
            emit_json(tables)
        else:
            said(tables.lines())
        return
    tables = [tables] if isinstance(tables, Rows) else list(tables)
    if fmt is Format.json:
        emit_json(document if document is not None else _rows_document(tables))
    elif fmt is Format.ndjson:
        for t in tables:
            for record in t.records():
                emit_json(record)
    elif fmt in (Format.csv, Format.tsv):
        for n, t in enumerate(tables):
            sys.stdout.write(("\n" if n else "") + _delimited(t, "," if fmt is Format.csv else "\t"))
        sys.stdout.flush()
    else:
        _print_tables(tables)


def _rows_document(tables: list[Rows]) -> Any:
    """Returns the JSON of rows with no document of their own: columns and rows (one table) or a list."""
    docs = [{"columns": t.columns, "rows": [list(r) for r in t.rows]} for t in tables]
    return docs[0] if len(docs) == 1 else docs


def _delimited(t: Rows, delimiter: str) -> str:
    from audit.presentation.render import machine_cell  # (render loads the terms and the engines: ~0.2 s a command printing no table need not pay)

    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(t.columns)
    writer.writerows([machine_cell(v, c) for c, v in zip(t.columns, row)] for row in t.rows)
    return out.getvalue()


def _print_tables(tables: list[Rows]) -> None:
    from audit.presentation.render import fitted_table, plain_table  # (as in _delimited: start-up)

    out = stdout_console()
    for t in tables:
        if out.is_terminal:
            out.print(fitted_table(t, out.width), soft_wrap=False)
        else:
            sys.stdout.write(plain_table(t))
    sys.stdout.flush()


def said(items: Sequence[str | Rows]) -> None:
    """Prints a result's text form in order: its lines (a run of them at once) and its tables."""
    run: list[str] = []
    for item in [*items, None]:
        if isinstance(item, str) and not isinstance(item, Folded):
            run.append(item)
            continue
        if run:
            say("\n".join(run))
            run = []
        if isinstance(item, Rows):
            _print_tables([item])
        elif isinstance(item, Folded):
            out = stdout_console()
            if out.is_terminal:
                out.print(str(item), markup=False, soft_wrap=False, overflow="fold")
            else:
                say(item)


def say(text: str) -> None:
    """Prints a line for people: on a terminal, each line wider than it is wrapped between words (issue 31.14)."""
    out = stdout_console()
    if out.is_terminal:
        text = "\n".join(wrapped for line in text.split("\n") for wrapped in fit_line(line, out.width))
    out.print(text, markup=False)


def fit_line(line: str, width: int) -> list[str]:
    """Returns a line as lines of at most `width` cells, broken between words; a continued line keeps
    the first one's indent and two more spaces (or its label's width). A word wider than a line (a
    signature, a root) stays whole on a line of its own, to be copied as it is."""
    if cell_len(line) <= width:
        return [line]
    lead = line[:len(line) - len(line.lstrip(" "))]
    label = re.match(r" *[^ :]+: ", line)  # `legend: …` continues under its first word
    indent = " " * cell_len(label.group()) if label else lead + "  "
    indent = indent if cell_len(indent) < width // 2 else ""
    lines = [lead]
    for word in line.split():
        room = width - cell_len(lines[-1]) - (0 if lines[-1].strip() == "" else 1)
        if cell_len(word) <= room:
            lines[-1] += ("" if lines[-1].strip() == "" else " ") + word
            continue
        if lines[-1].strip():
            lines.append(indent)
        lines[-1] += word
    return lines


def fail(message: str) -> None:
    """Prints an error on stderr."""
    stderr_console().print(f"error: {message}", markup=False)


def fail_note(message: str) -> None:
    """Prints a notice on stderr (something was repaired or skipped; not an error)."""
    stderr_console().print(f"note: {message}", markup=False)


_COLUMNS = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


def _shows_progress(quiet: bool, always: bool) -> Console | None:
    """Returns the console to draw progress on, or None when it stays silent: with `--quiet`, and on
    a stderr that is not a terminal unless the command always reports its steps (`demo`)."""
    target = stderr_console()
    return None if quiet or not (always or target.is_terminal) else target


class Ticker:
    """Advances one progress bar by a number of units done; the work that learns how many units
    there are only once it has started (the projection counts the games in the log it read) gives
    the bar its total with `expect`."""

    def __init__(self, bar: Progress | None = None, task: TaskID | None = None) -> None:
        self.bar, self.task = bar, task

    def __call__(self, done: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task, done)

    def expect(self, total: int) -> None:
        """Sets the number of units the whole work has (0: unknown)."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, total=total or None)


@contextmanager
def progress_bar(label: str, total: int, quiet: bool = False) -> Iterator[Ticker]:
    """Shows a progress bar on stderr while long work runs; yields the ticker that advances it
    (a total of 0 stays open until the work calls `Ticker.expect`)."""
    target = _shows_progress(quiet, always=False)
    if target is None:
        yield Ticker()
        return
    with Progress(*_COLUMNS, console=target, transient=True) as bar:
        yield Ticker(bar, bar.add_task(label, total=total or None))


PROGRESS_BYTES = 1 << 20
"""Reading less than this is quick: no progress bar."""


class ProgressReader:
    """A binary file whose lines advance a progress bar by the bytes read (once per MiB: a call per line would cost)."""

    def __init__(self, source: BinaryIO, advance: Callable[[int], None]) -> None:
        self.source, self.advance, self.pending = source, advance, 0

    def readline(self, size: int = -1) -> bytes:
        line = self.source.readline(size)
        self.pending += len(line)
        if self.pending >= PROGRESS_BYTES or not line:
            self.advance(self.pending)
            self.pending = 0
        return line


Steps = Callable[[str, int], Ticker]
"""Starts one step of a long job: its label and its total (0 until the step knows it); returns its ticker."""


@contextmanager
def progress_steps(quiet: bool = False, always: bool = False) -> Iterator[Steps]:
    """Shows one progress bar per step of a long job; yields the function that starts a step."""
    target = _shows_progress(quiet, always)
    if target is None:
        yield lambda _label, _total: Ticker()
        return
    with Progress(*_COLUMNS, console=target) as bar:
        yield lambda label, total: Ticker(bar, bar.add_task(label, total=total or None))
