"""Commands for auditors and analysts: certify, standings, SQL over the projection, and the demo."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from audit.cli.base import DEFAULT_LEDGER, ExitCode, JsonOpt, LedgerOpt, command
from audit.output import console, emit_json, progress_bar, progress_steps, say


@command
def audit(ledger: LedgerOpt = DEFAULT_LEDGER,
          tournament: Annotated[str | None, typer.Option(help="Audit one tournament only.")] = None,
          json: JsonOpt = False) -> None:
    """Certify a ledger: verify the log, replay every game, run every query, check every claim (exit 1 on findings)."""
    from audit.certify import certify
    from audit.render import certification_table

    with progress_bar("replaying games", 0, quiet=json) as advance:
        cert = certify(ledger, tournament, advance)
    if json:
        emit_json({"ok": cert.ok, "reason": cert.reason, "size": cert.log.size, "root": cert.log.root, "games": cert.games,
                   "checks": [{"check": c.name, "title": c.title, "passed": c.passed, "failed": c.failed, "ran": c.ran,
                               "applies": c.applies, "examples": c.examples} for c in cert.checks],
                   "findings": cert.findings, "warnings": cert.warnings})
    else:
        console.print(certification_table(cert))
        say(cert.verdict())
    if not cert.ok:
        raise ExitCode(1)


@command
def standings(tournament: Annotated[str, typer.Option(help="Tournament stream id.")], ledger: LedgerOpt = DEFAULT_LEDGER,
              explain: Annotated[str | None, typer.Option(help="Show the chain from events to this player's rank.")] = None,
              crosstable: Annotated[bool, typer.Option("--crosstable", help="Show each player's result in every round.")] = False,
              json: JsonOpt = False) -> None:
    """Print a tournament's ranking with every tie-break column."""
    from audit import standings as standings_mod
    from audit.render import crosstable_table, explanation_tables, standings_table
    from audit.session import open_session

    session = open_session(ledger)
    if crosstable:
        cross = standings_mod.crosstable(session, tournament)
        if json:
            emit_json({"tournament": cross.tournament, "format": cross.format, "rounds": cross.rounds, "rows": cross.rows})
        else:
            console.print(crosstable_table(cross))
        return
    if explain is not None:
        chain = standings_mod.explain(session, tournament, explain)
        if json:
            emit_json({"player": chain.player, "rank": chain.rank, "games": chain.games, "boards": chain.boards, "seating": chain.seating})
        else:
            for t in explanation_tables(chain):
                console.print(t)
        return
    table = standings_mod.standings(session, tournament)
    if json:
        emit_json({"tournament": table.tournament, "game": table.game, "format": table.format, "rows": table.rows})
    else:
        console.print(standings_table(table))


@command
def query(sql: Annotated[str | None, typer.Argument(help="Read-only SQL over the projection (with --describe: a table or view).")] = None,
          ledger: LedgerOpt = DEFAULT_LEDGER,
          parquet: Annotated[Path | None, typer.Option(help="Query a Parquet export instead of a ledger.")] = None,
          key: Annotated[Path | None, typer.Option(help="With --parquet: the ledger's verifier key (signer.pub) the manifest is signed by.")] = None,
          name: Annotated[str | None, typer.Option("--name", help="Run a named query of --list instead of SQL.")] = None,
          param: Annotated[list[str] | None, typer.Option("--param", help="With --name: PARAM=VALUE (repeatable; a number or a word).")] = None,
          list_queries: Annotated[bool, typer.Option("--list", help="List the named queries, tables and views instead.")] = False,
          describe: Annotated[bool, typer.Option("--describe", help="List every column (of one table or view) with its type and meaning.")] = False,
          timeout: Annotated[float, typer.Option(help="Stop the query after this many seconds.")] = 60.0,
          json: JsonOpt = False) -> None:
    """Run read-only SQL or a named query over the projection of a ledger or of a Parquet export; list the queries; describe the columns."""
    from audit.db import AuditDB, catalogue
    from audit.dictionary import describe_columns
    from audit.export import load_parquet
    from audit.session import open_session
    from ledger import Verifier

    if list_queries or describe:
        columns, rows = (["name", "kind", "params", "check", "computes", "implements"], catalogue()) if list_queries else \
            (["table", "column", "type", "meaning"], describe_columns(sql))
    else:
        if (sql is None) == (name is None):
            raise typer.BadParameter("give the SQL to run or --name NAME (see --list), not both")
        if param and name is None:
            raise typer.BadParameter("--param goes with --name", param_hint="--param")
        if parquet is not None and key is None:
            raise typer.BadParameter("give the ledger's verifier key, which signed the export's manifest", param_hint="--key")
        params = _params(param or [])
        if name is not None:
            _check_named(name, params)
        db = AuditDB(load_parquet(parquet, Verifier.load(key))) if parquet is not None and key is not None else open_session(ledger).db
        columns, rows = db.run_named(name, params) if name is not None else db.query(sql or "", timeout)
    _print_rows(columns, rows, json)


def _check_named(name: str, params: dict[str, object]) -> None:
    """Refuses an unknown query or a parameter it does not take, before the ledger is read.

    :raises typer.BadParameter: naming the queries or the parameters it takes.
    """
    from audit.db import AuditError, check_call

    try:
        check_call(name, params)
    except AuditError as exc:
        raise typer.BadParameter(str(exc), param_hint="--name/--param") from None


def _params(pairs: list[str]) -> dict[str, object]:
    """Reads `--param NAME=VALUE` pairs: a value is a number when it reads as one, else a string.

    :raises typer.BadParameter: for a pair without `=`.
    """
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r}: write NAME=VALUE, e.g. tournament=junqi-cup-1", param_hint="--param")
        params[key] = int(value) if value.lstrip("-").isdigit() else value
    return params


def _print_rows(columns: list[str], rows: Sequence[Sequence[object]], json: bool) -> None:
    from audit.render import table as render_table

    if json:
        emit_json({"columns": columns, "rows": [list(r) for r in rows]})
    else:
        console.print(render_table(columns, rows))


@command
def demo(ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False) -> None:
    """The main job: simulate a tournament of each game into a fresh ledger, verify, replay, audit, show standings."""
    from audit import demo as demo_mod
    from audit.render import certification_table, standings_table

    with progress_steps(quiet=json) as step:
        result = demo_mod.run_demo(ledger, step)
    if json:
        emit_json(result.summary())
        return
    assert result.log and result.certification and result.proof
    say(f"ledger {ledger}: {result.log.size} entries, root {result.log.root}, "
        f"{result.log.checkpoints} signed checkpoints verified")
    for table in result.standings:
        console.print(standings_table(table))
    console.print(certification_table(result.certification))
    entry = result.proof.entries[-1]
    say(f"evidence for {result.proof.stream}: {len(result.proof.entries)} entries proved against the checkpoint; "
        f"entry {entry.index} has a {len(entry.proof)}-hash inclusion proof")
    say(result.proof.checkpoint.rstrip())
    verdict = "CERTIFIED: every check passed" if result.certification.ok else f"NOT CERTIFIED: {len(result.certification.findings)} findings"
    say(verdict)
