"""Sources: the senders allowed to write to a log, their signed batches, and who wrote what.

A source (a venue server, an online platform, an AI seat's harness) is registered in the log by a
`source.registered` event with its Ed25519 key and what it may write, and withdrawn by
`source.revoked`. It signs each batch it sends.

The batch signature scheme, `matchledger-batch/2`: the signed message is

    matchledger-batch/2 LF <the log's origin>+<its key id> LF <source name> LF <the request body's exact bytes>

signed with Ed25519 by the source's key; the request carries it in the header
`Matchledger-Signature: <source name> <base64(key id ‖ signature)>`, which is a C2SP signed-note
signature line (c2sp.org/signed-note) without its leading em dash (HTTP header values are ASCII).
The key id is the note key id of the source's verifier key, so a key rotated under the same name
is told apart. The prefix, the log (its origin and the id of its key, as C2SP names a verifier key:
two logs given the same origin by mistake still differ by key) and the name bind the signature to
this use, to this log (a batch captured on a staging log does not verify on production) and to the
sender. The first
scheme, `matchledger-batch/1`, named no log: a batch signed so is refused, saying why.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ledger.batch import Pending, is_log_stream
from ledger.errors import KeyFileError, LedgerError, SignatureError
from ledger.fastscan import verify_signatures
from ledger.index import BookHead, book_head, book_key, read_book_index
from ledger.notes import Signer, Verifier, split_note
from ledger.store import Ledger
from ledger.tiles import TileReader
from schemas import decode, encode
from schemas.common import GameStarted
from schemas.envelope import Event
from schemas.log import BATCHES_STREAM, SOURCES_STREAM, BatchReceived, SourceRegistered, SourceRevoked

SCHEME = "matchledger-batch/2"
OLD_SCHEME = "matchledger-batch/1"
"""The first scheme, which named no log: refused (`old-signature`); recognised to say so."""
HEADER = "Matchledger-Signature"
OWNER, RESENT = "owner", "resent"
"""The items of the book's index, one JSON line each: `["owner", stream, source]` (who wrote the
stream first), `["resent", last entry, record entry]` (a batch that brought no new event)."""


class SourceRefused(LedgerError):
    """A batch is refused for who sent it: `reason` is a stable code (`missing-signature`,
    `malformed-signature`, `unknown-source`, `bad-signature`, `old-signature`, `revoked-source`,
    `forbidden-stream`, `log-stream`), the message says what and why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def log_identity(origin: str, key_id: bytes) -> str:
    """Returns the log a batch is signed for: its origin and its key's id, `origin+1a2b3c4d`."""
    return f"{origin}+{key_id.hex()}"


def note_identity(note: str) -> str:
    """Returns the identity of the log that signed a checkpoint note: its origin line and the key id
    of the signature line under that name (a note carries co-signatures under other names too).

    :raises SignatureError: when the note has no signature line of its origin.
    """
    body, signatures = split_note(note)
    origin = body.split("\n", 1)[0]
    key_id = next((blob[:4] for name, blob in signatures if name == origin), None)
    if key_id is None:
        raise SignatureError(f"检查点缺少日志自身的签名 / the checkpoint carries no signature of its origin {origin!r}")
    return log_identity(origin, key_id)


def signed_message(source: str, body: bytes, log: str) -> bytes:
    """Returns the bytes a source signs for a batch body to the log `log` (`log_identity`; scheme `matchledger-batch/2`)."""
    return f"{SCHEME}\n{log}\n{source}\n".encode() + body


def sign_batch(signer: Signer, body: bytes, origin: str) -> str:
    """Returns the `Matchledger-Signature` header value of a body signed by a source's key for the log of `origin`."""
    line = signer.sign_line(signed_message(signer.name, body, origin))  # "— name base64\n"
    return line.removeprefix("— ").strip()


def old_message(source: str, body: bytes) -> bytes:
    """Returns the bytes a source signed under the first scheme (`matchledger-batch/1`, no log named)."""
    return f"{OLD_SCHEME}\n{source}\n".encode() + body


def parse_signature(header: str | None) -> tuple[str, bytes, bytes]:
    """Splits a `Matchledger-Signature` header into (source name, key id, signature).

    :raises SourceRefused: when it is missing or malformed.
    """
    if not header:
        raise SourceRefused("missing-signature", f"the batch carries no {HEADER} header; sign its body with the source's key")
    name, _, b64 = header.strip().partition(" ")
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if not name or len(raw) != 68:
        raise SourceRefused("malformed-signature", f"{HEADER} must be `<source name> <base64 of the 4-byte key id and the "
                            f"64-byte Ed25519 signature>` (scheme {SCHEME})")
    return name, raw[:4], raw[4:]


@dataclass
class Source:
    """A registered source: its key, what it may write, and whether it was revoked."""

    name: str
    verifier: Verifier
    tournaments: tuple[str, ...]
    streams: tuple[str, ...]
    revoked: bool = False

    def grants(self, event: Event) -> bool:
        """Tells whether the source may open `event`'s stream (one no source has written yet): one
        its stream grants name, or one under `<tournament>/` of a tournament it is granted, where a
        game's `game.started` must name that tournament (a game stream is never squatted elsewhere)."""
        if not self.tournaments and not self.streams:
            return True
        stream = event.stream
        if any(stream == s or (s.endswith("/") and stream.startswith(s)) for s in self.streams):
            return True
        under = [t for t in self.tournaments if stream == t or stream.startswith(t + "/")]
        if isinstance(event, GameStarted):
            return event.tournament in under and stream != event.tournament
        return bool(under)


def bad_signature(name: str, origin: str = "") -> SourceRefused:
    """Returns the refusal of a batch whose signature does not verify under its source's key."""
    log = f" for the log {origin!r}" if origin else ""
    return SourceRefused("bad-signature", f"the signature does not verify under source {name!r}'s registered key "
                         f"(scheme {SCHEME}{log}: the body's exact bytes)")


def signature_refusal(source: Source, body: bytes, signature: bytes, origin: str) -> SourceRefused:
    """Returns the refusal of a batch whose signature does not verify: `old-signature` when it is of
    the first scheme, which named no log (签名未绑定日志来源), else `bad-signature`."""
    if source.verifier.verifies(old_message(source.name, body), signature):
        return SourceRefused("old-signature", f"the batch is signed under the old scheme {OLD_SCHEME}, which names no log "
                             f"(旧签名格式，未绑定日志); sign `{SCHEME} LF <origin> LF <source> LF <body>` for the log {origin!r}")
    return bad_signature(source.name, origin)


@dataclass
class SourceBook:
    """What the log says about its sources: who is registered, who wrote each stream first (and so
    alone may go on writing it), and the records of batches that held no new event.

    No record is kept per batch: an accepted batch's record follows its last new event (the
    group commit appends each batch's new events, then its record), so an identical re-send, all
    of whose events the log holds, is known by reading the one entry after the last of them. Only
    a batch that brought no new event has its record elsewhere: those are kept in `resent`, by
    their last entry (issue 33: the book held 140 bytes per batch and read every record at start)."""

    sources: dict[str, Source] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    resent: dict[int, list[int]] = field(default_factory=dict)
    origin: str = ""
    """The log's identity (`log_identity`: origin and key id), which every batch signature names."""
    ledger: Ledger | None = field(default=None, repr=False)
    """The log the book reads records from (`batch_record`)."""
    unsaved: list[bytes] = field(default_factory=list, repr=False)
    """What was folded since the book's index was last written (`index/book`: `snapshot`)."""
    saved: tuple[int, Any] = field(default_factory=lambda: (0, hashlib.sha256()), repr=False)
    """The length of `index/book` and the running SHA-256 of its bytes."""

    def fold(self, entry: int, event: Event) -> None:
        """Takes in one record the writer made in the log's own streams (the registry in
        `log.sources`, batch records in `log.batches`; anything else is ignored). A batch record
        never makes a source the owner of one of the log's own streams."""
        if isinstance(event, SourceRegistered) and event.stream == SOURCES_STREAM:
            self.sources[event.name] = Source(event.name, Verifier.parse(event.key), tuple(event.tournaments), tuple(event.streams))
        elif isinstance(event, SourceRevoked) and event.stream == SOURCES_STREAM and event.name in self.sources:
            self.sources[event.name].revoked = True
        elif isinstance(event, BatchReceived) and event.stream == BATCHES_STREAM:
            last = max((first + count - 1 for first, count in event.entries), default=-1)
            if last + 1 != entry:
                self._keep([RESENT, last, entry])
            for stream in event.streams:
                if not is_log_stream(stream) and stream not in self.owners:
                    self._keep([OWNER, stream, event.source])

    def _keep(self, item: list[Any]) -> None:
        self._take(item)
        self.unsaved.append(msgspec.json.encode(item) + b"\n")

    def _take(self, item: list[Any]) -> None:
        if item[0] == OWNER:
            self.owners[item[1]] = item[2]
        else:
            self.resent.setdefault(item[1], []).append(item[2])

    def batch_record(self, source: str, digest: str, events: Iterable[tuple[Event, bytes]]) -> int | None:
        """Returns the entry of the record of a batch already accepted, if any: a batch of `events`
        whose body has `digest`. A batch with an event the log does not hold was never accepted."""
        ledger = self.ledger
        assert ledger is not None, "a book without its log cannot look records up"
        last = -1
        for event, _ in events:
            if event.seq >= ledger.next_seq(event.stream):
                return None
            last = max(last, ledger.entry_of(event.stream, event.seq))
        for entry in (last + 1, *self.resent.get(last, ())):
            record = _record_at(ledger, entry)
            if record is not None and (record.source, record.digest) == (source, digest):
                return entry
        return None

    def snapshot(self) -> tuple[int, bytes, BookHead]:
        """Returns what to write to the book's index (`write_book_index`), which holds the records
        of every entry of its log: where, the bytes, the head (MAC'd with the writer's key)."""
        ledger = self.ledger
        assert ledger is not None
        data = b"".join(self.unsaved)
        self.unsaved.clear()
        at, hasher = self.saved
        hasher.update(data)
        self.saved = (at + len(data), hasher)
        return at, data, book_head(book_key(ledger.signer.origin_key()), ledger.size, at + len(data), hasher.hexdigest(),
                                   ledger.root_hash().hex())

    def authenticate(self, header: str | None, body: bytes) -> Source:
        """Returns the source whose valid signature the batch carries.

        :raises SourceRefused: on a missing, malformed or wrong signature, an unknown or a revoked source.
        """
        source, message, signature = self.identify(header, body)
        # through the accelerator: libsodium at half OpenSSL's cost per batch, OpenSSL's verdicts
        if not verify_signatures(source.verifier, [message], [signature])[0]:
            raise signature_refusal(source, body, signature, self.origin)
        return source

    def identify(self, header: str | None, body: bytes) -> tuple[Source, bytes, bytes]:
        """Returns the source a batch names, with the message and signature still to check (as
        `authenticate` does; the live service checks many at once, off its event loop).

        :raises SourceRefused: on a missing or malformed signature, an unknown or a revoked source,
            a key id that is not the source's.
        """
        name, key_id, signature = parse_signature(header)
        source = self.sources.get(name)
        if source is None:
            raise SourceRefused("unknown-source", f"no source {name!r} is registered in this log (`matchledger source add`)")
        if source.revoked:
            raise SourceRefused("revoked-source", f"source {name!r} was revoked; its batches are refused")
        if key_id != source.verifier.key_id:
            raise bad_signature(name, self.origin)
        return source, signed_message(name, body, self.origin), signature

    def check_streams(self, source: Source, events: Iterable[Event], claimed: dict[str, str]) -> list[str]:
        """Checks that the source may write every event's stream: one it already writes, or a new one
        its grant covers; `claimed` holds the streams other batches of the same commit open. Returns
        the streams the batch opens.

        :raises SourceRefused: naming the first stream it may not write.
        """
        opened: list[str] = []
        for event in events:
            stream = event.stream
            if is_log_stream(stream):  # before ownership: no record makes a source the owner of the log's own streams
                raise SourceRefused("log-stream", f"stream {stream!r} is the log's own; no source may write it (日志自身的流)")
            owner = self.owners.get(stream) or claimed.get(stream)
            if owner == source.name or stream in opened:
                continue
            if owner is not None:
                raise SourceRefused("forbidden-stream", f"stream {stream!r} is written by source {owner!r}; "
                                    f"source {source.name!r} may not write it")
            if not source.grants(event):
                raise SourceRefused("forbidden-stream", f"source {source.name!r} may not open stream {stream!r} "
                                    f"(it may write {_grant_text(source)})")
            opened.append(stream)
        return opened


def _grant_text(source: Source) -> str:
    parts = [f"tournament {t}" for t in source.tournaments] + [f"stream {s}" for s in source.streams]
    return ", ".join(parts)


def compress_runs(entries: Sequence[int]) -> list[tuple[int, int]]:
    """Returns entry indexes as runs (first, count) of consecutive indexes."""
    runs: list[tuple[int, int]] = []
    for entry in entries:
        if runs and runs[-1][0] + runs[-1][1] == entry:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((entry, 1))
    return runs


def expand_runs(runs: Iterable[Sequence[int]]) -> list[int]:
    """Returns the entry indexes that runs (first, count) stand for."""
    return [first + i for first, count in runs for i in range(count)]


def load_source_book(ledger: Ledger, batches: bool = True) -> SourceBook:
    """Folds a writer's log streams into a source book: the registry (`log.sources`, a record per
    source) and, with `batches`, the batch records (`log.batches`) from those the book's index
    (`index/book`) does not cover; a missing or damaged index is rebuilt from every record. A
    registration needs the registry alone."""
    book = SourceBook(origin=log_identity(ledger.config.origin, ledger.signer.verifier.key_id), ledger=ledger)
    for seq in range(ledger.next_seq(SOURCES_STREAM)):
        book.fold(ledger.entry_of(SOURCES_STREAM, seq), decode(ledger.read_stream_entry(SOURCES_STREAM, seq)))
    if not batches:
        return book
    start = 0
    stored = read_book_index(ledger.root, book_key(ledger.signer.origin_key()))
    if stored is not None and _is_prefix(ledger, stored[0]) and _take_index(book, stored[1]):
        start = stored[0].size
    for seq in range(_first_record_from(ledger, start), ledger.next_seq(BATCHES_STREAM)):
        book.fold(ledger.entry_of(BATCHES_STREAM, seq), decode(ledger.read_stream_entry(BATCHES_STREAM, seq)))
    return book


def _is_prefix(ledger: Ledger, head: BookHead) -> bool:
    """Tells whether the log the book's index was written for is this log's first `head.size`
    entries (the tree's root there, from the tiles): a log cut back since is not."""
    if head.size > ledger.size:
        return False
    try:
        return head.size == 0 or TileReader(ledger.root).edge(head.size).root().hex() == head.root
    except (LedgerError, OSError):  # tiles the open could not read: the entries decide
        return False


def _take_index(book: SourceBook, data: bytes) -> bool:
    """Takes in the book's index; False (and nothing taken) when a line is not one of its items."""
    try:
        items = [msgspec.json.decode(line, type=tuple[str, Any, Any]) for line in data.splitlines()]
    except msgspec.DecodeError:
        return False
    if not all(kind in (OWNER, RESENT) for kind, _, _ in items):
        return False
    for item in items:
        book._take(list(item))
    book.saved = (len(data), hashlib.sha256(data))
    return True


def _first_record_from(ledger: Ledger, entry: int) -> int:
    """Returns the seq in `log.batches` of the first record at or after `entry` (its stream index searched)."""
    low, high = 0, ledger.next_seq(BATCHES_STREAM)
    while low < high:
        mid = (low + high) // 2
        if ledger.entry_of(BATCHES_STREAM, mid) < entry:
            low = mid + 1
        else:
            high = mid
    return low


def _record_at(ledger: Ledger, entry: int) -> BatchReceived | None:
    """Returns the batch record at `entry`, or None when the entry is not one of `log.batches`."""
    seq = _first_record_from(ledger, entry)
    if seq == ledger.next_seq(BATCHES_STREAM) or ledger.entry_of(BATCHES_STREAM, seq) != entry:
        return None
    record = decode(ledger.read_stream_entry(BATCHES_STREAM, seq))
    return record if isinstance(record, BatchReceived) else None


def registration(book: SourceBook, ledger: Ledger, name: str, key: Verifier, tournaments: Sequence[str] = (),
                 streams: Sequence[str] = (), ts: int | None = None) -> SourceRegistered:
    """Returns the `source.registered` event that adds a source, at the next seq of `log.sources`.

    :raises AlreadyRegistered: when this very registration is in force (sent again after a lost answer).
    :raises LedgerError: when the name is taken (names are never reused, even after a revocation) or
        the key's name is not the source's (a batch's signature line names both).
    """
    if key.name != name:
        raise LedgerError(f"the key is named {key.name!r}, the source {name!r}: make the key with "
                          f"`matchledger keygen --name {name}` so that the signature line names the source")
    if name in book.sources:
        _check_not_sent_again(book.sources[name], ledger, key, tournaments, streams)
        raise LedgerError(f"source {name!r} is already registered{' (and revoked)' if book.sources[name].revoked else ''}; "
                          "a name is never reused")
    try:
        return msgspec.convert({"stream": SOURCES_STREAM, "seq": ledger.next_seq(SOURCES_STREAM), "ts": ts or now_ms(),
                                "name": name, "key": str(key), "tournaments": list(tournaments), "streams": list(streams)},
                               SourceRegistered)
    except msgspec.ValidationError as exc:
        raise LedgerError(f"source registration: {exc}") from None


class AlreadyRegistered(LedgerError):
    """The very registration is recorded already (same key and grants, not revoked): acknowledged, nothing appended."""

    def __init__(self, event: SourceRegistered) -> None:
        super().__init__(f"source {event.name!r} is already registered with this key and these grants")
        self.event = event


def _check_not_sent_again(source: Source, ledger: Ledger, key: Verifier, tournaments: Sequence[str], streams: Sequence[str]) -> None:
    """Raises AlreadyRegistered, with the recorded event, when a registration is the one in force sent again."""
    if source.revoked or str(source.verifier) != str(key) or (set(source.tournaments), set(source.streams)) != (set(tournaments), set(streams)):
        return
    for seq in reversed(range(ledger.next_seq(SOURCES_STREAM))):
        event = decode(ledger.read_stream_entry(SOURCES_STREAM, seq))
        if isinstance(event, SourceRegistered) and event.name == source.name:
            raise AlreadyRegistered(event)


def revocation(book: SourceBook, ledger: Ledger, name: str, reason: str = "", ts: int | None = None) -> SourceRevoked:
    """Returns the `source.revoked` event that withdraws a source.

    :raises LedgerError: when no such source is registered or it is already revoked.
    """
    source = book.sources.get(name)
    if source is None:
        raise LedgerError(f"no source {name!r} is registered in this log")
    if source.revoked:
        raise LedgerError(f"source {name!r} is already revoked")
    return SourceRevoked(stream=SOURCES_STREAM, seq=ledger.next_seq(SOURCES_STREAM), ts=ts or now_ms(), name=name, reason=reason)


def change_sources(root: Path, make: Callable[[SourceBook, Ledger], Event]) -> Event:
    """Appends one registration or revocation to a ledger (taking its writer lock) and signs a checkpoint."""
    with Ledger.open(root) as ledger:
        try:
            event = make(load_source_book(ledger, batches=False), ledger)  # the registry alone: no batch record read
        except AlreadyRegistered as done:
            return done.event
        ledger.append([Pending(0, event, encode(event), own=True)])
        ledger.checkpoint()
        return event


def now_ms() -> int:
    """Returns the current time in ms since the epoch (the envelope's `ts`)."""
    return int(time.time() * 1000)


def read_verifier_key(path: Path) -> Verifier:
    """Reads a source's public key file (a C2SP verifier key, as `matchledger keygen` writes).

    :raises KeyFileError: when it is missing or malformed.
    """
    if not path.is_file():
        raise KeyFileError(f"public key {path} is missing")
    return Verifier.load(path)
