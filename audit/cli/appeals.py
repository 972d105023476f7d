"""Commands for the arbitration committee and the referees: register an arbiter's key, file an appeal,
decide it, rule (each writes one signed event through the recorder), and list the appeals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from audit.cli.base import (
    DEFAULT_LEDGER,
    FormatOpt,
    JsonOpt,
    LedgerOpt,
    LogKeyOpt,
    QuietOpt,
    app,
    command,
    epilog,
    key_option,
    say_trust,
    subcommand,
    trust_document,
)
from audit.cli.results import AppealsListed, ArbitrationRecorded
from audit.presentation.output import Format, chosen, emit, progress_bar
from schemas.arbitration import DECISIONS

appeal_app = typer.Typer(name="appeal", no_args_is_help=True,
                         help="Write the arbitration procedure to the log: arbiters, appeals, decisions, rulings.",
                         epilog=epilog("appeal"))
app.add_typer(appeal_app, name="appeal")

ROLES = ("referee", "chief_referee", "committee")
KINDS = ("result_override", "authorised_skip", "penalty", "forfeit", "withdrawal", "void_game", "replay_from", "score_correction")
AtOpt = Annotated[str | None, typer.Option("--at", help="When it happened: ms since the epoch or ISO 8601 (now by default).")]
KeyOpt = Annotated[Path, key_option("--key", help="The arbiter's private key (matchledger keygen), registered with `appeal register`.")]
AnywayOpt = Annotated[bool, typer.Option("--record-anyway", help="Record it even though the audit will reject it (as evidence); "
                                                                "without it a check that fails writes nothing (exit 1).")]


def _choice(value: str, allowed: tuple[str, ...], option: str) -> str:
    """:raises typer.BadParameter: (exit 2) when the value is not one of `allowed`."""
    if value not in allowed:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=option)
    return value


def _numbers(text: str | None, option: str, cast: type = float) -> list[Any] | None:
    """:raises typer.BadParameter: when the comma-separated list holds something else than numbers."""
    if text is None:
        return None
    try:
        return [cast(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of numbers", param_hint=option) from None


def _report(written: Any, json: bool) -> None:
    event = written.event
    emit(ArbitrationRecorded(kind=event.kind, stream=event.stream, seq=event.seq, ts=event.ts, size=written.result.size,
                             arbiter=getattr(event, "arbiter", None)), chosen(json))


@subcommand(appeal_app)
def register(public_key: Annotated[Path, key_option("--pub", help="The arbiter's public key file (NAME.pub from keygen).")],
             role: Annotated[str, typer.Option(help="referee, chief_referee (裁判长) or committee (仲裁委员会).")],
             name: Annotated[str | None, typer.Option(help="The arbiter's name.")] = None,
             ledger: LedgerOpt = DEFAULT_LEDGER, at: AtOpt = None, json: JsonOpt = False) -> None:
    """Register an arbiter's key with its role (stream log.arbiters): rulings and decisions must be signed by one."""
    from audit.query.appeals import register_arbiter

    _report(register_arbiter(ledger, public_key, _choice(role, ROLES, "--role"), name, at), json)


@subcommand(appeal_app)
def file(tournament: Annotated[str, typer.Option(help="The tournament stream (its committee hears the appeal).")],
         game: Annotated[str, typer.Option(help="The game appealed.")],
         player: Annotated[str, typer.Option(help="The player who appeals.")],
         grounds: Annotated[str, typer.Option(help="The written grounds (申诉材料).")],
         ruling: Annotated[int | None, typer.Option(help="The seq of the game.ruling appealed against, if any.")] = None,
         ledger: LedgerOpt = DEFAULT_LEDGER, at: AtOpt = None, record_anyway: AnywayOpt = False, json: JsonOpt = False) -> None:
    """File a player's appeal on a game (第十八条): refused when filed before the game ended or after its appeal window."""
    from audit.query.appeals import file_appeal

    _report(file_appeal(ledger, tournament, game, player, grounds, ruling, at, record_anyway), json)


@subcommand(appeal_app)
def decide(tournament: Annotated[str, typer.Option(help="The tournament stream holding the appeal.")],
           appeal: Annotated[int, typer.Option(help="The appeal decided: the seq of its appeal.filed in the tournament's stream.")],
           decision: Annotated[str, typer.Option(help="upheld, rejected or void_late.")],
           vote: Annotated[list[str], typer.Option(metavar="MEMBER=VOTE", help="One per committee member (repeatable): MEMBER is the "
                                                   "member's name as the committee lists it, VOTE uphold, reject or void.")],
           text: Annotated[str, typer.Option(help="The decision's text.")],
           key: KeyOpt, ledger: LedgerOpt = DEFAULT_LEDGER, at: AtOpt = None, record_anyway: AnywayOpt = False,
           json: JsonOpt = False) -> None:
    """Record the committee's decision with every vote (第十九条), signed by a committee member: refused
    when decided already, without a valid majority of an odd committee, or signed by another key."""
    from audit.query.appeals import decide_appeal

    _report(decide_appeal(ledger, tournament, appeal, _choice(decision, tuple(DECISIONS), "--decision"), vote, text, key, at, record_anyway),
            json)


@subcommand(appeal_app)
def rule(stream: Annotated[str, typer.Option(help="The game ruled on (the tournament for a withdrawal).")],
         kind: Annotated[str, typer.Option(help=", ".join(KINDS) + ".")],
         corrects: Annotated[int, typer.Option(help="The seq of the event of that stream the ruling is about.")],
         text: Annotated[str, typer.Option(help="The ruling's text.")],
         key: KeyOpt,
         seat: Annotated[int | None, typer.Option(min=0, max=3, help="The seat concerned (forfeit: the seat that forfeits).")] = None,
         winners: Annotated[str | None, typer.Option(help="Winning seats, e.g. 0,2.")] = None,
         points: Annotated[str | None, typer.Option(help="Points of every seat, e.g. 1,0 (penalty: points added).")] = None,
         termination: Annotated[str | None, typer.Option(help="The termination the ruling gives.")] = None,
         carries_out: Annotated[str | None, typer.Option(help="The committee's decision it carries out, STREAM#SEQ of the "
                                                         "appeal.decided.")] = None,
         player: Annotated[str | None, typer.Option(help="Withdrawal: the player.")] = None,
         from_round: Annotated[int | None, typer.Option(min=1, help="Withdrawal: the first round left unplayed.")] = None,
         from_seq: Annotated[int | None, typer.Option(min=0, help="replay_from: the event after which the game is replayed.")] = None,
         article: Annotated[str | None, typer.Option(help="The rule book's article.")] = None,
         ledger: LedgerOpt = DEFAULT_LEDGER, at: AtOpt = None, record_anyway: AnywayOpt = False, json: JsonOpt = False) -> None:
    """Record a referee's ruling of a kind (第十四条), signed by the referee: it changes the result as its kind
    says; refused when the key is no referee's, it cannot apply to the game, or it overrides an ended game
    on no upheld appeal."""
    from audit.query.appeals import rule as rule_fn

    fields = {"seat": seat, "winners": _numbers(winners, "--winners", int), "points": _numbers(points, "--points"),
              "termination": termination, "carries_out": carries_out, "player": player, "from_round": from_round,
              "from_seq": from_seq, "article": article}
    _report(rule_fn(ledger, stream, _choice(kind, KINDS, "--kind"), corrects, text, key, at, record_anyway, **fields), json)


@command
def appeals(ledger: LedgerOpt = DEFAULT_LEDGER,
            tournament: Annotated[str | None, typer.Option(help="One tournament only.")] = None,
            open_: Annotated[bool, typer.Option("--open", help="Only the appeals awaiting a decision or, upheld, a correction.")] = False,
            key: LogKeyOpt = None, fmt: FormatOpt = Format.table, quiet: QuietOpt = False) -> None:
    """List the appeals: game, filing time and window, deadline, decision and votes, the correction."""
    from audit.presentation.render import appeal_rows
    from audit.query.appeals import list_appeals
    from ledger import LogReader, pinned_key

    with pinned_key(key), progress_bar("replaying games", 0, quiet=quiet) as advance:  # the bar's total: the games
        rows = list_appeals(ledger, tournament, open_, advance)  # the projection is checked against the signed root
        trust = trust_document(ledger, LogReader(ledger).signed())
    emit(appeal_rows(rows), fmt, document=AppealsListed(appeals=rows, trust=trust))
    if fmt is not Format.json:
        say_trust(trust, table=fmt is Format.table)
