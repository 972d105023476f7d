"""Arbitration in the audit: the signatures of rulings and decisions, the appeal deadlines, and the
`arbiters`, `appeals`, `decisions` and `rulings` tables the arbitration checks and the standings read.

A ruling or decision is signed over its stored bytes with the signature's value set to null, under a
domain prefix: the bytes the recorder stored are the ones checked, never a re-encoding."""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from audit.query.kept_read import among, rows_where
from ledger import LedgerError, Signer, Verifier
from replay.fold import RulingCheck
from replay.protocol import Outcome
from replay.rulings import RESULT_KINDS, apply_rulings
from schemas import decode_stored, encode
from schemas.arbitration import ARBITER_STREAM, AppealDecided, AppealFiled, ArbiterRegistered, ArbitrationRules
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


Known = dict[bytes, tuple[Verifier, str]]
"""The arbiters' keys registered so far, by key id: the verifier and its role."""


def signature_status(stored: bytes, event: Ruling | AppealDecided, known: Known) -> str:
    """Returns `valid`, `unsigned`, `unknown_signer` (no key of that id registered in log.arbiters
    before it, or one of another name), `wrong_role` or `bad_signature`."""
    if event.signature is None or event.arbiter is None:
        return "unsigned"
    try:
        blob = base64.b64decode(event.signature, validate=True)
    except ValueError:
        return "bad_signature"
    found = known.get(blob[:4])
    if found is None or found[0].name != event.arbiter:
        return "unknown_signer"
    verifier, role = found
    if not verifier.verifies(signed_bytes(stored), blob[4:]):
        return "bad_signature"
    return "valid" if role in SIGNING_ROLES[event.kind] else "wrong_role"


IGNORED = {"unsigned": ("未签名", "unsigned"), "unknown_signer": ("签名者未登记", "signer not registered in log.arbiters"),
           "wrong_role": ("签名者无此职权", "signer's role may not sign it"), "bad_signature": ("签名无效", "signature does not verify")}
"""Why a ruling or decision is ignored (not applied), by its signature status, in Chinese and English
(audit.A06's message reads them as the `signature_words` table)."""

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
    known: Known = {}
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


def registered_keys(events: Iterable[Event]) -> Known:
    """Returns the arbiters' keys that log.arbiters's events register, as the audit honours them."""
    known: Known = {}
    for ev in events:
        if isinstance(ev, ArbiterRegistered):
            _registered(ev, known)
    return known


class RulingSigners:
    """Who could sign a `game.ruling` where a game is folded: the arbiters' keys log.arbiters
    registered, entry by entry. A ruling counts in play and after it only when it is signed by a
    key registered before it, of a role that may sign it; the replay cannot check that (it knows no
    keys), so each reader of the log hands the fold the `RulingCheck` this makes (replay/fold.py).

    Built from the arbiters' stored entries, so it travels to a worker or a Spark executor as bytes."""

    def __init__(self, registrations: Sequence[tuple[int, bytes]]) -> None:
        self.registrations = list(registrations)
        """(log entry, stored bytes) of log.arbiters's events, in log order."""

    @classmethod
    def of(cls, reader: Any, upto: int | None = None) -> RulingSigners:
        """The registrations among a log's first `upto` entries, read through its stream index
        (`reader` is a `ledger.LogReader`)."""
        return cls(list(reader.stream(ARBITER_STREAM, upto=upto)))

    def known_before(self, entry: int) -> Known:
        """The keys honoured for an event at `entry`: those registered at an earlier entry."""
        return registered_keys(decode_stored([data for at, data in self.registrations if at < entry]))

    def why_not(self, stored: bytes, ruling: Ruling, entry: int) -> str | None:
        """Why the ruling stored at `entry` does not count (`unsigned`, `unknown_signer`,
        `wrong_role`, `bad_signature`), or None when it does."""
        status = signature_status(stored, ruling, self.known_before(entry))
        return None if status == "valid" else status

    def check(self, entries: Sequence[int], stored_at: Callable[[int], bytes]) -> RulingCheck:
        """The check for one game whose event of seq s is at entries[s], `stored_at(entry)` giving
        an entry's stored bytes (read only for a ruling)."""
        return lambda ruling: self.why_not(stored_at(entries[ruling.seq]), ruling, entries[ruling.seq])

    def check_array(self, stored: bytes, entries: Sequence[int]) -> RulingCheck:
        """The check for one game given as the JSON array of its stored events (the projection's
        and Spark's unit of replay); the array is split only when the game holds a ruling."""
        elements: dict[int, bytes] = {}

        def stored_at(entry: int) -> bytes:
            if not elements:
                elements.update(zip(entries, map(bytes, _RAW_ELEMENTS.decode(stored))))
            return elements[entry]

        return self.check(entries, stored_at)


_RAW_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])


class LogRulings:
    """The ruling checks of a log read through its reader (`ledger.LogReader`): a game stream's
    check reads the stream's entries, and the arbiters' registrations, only when the game holds a
    ruling, so a reader folding games one by one pays nothing for the rest."""

    def __init__(self, reader: Any, upto: int | None = None) -> None:
        self.reader, self.upto = reader, upto
        self._signers: RulingSigners | None = None

    def signers(self) -> RulingSigners:
        if self._signers is None:
            self._signers = RulingSigners.of(self.reader, self.upto)
        return self._signers

    def of_stream(self, stream: str) -> RulingCheck:
        """The check of one game stream's rulings."""
        held: list[tuple[int, bytes]] = []

        def why_not(ruling: Ruling) -> str | None:
            if not held:
                held.extend(self.reader.stream(stream, upto=self.upto))
            entry, stored = held[ruling.seq]
            return self.signers().why_not(stored, ruling, entry)

        return why_not


def _registered(ev: ArbiterRegistered, known: Known) -> dict[str, Any]:
    """Adds a registered key to `known` when the log wrote it in log.arbiters and its key name is
    not another key's; otherwise the row keeps why it is not honoured (issue 28 point 3)."""
    try:
        verifier = Verifier.parse(ev.verifier)
    except LedgerError as exc:
        return {"key_name": None, "role": ev.role, "name": ev.name, "problem": str(exc)}
    row = {"key_name": verifier.name, "role": ev.role, "name": ev.name, "problem": None}
    taken = next((v for v, _ in known.values() if v.name == verifier.name and v.key_id != verifier.key_id), None)
    if ev.stream != ARBITER_STREAM:
        row["problem"] = f"登记不在 {ARBITER_STREAM} 中, 不予承认 registered in {ev.stream}, not in {ARBITER_STREAM}: not honoured"
    elif taken is not None:
        row["problem"] = (f"密钥名 {verifier.name} 已属另一密钥, 不予承认 key name {verifier.name} is registered already with "
                          f"key id {taken.key_id.hex()}, not {verifier.key_id.hex()}: not honoured")
    else:  # the operator may register a key again, with another role: the latest registration holds
        known[verifier.key_id] = (verifier, ev.role)
    return row


def _backs(vote: str, decision: str) -> bool:
    return {"uphold": "upheld", "reject": "rejected", "void": "void_late"}[vote] == decision


def honoured(tables: dict[str, pa.Table], keep: Callable[[dict[str, Any]], bool] | None = None,
             stored: Callable[[list[int]], list[bytes]] | None = None) -> dict[str, pa.Table]:
    """Returns the `games` and `seats` tables with each game's result after only the signed rulings
    `keep` keeps (a ruling recorded after a round was seated, say); empty when it keeps them all.
    A ruling no registered arbiter of its role signed never counted: the fold set it aside
    (replay/fold.py), so the result of play (`derived_*`) is the starting point, as in the replay.
    The games' openings and the rulings are read by `stored` (entries to their stored bytes), or
    from `tables["events"]`' body. Only the ruled games' rows are read as rows and replaced, in
    place: a season's games and seats are not made Python objects for a ruling (issue 32)."""
    if keep is None:
        return {}
    rulings = [r for r in tables["rulings"].to_pylist() if r["ruling"] in RESULT_KINDS and r["signature"] == "valid"]
    hit = sorted({r["stream"] for r in rulings if not keep(r)})
    if not hit:
        return {}
    games, seats = (rows_where(tables[name], "stream", hit).to_pylist() for name in ("games", "seats"))
    if stored is None:
        def stored(entries: list[int]) -> list[bytes]:
            return [body.encode() for body in tables["events"]["body"].take(entries).to_pylist()]
    outcomes = {g["stream"]: _reruled(stored, g, [s for s in seats if s["stream"] == g["stream"]],
                                      [r["entry"] for r in rulings if r["stream"] == g["stream"] and keep(r)])
                for g in games}
    for g in games:
        outcome, ruled_by = outcomes[g["stream"]]
        g.update(termination=outcome.termination if outcome else None, winners=list(outcome.winners) if outcome else None,
                 ruled_by=ruled_by)
    for seat in (s for s in seats if s["stream"] in outcomes):
        outcome = outcomes[seat["stream"]][0]
        seat["points"] = outcome.points[seat["seat"]] if outcome and seat["seat"] < len(outcome.points) else None
    return {"games": _replaced(tables["games"], hit, games), "seats": _replaced(tables["seats"], hit, seats)}


def _replaced(table: pa.Table, streams: list[str], rows: list[dict[str, Any]]) -> pa.Table:
    """Returns a table with its rows of some streams replaced, in their places, by `rows` (as many, in
    the same order); the rows between them are the table's own, not copied."""
    places = pc.indices_nonzero(among(table["stream"], pa.array(streams, pa.string()))).to_pylist()
    new = pa.Table.from_pylist(rows, schema=table.schema)
    parts, start = [], 0
    for i, place in enumerate(places):
        parts += [table.slice(start, place - start), new.slice(i, 1)]
        start = place + 1
    return pa.concat_tables([*parts, table.slice(start)])


def _reruled(stored: Callable[[list[int]], list[bytes]], game: dict[str, Any], seats: list[dict[str, Any]],
             kept: list[int]) -> tuple[Outcome | None, int | None]:
    """Returns a game's result after the rulings at entries `kept`, and the seq of the last that changed it."""
    start, *ruled = decode_stored(stored([game["entry"], *kept]))
    points = [s["derived_points"] for s in sorted(seats, key=lambda s: s["seat"])]
    derived = None if game["derived_termination"] is None or None in points else Outcome(
        termination=game["derived_termination"], winners=tuple(game["derived_winners"] or ()), points=tuple(points))
    outcome, applied, _ = apply_rulings(start, derived, ruled)  # type: ignore[arg-type]
    return outcome, applied[-1]["seq"] if applied else None
