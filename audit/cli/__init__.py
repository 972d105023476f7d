"""The `matchledger` command line: each command parses options, calls one library function, prints.

Commands live in one module per user (the log, games, analysis); importing them registers them on
the one Typer app.

May import: audit.query, audit.certification, audit.presentation, audit.live, audit.service,
audit.simulator, audit.lake, audit.spark (every folder of audit), ledger, replay, schemas. Nothing but
the CLI imports the CLI.
"""

from __future__ import annotations

from audit.cli import analysis, appeals, games, live, log, transparency, watch  # noqa: F401  (registers the commands)
from audit.cli.base import app

__all__ = ["app", "main"]


def main() -> None:
    """Runs the command line."""
    app()
