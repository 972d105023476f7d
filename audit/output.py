"""How commands print: JSON for machines, rich text for people, errors on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def emit_json(obj: Any) -> None:
    """Prints one JSON object on stdout."""
    sys.stdout.write(msgspec.json.encode(obj).decode() + "\n")
    sys.stdout.flush()


def say(text: str) -> None:
    """Prints a line for people."""
    console.print(text, markup=False)


def fail(message: str) -> None:
    """Prints an error on stderr."""
    err_console.print(f"error: {message}", markup=False)


def fail_note(message: str) -> None:
    """Prints a notice on stderr (something was repaired or skipped; not an error)."""
    err_console.print(f"note: {message}", markup=False)


@contextmanager
def progress_bar(label: str, total: int, quiet: bool = False) -> Iterator[Callable[[int], None]]:
    """Shows a progress bar on stderr while long work runs; yields the function that advances it."""
    if quiet:
        yield lambda _n: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=total or None)
        yield lambda n: bar.advance(task, n)


@contextmanager
def progress_steps(quiet: bool = False) -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """Shows one progress bar per step of a long job; yields the function that starts a step."""
    if quiet:
        yield lambda _label, _total: (lambda _n: None)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console) as bar:
        def step(label: str, total: int) -> Callable[[int], None]:
            task = bar.add_task(label, total=total or None)
            return lambda n: bar.advance(task, n)

        yield step
