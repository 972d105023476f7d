"""The `matchledger` command line: each command parses options, calls one library function, prints."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec
import typer

import ledger as ledger_api
from audit import report as report_mod
from audit import simulate as simulate_mod
from audit import standings as standings_mod
from audit.certify import certify
from audit.db import QUERIES, VIEWS, AuditDB, AuditError
from audit.export import export_parquet, load_parquet
from audit.output import console, emit_json, fail, fail_note, progress_bar, progress_steps, say
from audit.projection import project_ledger
from audit.render import certification_table, explanation_tables, standings_table
from audit.render import table as render_table
from audit.session import movement_ranking, open_session
from audit.tournament_sim import FAULTS, TournamentPlan, simulate_tournament
from ledger import CheckpointError, LedgerError, OutputRefused, Signer, Verifier, check_output, read_events, read_stream_events, write_output
from replay import run as run_mod
from replay.protocol import ReplayError
from schemas.codec import ContractError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Record, verify, replay and audit competitive games.")

PROJECT_ERRORS = (LedgerError, ContractError, ReplayError, AuditError, ValueError, OSError)
LedgerOpt = Annotated[Path, typer.Option("--ledger", envvar="MATCHLEDGER_LEDGER", help="Ledger directory.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
DEFAULT_LEDGER = Path("matchledger-data")
EXIT_NOT_CHECKPOINTED = 4
"""`record` appended the events and made them durable, but could not sign a checkpoint over them."""
F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(Exception):
    """Ends a command with a given exit code after it has printed its verdict."""

    def __init__(self, code: int) -> None:
        self.code = code


def command(fn: F) -> F:
    """Registers a command whose project errors become a message on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
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
        except PROJECT_ERRORS as exc:
            fail(str(exc))
            raise typer.Exit(1) from None

    app.command(fn.__name__.rstrip("_").replace("_", "-"))(wrapper)
    return fn


@command
def init(ledger: LedgerOpt = DEFAULT_LEDGER, origin: Annotated[str | None, typer.Option(help="Checkpoint origin line.")] = None,
         max_entry_bytes: Annotated[int, typer.Option(help="Largest event accepted, in bytes.")] = 64 * 1024,
         checkpoint_interval: Annotated[int, typer.Option(help="Sign a checkpoint at least every N entries.")] = 100_000,
         json: JsonOpt = False) -> None:
    """Create an empty ledger with a new Ed25519 signing key."""
    pub = ledger_api.init(ledger, origin, max_entry_bytes=max_entry_bytes, checkpoint_interval=checkpoint_interval)
    if json:
        emit_json({"ledger": str(ledger), "public_key": str(pub), "verifier": pub.read_text().strip()})
    else:
        say(f"created ledger {ledger}\npublic key: {pub}")


@command
def record(file: Annotated[str, typer.Argument(help="JSONL file of events, or - for stdin.")],
           ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False) -> None:
    """Append the events of a JSONL file, all or nothing, and sign a checkpoint."""
    source = sys.stdin.buffer if file == "-" else open(file, "rb")
    with source:
        result = ledger_api.record(ledger, source)
    if result.recovered:
        fail_note(result.recovered)
    if json:
        emit_json({"appended": result.appended, "duplicates": result.duplicates, "size": result.size, "recovered": result.recovered})
    else:
        say(f"appended {result.appended} events, {result.duplicates} already present; tree size {result.size}")


@command
def verify(ledger: LedgerOpt = DEFAULT_LEDGER,
           witness_key: Annotated[list[Path] | None, typer.Option(help="An arbiter's verifier key to check co-signatures of (repeatable).")] = None,
           json: JsonOpt = False) -> None:
    """Re-read every frame, recompute the tree and tiles, check the index, every checkpoint and signature."""
    report = ledger_api.verify(ledger, witness_keys=[Verifier.load(k) for k in witness_key or []])
    if json:
        emit_json({"ok": True, "size": report.size, "root": report.root, "checkpoints": report.checkpoints, "notes": report.notes}
                  if report.ok else {"ok": False, "index": report.index, "error": report.error})
    elif report.ok:
        say(f"ok: tree size {report.size}, root {report.root}, {report.checkpoints} checkpoints verified")
        for note in report.notes:
            say(f"note: {note}")
    else:
        where = f"entry {report.index}: " if report.index is not None else ""
        fail(f"ledger damaged: {where}{report.error}")
    if not report.ok:
        raise ExitCode(1)


@command
def export(ledger: LedgerOpt = DEFAULT_LEDGER,
           jsonl: Annotated[Path | None, typer.Option(help="Write the entries as stored, one per line.")] = None,
           parquet: Annotated[Path | None, typer.Option(help="Write the projection as Hive-partitioned Parquet with a manifest.")] = None,
           tiles: Annotated[Path | None, typer.Option(help="Lay out checkpoint, hash tiles and entry bundles for tlog-tiles clients.")] = None,
           force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Export the entries as stored (--jsonl), the projection as Parquet (--parquet) or the log as tlog-tiles (--tiles)."""
    if sum(x is not None for x in (jsonl, parquet, tiles)) != 1:
        raise typer.BadParameter("give exactly one of --jsonl FILE, --parquet DIR or --tiles DIR")
    if jsonl is not None:
        count = ledger_api.export_jsonl(ledger, jsonl, force)
        summary: dict[str, Any] = {"entries": count, "jsonl": str(jsonl)}
        text = f"wrote {count} entries to {jsonl}"
    elif tiles is not None:
        size = ledger_api.export_tiles(ledger, tiles, force)
        summary = {"size": size, "tiles": str(tiles)}
        text = f"wrote the checkpoint, tiles and entry bundles of the log at size {size} to {tiles} (serve it as static files)"
    else:
        assert parquet is not None
        check_output(parquet, force, directory=True)
        manifest = export_parquet(ledger, project_ledger(ledger), parquet)
        summary = {"files": len(manifest["files"]), "parquet": str(parquet), "checkpoint": manifest["checkpoint"]}
        text = f"wrote {len(manifest['files'])} Parquet files, {parquet / 'manifest.json'} and its signed note"
    if json:
        emit_json(summary)
    else:
        say(text)


@command
def prove(stream: Annotated[str, typer.Option(help="Stream (game or tournament) id.")],
          out: Annotated[Path, typer.Option(help="Where to write the evidence bundle.")],
          ledger: LedgerOpt = DEFAULT_LEDGER, force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Write an evidence bundle: a stream's entries with inclusion proofs and a signed checkpoint."""
    check_output(out, force)
    built = ledger_api.prove(ledger, stream)
    write_output(out, msgspec.json.format(msgspec.json.encode(built)) + b"\n", force)
    if json:
        emit_json({"stream": stream, "entries": len(built.entries), "out": str(out)})
    else:
        say(f"wrote {len(built.entries)} entries of {stream} with inclusion proofs to {out}")


@command
def check_proof(file: Annotated[Path, typer.Argument(help="Evidence bundle file.")],
                key: Annotated[Path, typer.Option(help="The ledger's verifier key (signer.pub).")],
                json: JsonOpt = False) -> None:
    """Verify an evidence bundle offline with the public key alone."""
    loaded = ledger_api.load_bundle(file)
    checkpoint = ledger_api.check_bundle(loaded, Verifier.load(key))
    proved = (f"seq 0–{len(loaded.entries) - 1} of {loaded.stream}, in order and without a gap, are entries of the log of "
              f"size {checkpoint.size} (root {checkpoint.root.hex()}), signed by {checkpoint.origin}; inclusion proofs do not show "
              f"that the stream has no later entries")
    if json:
        emit_json({"ok": True, "stream": loaded.stream, "entries": len(loaded.entries), "size": checkpoint.size,
                   "root": checkpoint.root.hex(), "proved": proved})
    else:
        say(f"ok: {proved}")


@command
def consistency(old: Annotated[int, typer.Option(help="Tree size of the earlier checkpoint.")],
                ledger: LedgerOpt = DEFAULT_LEDGER,
                new: Annotated[int | None, typer.Option(help="Tree size of the later checkpoint (the latest by default).")] = None,
                json: JsonOpt = False) -> None:
    """Prove that an earlier signed checkpoint is a prefix of a later one (RFC 6962 consistency proof)."""
    item = ledger_api.prove_consistency(ledger, old, new)
    first, last = ledger_api.check_consistency(item, ledger_api.load_verifier(ledger))
    if json:
        emit_json({"old": first.size, "new": last.size, "old_root": first.root.hex(), "new_root": last.root.hex(), "proof": item.proof})
    else:
        say(f"ok: the log at {first.size} entries (root {first.root.hex()}) is a prefix of the log at {last.size} "
            f"(root {last.root.hex()}); proof of {len(item.proof)} hashes:")
        for h in item.proof:
            say(f"  {h}")


@command
def keygen(name: Annotated[str, typer.Option(help="Key name, e.g. arbiter-zhang.")],
           out: Annotated[Path, typer.Option(help="Private key file to create (mode 600).")],
           json: JsonOpt = False) -> None:
    """Create an arbiter's Ed25519 key pair for co-signing checkpoints."""
    pub = out.with_suffix(".pub")
    if out.suffix == ".pub":
        raise typer.BadParameter("give the private key's file name (its public key goes beside it as NAME.pub), not a .pub file", param_hint="--out")
    for path in (out, pub):
        check_output(path)
    signer = Signer.generate(name)
    signer.save(out)
    write_output(pub, (str(signer.verifier) + "\n").encode())
    if json:
        emit_json({"private_key": str(out), "public_key": str(pub), "verifier": str(signer.verifier)})
    else:
        say(f"private key: {out}\npublic key: {pub}")


@command
def cosign(key: Annotated[Path, typer.Option(help="The arbiter's private key.")],
           ledger: LedgerOpt = DEFAULT_LEDGER,
           size: Annotated[int | None, typer.Option(help="Tree size of the checkpoint; the latest by default.")] = None,
           json: JsonOpt = False) -> None:
    """Add an arbiter's co-signature to a checkpoint."""
    with ledger_api.Ledger.open(ledger) as writer:
        checkpoint = writer.cosign(Signer.load(key), size)
    if json:
        emit_json({"size": checkpoint.size, "root": checkpoint.root.hex(), "note": checkpoint.note})
    else:
        say(checkpoint.note)


GameArg = Annotated[str, typer.Argument(help="checkers, junqi or paohuzi.")]


@command
def simulate(game: GameArg, ledger: LedgerOpt = DEFAULT_LEDGER,
             games: Annotated[int, typer.Option(min=1, help="Number of single games (without --tournament).")] = 10,
             seed: Annotated[int, typer.Option(help="Seed of the bots and the draw.")] = 1,
             tournament: Annotated[bool, typer.Option("--tournament", help="Simulate a whole tournament.")] = False,
             players: Annotated[int, typer.Option(min=2, help="Tournament players.")] = 8,
             rounds: Annotated[int, typer.Option(min=1, help="Tournament rounds.")] = 3,
             games_per_round: Annotated[int, typer.Option(min=1, help="Boards (duplicate) or games per match (checkers).")] = 2,
             group_tables: Annotated[int | None, typer.Option(min=1, help="Tables per movement group.")] = None,
             boards: Annotated[int | None, typer.Option(min=1, help="Paohuzi: duplicate boards (deals) to play.")] = None,
             tables: Annotated[int, typer.Option(min=1, help="Paohuzi: tables that play each board.")] = 1,
             inject: Annotated[str | None, typer.Option(help=f"Plant one fault: {', '.join(FAULTS)}.")] = None,
             profile: Annotated[str, typer.Option(help="Tournament: the game's named rule profile.")] = "default",
             set_: Annotated[list[str] | None, typer.Option("--set", help="Tournament: FIELD=VALUE of the tournament rules or the "
                                                                  "game's profile (repeatable).")] = None,
             json: JsonOpt = False) -> None:
    """Record bot games or a whole tournament through the recorder (a fresh ledger is created if needed)."""
    if not (ledger / "ledger.json").exists():
        ledger_api.init(ledger)
    if tournament:
        plan = TournamentPlan(game, players, rounds, games_per_round, seed, group_tables, inject, profile, tuple(set_ or ()))
        total = plan.expected_games()
    else:
        total = (boards or games) * (tables if boards else 1)
    with progress_bar(f"simulating {game}", total, quiet=json) as advance:
        if tournament:
            result = simulate_tournament(ledger, plan, movement_ranking, advance)
        elif boards:
            result = simulate_mod.simulate_boards(ledger, boards, tables, seed, advance)
        else:
            result = simulate_mod.simulate_games(ledger, game, games, seed, advance)
    if json:
        emit_json({"games": result.games, "events": result.events, "size": result.size, "tournament": result.tournament})
    else:
        what = f"tournament {result.tournament}: " if result.tournament else ""
        say(f"{what}recorded {result.games} {game} games, {result.events} events; tree size {result.size}")


@command
def audit(ledger: LedgerOpt = DEFAULT_LEDGER,
          tournament: Annotated[str | None, typer.Option(help="Audit one tournament only.")] = None,
          json: JsonOpt = False) -> None:
    """Certify a ledger: verify the log, replay every game, run every query, check every claim (exit 1 on findings)."""
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
              json: JsonOpt = False) -> None:
    """Print a tournament's ranking with every tie-break column."""
    session = open_session(ledger)
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
def replay(ledger: LedgerOpt = DEFAULT_LEDGER,
           game: Annotated[str | None, typer.Option(help="Replay only this game stream.")] = None,
           json: JsonOpt = False) -> None:
    """Re-derive every game from the rules and list the findings (exit 1 when there are any)."""
    events = read_stream_events(ledger, game) if game is not None else read_events(ledger)  # one game: through the index
    summary = run_mod.summarise(run_mod.replay_all(events, game))
    if game is not None and summary.games == 0:
        raise ValueError(f"no game stream {game!r} in {ledger}")
    if json:
        emit_json({"games": summary.games, "events": summary.events, "moves": summary.moves,
                   "findings": len(summary.findings), "seconds": round(summary.seconds, 3)})
    else:
        say(f"games {summary.games}, events {summary.events}, moves {summary.moves}, "
            f"findings {len(summary.findings)}, seconds {summary.seconds:.2f}")
        for finding in summary.findings:
            say(str(finding))
    if summary.findings:
        raise ExitCode(1)


@command
def show(game: Annotated[str, typer.Option(help="Game stream id.")], ledger: LedgerOpt = DEFAULT_LEDGER,
         at: Annotated[int | None, typer.Option(help="Show the position after this seq (default: the end).")] = None,
         seat: Annotated[int | None, typer.Option(help="Show only what this seat can see.")] = None,
         svg: Annotated[Path | None, typer.Option(help="Also write the position as SVG.")] = None,
         force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Show a game's position at any step, as text (and SVG)."""
    if svg is not None:
        check_output(svg, force)
    view = run_mod.position(read_stream_events(ledger, game), game, at)
    text = view.engine.render_text(view.state, seat)
    if svg is not None:
        write_output(svg, view.engine.render_svg(view.state, seat).encode(), force)
    if json:
        emit_json({"game": game, "seq": view.seq, "kind": view.kind, "text": text, "svg": str(svg) if svg else None})
        return
    say(f"{game} after seq {view.seq} ({view.kind})")
    say(text)
    if svg is not None:
        say(f"wrote {svg}")


@command
def report(game: Annotated[str, typer.Option(help="Game stream id.")],
           out: Annotated[Path, typer.Option(help="HTML file to write.")],
           ledger: LedgerOpt = DEFAULT_LEDGER, force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Write a game's arbitration report: result, findings, timeline, time chart, boards, proofs (HTML)."""
    record = report_mod.write_report(ledger, game, out, force)
    findings = sum(len(s.findings) for s in record.steps)
    if json:
        emit_json({"game": game, "out": str(out), "events": len(record.steps), "findings": findings, "proof": record.proof_ok})
    else:
        say(f"wrote {out}: {len(record.steps)} events, {findings} findings; {record.proof_ok}")


@command
def perft(game: GameArg, depth: Annotated[int, typer.Option(min=1, help="Depth in plies.")],
          moves: Annotated[str | None, typer.Option(help='Checkers: moves to play first, "3>14,115>102".')] = None,
          position: Annotated[Path | None, typer.Option(help="Junqi: position file (layouts).")] = None,
          json: JsonOpt = False) -> None:
    """Count move endpoints to a depth (perft); the count is the last number printed."""
    counts = run_mod.perft(game, depth, moves if game == "checkers" else (str(position) if position else None))
    if json:
        emit_json({"counts": counts, "count": counts[-1]})
        return
    for d, n in enumerate(counts, start=1):
        say(f"depth {d}: {n}")
    say(str(counts[-1]))


@command
def hu(hand: Annotated[str | None, typer.Option(help="Cards: 一…十, 壹…拾 or x1…x10, d1…d10, comma-separated.")] = None,
       melds: Annotated[str | None, typer.Option(help='Open melds, e.g. "跑一,提壹".')] = None,
       win: Annotated[str | None, typer.Option(help="The winning card.")] = None,
       source: Annotated[str | None, typer.Option(help="self or other.")] = None,
       profile: Annotated[str, typer.Option(help="Rule profile name.")] = "default",
       min_huxi: Annotated[int | None, typer.Option(help="The profile's min_huxi (§7.3).")] = None,
       set_: Annotated[list[str] | None, typer.Option("--set", help="Any profile field, FIELD=VALUE (repeatable).")] = None,
       special: Annotated[str | None, typer.Option(help="Circumstances of the win: 天胡,地胡,海胡,听胡.")] = None,
       game: Annotated[str | None, typer.Option(help="Instead of --hand: a recorded game's stream id.")] = None,
       at: Annotated[int | None, typer.Option(help="With --game: the step (seq) to judge.")] = None,
       seat: Annotated[int | None, typer.Option(help="With --game: the seat (default: the one to act).")] = None,
       ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False) -> None:
    """Paohuzi arbiter's tool: does this hand win, with which decomposition, 胡息, 名堂 and score (exit 2 if not)."""
    from replay.paohuzi import game_hu_report, hu_report

    if game is not None:
        report = game_hu_report(run_mod.position(read_events(ledger), game, at).state, seat, set_ or [], min_huxi)
    elif hand is not None:
        report = hu_report(hand, melds, win, source, profile, set_ or [], special or "", min_huxi)
    else:
        raise typer.BadParameter("give --hand CARDS or --game ID")
    if json:
        emit_json({k: report[k] for k in ("hu", "huxi", "red", "big", "small", "mingtang", "score", "reason")})
    else:
        say(("胡 (wins)" if report["hu"] else "no hu") + f": {report['reason']}")
        if report["decomposition"]:
            say("decomposition: " + " | ".join(report["decomposition"]))
        say(f"胡息 {report['huxi']}; red {report['red']}, big {report['big']}, small {report['small']}")
        say(f"名堂: {', '.join(report['mingtang']) or 'none'}; score {report['score']}")
    if not report["hu"]:
        raise ExitCode(2)


@command
def demo(ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False) -> None:
    """The main job: simulate a tournament of each game into a fresh ledger, verify, replay, audit, show standings."""
    from audit import demo as demo_mod

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


def main() -> None:
    """Runs the command line."""
    app()
