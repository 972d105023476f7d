"""What the arbitration committee and the referees write to the log (Junqi 第十三条 三, 第十四条,
第十八–十九条; checkers 第十二条): arbiter keys, appeals, decisions and rulings, one event each, recorded
through the recorder; and the list of appeals with where each stands."""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from audit.query.arbitration import SIGNING_ROLES, LogRulings, registered_keys, sign
from ledger import AppendResult, LogReader, Signer, Verifier, record
from replay.run import replay_game
from schemas import decode, encode
from schemas.arbitration import ARBITER_STREAM, AppealDecided, AppealFiled, ArbiterRegistered, Ref, Vote
from schemas.common import GameEnded, GameStarted, Ruling, TournamentOpened
from schemas.envelope import Event

E = TypeVar("E", bound=Event)


class ArbitrationError(ValueError):
    """An arbitration command would write what the audit rejects, or lacks what its kind needs (exit 1);
    what the log does not hold is a plain ValueError (exit 2)."""


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
    """Registers an arbiter's verifier key (a `keygen` .pub file) under a role, in the stream `log.arbiters`.

    :raises ArbitrationError: when the key's name is registered already with another key (issue 28 point 3).
    """
    verifier = Verifier.load(public_key)
    taken = next((v for v, _ in registered_keys(list(LogReader(root).events(ARBITER_STREAM))).values()
                  if v.name == verifier.name and v.key_id != verifier.key_id), None)
    if taken is not None:
        raise ArbitrationError(f"密钥名 {verifier.name} 已登记另一密钥 key name {verifier.name} is registered already with key id "
                               f"{taken.key_id.hex()}; this key is {verifier.key_id.hex()}: make the new key under another name")
    return _write(root, ARBITER_STREAM, ArbiterRegistered, at, own=True, verifier=str(verifier), role=role, name=name)


def file_appeal(root: Path, tournament: str, game: str, player: str, grounds: str, ruling: int | None, at: str | None,
                record_anyway: bool = False) -> Written:
    """Records a player's appeal on a game of the tournament (or a ruling in it) in the tournament's stream.

    :raises ValueError: when the game is not the tournament's, the player did not play it, or the ruling is not in it.
    :raises ArbitrationError: when it is filed before the game ended or after its appeal window (unless `record_anyway`).
    """
    _tournament(root, tournament)
    events = list(LogReader(root).events(game))
    start = events[0] if events else None
    if not isinstance(start, GameStarted) or start.tournament != tournament:
        raise ValueError(f"{game!r} is not a game of {tournament!r}")
    if player not in {s.holder for s in start.seats}:
        raise ValueError(f"player {player!r} did not play {game} (seats: {', '.join(s.holder for s in start.seats)})")
    if ruling is not None and not (ruling < len(events) and isinstance(events[ruling], Ruling)):
        raise ValueError(f"seq {ruling} of {game} is not a game.ruling")
    filed = parse_time(at)
    _refuse(_filing_problems(root, game, filed), record_anyway)
    return _write(root, tournament, AppealFiled, str(filed), player=player, game=game, ruling=ruling, grounds=grounds)


def decide_appeal(root: Path, tournament: str, appeal: int, decision: str, votes: list[str], text: str, key: Path,
                  at: str | None, record_anyway: bool = False) -> Written:
    """Records the committee's decision on an appeal, with every member's vote (`member=uphold|reject|void`),
    signed with a committee member's key.

    :raises ValueError: when the appeal is not in the tournament's stream.
    :raises ArbitrationError: when a vote is malformed, or (unless `record_anyway`) the appeal is decided already
        (第十三条 三), the committee or its majority is not valid (第十九条 1), or the key is no committee member's.
    """
    events = _tournament(root, tournament)
    if not (appeal < len(events) and isinstance(events[appeal], AppealFiled)):
        raise ValueError(f"seq {appeal} of {tournament} is not an appeal.filed")
    cast = [_vote(v) for v in votes]
    signer = Signer.load(key)
    opened = events[0]
    assert isinstance(opened, TournamentOpened)
    problems = [*_decided_already(events, appeal), *_majority(cast, decision, opened.rules.arbitration.committee_min),
                *_signer_problems(root, signer, "appeal.decided")]
    _refuse(problems, record_anyway)
    return _write(root, tournament, AppealDecided, at, signer=signer, appeal=appeal, decision=decision, votes=cast, text=text)


def rule(root: Path, stream: str, kind: str, corrects: int, text: str, key: Path, at: str | None, record_anyway: bool = False,
         **fields: Any) -> Written:
    """Records a referee's ruling of a kind in a game's stream (a withdrawal in the tournament's),
    signed with the referee's key. `carries_out` may name the decision it carries out as `STREAM#SEQ`.

    :raises ValueError: when the stream or the corrected event does not exist.
    :raises ArbitrationError: when the kind lacks what it needs, or (unless `record_anyway`) the key is no
        referee's, the ruling cannot be applied to the game, or it changes an ended game's result on no
        upheld appeal of it (第十四条 (1)).
    """
    events = list(LogReader(root).events(stream))
    if not events:
        raise ValueError(f"no stream {stream!r} in the ledger")
    if kind == "withdrawal" and not isinstance(events[0], TournamentOpened):
        raise ArbitrationError("a withdrawal is ruled in the tournament's stream (give --stream TOURNAMENT)")
    if kind != "withdrawal" and not isinstance(events[0], GameStarted):
        raise ArbitrationError(f"a {kind} ruling is ruled in a game's stream; {stream!r} is not a game")
    if kind == "withdrawal" and (fields.get("player") is None or fields.get("from_round") is None):
        raise ArbitrationError("a withdrawal names the player and the first round it leaves unplayed (--player, --from-round)")
    if corrects >= len(events):
        raise ValueError(f"{stream} has events 0–{len(events) - 1}; --corrects {corrects} names none")
    carried = fields.pop("carries_out", None)
    if carried is not None:
        fields["appeal"] = _ref(carried)
    signer = Signer.load(key)
    event = sign(_checked(Ruling(stream=stream, seq=len(events), ts=parse_time(at), ruling=kind, corrects=corrects,  # type: ignore[arg-type]
                                 text=text, **fields)), signer)
    problems = _signer_problems(root, signer, "game.ruling")
    if isinstance(events[0], GameStarted):
        problems += _ruling_problems(root, events, event)  # type: ignore[arg-type]
    _refuse(problems, record_anyway)
    return Written(event, record(root, [encode(event)]))


def _refuse(problems: list[str], record_anyway: bool) -> None:
    """:raises ArbitrationError: naming every problem, unless the caller records the event anyway as evidence."""
    if problems and not record_anyway:
        raise ArbitrationError("拒绝记录, 未写入 refused, nothing written: " + "; ".join(problems)
                               + " (--record-anyway records it as evidence, and the audit will report it)")


def _filing_problems(root: Path, game: str, filed: int) -> list[str]:
    """Says when a filing time is before the game's end or after its appeal window (第十八条 2; checkers sheet 11)."""
    from audit.query.session import open_session

    rows = open_session(root, kept=True, body=False).db.run("game_window", game=game)
    if not rows or rows[0]["end_ts"] is None:
        return [f"对局未结束 {game} has not ended: nothing to appeal yet (第十八条)"]
    end, closes = rows[0]["end_ts"], rows[0]["window_end_ts"]
    if filed < end:
        return [f"申诉早于对局结束 filed at {filed}, before {game} ended at {end} (第十八条)"]
    if filed > closes:
        return [f"申诉已过期 filed {(filed - closes) // 60_000} min after the appeal window closed at {closes} "
                f"(第十八条 2 过期无效; checkers: 下轮开赛前)"]
    return []


def _decided_already(events: list[Event], appeal: int) -> list[str]:
    done = [e.seq for e in events if isinstance(e, AppealDecided) and e.appeal == appeal]
    if not done:
        return []
    return [f"申诉已裁决 the appeal at seq {appeal} was decided at seq {done[0]}: the committee's decision is final (第十三条 三)"]


def _majority(votes: list[Vote], decision: str, committee_min: int) -> list[str]:
    """Says what is wrong with a committee's votes for a decision (第十三条 三, 第十九条 1)."""
    members = [v.member for v in votes]
    backing = sum(1 for v in votes if {"uphold": "upheld", "reject": "rejected", "void": "void_late"}[v.vote] == decision)
    if len(set(members)) != len(members):
        return [f"委员重复投票 a member votes twice: {', '.join(sorted({m for m in members if members.count(m) > 1}))} (第十九条 1)"]
    if len(votes) < committee_min or len(votes) % 2 == 0:
        return [f"仲裁委员会人数无效 a committee of {len(votes)}: it takes an odd number, at least {committee_min} (第十三条 三)"]
    if 2 * backing <= len(votes):
        return [f"未过半数 {backing} of {len(votes)} votes for {decision}: the majority decides (第十九条 1)"]
    return []


def _signer_problems(root: Path, signer: Signer, kind: str) -> list[str]:
    """Says when a key is not registered in log.arbiters, or not in a role that may sign `kind` (第十四条, 第十三条 三)."""
    found = registered_keys(list(LogReader(root).events(ARBITER_STREAM))).get(signer.verifier.key_id)
    who = f"key {signer.name} ({signer.verifier.key_id.hex()})"
    if found is None or found[0].name != signer.name:
        return [f"签名密钥未登记 {who} is not registered in {ARBITER_STREAM} (matchledger appeal register)"]
    if found[1] not in SIGNING_ROLES[kind]:
        return [f"签名者无此职权 {who} is registered as {found[1]}; a {kind} is signed by {' or '.join(SIGNING_ROLES[kind])}"]
    return []


def _ruling_problems(root: Path, events: list[Event], ruling: Ruling) -> list[str]:
    """Says why a ruling cannot be applied to its game after the rulings before it (audit.A07), or
    changes an ended game's result on no upheld appeal of it (audit.A04, 第十四条 (1))."""
    start = events[0]
    assert isinstance(start, GameStarted)
    earlier = LogRulings(LogReader(root)).of_stream(start.stream)  # the game's rulings so far count only when signed
    replayed = replay_game([*events, ruling], rulings=lambda r: None if r is ruling else earlier(r))
    problems = [f.message for f in replayed.findings if f.code == "audit.A07" and f.seq == ruling.seq]
    ended = any(isinstance(e, GameEnded) for e in events)
    if ruling.ruling == "result_override" and ended:
        problems += _basis_problems(root, start, ruling)
    return problems


def _basis_problems(root: Path, start: GameStarted, ruling: Ruling) -> list[str]:
    if ruling.appeal is None:
        return ["改判须有支持的申诉 a result override after the game's end carries out an upheld appeal: "
                "name the decision with --carries-out STREAM#SEQ (第十四条 (1))"]
    stream = list(LogReader(root).events(ruling.appeal.stream))
    decision = stream[ruling.appeal.seq] if ruling.appeal.seq < len(stream) else None
    filed = stream[decision.appeal] if isinstance(decision, AppealDecided) and decision.appeal < len(stream) else None
    if not isinstance(decision, AppealDecided) or not isinstance(filed, AppealFiled) or filed.game != start.stream:
        return [f"{ruling.appeal.stream}#{ruling.appeal.seq} is no decision on an appeal about {start.stream} (第十四条 (1))"]
    if decision.decision != "upheld":
        return [f"{ruling.appeal.stream}#{ruling.appeal.seq} {decision.decision} the appeal: nothing to carry out (第十四条 (1))"]
    return []


def _checked(event: E) -> E:
    """Returns the event once the contract accepts it.

    :raises ValueError: naming the option whose value the contract refuses (a usage error, not a line of a file).
    """
    try:
        decode(encode(event))
    except msgspec.ValidationError as exc:
        field = re.search(r"\$\.(\w+)", str(exc))
        option = f"--{field.group(1).replace('_', '-')}" if field else "an option"
        raise ValueError(f"{option}: {str(exc).split(' - at ')[0]}") from None
    return event


def _tournament(root: Path, tournament: str) -> list[Event]:
    events = list(LogReader(root).events(tournament))
    if not events or not isinstance(events[0], TournamentOpened):
        raise ValueError(f"no tournament {tournament!r} in the ledger")
    return events


def _vote(text: str) -> Vote:
    member, sep, vote = text.partition("=")
    if not sep or not member or vote not in ("uphold", "reject", "void"):
        raise ArbitrationError(f"vote {text!r}: give MEMBER=uphold, MEMBER=reject or MEMBER=void (MEMBER: the committee member's name)")
    return Vote(member=member, vote=vote)  # type: ignore[arg-type]


def _ref(text: str) -> Ref:
    stream, sep, seq = text.rpartition("#")
    if not sep or not seq.isdigit():
        raise ArbitrationError(f"--carries-out {text!r}: give the decision as STREAM#SEQ")
    return Ref(stream=stream, seq=int(seq))


def _write(root: Path, stream: str, cls: type[Event], at: str | None, signer: Signer | None = None, own: bool = False,
           **fields: Any) -> Written:
    """Builds the stream's next event, signs it when a key is given, and records it (`own`: the
    operator's registration of an arbiter, one of the log's own records)."""
    event = _checked(cls(stream=stream, seq=len(list(LogReader(root).events(stream))), ts=parse_time(at), **fields))
    if signer is not None:
        event = sign(event, signer)  # type: ignore[arg-type]
    return Written(event, record(root, [encode(event)], own=own))


def list_appeals(root: Path, tournament: str | None, open_only: bool,
                 progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Returns every appeal (of a tournament) with its window, deadline, decision and correction
    (telling `progress` of each game the projection replays)."""
    from audit.query.session import open_session

    rows = open_session(root, progress, kept=True, body=False).db.run("appeal_list", tournament=tournament)
    return [r for r in rows if r["open"] or not open_only]
