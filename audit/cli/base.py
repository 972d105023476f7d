"""What every command module shares: the Typer app, the common options, and the decorator that turns
project errors into a message on stderr and an exit code scripts can trust.

Exit codes (README's table is held to `EXIT_CODES` by a test): 0 success; 1 findings, a damaged
ledger, or data refused; 2 a usage error, whether the command line parser or the command finds it
(an option it cannot use, a stream or tournament the ledger does not hold, an output refused);
3 `hu`: the hand does not win; 4 `record` appended but could not sign a checkpoint.

Command modules import their heavy dependencies (DuckDB, Arrow, the engines) inside the command, so
that `matchledger record` pays only for the ledger.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from audit.cli.examples import EXAMPLES
from audit.cli.results import Trust
from audit.presentation.output import Folded, Format, fail, fail_note, said

app = typer.Typer(no_args_is_help=True, help="Record, verify, replay and audit competitive games.",
                  context_settings={"help_option_names": ["-h", "--help"]}, rich_markup_mode=None)

LedgerOpt = Annotated[Path, typer.Option("--ledger", envvar="MATCHLEDGER_LEDGER", help="Ledger directory.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
FormatOpt = Annotated[Format, typer.Option("--format", help="table (plain text when stdout is not a terminal), csv, tsv, "
                                                            "json (one object; --json is the same) or ndjson (one object a row).")]
"""The output option of every command that prints rows: a command declares `fmt: FormatOpt = Format.table`
and prints with `audit.presentation.output.emit`; `--json` is added to it as an alias of `--format json`."""
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
GameArg = Annotated[str, typer.Argument(help="checkers, junqi or paohuzi.")]
DEFAULT_LEDGER = Path("matchledger-data")


def key_option(*names: str, help: str, envvar: str | None = None) -> Any:  # noqa: A002 - typer's own name for it
    """Returns the option of a key file the command reads: a path that is not a file is a usage
    error the parser reports with the option, the file and what was expected (exit 2)."""
    what = help.rstrip(".").split(" (repeatable")[0]
    expected = what[:1].lower() + what[1:]

    def check(value: Path | list[Path] | None) -> Path | list[Path] | None:
        for path in value if isinstance(value, list) else [value] if value is not None else []:
            if not path.is_file():
                raise typer.BadParameter(f"{path}: {'a directory' if path.is_dir() else 'no such file'} (expected {expected})")
        return value

    return typer.Option(*names, callback=check, help=help, envvar=envvar)


LogKeyOpt = Annotated[Path | None, key_option("--key", envvar="MATCHLEDGER_LOG_KEY", help=(
    "The log's public key (signer.pub, from a copy you trust): pins it. Without it the key is taken from the ledger "
    "directory, unpinned, and the output says so."))]
"""The trust anchor of every command that reports results (issue 28.4; ledger/anchor.py)."""


def trust_document(ledger: Path, signed: Any = None, report: Any = None) -> Trust:
    """Returns what an output says of the key the log was checked with, the size it verified to (a
    signed checkpoint's, `ledger.Checkpoint`, what it read was checked against, or a verification's,
    `ledger.VerifyReport`, when it passed) and how many committed entries after the newest signed
    checkpoint it did not show (the reader's count, or the verification's)."""
    from ledger import LogReader
    from ledger.anchor import log_key

    if report is not None:
        size, root = (report.size, report.root) if report.ok else (None, None)
        return _trust(log_key(ledger).record(), size, root, report.unsigned)
    unsigned = LogReader(ledger).unsigned()
    if signed is not None:
        return _trust(log_key(ledger).record(), signed.size, signed.root.hex(), unsigned)
    return _trust(log_key(ledger).record(), None, None, unsigned)


def export_trust(key: Path, size: int, root: str) -> Trust:
    """Returns the same for an export checked under a key given on the command line (pinned)."""
    from ledger import Verifier
    from ledger.anchor import LogKey

    return _trust(LogKey(Verifier.load(key), key, pinned=True).record(), size, root, 0)


def _trust(key: dict[str, Any], size: int | None, root: str | None, unsigned: int) -> Trust:
    return Trust(key=key, verified_size=size, verified_root=root, unsigned=unsigned)


def say_trust(trust: Trust, table: bool = True) -> None:
    """Says which key the log was checked with and the size verified to, with the unsigned entries
    after it left out, zh-Hans first: on stdout beside text for people (`table`), else on stderr
    (machine-readable output stays rows)."""
    for line in trust_lines(trust):
        if table:
            said([line])
        else:
            fail_note(line)


def trust_lines(trust: Trust) -> list[Folded]:
    """Returns which key the log was checked with and the size verified to, zh-Hans first (`say_trust`)."""
    from ledger.anchor import ENV as LOG_KEY_ENV

    key = trust.key
    lines = [f"日志公钥：已固定 / log key: pinned ({key['from']}, id {key['key_id']})" if key["pinned"] else
             f"日志公钥：取自账本目录，未固定 / log key: taken from the ledger directory ({key['from']}), unpinned: anyone who can "
             f"write the directory can replace it; pin it with --key PUB or {LOG_KEY_ENV}"]
    size, unsigned = trust.verified_size, trust.unsigned
    if size is not None:
        left = (f"；最新签名检查点之后 {unsigned} 个未签名条目不计 / the {unsigned} unsigned entries after the newest signed checkpoint "
                f"are not shown") if unsigned else ""
        lines.append(f"已核对至签名检查点 / verified against the signed checkpoint of size {size} (root {trust.verified_root}){left}")
    return [Folded(line) for line in lines]  # folded at a terminal's width (a path may be long)


EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_NO_HU, EXIT_NOT_CHECKPOINTED = 0, 1, 2, 3, 4
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_FINDINGS: "findings (replay, audit, verify, check-proof), a damaged ledger, or data refused (events that break the contract, "
                   "a batch the live service refuses or a service that cannot be reached)",
    EXIT_USAGE: "a usage error, found by the parser or by the command: an option it cannot use, a stream, tournament, player, "
                "file or ledger (a --ledger that is not one) that does not exist, SQL that cannot run, an output refused "
                "(inside a ledger, through a link, existing without --force)",
    EXIT_NO_HU: "`hu`: the hand does not win",
    EXIT_NOT_CHECKPOINTED: "`record` appended the events and made them durable, but could not sign a checkpoint over them",
}
"""What each exit code means, for every command."""
F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(Exception):
    """Ends a command with a given exit code after it has printed its verdict."""

    def __init__(self, code: int) -> None:
        self.code = code


class UsageError(ValueError):
    """The command cannot use an option or argument it was given (exit 2)."""


def existing_ledger(path: Path) -> Path:
    """Returns a `--ledger` path after checking that it holds a ledger, for commands whose first
    reading is a key or another process: a wrong path is a usage error, named as such.

    :raises LedgerNotFound: when it holds none (exit 2).
    """
    from ledger.layout import load_config

    load_config(path)
    return path


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        from audit.query.accelerators import describe

        typer.echo(f"matchledger {version('matchledger')}\n{describe()}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and the accelerators in use, and exit.")] = False) -> None:
    """Record, verify, replay and audit competitive games (四国军棋, 跑胡子, 跳棋).

    Start with `matchledger demo`; every command has examples in its --help.
    """


def _project_errors() -> tuple[type[BaseException], ...]:
    """The errors a command reports as a message (imported when one is raised, not at start-up)."""
    from audit.query.db import AuditError
    from ledger import LedgerError
    from replay.protocol import ReplayError
    from schemas.codec import ContractError

    return (LedgerError, ContractError, ReplayError, AuditError, ValueError, OSError)


def _usage_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean the command line asked for something the command cannot do (a
    `--ledger` that is not a ledger among them: a wrong path, for every command)."""
    from ledger import LedgerNotFound
    from ledger.outputs import OutputRefused
    from replay.checkers.board import NotationError
    from replay.checkers.perft import MoveListError
    from replay.junqi.perft import PositionError
    from replay.registry import UnknownGameError

    return (UsageError, typer.BadParameter, LedgerNotFound, OutputRefused, UnknownGameError, NotationError, MoveListError, PositionError)


def _exit_codes() -> list[tuple[tuple[type[BaseException], ...], int]]:
    """Each kind of project error and its exit code, in the order they are tried (the first match
    decides; imported when an error is raised, not at start-up)."""
    from ledger.errors import CheckpointError

    send = _send_error()
    return [((CheckpointError,), EXIT_NOT_CHECKPOINTED),
            ((send,) if send else (), EXIT_FINDINGS),
            (_usage_errors(), EXIT_USAGE),
            ((FileNotFoundError, IsADirectoryError, NotADirectoryError), EXIT_USAGE)]


def exit_code_of(exc: BaseException) -> int | None:
    """Returns the exit code of a project error, by its type, or None for a bug (which keeps its traceback).

    A plain ValueError is what the library raises for an argument it cannot use (no such stream,
    tournament or player), so it is a usage error; its subclasses are errors of the data. A live
    service's refusal of a batch (`SendError`) is data refused.
    """
    for kinds, code in _exit_codes():
        if kinds and isinstance(exc, kinds):
            return code
    if type(exc) is ValueError:
        return EXIT_USAGE
    return EXIT_FINDINGS if isinstance(exc, _project_errors()) else None


def _send_error() -> type[BaseException] | None:
    """Returns the live client's refusal (audit.simulator.client.SendError) once the client is loaded: an error
    of that type exists only then, so a command that never sent pays nothing for the import."""
    client = sys.modules.get("audit.simulator.client")
    return getattr(client, "SendError", None)


def error_message(exc: BaseException) -> str:
    """Returns what a command prints for a project error (after `error: `)."""
    if isinstance(exc, typer.BadParameter):
        return exc.format_message()
    send = _send_error()
    return f"refused: {exc}" if send and isinstance(exc, send) and exc.status else str(exc)  # type: ignore[attr-defined]


def _with_json_alias(fn: Callable[..., Any], wrapper: Callable[..., Any]) -> None:
    """Gives a command with a `fmt: FormatOpt` parameter a `--json` flag meaning `--format json`."""
    signature = inspect.signature(fn, eval_str=True)
    alias = inspect.Parameter("json_alias", inspect.Parameter.KEYWORD_ONLY, default=False,
                              annotation=Annotated[bool, typer.Option("--json", help="The same as --format json.")])
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.default is not inspect.Parameter.empty else p
              for p in signature.parameters.values()]
    wrapper.__signature__ = signature.replace(parameters=[*params, alias])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*params, alias]}


def command(fn: F) -> F:
    """Registers a command whose project errors become a message on stderr and an exit code."""
    name = _name(fn)
    app.command(name, epilog=epilog(name))(guarded(fn))
    return fn


def subcommand(group: typer.Typer) -> Callable[[F], F]:
    """Registers a command of a command group (`matchledger appeal file`), guarded as `command` does."""

    def register(fn: F) -> F:
        name = _name(fn)
        group.command(name, epilog=epilog(f"{group.info.name} {name}"))(guarded(fn))
        return fn

    return register


def _name(fn: Callable[..., Any]) -> str:
    return fn.__name__.rstrip("_").replace("_", "-")


def epilog(name: str) -> str | None:
    """Returns the examples block that ends a command's help."""
    examples = EXAMPLES.get(name, ())
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in examples) if examples else None  # \b: keep the lines


def guarded(fn: F) -> Callable[..., Any]:
    """Returns `fn` with its project errors turned into a message on stderr and an exit code."""
    takes_format = "fmt" in inspect.signature(fn).parameters

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if takes_format and kwargs.pop("json_alias", False):
            kwargs["fmt"] = Format.json
        try:
            return fn(*args, **kwargs)
        except ExitCode as exc:
            raise typer.Exit(exc.code) from None
        except typer.Exit:
            raise
        except Exception as exc:
            code = exit_code_of(exc)
            if code is None:
                raise
            fail(error_message(exc))
            raise typer.Exit(code) from None

    if takes_format:
        _with_json_alias(fn, wrapper)
    return wrapper
