"""Arbitration in the audit: the signatures of rulings and decisions, the appeal deadlines, and the
`arbiters`, `appeals`, `decisions` and `rulings` tables the arbitration checks and the standings read.

A ruling or decision is signed over its stored bytes with the signature's value set to null, under a
domain prefix: the bytes the recorder stored are the ones checked, never a re-encoding."""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from ledger import LedgerError, Signer, Verifier
from schemas import encode
from schemas.arbitration import AppealDecided, AppealFiled, ArbiterRegistered, ArbitrationRules
from schemas.common import Ruling, TournamentOpened, ruling_kind
from schemas.envelope import Event

DOMAIN = b"matchledger arbitration signature v1\n"
KINDS = ("arbiter.registered", "appeal.filed", "appeal.decided", "game.ruling")
"""The kinds of event this module tabulates."""
_SIGNATURE = re.compile(rb'"signature":"[^"]*"')
SIGNING_ROLES = {"game.ruling": ("referee", "chief_referee"), "appeal.decided": ("committee",)}
"""Who may sign what: rulings by referees (第十四条), decisions by the arbitration committee (第十三条 三)."""
DAY_MS = 86_400_000


def signed_bytes(stored: bytes) -> bytes:
    """Returns what an arbiter signs for a stored event: its bytes with the signature set to null."""
    return DOMAIN + _SIGNATURE.sub(b'"signature":null', stored, count=1)


def sign(event: Ruling | AppealDecided, signer: Signer) -> Ruling | AppealDecided:
    """Returns the event signed by `signer` (its `arbiter` set to the key's name)."""
    unsigned = msgspec.structs.replace(event, arbiter=signer.name, signature=None)
    line = signer.sign_line(signed_bytes(encode(unsigned)))  # "— name base64(key id ‖ signature)"
    return msgspec.structs.replace(unsigned, signature=line.rsplit(" ", 1)[1].strip())


def signature_status(stored: bytes, event: Ruling | AppealDecided, known: dict[str, tuple[Verifier, str]]) -> str:
    """Returns `valid`, `unsigned`, `unknown_signer` (no registered key of that name and id, or one
    registered later), `wrong_role` or `bad_signature`."""
    if event.signature is None or event.arbiter is None:
        return "unsigned"
    try:
        blob = base64.b64decode(event.signature, validate=True)
    except ValueError:
        return "bad_signature"
    found = known.get(event.arbiter)
    if found is None or found[0].key_id != blob[:4]:
        return "unknown_signer"
    verifier, role = found
    if not verifier.verifies(signed_bytes(stored), blob[4:]):
        return "bad_signature"
    return "valid" if role in SIGNING_ROLES[event.kind] else "wrong_role"


def decision_deadline(filed_ts: int, rules: ArbitrationRules) -> int:
    """Returns the last moment (ms) of the committee's time to decide: `decision_days` after the
    filing, counting only Monday to Friday in the event's time zone under the `working` basis
    (第十九条 1: 2 个工作日); a filing on a rest day starts counting on the next working day."""
    if rules.decision_day_basis == "calendar":
        return filed_ts + rules.decision_days * DAY_MS
    offset = rules.utc_offset_minutes * 60_000
    local = dt.datetime.fromtimestamp((filed_ts + offset) / 1000, dt.timezone.utc)
    day, left = local.date(), rules.decision_days
    if day.weekday() >= 5:  # filed on a rest day: the time runs from the end of it
        while day.weekday() >= 5:
            day += dt.timedelta(days=1)
        local = dt.datetime.combine(day, dt.time(), dt.timezone.utc)
    while left:
        day += dt.timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    end = dt.datetime.combine(day, local.time(), dt.timezone.utc)
    return int(end.timestamp() * 1000) - offset


def arbitration_rows(events: Iterable[tuple[int, Event, bytes]], tournaments: list[TournamentOpened]) -> dict[str, list[dict[str, Any]]]:
    """Returns the rows of the arbitration tables from the log's arbitration events (entry, event,
    stored bytes), in log order; each signature is checked against the keys registered before it."""
    rules = {t.stream: t.rules.arbitration for t in tournaments}
    known: dict[str, tuple[Verifier, str]] = {}
    out: dict[str, list[dict[str, Any]]] = {"arbiters": [], "appeals": [], "decisions": [], "rulings": []}
    for entry, ev, stored in events:
        where = {"entry": entry, "stream": ev.stream, "seq": ev.seq, "ts": ev.ts}
        if isinstance(ev, ArbiterRegistered):
            out["arbiters"].append({**where, **_registered(ev, known)})
        elif isinstance(ev, AppealFiled):
            deadline = decision_deadline(ev.ts, rules.get(ev.stream, ArbitrationRules()))
            out["appeals"].append({**where, "player": ev.player, "game": ev.game, "ruling_seq": ev.ruling, "grounds": ev.grounds,
                                   "deadline_ts": deadline})
        elif isinstance(ev, AppealDecided):
            out["decisions"].append({**where, "appeal_seq": ev.appeal, "decision": ev.decision, "committee": len(ev.votes),
                                     "members": len({v.member for v in ev.votes}),
                                     "for_decision": sum(1 for v in ev.votes if _backs(v.vote, ev.decision)),
                                     "votes": msgspec.json.encode(ev.votes).decode(), "text": ev.text, "arbiter": ev.arbiter,
                                     "signature": signature_status(stored, ev, known)})
        elif isinstance(ev, Ruling):
            out["rulings"].append({**where, "ruling": ruling_kind(ev), "explicit_kind": ev.ruling is not None, "seat": ev.seat,
                                   "corrects": ev.corrects, "appeal_stream": ev.appeal.stream if ev.appeal else None,
                                   "appeal_seq": ev.appeal.seq if ev.appeal else None, "player": ev.player, "from_round": ev.from_round,
                                   "termination": ev.termination, "points": None if ev.points is None else [float(p) for p in ev.points],
                                   "text": ev.text, "arbiter": ev.arbiter, "signature": signature_status(stored, ev, known)})
    return out


def _registered(ev: ArbiterRegistered, known: dict[str, tuple[Verifier, str]]) -> dict[str, Any]:
    """Adds a registered key to `known`; a malformed key is kept as a row with its problem."""
    try:
        verifier = Verifier.parse(ev.verifier)
    except LedgerError as exc:
        return {"key_name": None, "role": ev.role, "name": ev.name, "problem": str(exc)}
    known[verifier.name] = (verifier, ev.role)
    return {"key_name": verifier.name, "role": ev.role, "name": ev.name, "problem": None}


def _backs(vote: str, decision: str) -> bool:
    return {"uphold": "upheld", "reject": "rejected", "void": "void_late"}[vote] == decision
