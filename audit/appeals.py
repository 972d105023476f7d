"""What the arbitration committee and the referees write to the log (Junqi 第十三条 三, 第十四条,
第十八–十九条; checkers 第十二条): arbiter keys, appeals, decisions and rulings, one event each, recorded
through the recorder; and the list of appeals with where each stands."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.arbitration import sign
from ledger import AppendResult, Signer, Verifier, read_stream_events, record
from schemas import encode
from schemas.arbitration import ARBITER_STREAM, AppealDecided, AppealFiled, ArbiterRegistered, Ref, Vote
from schemas.common import GameStarted, Ruling, TournamentOpened
from schemas.envelope import Event


class ArbitrationError(ValueError):
    """An arbitration command names something the log does not hold, or lacks what its kind needs."""


@dataclass
class Written:
    """One event written: the event and what the recorder said."""

    event: Event
    result: AppendResult


def parse_time(text: str | None) -> int:
    """Returns a time as ms since the epoch: now when None, else ms digits or an ISO 8601 time (UTC
    unless it names its offset).

    :raises ArbitrationError: when it is neither.
    """
    if text is None:
        return time.time_ns() // 1_000_000
    if text.isdigit():
        return int(text)
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ArbitrationError(f"time {text!r} is neither milliseconds since the epoch nor ISO 8601 (2026-12-01T12:00:00+08:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


def register_arbiter(root: Path, public_key: Path, role: str, name: str | None, at: str | None) -> Written:
    """Registers an arbiter's verifier key (a `keygen` .pub file) under a role, in the stream `log.arbiters`."""
    verifier = Verifier.load(public_key)
    return _write(root, ARBITER_STREAM, ArbiterRegistered, at, own=True, verifier=str(verifier), role=role, name=name)


def file_appeal(root: Path, tournament: str, game: str, player: str, grounds: str, ruling: int | None, at: str | None) -> Written:
    """Records a player's appeal on a game of the tournament (or a ruling in it) in the tournament's stream.

    :raises ArbitrationError: when the game is not the tournament's, the player did not play it, or the ruling is not in it.
    """
    _tournament(root, tournament)
    events = read_stream_events(root, game)
    start = events[0] if events else None
    if not isinstance(start, GameStarted) or start.tournament != tournament:
        raise ArbitrationError(f"{game!r} is not a game of {tournament!r}")
    if player not in {s.holder for s in start.seats}:
        raise ArbitrationError(f"player {player!r} did not play {game} (seats: {', '.join(s.holder for s in start.seats)})")
    if ruling is not None and not (ruling < len(events) and isinstance(events[ruling], Ruling)):
        raise ArbitrationError(f"seq {ruling} of {game} is not a game.ruling")
    return _write(root, tournament, AppealFiled, at, player=player, game=game, ruling=ruling, grounds=grounds)


def decide_appeal(root: Path, tournament: str, appeal: int, decision: str, votes: list[str], text: str, key: Path,
                  at: str | None) -> Written:
    """Records the committee's decision on an appeal, with every member's vote (`member=uphold|reject|void`),
    signed with a committee member's key.

    :raises ArbitrationError: when the appeal is not in the tournament's stream or a vote is malformed.
    """
    events = _tournament(root, tournament)
    if not (appeal < len(events) and isinstance(events[appeal], AppealFiled)):
        raise ArbitrationError(f"seq {appeal} of {tournament} is not an appeal.filed")
    return _write(root, tournament, AppealDecided, at, signer=Signer.load(key), appeal=appeal, decision=decision,
                  votes=[_vote(v) for v in votes], text=text)


def rule(root: Path, stream: str, kind: str, corrects: int, text: str, key: Path, at: str | None, **fields: Any) -> Written:
    """Records a referee's ruling of a kind in a game's stream (a withdrawal in the tournament's),
    signed with the referee's key. `appeal` may name the decision it carries out as `STREAM#SEQ`.

    :raises ArbitrationError: when the stream or the corrected event does not exist, or the kind lacks what it needs.
    """
    events = read_stream_events(root, stream)
    if not events:
        raise ArbitrationError(f"no stream {stream!r} in the ledger")
    if kind == "withdrawal" and not isinstance(events[0], TournamentOpened):
        raise ArbitrationError("a withdrawal is ruled in the tournament's stream (give --stream TOURNAMENT)")
    if kind != "withdrawal" and not isinstance(events[0], GameStarted):
        raise ArbitrationError(f"a {kind} ruling is ruled in a game's stream; {stream!r} is not a game")
    if kind == "withdrawal" and (fields.get("player") is None or fields.get("from_round") is None):
        raise ArbitrationError("a withdrawal names the player and the first round it leaves unplayed (--player, --from-round)")
    if corrects >= len(events):
        raise ArbitrationError(f"{stream} has events 0–{len(events) - 1}; --corrects {corrects} names none")
    appeal = fields.pop("appeal", None)
    if appeal is not None:
        fields["appeal"] = _ref(appeal)
    return _write(root, stream, Ruling, at, signer=Signer.load(key), ruling=kind, corrects=corrects, text=text, **fields)


def _tournament(root: Path, tournament: str) -> list[Event]:
    events = read_stream_events(root, tournament)
    if not events or not isinstance(events[0], TournamentOpened):
        raise ArbitrationError(f"no tournament {tournament!r} in the ledger")
    return events


def _vote(text: str) -> Vote:
    member, sep, vote = text.partition("=")
    if not sep or vote not in ("uphold", "reject", "void"):
        raise ArbitrationError(f"vote {text!r}: give MEMBER=uphold, MEMBER=reject or MEMBER=void")
    return Vote(member=member, vote=vote)  # type: ignore[arg-type]


def _ref(text: str) -> Ref:
    stream, sep, seq = text.rpartition("#")
    if not sep or not seq.isdigit():
        raise ArbitrationError(f"--appeal {text!r}: give the decision as STREAM#SEQ")
    return Ref(stream=stream, seq=int(seq))


def _write(root: Path, stream: str, cls: type[Event], at: str | None, signer: Signer | None = None, own: bool = False,
           **fields: Any) -> Written:
    """Builds the stream's next event, signs it when a key is given, and records it (`own`: the
    operator's registration of an arbiter, one of the log's own records)."""
    event = cls(stream=stream, seq=len(read_stream_events(root, stream)), ts=parse_time(at), **fields)
    if signer is not None:
        event = sign(event, signer)  # type: ignore[arg-type]
    return Written(event, record(root, [encode(event)], own=own))


def list_appeals(root: Path, tournament: str | None, open_only: bool,
                 progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Returns every appeal (of a tournament) with its window, deadline, decision and correction
    (telling `progress` of each game the projection replays)."""
    from audit.session import open_session

    rows = open_session(root, progress, kept=True).db.run("appeal_list", tournament=tournament)
    return [r for r in rows if r["open"] or not open_only]
