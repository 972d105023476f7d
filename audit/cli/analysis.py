"""Commands for auditors and analysts: certify, standings, SQL over the projection, and the demo."""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer

import ledger as ledger_api
from audit.cli.base import (
    DEFAULT_LEDGER,
    ExitCode,
    ForceOpt,
    FormatOpt,
    JsonOpt,
    LedgerOpt,
    LogKeyOpt,
    QuietOpt,
    UsageError,
    command,
    existing_ledger,
    export_trust,
    key_option,
    say_trust,
    trust_document,
    trust_lines,
)
from audit.cli.results import Certified, CheckDone, Crossed, Demonstrated, Explained, Legend, Queried, Ranked
from audit.presentation.output import Format, Rows, emit, is_terminal, progress_bar, progress_steps
from ledger import anchor as ledger_anchor

if TYPE_CHECKING:
    from audit.query.session import Session
    from ledger import Signer, Verifier, VerifyReport


class Engine(str, enum.Enum):
    """Where the audit runs: DuckDB in this process over a ledger, or Apache Spark over a Parquet export."""

    duckdb = "duckdb"
    spark = "spark"


EngineOpt = Annotated[Engine, typer.Option(help="duckdb (over --ledger, or --parquet for query) or spark (over --parquet).")]
MasterOpt = Annotated[str | None, typer.Option(help="With --engine spark: the Spark master URL (default local[2]).")]
ParquetOpt = Annotated[Path | None, typer.Option(help="A Parquet export (matchledger export --parquet) instead of a ledger.")]
CertificateOpt = Annotated[Path | None, typer.Option("--certificate", help="Write the audit's certificate (a DSSE-signed in-toto "
                                                      "statement, check it with check-certificate) to this file; with --auditor-key.")]
AuditorKeyOpt = Annotated[Path | None, key_option("--auditor-key", help="The auditor's private key (matchledger keygen), which "
                                                                     "signs the certificate.")]
SinceOpt = Annotated[Path | None, typer.Option("--since", help="Audit only what the log gained since this earlier certificate "
                                               "(from the state kept beside it); with --certificate NEW and --auditor-key.")]
AuditorPubOpt = Annotated[Path | None, key_option("--auditor-pub", help="The auditor's public key the --since certificate was signed "
                                                                     "by (default: that of --auditor-key).")]
FullIfNeededOpt = Annotated[bool, typer.Option("--full-if-needed", help="With --since: when the earlier state cannot be used, say why "
                                               "and audit in full (without it: exit 2).")]


def _export_session(engine: Engine, parquet: Path | None, key: Path | None, master: str | None) -> tuple[VerifyReport, Session, Path] | None:
    """Opens the Spark session of an export when --engine spark asks for it (None otherwise).

    :raises typer.BadParameter: when --engine spark lacks --parquet or --key, or --master comes without it.
    """
    if engine is Engine.duckdb:
        if master is not None:
            raise typer.BadParameter("--master goes with --engine spark", param_hint="--master")
        return None
    if parquet is None or key is None:
        raise typer.BadParameter("--engine spark audits a Parquet export: give --parquet DIR and --key signer.pub", param_hint="--parquet")
    from audit.spark.session import open_export
    from ledger import Verifier

    return (*open_export(parquet, Verifier.load(key), master), key)


@command
def audit(ledger: LedgerOpt = DEFAULT_LEDGER,
          tournament: Annotated[str | None, typer.Option(help="Audit one tournament only.")] = None,
          engine: EngineOpt = Engine.duckdb, master: MasterOpt = None, parquet: ParquetOpt = None, key: LogKeyOpt = None,
          certificate: CertificateOpt = None, auditor_key: AuditorKeyOpt = None, since: SinceOpt = None,
          auditor_pub: AuditorPubOpt = None, full_if_needed: FullIfNeededOpt = False, force: ForceOpt = False,
          fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """Certify a ledger, or with --engine spark an export: verify, replay every game, run every query, check every claim (exit 1 on findings)."""
    from audit.certification.certificate import finding_records, write_certificate, written_line
    from audit.certification.certify import certify, certify_session
    from audit.certification.since import audit_keeping_state
    from audit.presentation.render import certification_rows, finding_rows, finding_said

    if engine is Engine.duckdb and parquet is not None:
        raise typer.BadParameter("an export is audited on Spark: add --engine spark", param_hint="--parquet")
    if (since is not None or auditor_pub is not None or full_if_needed) and certificate is None:
        raise typer.BadParameter("--since CERT (with --auditor-pub, --full-if-needed) writes a new certificate: add --certificate NEW "
                                 "--auditor-key KEY", param_hint="--since")
    auditor, written = _auditor(certificate, auditor_key, engine, force), None
    opened = _export_session(engine, parquet, key, master)
    if opened is not None:
        if tournament is not None:
            opened[1].tournament_game(tournament)
        cert = certify_session(opened[0], opened[1], tournament)
        trust = export_trust(opened[2], opened[0].size, opened[0].root)
    else:
        with ledger_api.pinned_key(key), progress_bar("replaying games", 0, quiet=quiet) as advance:  # the bar's total: the games
            root = existing_ledger(ledger)  # checked before the verification forks
            if certificate is not None and auditor is not None:
                log_key = ledger_anchor.log_key(ledger)
                cert, state, continued, said = (_since(root, since, certificate, auditor_pub, auditor, log_key.verifier, tournament, full_if_needed,
                                                       advance)
                                                if since is not None else (*audit_keeping_state(root, certificate, tournament, advance), None, None))
                written = write_certificate(certificate, ledger, cert, log_key, auditor, force, state, continued)
                if said is not None:
                    written["since"] = said
            else:
                cert = certify(root, tournament, advance)
            trust = trust_document(ledger, report=cert.log)
    certified = Certified(
        ok=cert.ok, reason=cert.reason, size=cert.log.size, root=cert.log.root, unsigned=cert.log.unsigned,
        games=cert.games, as_of=cert.as_of, trust=trust,
        checks=[CheckDone(check=c.name, title=c.title, passed=c.passed, failed=c.failed, ran=c.ran, applies=c.applies,
                          examples=list(c.examples)) for c in cert.checks],
        findings=finding_records(cert.findings), warnings=finding_records(cert.warnings), certificate=written or None)
    if fmt is not Format.table:
        emit(finding_rows(cert.findings + cert.warnings), fmt, document=certified)
    else:
        emit(certified.told(table=certification_rows(cert), said=[finding_said(f) for f in cert.findings + cert.warnings],
                            trust_said=trust_lines(trust), verdict=cert.verdict(), written=written_line(written) if written else None), fmt)
    if not cert.ok:
        raise ExitCode(1)


def _since(root: Path, since: Path, certificate: Path, auditor_pub: Path | None, auditor: Signer, log: Verifier, tournament: str | None,
           full_if_needed: bool, advance: Any) -> tuple[Any, bytes | None, Any, dict[str, Any] | None]:
    """Audits since an earlier certificate; returns the certification, its state, the earlier certificate
    as the new one names it, and what the JSON output says of the incremental audit (None when it ran in full).

    :raises UsageError: when the earlier state cannot be used and --full-if-needed was not given.
    """
    from audit.certification.since import SinceRefused, audit_keeping_state, audit_since, since_resource, since_said
    from audit.cli.inputs import read_input
    from ledger import Verifier

    earlier = read_input(since, "an audit certificate (a DSSE envelope)")
    try:
        done = audit_since(root, earlier, since, Verifier.load(auditor_pub) if auditor_pub else auditor.verifier, log, certificate,
                           tournament, advance)
    except SinceRefused as exc:
        if not full_if_needed:
            raise UsageError(f"{exc}; 未审计 / nothing audited: audit without --since, or add --full-if-needed") from None
        typer.echo(f"改为完整审计 / auditing in full (--full-if-needed): {exc}", err=True)
        return (*audit_keeping_state(root, certificate, tournament, advance), None, None)
    return done.cert, done.state, since_resource(earlier, done.earlier), since_said(since, done)


def _auditor(certificate: Path | None, auditor_key: Path | None, engine: Engine, force: bool) -> Signer | None:
    """Loads the auditor's key and checks where the certificate goes, before the audit reads anything.

    :raises typer.BadParameter: when one of --certificate and --auditor-key comes without the other, or with --engine spark.
    """
    if (certificate is None) != (auditor_key is None):
        raise typer.BadParameter("--certificate FILE and --auditor-key KEY go together", param_hint="--certificate/--auditor-key")
    if certificate is None or auditor_key is None:
        return None
    if engine is Engine.spark:
        raise typer.BadParameter("a certificate names a ledger's signed checkpoint: audit the ledger (--engine duckdb)", param_hint="--certificate")
    ledger_api.check_output(certificate, force)
    return ledger_api.Signer.load(auditor_key)


@command
def standings(tournament: Annotated[str, typer.Option(help="Tournament stream id.")], ledger: LedgerOpt = DEFAULT_LEDGER,
              explain: Annotated[str | None, typer.Option(help="Show the chain from events to this player's rank.")] = None,
              crosstable: Annotated[bool, typer.Option("--crosstable", help="Show each player's result in every round.")] = False,
              legend: Annotated[bool, typer.Option("--legend", help="Print what every column means, in English and Chinese.")] = False,
              columns: Annotated[str | None, typer.Option("--columns", help="Only these columns, comma-separated (e.g. "
                                                           "rank,player,big,bh,ps; --legend lists them).")] = None,
              engine: EngineOpt = Engine.duckdb, master: MasterOpt = None, parquet: ParquetOpt = None, key: LogKeyOpt = None,
              as_of: Annotated[str | None, typer.Option("--as-of", help="Judge each game's status (final, provisional …) at this "
                                                        "time: ms or ISO 8601 (default: the competition's latest event).")] = None,
              fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """Print a tournament's ranking with every tie-break column (and a legend of the columns)."""
    from audit.presentation.render import crosstable_rows, explanation_rows, legend_rows, standings_rows
    from audit.query import standings as standings_mod
    from audit.query.session import open_session

    if engine is Engine.duckdb and parquet is not None:
        raise typer.BadParameter("standings of an export are computed on Spark: add --engine spark", param_hint="--parquet")
    opened = _export_session(engine, parquet, key, master)
    if opened is not None:
        session, trust = opened[1], export_trust(opened[2], opened[0].size, opened[0].root)
    else:
        with ledger_api.pinned_key(key), progress_bar("replaying games", 0, quiet=quiet) as advance:  # the bar's total: the games
            session = open_session(ledger, advance, kept=True, body=False)  # the kept entries are not read again (issue 32.2)
            trust = trust_document(ledger, session.signed)
    if fmt is not Format.json:  # first: the table's last line is its legend
        say_trust(trust, table=fmt is Format.table)
    if as_of is not None:
        from audit.query.appeals import ArbitrationError, parse_time

        try:
            moment = parse_time(as_of)
        except ArbitrationError as exc:
            raise typer.BadParameter(str(exc), param_hint="--as-of") from None
        session = standings_mod.as_of(session, moment)
    if crosstable:
        cross = standings_mod.crosstable(session, tournament)
        emit(crosstable_rows(cross), fmt, document=Crossed(tournament=cross.tournament, format=cross.format, rounds=cross.rounds,
                                                           rows=cross.rows, trust=trust))
        return
    elif explain is not None:
        chain = standings_mod.explain(session, tournament, explain)
        emit(explanation_rows(chain), fmt, document=Explained(player=chain.player, rank=chain.rank, games=chain.games,
                                                              boards=chain.boards, seating=chain.seating, trust=trust))
        return
    table = standings_mod.standings(session, tournament)
    if legend:
        rows = legend_rows(table.columns)
        emit(rows, fmt, document=Legend(tournament=table.tournament, legend=rows.records(), trust=trust))
        return
    shown = _columns(columns, table.columns)
    ranked = Ranked(tournament=table.tournament, game=table.game, format=table.format, as_of=table.as_of,
                    rows=table.rows if columns is None else [{c: r.get(c) for c in shown} for r in table.rows], trust=trust)
    if fmt is Format.table:
        emit(ranked.told(table=standings_rows(table, shown)), fmt)
    else:
        emit(standings_rows(table, shown), fmt, document=ranked)


def _columns(chosen: str | None, known: list[str]) -> list[str]:
    """Returns the standings columns `--columns` chose, in the order given (all of them without it).

    :raises typer.BadParameter: naming a column the table has not, and the ones it has.
    """
    if chosen is None:
        return known
    names = [c.strip() for c in chosen.split(",") if c.strip()]
    unknown = [c for c in names if c not in known]
    if unknown or not names:
        named = ", ".join(unknown) if unknown else repr(chosen)
        raise typer.BadParameter(f"没有此栏 no such column: {named} (known: {', '.join(known)})",
                                 param_hint="--columns")
    return names


@command
def query(sql: Annotated[str | None, typer.Argument(help="Read-only SQL over the projection (with --describe: a table or view).")] = None,
          ledger: LedgerOpt = DEFAULT_LEDGER, parquet: ParquetOpt = None, key: LogKeyOpt = None,
          engine: EngineOpt = Engine.duckdb, master: MasterOpt = None,
          name: Annotated[str | None, typer.Option("--name", help="Run a named query of --list instead of SQL.")] = None,
          param: Annotated[list[str] | None, typer.Option("--param", help="With --name: PARAM=VALUE (repeatable; a number or a word).")] = None,
          list_queries: Annotated[bool, typer.Option("--list", help="List the named queries, tables and views instead.")] = False,
          names: Annotated[bool, typer.Option("--names", help="With --list: the names only, one a line.")] = False,
          describe: Annotated[bool, typer.Option("--describe", help="List every column (of one table or view) with its type and meaning.")] = False,
          timeout: Annotated[float, typer.Option(help="Stop the query after this many seconds.")] = 60.0,
          fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """Run read-only SQL or a named query over the projection of a ledger or of a Parquet export; list the queries; describe the columns."""
    from audit.lake.export import open_parquet
    from audit.presentation.dictionary import describe_columns
    from audit.query.db import AuditDB, AuditError, catalogue
    from audit.query.session import open_session
    from ledger import Verifier

    if names and not list_queries:
        raise typer.BadParameter("--names goes with --list", param_hint="--names")
    if list_queries or describe:
        entries = catalogue()
        listing = Rows(["name"], [q[:1] for q in entries]) if names else \
            Rows(["name", "kind", "params", "check", "computes", "implements"], entries) if list_queries else \
            Rows(["table", "column", "type", "meaning"], describe_columns(sql))
        emit(listing, fmt)
        return
    if (sql is None) == (name is None):
        raise typer.BadParameter("give the SQL to run or --name NAME (see --list), not both")
    if param and name is None:
        raise typer.BadParameter("--param goes with --name", param_hint="--param")
    if parquet is not None and key is None:
        raise typer.BadParameter("give the ledger's verifier key, which signed the export's manifest", param_hint="--key")
    params = _params(param or [])
    if name is not None:
        _check_named(name, params)
    opened = _export_session(engine, parquet, key, master)
    if opened is not None:
        db: Any = opened[1].db
        trust = export_trust(opened[2], opened[0].size, opened[0].root)
    elif parquet is not None and key is not None:
        tables, (size, root) = open_parquet(parquet, Verifier.load(key))  # says which checkpoint the export is of (28.12)
        db, trust = AuditDB(tables), export_trust(key, size, root)
    else:
        with ledger_api.pinned_key(key), progress_bar("replaying games", 0, quiet=quiet) as advance:  # the bar's total: the games
            session = open_session(ledger, advance, kept=True, body=_reads_body(name, sql))
            db, trust = session.db, trust_document(ledger, session.signed)
    try:
        columns, rows = db.run_named(name, params) if name is not None else db.query(sql or "", timeout)
    except AuditError as exc:  # the SQL given cannot run: a usage error, whatever DuckDB said
        raise UsageError(str(exc)) from None
    emit(Rows(columns, rows), fmt, document=Queried(columns=list(columns), rows=[list(r) for r in rows], trust=trust))
    if fmt is not Format.json:  # rows piped as plain text stay rows: the lines go to stderr then
        say_trust(trust, table=fmt is Format.table and is_terminal())


def _reads_body(name: str | None, sql: str | None) -> bool:
    """Tells whether a query reads `events.body` (the stored events, which only then are read again)."""
    from audit.query.db import QUERIES

    text = QUERIES[name].sql if name is not None and name in QUERIES else sql or ""
    return re.search(r"\bbody\b", text, re.IGNORECASE) is not None


def _check_named(name: str, params: dict[str, object]) -> None:
    """Refuses an unknown query or a parameter it does not take, before the ledger is read.

    :raises typer.BadParameter: naming the queries or the parameters it takes.
    """
    from audit.query.db import AuditError, check_call

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


@command
def demo(ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """The main job: simulate a tournament of each game into a fresh ledger, verify, replay, audit, show standings."""
    from audit.presentation.render import certification_rows, standings_rows
    from audit.simulator import demo as demo_mod

    with progress_steps(quiet=quiet or json, always=True) as step:
        result = demo_mod.run_demo(ledger, step)
    demonstrated = msgspec.convert(result.summary(), Demonstrated)
    if json:
        emit(demonstrated, Format.json)
        return
    assert result.log and result.certification and result.proof
    emit(demonstrated.told(ledger=ledger, games_played=[p.game for p in demo_mod.PLANS], checkpoints=result.log.checkpoints,
                           tables=[standings_rows(t) for t in result.standings] + [certification_rows(result.certification)],
                           proof=result.proof, certified=result.certification.ok, accelerator_line=result.accelerator_line(),
                           next_steps=demo_next_steps(ledger, result)), Format.table)


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
