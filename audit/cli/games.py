"""Commands on games: simulate them, replay them, show a position, write a report, count moves, judge a Paohuzi hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from audit.cli.base import DEFAULT_LEDGER, ExitCode, ForceOpt, GameArg, JsonOpt, LedgerOpt, command
from audit.faults import FAULTS
from audit.output import emit_json, fail, progress_bar, say


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
             url: Annotated[str | None, typer.Option(help="Live: drive a running service with --tables tables at once, each "
                                                         "its own source (see `matchledger serve`).")] = None,
             admin_key: Annotated[Path | None, typer.Option(help="Live: the log's private key, to register the tables' "
                                                                 "sources.")] = None,
             per_batch: Annotated[int, typer.Option(min=1, help="Live: events per signed batch.")] = 1,
             json: JsonOpt = False) -> None:
    """Record bot games or a whole tournament through the recorder (a fresh ledger is created if needed),
    or with --url play --tables games at once against a running service."""
    if url is not None:
        _simulate_live(url, game, tables, seed, admin_key, per_batch, inject, json)
        return
    import ledger as ledger_api
    from audit import simulate as simulate_mod
    from audit.session import movement_ranking
    from audit.tournament_sim import TournamentPlan, simulate_tournament

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


def _simulate_live(url: str, game: str, tables: int, seed: int, admin_key: Path | None, per_batch: int, inject: str | None,
                   json: bool) -> None:
    from audit.client import SendError
    from audit.live_sim import simulate_live

    if admin_key is None:
        raise typer.BadParameter("with --url, give the log's private key (the ledger's signer.key) to register the tables",
                                 param_hint="--admin-key")
    try:
        with progress_bar(f"{tables} live {game} tables", 0, quiet=json) as advance:
            result = simulate_live(url, game, tables, seed, admin_key, None, per_batch, inject, advance)
    except SendError as exc:
        fail(f"refused: {exc}")
        raise ExitCode(1) from None
    if json:
        emit_json(result)
    else:
        say(f"{tables} tables ({result['tag']}/t1 …) sent {result['events']} events, every receipt checked; tree size {result['size']}")


@command
def replay(ledger: LedgerOpt = DEFAULT_LEDGER,
           game: Annotated[str | None, typer.Option(help="Replay only this game stream.")] = None,
           json: JsonOpt = False) -> None:
    """Re-derive every game from the rules and list the findings (exit 1 when there are any)."""
    from ledger import read_events, read_stream_events
    from replay import run as run_mod

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
    from ledger import check_output, read_stream_events, write_output
    from replay import run as run_mod

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
    from audit import report as report_mod

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
    from replay import run as run_mod

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
    from ledger import read_events
    from replay import run as run_mod
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
