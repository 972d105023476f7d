"""How commands print: JSON for machines, rich text for people, errors on stderr."""

from __future__ import annotations

import sys
from typing import Any

import msgspec
from rich.console import Console

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
