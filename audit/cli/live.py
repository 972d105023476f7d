"""Commands of live recording: run the service, register its sources, send it signed batches."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer

from audit.cli.base import DEFAULT_LEDGER, JsonOpt, LedgerOpt, app, command, epilog, guarded, key_option
from audit.cli.results import Sent, SourceAdded, SourceRemoved
from audit.presentation.output import chosen, emit

source_app = typer.Typer(no_args_is_help=True, help="Register or revoke the sources allowed to send batches (venue servers, "
                                                    "platforms, AI harnesses).", epilog=epilog("source"))
app.add_typer(source_app, name="source")
UrlOpt = Annotated[str, typer.Option(help="The service's base URL, e.g. http://127.0.0.1:8080.")]


@command
def serve(ledger: LedgerOpt = DEFAULT_LEDGER,
          host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one; the start-up line names it).")] = 8080,
          max_body: Annotated[int, typer.Option(min=1024, help="Largest request body in bytes (413 beyond).")] = 1 << 20,
          rate: Annotated[float, typer.Option(min=0, help="Batches a second each source may send (429 beyond; 0: no limit).")] = 50.0,
          burst: Annotated[int, typer.Option(min=1, help="Batches a source may send at once before the rate applies.")] = 100,
          read_timeout: Annotated[float, typer.Option(min=0.1, help="Seconds a client has to send its whole request (408 after), "
                                                      "and a new connection its first byte (closed after).")] = 10.0,
          live: Annotated[bool, typer.Option("--live/--no-live", help="Fold each game as it arrives and publish findings.")] = True,
          fronts: Annotated[int, typer.Option(min=0, max=16, help="HTTP front processes beside the writer's (0: HTTP in the writer's "
                                                                  "process).")] = 1,
          max_streams: Annotated[int, typer.Option(min=1, help="/live streams served at once (503 with Retry-After beyond).")] = 100,
          max_per_peer: Annotated[int, typer.Option(min=1, help="Connections one client address may hold at once (503 beyond; "
                                                    "with fronts).")] = 512) -> None:
    """Run the recording service: sources POST signed batches and get receipts; anyone may read the log, proofs and live findings.

    Holds the writer lock (a second `serve` or a `record` is refused); one JSON line per request on stderr; SIGTERM finishes the commit in flight.
    HTTP runs in a front process beside the writer's (--fronts), so that it does not share the writer's interpreter lock.

    Example:

        matchledger init --ledger L && matchledger keygen --name venue-1 --out venue-1.key

        matchledger source add --ledger L --name venue-1 --key venue-1.pub --tournament cup-2026

        matchledger serve --ledger L --port 8080 &

        matchledger send --url http://127.0.0.1:8080 --key venue-1.key --log-key L/signer.pub events.jsonl
    """
    from audit.service.serve import ServeConfig
    from audit.service.serve import serve as run

    if not (ledger / "ledger.json").exists():
        raise typer.BadParameter(f"{ledger} is not a ledger; create it with `matchledger init --ledger {ledger}`", param_hint="--ledger")
    run(ServeConfig(ledger, host, port, max_body, rate, burst, read_timeout, live, fronts, max_streams, max_per_peer))


def _source_add(name: Annotated[str, typer.Option(help="The source's name (its key's name).")],
                key: Annotated[Path, key_option(help="The source's public key (NAME.pub from `matchledger keygen`).")],
                ledger: LedgerOpt = DEFAULT_LEDGER,
                tournament: Annotated[list[str] | None, typer.Option(help="A tournament it may write (repeatable).")] = None,
                stream: Annotated[list[str] | None, typer.Option(help="A stream, or a prefix ending in /, it may write (repeatable).")] = None,
                url: Annotated[str | None, typer.Option(help="Register on a running service instead (signed with --admin-key).")] = None,
                admin_key: Annotated[Path | None, key_option(help="With --url: the log's private key (signer.key).")] = None,
                json: JsonOpt = False) -> None:
    """Register a source in the log: its Ed25519 key and the tournaments or streams it may write
    (with neither, any stream no other source writes)."""
    from ledger import sources as ledger_sources

    verifier = ledger_sources.read_verifier_key(key)
    if url:
        event = _online(url, admin_key, {"action": "register", "name": name, "key": str(verifier),
                                         "tournaments": tournament or [], "streams": stream or []})
    else:
        event = _offline(ledger, lambda book, led: ledger_sources.registration(book, led, name, verifier, tournament or [], stream or []))
    emit(msgspec.convert(event, SourceAdded), chosen(json))


def _source_revoke(name: Annotated[str, typer.Option(help="The source's name.")],
                   ledger: LedgerOpt = DEFAULT_LEDGER,
                   reason: Annotated[str, typer.Option(help="Why, recorded in the log.")] = "",
                   url: Annotated[str | None, typer.Option(help="Revoke on a running service instead (signed with --admin-key).")] = None,
                   admin_key: Annotated[Path | None, key_option(help="With --url: the log's private key (signer.key).")] = None,
                   json: JsonOpt = False) -> None:
    """Revoke a source: its batches are refused from now on; what it sent stays recorded."""
    from ledger import sources as ledger_sources

    if url:
        event = _online(url, admin_key, {"action": "revoke", "name": name, "reason": reason})
    else:
        event = _offline(ledger, lambda book, led: ledger_sources.revocation(book, led, name, reason))
    emit(msgspec.convert(event, SourceRemoved), chosen(json))


source_app.command("add", epilog=epilog("source add"))(guarded(_source_add))
source_app.command("revoke", epilog=epilog("source revoke"))(guarded(_source_revoke))


def _offline(ledger: Path, make) -> dict:  # noqa: ANN001 - a registration or revocation maker
    import msgspec

    from ledger import sources as ledger_sources

    return msgspec.to_builtins(ledger_sources.change_sources(ledger, make))


def _online(url: str, admin_key: Path | None, change: dict) -> dict:
    import asyncio

    from audit.simulator.client import change_source
    from ledger import Signer

    if admin_key is None:
        raise typer.BadParameter("with --url, give the log's private key (the ledger's signer.key)", param_hint="--admin-key")
    return asyncio.run(change_source(url, Signer.load(admin_key), change))  # a refusal: exit 1 (audit.cli.base.exit_code_of)


@command
def send(file: Annotated[Path, typer.Argument(help="JSONL file of events.")],
         url: UrlOpt,
         key: Annotated[Path, key_option(help="The source's private key (from `matchledger keygen`).")],
         log_key: Annotated[Path | None, key_option(help="The log's public key (signer.pub): receipts' signatures are checked.")] = None,
         batch: Annotated[int, typer.Option(min=1, help="Events per batch.")] = 500,
         receipts: Annotated[Path | None, typer.Option(help="Write each receipt, one JSON per line, to this file.")] = None,
         json: JsonOpt = False) -> None:
    """Send a JSONL file of events to a running service as signed batches; check every receipt."""
    from audit.simulator.sending import send_file

    result = send_file(url, key, file, batch, log_key, receipts)  # a refusal: exit 1 (audit.cli.base.exit_code_of)
    emit(msgspec.convert(result, Sent), chosen(json))
