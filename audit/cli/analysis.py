"""Commands for auditors and analysts: certify, standings, SQL over the projection, and the demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from audit.cli.base import DEFAULT_LEDGER, ExitCode, FormatOpt, JsonOpt, LedgerOpt, QuietOpt, UsageError, command
from audit.output import Format, Rows, emit, emit_json, progress_bar, progress_steps, say


@command
def audit(ledger: LedgerOpt = DEFAULT_LEDGER,
          tournament: Annotated[str | None, typer.Option(help="Audit one tournament only.")] = None,
          fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """Certify a ledger: verify the log, replay every game, run every query, check every claim (exit 1 on findings)."""
    from audit.certify import certify
    from audit.render import certification_rows, finding_rows, finding_text

    with progress_bar("replaying games", 0, quiet=quiet) as advance:
        cert = certify(ledger, tournament, advance)
    if fmt is not Format.table:
        emit(finding_rows(cert.findings + cert.warnings), fmt, document={
            "ok": cert.ok, "size": cert.log.size, "root": cert.log.root, "games": cert.games,
            "checks": [{"check": c.name, "title": c.title, "passed": c.passed, "failed": c.failed, "ran": c.ran,
                        "examples": c.examples} for c in cert.checks],
            "findings": cert.findings, "warnings": cert.warnings})
    else:
        emit(certification_rows(cert), fmt)
        for finding in cert.findings + cert.warnings:
            say(finding_text(finding))
        verdict = "CERTIFIED: no findings" if cert.ok else f"NOT CERTIFIED: {len(cert.findings)} findings"
        say(f"{verdict}; {cert.games} games, log size {cert.log.size}, root {cert.log.root}; {len(cert.warnings)} warnings")
    if not cert.ok:
        raise ExitCode(1)


@command
def standings(tournament: Annotated[str, typer.Option(help="Tournament stream id.")], ledger: LedgerOpt = DEFAULT_LEDGER,
              explain: Annotated[str | None, typer.Option(help="Show the chain from events to this player's rank.")] = None,
              legend: Annotated[bool, typer.Option("--legend", help="Print what every column means, in English and Chinese.")] = False,
              fmt: FormatOpt = Format.table) -> None:
    """Print a tournament's ranking with every tie-break column (and a legend of the columns)."""
    from audit import standings as standings_mod
    from audit.render import explanation_rows, legend_rows, standings_rows
    from audit.session import open_session

    session = open_session(ledger)
    if explain is not None:
        chain = standings_mod.explain(session, tournament, explain)
        emit(explanation_rows(chain), fmt, document={"player": chain.player, "rank": chain.rank, "games": chain.games,
                                                     "boards": chain.boards, "seating": chain.seating})
        return
    table = standings_mod.standings(session, tournament)
    if legend:
        rows = legend_rows(table.columns)
        emit(rows, fmt, document={"tournament": table.tournament, "legend": rows.records()})
        return
    emit(standings_rows(table), fmt, document={"tournament": table.tournament, "game": table.game, "format": table.format,
                                               "rows": table.rows})


@command
def query(sql: Annotated[str | None, typer.Argument(help="Read-only SQL over the projection (tables: see README).")] = None,
          ledger: LedgerOpt = DEFAULT_LEDGER,
          parquet: Annotated[Path | None, typer.Option(help="Query a Parquet export instead of a ledger.")] = None,
          key: Annotated[Path | None, typer.Option(help="With --parquet: the ledger's verifier key (signer.pub) the manifest is signed by.")] = None,
          list_queries: Annotated[bool, typer.Option("--list", help="List the named queries and views instead.")] = False,
          timeout: Annotated[float, typer.Option(help="Stop the query after this many seconds.")] = 60.0,
          fmt: FormatOpt = Format.table) -> None:
    """Run read-only SQL over the projection of a ledger or of a Parquet export, or list the named queries."""
    from audit.db import QUERIES, VIEWS, AuditDB, AuditError
    from audit.export import load_parquet
    from audit.session import open_session
    from ledger import Verifier

    if list_queries:
        rows = [(q.name, q.check or "", q.computes, q.implements) for q in [*VIEWS.values(), *QUERIES.values()]]
        emit(Rows(["name", "check", "computes", "implements"], rows), fmt)
        return
    if sql is None:
        raise UsageError("give the SQL to run, or --list")
    if parquet is not None and key is None:
        raise typer.BadParameter("give the ledger's verifier key, which signed the export's manifest", param_hint="--key")
    db = AuditDB(load_parquet(parquet, Verifier.load(key))) if parquet is not None and key is not None else open_session(ledger).db
    try:
        columns, rows = db.query(sql, timeout)
    except AuditError as exc:  # the SQL given cannot run: a usage error, whatever DuckDB said
        raise UsageError(str(exc)) from None
    emit(Rows(columns, rows), fmt)


@command
def demo(ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """The main job: simulate a tournament of each game into a fresh ledger, verify, replay, audit, show standings."""
    from audit import demo as demo_mod
    from audit.render import certification_rows, standings_rows

    with progress_steps(quiet=quiet or json, always=True) as step:
        result = demo_mod.run_demo(ledger, step)
    if json:
        emit_json(result.summary())
        return
    assert result.log and result.certification and result.proof
    say(f"matchledger demo: simulated a tournament of each game ({', '.join(p.game for p in demo_mod.PLANS)}) through the "
        f"recorder into {ledger}, then verified the log, replayed every game and audited every result, score, seating and "
        f"timing against the rules.\n")
    say(f"log: {result.log.size} entries, root {result.log.root}, {result.log.checkpoints} signed checkpoints verified")
    emit([standings_rows(t) for t in result.standings] + [certification_rows(result.certification)], Format.table)
    entry = result.proof.entries[-1]
    say(f"evidence for {result.proof.stream}: {len(result.proof.entries)} entries proved against the checkpoint; "
        f"entry {entry.index} has a {len(entry.proof)}-hash inclusion proof")
    say(f"signed checkpoint ({ledger / 'checkpoint'}, a C2SP signed note: origin, tree size, root hash, signature):")
    say("\n".join(f"  {line}".rstrip() for line in result.proof.checkpoint.rstrip().splitlines()))
    verdict = "CERTIFIED: every check passed" if result.certification.ok else f"NOT CERTIFIED: {len(result.certification.findings)} findings"
    say(verdict)
    say(demo_next_steps(ledger, result))


def demo_next_steps(ledger: Path, result: Any) -> str:
    """Returns where to look next after the demo, with commands on the demo's own ledger."""
    table = result.standings[0]
    player = table.rows[0]["player"] if table.rows else "PLAYER"
    game = result.proof.stream
    steps = [
        (f"matchledger standings --ledger {ledger} --tournament {table.tournament} --explain {player}", "why a player holds its rank"),
        (f"matchledger standings --ledger {ledger} --tournament {table.tournament} --legend", "what each column means"),
        (f"matchledger show --ledger {ledger} --game {game}", "a game's position (--at SEQ, --svg FILE)"),
        (f"matchledger report --ledger {ledger} --game {game} --out {game.replace('/', '-')}.html", "a game's arbitration report"),
        ("matchledger simulate junqi --tournament --inject illegal-move --ledger /tmp/faulty", "plant a fault, then audit it"),
        (f"matchledger query --ledger {ledger} --list", "the SQL behind every check"),
    ]
    return "\nnext:\n" + "\n".join(f"  {cmd}\n      {why}" for cmd, why in steps)
