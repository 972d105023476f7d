"""What every command module shares: the Typer app, the common options, and the decorator that turns
project errors into a message on stderr and an exit code scripts can trust.

Command modules import their heavy dependencies (DuckDB, Arrow, the engines) inside the command, so
that `matchledger record` pays only for the ledger.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from audit.output import fail

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Record, verify, replay and audit competitive games.")

LedgerOpt = Annotated[Path, typer.Option("--ledger", envvar="MATCHLEDGER_LEDGER", help="Ledger directory.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
GameArg = Annotated[str, typer.Argument(help="checkers, junqi or paohuzi.")]
DEFAULT_LEDGER = Path("matchledger-data")
EXIT_NOT_CHECKPOINTED = 4
"""`record` appended the events and made them durable, but could not sign a checkpoint over them."""
F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(Exception):
    """Ends a command with a given exit code after it has printed its verdict."""

    def __init__(self, code: int) -> None:
        self.code = code


def _project_errors() -> tuple[type[BaseException], ...]:
    """The errors a command reports as a message (imported when one is raised, not at start-up)."""
    from audit.db import AuditError
    from ledger import LedgerError
    from replay.protocol import ReplayError
    from schemas.codec import ContractError

    return (LedgerError, ContractError, ReplayError, AuditError, ValueError, OSError)


def guarded(fn: F) -> Callable[..., Any]:
    """Returns `fn` with its project errors turned into a message on stderr and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ledger import CheckpointError, OutputRefused

        try:
            return fn(*args, **kwargs)
        except ExitCode as exc:
            raise typer.Exit(exc.code) from None
        except OutputRefused as exc:
            fail(str(exc))
            raise typer.Exit(2) from None
        except CheckpointError as exc:
            fail(str(exc))
            raise typer.Exit(EXIT_NOT_CHECKPOINTED) from None
        except Exception as exc:
            if not isinstance(exc, _project_errors()):
                raise
            fail(str(exc))
            raise typer.Exit(1) from None

    return wrapper


def command(fn: F) -> F:
    """Registers a command whose project errors become a message on stderr and an exit code."""
    app.command(fn.__name__.rstrip("_").replace("_", "-"))(guarded(fn))
    return fn
