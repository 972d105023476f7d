"""Commands on games: simulate them, replay them, show a position, write a report, count moves, judge a Paohuzi hand."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer

from audit.cli.base import (
    DEFAULT_LEDGER,
    EXIT_NO_HU,
    ExitCode,
    ForceOpt,
    FormatOpt,
    GameArg,
    JsonOpt,
    LedgerOpt,
    LogKeyOpt,
    QuietOpt,
    UsageError,
    command,
    key_option,
    say_trust,
    trust_document,
)
from audit.cli.results import Counted, HuJudged, PageWritten, Planted, Replayed, ReportWritten, SeatShown, Shown, Simulated, SimulatedLive, Trust
from audit.presentation.output import Format, chosen, emit, progress_bar, progress_steps
from audit.simulator.faults import FAULTS

if TYPE_CHECKING:
    from audit.simulator.tournament import TournamentPlan


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
             admin_key: Annotated[Path | None, key_option(help="Live: the log's private key, to register the tables' "
                                                                 "sources.")] = None,
             per_batch: Annotated[int, typer.Option(min=1, help="Live: events per signed batch.")] = 1,
             tag: Annotated[str | None, typer.Option(help="Live: the run's tag (its streams `TAG/t<n>`); with --keys, a run "
                                                          "started before resumes where it stopped.")] = None,
             keys: Annotated[Path | None, typer.Option(help="Live: the directory the tables' keys are kept in (made if new), "
                                                             "so that the run can be resumed.")] = None,
             retry_for: Annotated[float, typer.Option(min=0, help="Live: seconds a batch is sent again while the service cannot be "
                                                                  "reached (a restart), before the table stops.")] = 120.0,
             json: JsonOpt = False) -> None:
    """Record bot games or a whole tournament through the recorder (a fresh ledger is created if needed),
    or with --url play --tables games at once against a running service."""
    if url is not None:
        _simulate_live(url, game, tables, seed, admin_key, per_batch, inject, json, (tag, keys, retry_for))
        return
    import ledger as ledger_api
    from audit.query.session import movement_ranking
    from audit.simulator import simulate as simulate_mod
    from audit.simulator.tournament import TournamentPlan, simulate_tournament

    plan = TournamentPlan(game, players, rounds, games_per_round, seed, group_tables, inject, profile, tuple(set_ or ()))
    _check_simulation(plan, tournament, boards, tables)  # every option before the disk is touched
    if not (ledger / "ledger.json").exists():
        ledger_api.init(ledger)
    total = plan.expected_games() if tournament else (boards or games) * (tables if boards else 1)
    try:
        with progress_bar(f"simulating {game}", total, quiet=json) as advance:
            if tournament:
                result = simulate_tournament(ledger, plan, movement_ranking, advance)
            elif boards:
                result = simulate_mod.simulate_boards(ledger, boards, tables, seed, advance)
            else:
                result = simulate_mod.simulate_games(ledger, game, games, seed, advance)
    except simulate_mod.SimulationRefused as exc:
        raise typer.BadParameter(str(exc), param_hint="--seed or --ledger") from None
    planted = result.planted
    emit(Simulated(games=result.games, events=result.events, size=result.size, tournament=result.tournament,
                   planted=None if planted is None else
                   Planted(kind=planted.kind, stream=planted.stream, seq=planted.seq, entry=planted.entry))
         .told(game=game, planted_said=planted.describe() if planted is not None else None), chosen(json))


def _check_simulation(plan: TournamentPlan, tournament: bool, boards: int | None, tables: int) -> None:
    """Refuses options that do not fit together, before anything is written.

    :raises typer.BadParameter: naming the option.
    """
    from replay.registry import GAMES

    if plan.game not in GAMES:
        raise typer.BadParameter(f"unknown game {plan.game!r}; expected one of {', '.join(GAMES)}", param_hint="GAME")
    if boards is not None and (plan.game != "paohuzi" or tournament):
        raise typer.BadParameter("duplicate boards are simulated for Paohuzi single games only (simulate paohuzi --boards B "
                                 "--tables T); a tournament plays its boards itself", param_hint="--boards")
    if tables != 1 and boards is None:
        raise typer.BadParameter("--tables goes with --boards (Paohuzi duplicate boards)", param_hint="--tables")
    if not tournament and (plan.settings or plan.profile_name != "default"):
        raise typer.BadParameter("--profile and --set are the rules of a simulated tournament: add --tournament", param_hint="--profile/--set")
    if plan.inject is not None and not tournament:
        raise typer.BadParameter("a fault is planted in a simulated tournament: add --tournament", param_hint="--inject")
    if tournament:
        try:
            plan.check()
            plan.profile()
            plan.rules()
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None


def _simulate_live(url: str, game: str, tables: int, seed: int, admin_key: Path | None, per_batch: int, inject: str | None,
                   json: bool, resume: tuple[str | None, Path | None, float]) -> None:
    from audit.simulator.live import simulate_live

    if admin_key is None:
        raise typer.BadParameter("with --url, give the log's private key (the ledger's signer.key) to register the tables",
                                 param_hint="--admin-key")
    with progress_bar(f"{tables} live {game} tables", 0, quiet=json) as advance:  # a refusal: exit 1 (base.exit_code_of)
        result = simulate_live(url, game, tables, seed, admin_key, None, per_batch, inject, advance, *resume)
    emit(msgspec.convert(result, SimulatedLive), chosen(json))


@command
def replay(ledger: LedgerOpt = DEFAULT_LEDGER,
           game: Annotated[str | None, typer.Option(help="Replay only this game stream.")] = None,
           key: LogKeyOpt = None, fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """Re-derive every game from the rules and list the findings (exit 1 when there are any)."""
    from audit.presentation.render import finding_rows, finding_said
    from audit.query.findings import finding_record
    from replay import run as run_mod
    from schemas.common import GameStarted

    if game is None:  # game by game as the log is read, the whole log checked against the signed root
        with progress_bar("replaying games", 0, quiet=quiet) as advance:
            summary, trust = _replay_streamed(ledger, key, advance)
    else:
        events, trust = _signed_events(ledger, game, key)
        total = sum(1 for e in events if isinstance(e, GameStarted))
        with progress_bar("replaying games", total, quiet=quiet) as advance:
            summary = run_mod.summarise(events, game, on_game=advance, rulings=_rulings(ledger).of_stream)
    if game is not None and summary.games == 0:
        raise UsageError(f"no game stream {game!r} in {ledger}")
    replayed = Replayed(games=summary.games, events=summary.events, moves=summary.moves,
                        findings=[finding_record(f) for f in summary.findings], seconds=round(summary.seconds, 3), trust=trust)
    if fmt is Format.table:
        emit(replayed.told(exact_seconds=summary.seconds, said=[finding_said(f) for f in summary.findings]), fmt)
    else:
        emit(finding_rows(summary.findings), fmt, document=replayed)
    if fmt is not Format.json:
        say_trust(trust, table=fmt is Format.table)
    if summary.findings:
        raise ExitCode(1)


def _replay_streamed(ledger: Path, key: Path | None, advance: Any) -> tuple[Any, Trust]:
    """Replays every game of the signed log, each folded once its last entry is read and then dropped
    (issue 32.1), and returns the totals with what the output says of the check against the signed tree.

    :raises LedgerCorrupt: when what was read does not match the signed root (exit 1).
    """
    import ledger as ledger_api
    from audit.query.arbitration import LogRulings
    from replay import run as run_mod
    from schemas import decode_stored

    with ledger_api.pinned_key(key):
        reader = ledger_api.LogReader(ledger)
        signed, streams = reader.checked_streams()
        summary = run_mod.summarise_streams((decode_stored(items) for _, items in streams), on_game=advance,
                                            rulings=LogRulings(reader, signed.size).of_stream)
        return summary, trust_document(ledger, signed)


def _signed_events(ledger: Path, game: str | None, key: Path | None) -> tuple[list[Any], Trust]:
    """Returns the events a reader shows, checked against the signed tree under the log's key, and
    what the output says of that check.

    :raises LedgerCorrupt: when what was read does not match the signed root (exit 1).
    """
    import ledger as ledger_api

    with ledger_api.pinned_key(key):
        events, signed = ledger_api.LogReader(ledger).checked_events(game)
        return events, trust_document(ledger, signed)


def _rulings(ledger: Path) -> Any:
    """The ruling checks of a ledger's games: a ruling counts only when signed (replay/fold.py)."""
    import ledger as ledger_api
    from audit.query.arbitration import LogRulings

    return LogRulings(ledger_api.LogReader(ledger))


@command
def show(game: Annotated[str, typer.Option(help="Game stream id.")], ledger: LedgerOpt = DEFAULT_LEDGER,
         at: Annotated[int | None, typer.Option(help="Show the position after this seq (default: the end).")] = None,
         seat: Annotated[int | None, typer.Option(help="Show only what this seat can see.")] = None,
         svg: Annotated[Path | None, typer.Option(help="Also write the position as SVG.")] = None,
         key: LogKeyOpt = None, force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Show a game's position at any step, as text (and SVG), with the seats and their players."""
    from audit.presentation import report as report_mod
    from audit.presentation.terms import in_words
    from audit.query.findings import finding_record
    from ledger import check_output, write_output
    from replay import run as run_mod
    from replay.protocol import seat_label
    from replay.registry import SEATS

    if svg is not None:
        check_output(svg, force)
    events, trust = _signed_events(ledger, game, key)
    view = run_mod.position(events, game, at, rulings=_rulings(ledger).of_stream(game))
    count = SEATS[view.engine.name]
    if seat is not None and not 0 <= seat < count:
        raise typer.BadParameter(f"{game} is a {view.engine.name} game: its seats are 0–{count - 1}, not {seat}", param_hint="--seat")
    extra = report_mod.at_step([e for e in events if e.stream == game], view.seq) if at is not None else None  # a refusal, a claim
    state = extra.claimed if extra is not None and extra.claimed is not None else view.state
    text = view.engine.render_board(state, seat)
    seats = [(h.seat, seat_label(view.engine.name, h.seat, h.holder)) for h in events[0].seats]  # type: ignore[attr-defined]
    if svg is not None:
        picture = (extra.svg(view.engine, view.state, view.players) if extra is not None and seat is None
                   else view.engine.render_svg(state, seat, players=view.players))
        write_output(svg, picture.encode(), force)
    halt = [finding_record(f) for f in extra.refusal.findings if f.severity == "error"] if extra and extra.refusal else []
    claimed = extra is not None and extra.claimed is not None
    emit(Shown(game=game, seq=view.seq, kind=view.kind, text=text, svg=str(svg) if svg else None,
               seats=[SeatShown(seat=n, label=label) for n, label in seats], trust=trust,
               refused=[] if claimed else halt, as_claimed=claimed)
         .told(board=in_words(text.rstrip("\n")), extra=extra.text(view.engine.name) if extra is not None else None), chosen(json))
    if not json:
        say_trust(trust)


@command
def report(out: Annotated[Path, typer.Option(help="HTML file to write.")],
           game: Annotated[str | None, typer.Option(help="Game stream id: its arbitration report.")] = None,
           tournament: Annotated[str | None, typer.Option(help="Tournament stream id: its page, each game's report beside it.")] = None,
           ledger: LedgerOpt = DEFAULT_LEDGER, key: LogKeyOpt = None, force: ForceOpt = False, json: JsonOpt = False,
           quiet: QuietOpt = False) -> None:
    """Write a game's arbitration report (findings at their step, appeals, time chart, boards, proofs) or a tournament's page (HTML)."""
    import ledger as ledger_api
    from audit.presentation import report as report_mod
    from audit.presentation import tournament_report

    if (game is None) == (tournament is None):
        raise typer.BadParameter("give --game ID or --tournament ID")
    with ledger_api.pinned_key(key):
        if tournament is not None:
            with progress_steps(quiet=quiet or json) as step:  # the projection is checked against the signed root
                page = tournament_report.write_tournament_report(ledger, tournament, out, force, step)
            trust = trust_document(ledger, ledger_api.LogReader(ledger).signed())
        else:
            assert game is not None
            _, signed = ledger_api.LogReader(ledger).proved_stream(game)  # first: an edited signed range is refused, never reported
            with progress_bar(f"writing the report of {game}", report_mod.REPORT_STAGES, quiet=quiet or json) as advance:
                record = report_mod.write_report(ledger, game, out, force, advance)
            trust = trust_document(ledger, signed)
    if not json:
        say_trust(trust)
    if tournament is not None:
        emit(PageWritten(tournament=tournament, out=str(out), players=len(page.standings.rows), games=len(page.games),
                         reports=[str(p) for p in page.reports.values()], trust=trust), chosen(json))
        return
    findings = sum(len(s.findings) for s in record.steps)
    assert game is not None
    emit(ReportWritten(game=game, out=str(out), events=len(record.steps), findings=findings, proof=record.proof_ok,
                       trust=trust), chosen(json))


class PerftGame(str, Enum):
    """The games with a perft: perfect-information positions. Paohuzi has none: its deal is chance
    and its hands are hidden, so a count of move sequences would count nothing a player can reach."""

    checkers = "checkers"
    junqi = "junqi"


@command
def perft(game: Annotated[PerftGame, typer.Argument(help="checkers or junqi.")],
          depth: Annotated[int, typer.Option(min=1, help="Depth in plies.")],
          moves: Annotated[str | None, typer.Option(help='Checkers: moves to play first, "3>14,115>102".')] = None,
          position: Annotated[Path | None, typer.Option(help="Junqi: position file (layouts).")] = None,
          divide: Annotated[bool, typer.Option("--divide", help="Also count the sequences below each first move.")] = False,
          json: JsonOpt = False) -> None:
    """Count move endpoints to a depth (perft); the count is the last number printed."""
    from replay import run as run_mod

    if game is PerftGame.junqi and moves is not None:
        raise typer.BadParameter("Junqi positions come from a position file: use --position FILE", param_hint="--moves")
    if game is PerftGame.checkers and position is not None:
        raise typer.BadParameter("checkers positions come from a move list: use --moves", param_hint="--position")
    setup = moves if game is PerftGame.checkers else (str(position) if position else None)
    counts = run_mod.perft(game.value, depth, setup)
    split = run_mod.perft_divide(game.value, depth, setup) if divide else None
    emit(Counted(counts=counts, count=counts[-1], divide=dict(split) if split is not None else None), chosen(json))


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
       ledger: LedgerOpt = DEFAULT_LEDGER, key: LogKeyOpt = None, json: JsonOpt = False) -> None:
    """Paohuzi arbiter's tool: does this hand win, with which decomposition, 胡息, 名堂 and score (exit 3 if not)."""
    from replay import run as run_mod
    from replay.paohuzi import game_hu_report, hu_report
    from replay.protocol import InvalidActionError

    trust = None
    if game is not None:
        events, trust = _signed_events(ledger, game, key)  # the game's entries, proved against the signed tree
        report = game_hu_report(run_mod.position(events, game, at, _rulings(ledger).of_stream(game)).state, seat, set_ or [], min_huxi)
    elif hand is not None:
        try:
            report = hu_report(hand, melds, win, source, profile, set_ or [], special or "", min_huxi)
        except InvalidActionError as exc:  # an option's value is malformed: misuse (exit 2), not a finding
            raise UsageError(f"--hand/--melds/--win/--source/--special: {exc}") from None
    else:
        raise typer.BadParameter("give --hand CARDS or --game ID")
    emit(HuJudged(hu=report["hu"], huxi=report["huxi"], red=report["red"], big=report["big"], small=report["small"],
                  mingtang=report["mingtang"], score=report["score"], reason=report["reason"], trust=trust)
         .told(decomposition=report["decomposition"]), chosen(json))
    if not json and trust is not None:
        say_trust(trust)
    if not report["hu"]:
        raise ExitCode(EXIT_NO_HU)
