"""Commands for auditors and analysts: certify, standings, SQL over the projection, and the demo."""

from __future__ import annotations

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
        emit_json({"ok": cert.ok, "size": cert.log.size, "root": cert.log.root, "games": cert.games,
                   "checks": [{"check": c.name, "title": c.title, "passed": c.passed, "failed": c.failed, "ran": c.ran,
                               "examples": c.examples} for c in cert.checks],
                   "findings": cert.findings, "warnings": cert.warnings})
    else:
        console.print(certification_table(cert))
        verdict = "CERTIFIED: no findings" if cert.ok else f"NOT CERTIFIED: {len(cert.findings)} findings"
        say(f"{verdict}; {cert.games} games, log size {cert.log.size}, root {cert.log.root}; {len(cert.warnings)} warnings")
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
def query(sql: Annotated[str | None, typer.Argument(help="Read-only SQL over the projection (tables: see README).")] = None,
          ledger: LedgerOpt = DEFAULT_LEDGER,
          parquet: Annotated[Path | None, typer.Option(help="Query a Parquet export instead of a ledger.")] = None,
          key: Annotated[Path | None, typer.Option(help="With --parquet: the ledger's verifier key (signer.pub) the manifest is signed by.")] = None,
          list_queries: Annotated[bool, typer.Option("--list", help="List the named queries and views instead.")] = False,
          timeout: Annotated[float, typer.Option(help="Stop the query after this many seconds.")] = 60.0,
          json: JsonOpt = False) -> None:
    """Run read-only SQL over the projection of a ledger or of a Parquet export, or list the named queries."""
    from audit.db import QUERIES, VIEWS, AuditDB
    from audit.export import load_parquet
    from audit.render import table as render_table
    from audit.session import open_session
    from ledger import Verifier

    if list_queries:
        rows = [(q.name, q.check or "", q.computes, q.implements) for q in [*VIEWS.values(), *QUERIES.values()]]
        if json:
            emit_json({"columns": ["name", "check", "computes", "implements"], "rows": [list(r) for r in rows]})
        else:
            console.print(render_table(["name", "check", "computes", "implements"], rows))
        return
    if sql is None:
        raise ValueError("give the SQL to run, or --list")
    if parquet is not None and key is None:
        raise typer.BadParameter("give the ledger's verifier key, which signed the export's manifest", param_hint="--key")
    db = AuditDB(load_parquet(parquet, Verifier.load(key))) if parquet is not None and key is not None else open_session(ledger).db
    columns, rows = db.query(sql, timeout)
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
