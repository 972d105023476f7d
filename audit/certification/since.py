"""Re-certification since an earlier certificate (issue 32.3): `audit --since CERT` audits only what
the log gained after the checkpoint CERT names, from the state the earlier audit left.

The state (`CERT.state`, beside the certificate, never inside the ledger) is a small JSON file naming
the files of `CERT.state.d/`, each named by its content: the audit's projection at that checkpoint in
the files the kept projection keeps (audit/query/projection_cache.py: the tables, the database's
built tables, the engines' findings, the held entries, the tree's compact range), the stored bytes of
the entries the checks read from `events.body` beside the games (`BODY_KINDS`), and the per-game
check queries' rows (audit/certification/scoped.py). The files are written as they are made and
opened where they lie; a new state links the earlier one's files of the tables that only grew. The
certificate names `CERT.state`'s SHA-256, so the auditor's signature covers every file; no log key
signs it, since an auditor holds none.

The log at the certificate's checkpoint is proved a prefix of the log now the compact-range way, as
the kept projection is extended: the state's frontier must give the certificate's root, and the new
entries' leaf hashes appended to it must give the root of the newest signed checkpoint. Unlike a
consistency proof read from the log's tiles, this also proves that the entries audited are those
signed, and it costs nothing the audit does not read anyway. The stream index is checked for the
streams of the new entries (the others' were checked by the earlier audit). The games the new
entries touch are folded again (a game under way through its earlier entries, each proved in the
certified tree); the per-game check queries run over the touched games only, the others' rows kept
from the state, and every other check over the extended projection, so the verdict is a full audit's.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from audit.certification.certificate import CertificateError, CheckedCertificate, Resource, check_certificate, log_uri, state_path
from audit.certification.certify import Certification, certify_session
from audit.certification.scoped import ROWS, SCOPED, Rows, Touched, recording, scoping, touched_games
from audit.query.arbitration import KINDS as ARBITRATION_KINDS
from audit.query.db import AuditDB
from audit.query.kept_read import batches, rows_where, take
from audit.query.projection import GAME_OPENER
from audit.query.projection_cache import KIND as PROJECTION_KIND
from audit.query.projection_cache import Fill, Held, Kept, database, extended, given, kept_file, kept_files, load, tree_of
from audit.query.session import Session, open_verified_session
from audit.query.signed_state import StateRefused, code_fingerprint
from audit.query.tournament_checks import BoardDeals, SeatingRounds
from ledger import Checkpoint, LedgerError, LogReader, Verifier, VerifyReport
from ledger.checkpoints import checkpoint_sizes, stored_checkpoint
from ledger.derived import DerivedFiles
from ledger.fastscan import extend, leaf_hashes
from ledger.index import read_head, read_stream_file, stream_path
from ledger.merkle import CompactRange
from ledger.outputs import check_output
from ledger.reader import StoredEntries
from ledger.tiles import TileReader

KIND = "matchledger-audit-state/2"
SEATING, DEALS = "seating.rounds", "deals.boards"
"""The keys of the state's rows that keep each round's seating findings (`SeatingRounds`) and each
Paohuzi board's deal findings (`BoardDeals`)."""
BODY_KINDS = ("game.started", "paohuzi.board_created", "paohuzi.board_revealed", "paohuzi.dealt", "paohuzi.liangzhang",
              "paohuzi.drawn", "paohuzi.hu")
"""The kinds whose stored bytes the checks read from `events.body` on game streams (deal_events.sql,
huxi_claims.sql); the other checks read the tables, the built tables and the held entries."""
BODIES, BODIES_ENDS, BODIES_ENTRIES = "bodies.data", "bodies.ends", "bodies.entries"
KEPT_BODIES = tuple(kind for kind in BODY_KINDS if kind != GAME_OPENER)
"""The kinds the bodies' files keep: the held entries hold every game's opening already."""
OWN = (BODIES, BODIES_ENDS, BODIES_ENTRIES, ROWS)
"""The state's files beside the projection's: the bodies, and the scoped check queries' rows (audit/certification/scoped.py)."""


class SinceRefused(Exception):
    """The earlier audit's state cannot be used: `--since` stops (exit 2), or audits in full when asked to."""


class AuditState(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What an audit established, kept for the next one (`CERT.state`): the projection's state, and
    the bodies' files; each file lies in `CERT.state.d/`, named by its content."""

    kind: str
    projection: Kept
    files: dict[str, str]
    """The state's own files (`OWN`) by name: the file's name (`name-sha256`)."""
    sizes: dict[str, int]


@dataclass(frozen=True)
class Since:
    """An incremental audit: its certification, the state to keep (None when the log did not verify), and what it read."""

    cert: Certification
    state: bytes | None
    earlier: CheckedCertificate
    entries: int
    """The entries signed since the earlier certificate's checkpoint."""
    games: int
    """The games folded again."""


class StateFiles(DerivedFiles):
    """The files of an audit state (`CERT.state.d/` beside the certificate), read and written as the
    kept projection's are (`DerivedFiles`), never through a link."""

    def __init__(self, directory: Path) -> None:  # not under a ledger's `derived/`: beside a certificate
        self.directory = directory
        if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
            raise OSError(f"{directory} is not a directory of audit state files")


def state_files(certificate: Path) -> StateFiles:
    """Returns where the files of a certificate's state are written: `CERT.state.d/`, beside `CERT.state`.

    :raises OutputRefused: when that is a link, not a directory, or inside a ledger (exit 2).
    """
    return StateFiles(check_output(state_path(certificate).with_name(state_path(certificate).name + ".d"), force=True, directory=True))


def since_resource(earlier: bytes, checked: CheckedCertificate) -> Resource:
    """Returns how a certificate names the one it continued: that one's checkpoint URI and the file's SHA-256."""
    cp = checked.checkpoint
    return Resource(uri=f"{log_uri(cp.origin)}/checkpoint/{cp.size}", digest={"sha256": hashlib.sha256(earlier).hexdigest()})


def since_said(where: Path, done: Since) -> dict[str, Any]:
    """Returns what `audit --format json` says of an incremental audit (`certificate.since`)."""
    start = done.earlier.checkpoint.size
    return {"path": str(where), "from": start, "to": start + done.entries, "entries": done.entries, "games": done.games}


class _Writer:
    """Writes a state's files as each is made (issue 32.2: never all held at once), named by content;
    a part the state reuses is linked from the earlier state's directory, not written again."""

    def __init__(self, files: StateFiles, earlier: StateFiles | None = None) -> None:
        self.files, self.earlier = files, earlier
        self.named: dict[str, str] = {}
        self.sizes: dict[str, int] = {}

    def put(self, name: str, fill: Fill) -> None:
        self.named[name], self.sizes[name] = self.files.write_named(name, fill)

    def reuse(self, reused: dict[str, tuple[str, int]]) -> None:
        """Takes the earlier state's parts as they are (a hard link where the file system allows)."""
        for part, (file, size) in reused.items():
            self.named[part], self.sizes[part] = file, size
            assert self.earlier is not None
            src, dst = self.earlier.directory / file, self.files.directory / file
            if src != dst:
                dst.unlink(missing_ok=True)
                try:
                    os.link(src, dst, follow_symlinks=False)
                except OSError:
                    self.files.replace(file, self.earlier.read(file))

    def state(self, signed: Checkpoint, tree: CompactRange, own: tuple[str, ...] = OWN) -> bytes:
        """Returns the state naming the files written (the stale ones removed), at `signed`."""
        files = {n: f for n, f in self.named.items() if n not in own}
        kept = Kept(kind=PROJECTION_KIND, code=code_fingerprint(), files=files, sizes={n: self.sizes[n] for n in files},
                    signed=(signed.size, signed.root.hex()), frontier=[h.hex() for h in tree._stack])
        for stale in set(self.files.names()) - set(self.named.values()):
            self.files.remove(stale)
        return msgspec.json.encode(AuditState(KIND, kept, {n: self.named[n] for n in own}, {n: self.sizes[n] for n in own}))


# -- the full audit, keeping its state ---------------------------------------------------------------

def audit_keeping_state(root: Path, certificate: Path, tournament: str | None = None,
                        progress: Callable[[int], None] | None = None) -> tuple[Certification, bytes | None]:
    """Runs a full audit (`certify`) and returns it with its state, whose files it writes beside
    `certificate` (None when the log did not verify). The checkpoint certified is the one whose
    entries the audit projected, whatever was signed while it ran (see `_read_checkpoint`).

    :raises CertificateError: when the entries projected are not those of a signed checkpoint.
    :raises OutputRefused: as `state_files`.
    """
    files = state_files(certificate)  # refused before the audit reads anything
    report, session = open_verified_session(root, progress)
    if session is None or not report.ok:
        return certify_session(report, session, tournament), None
    log = _projected(session)
    report, checkpoint = _read_checkpoint(root, report, log)
    assert isinstance(session.db, AuditDB)
    rows: Rows = {}
    recording(session.db, rows)
    rounds, boards = SeatingRounds(), BoardDeals()
    cert = certify_session(report, session, tournament, rounds, boards)
    rows[SEATING], rows[DEALS] = rounds.rows(), boards.rows()  # (an `--tournament` audit judges every tournament's too)
    return cert, _state(session, log, checkpoint, TileReader(root).edge(checkpoint.size), files, rows)


class _Projected(NamedTuple):
    """What the audit projected: its size, the entries the kept projection holds (`kept_files`), the
    bodies the checks read, and the tree of every projected entry (hashed only when asked)."""

    size: int
    held: StoredEntries | Held
    bodies: Held
    tree: Callable[[], CompactRange]


def _projected(session: Session) -> _Projected:
    """Returns what the session projected: from the log's own buffer (not a copy of it), or, for a
    build kept on disk (issue 32.1), from its `events` file, read a batch at a time."""
    projection = session.projection
    events = projection.sources()["events"]
    if projection.held is not None and not isinstance(events, pa.Table):
        kinds = projection.column("events", "kind")  # row i is entry i: the bodies read are those kept, not the whole log
        wanted = pc.indices_nonzero(pc.is_in(kinds, value_set=pa.array(KEPT_BODIES)))
        stored = take(events, wanted, ["body"])["body"].to_pylist()
        bodies = Held(len(kinds), array("q"), b"", array("q", [0])).with_entries(
            [(i, s.encode()) for i, s in zip(wanted.to_pylist(), stored)], len(kinds))

        def hashed() -> CompactRange:
            tree = CompactRange()
            for batch in batches(events, ["body"]):
                extend(tree, leaf_hashes([s.encode() for s in batch.column(0).to_pylist()]))
            return tree

        return _Projected(len(kinds), projection.held, bodies, hashed)
    column = projection.tables()["events"]["body"]
    body = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    ends = array("q")
    ends.frombytes(body.buffers()[1])
    log = StoredEntries(memoryview(body.buffers()[2]), ends[body.offset:body.offset + len(body) + 1])
    return _Projected(len(log), log, _bodies(projection.tables()["events"]["kind"], log), lambda: tree_of(log, len(log)))


def _read_checkpoint(root: Path, report: VerifyReport, log: _Projected) -> tuple[VerifyReport, Checkpoint]:
    """Returns the verification as of the checkpoint the projection read, and that checkpoint: the
    verification and the projection read the log each once, and a checkpoint signed between the
    two reads is not a failure. When they read different sizes the projected entries are hashed and
    must give the root of the signed checkpoint of their size (only then: it costs a pass over the log).

    :raises CertificateError: when no checkpoint of that size verifies, or its root is not theirs.
    """
    verifier = LogReader(root).verifier
    try:
        checkpoint = stored_checkpoint(root, log.size, verifier)
    except (LedgerError, OSError) as exc:
        raise CertificateError(f"no audit state written: the audit projected {log.size} entries, which no signed "
                               f"checkpoint names ({exc})") from None
    if log.size == report.size:
        return report, checkpoint
    if log.tree().root() != checkpoint.root:
        raise CertificateError(f"no audit state written: the {log.size} entries projected do not give the root of "
                               f"checkpoint {log.size} (the log verified to {report.size})")
    return replace(report, size=checkpoint.size, root=checkpoint.root.hex(), signed=checkpoint.size,
                   unsigned=max(report.size + report.unsigned - checkpoint.size, 0)), checkpoint


def _state(session: Session, log: _Projected, checkpoint: Checkpoint, tree: CompactRange, files: StateFiles,
           rows: Rows) -> bytes:
    """Writes an audit's state files (its projection's kept files, the bodies the checks read, the
    scoped queries' rows) as each is made; returns the state naming them.

    :raises CertificateError: when the tree's compact range does not give the checkpoint's root.
    """
    if tree.size != checkpoint.size or tree.root() != checkpoint.root:
        raise CertificateError(f"no audit state written: the stored tiles do not give the root of checkpoint {checkpoint.size}")
    assert isinstance(session.db, AuditDB)
    writer = _Writer(files)
    kept_files(writer.put, session.projection, session.db.built_tables(), log.held)
    _put_own(writer, log.bodies, rows)
    return writer.state(checkpoint, tree)


def _bodies(kinds: pa.ChunkedArray, log: StoredEntries) -> Held:
    """Returns the entries of `KEPT_BODIES`, taken from the log read."""
    entries = array("q", pc.indices_nonzero(pc.is_in(kinds, value_set=pa.array(KEPT_BODIES))).to_pylist())
    return Held(len(log), array("q"), b"", array("q", [0])).with_entries(
        [(i, bytes(log.data[log.ends[i]:log.ends[i + 1]])) for i in entries], len(log))


def _put_own(writer: _Writer, held: Held, rows: Rows) -> None:
    """Writes the state's own files: the bodies and the scoped queries' rows."""
    for name, data in ((BODIES, held.data), (BODIES_ENDS, held.ends), (BODIES_ENTRIES, held.entries), (ROWS, msgspec.json.encode(rows))):
        writer.put(name, given(data))


# -- the incremental audit ---------------------------------------------------------------------------

def audit_since(root: Path, earlier: bytes, where: Path, auditor: Verifier, log: Verifier, certificate: Path,
                tournament: str | None = None, progress: Callable[[int], None] | None = None) -> Since:
    """Audits a ledger from the state of an earlier certificate (`earlier`, the file at `where`); the
    new state's files are written beside `certificate`.

    :raises CertificateError: when the certificate does not verify, names another log, or the log
        now does not extend the one it certified (exit 1).
    :raises SinceRefused: when its state is missing, altered, or of other code (exit 2).
    :raises OutputRefused: as `state_files` (exit 2).
    """
    checked = check_certificate(earlier, auditor, log, str(where))
    out = state_files(certificate)
    signed = LogReader(root).signed()
    _same_log(checked, signed, where)
    state, files = _open_state(where, checked)
    projection, built, held, bodies, earlier_rows = _loaded(state, files)
    before, streams = projection, set[str]()
    new: list[tuple[int, bytes]] = []
    read: list[bool] = []
    kinds: list[tuple[str, str, int | None]] = []  # each new entry's kind, stream and round (a seating's)
    games, problem = 0, None
    leading: dict[str, int] = {}  # the tables whose earlier rows lead the new ones unchanged
    if state.projection.signed[0] < signed.size:
        def told(n: int) -> None:
            nonlocal games
            games += n
            if progress is not None:
                progress(n)

        def kept_bodies(entries: list[tuple[int, bytes]], events: list[Any]) -> None:
            nonlocal problem
            new.extend(entries)
            read.extend(event.kind in KEPT_BODIES for event in events)
            streams.update(event.stream for event in events)
            kinds.extend((event.kind, event.stream, getattr(event, "round", None)) for event in events)
            problem = _index_problem(root, state.projection.signed[0], entries, events)

        projection, built, held, tree, leading = _extend(root, state.projection, held, projection, built, signed, told, kept_bodies)
        _checkpoints_between(root, state.projection, new, signed, log)
        bodies = bodies.with_entries([entry for entry, body in zip(new, read) if body], signed.size)
    else:
        tree = _frontier(state.projection)
    rows: Rows = {}
    touched = touched_games(before, projection, streams) if projection is not before else (set(), True)
    rounds = SeatingRounds.of_rows(earlier_rows.get(SEATING, []), state.projection.signed[0], _fresh_from(projection, touched[0], kinds))
    boards = BoardDeals.of_rows(earlier_rows[DEALS], _boards_of(projection, touched[0])) if DEALS in earlier_rows else BoardDeals()
    cert = _certified(root, projection, built, held, bodies, signed, tournament, problem, (touched, earlier_rows, rows), (rounds, boards))
    rows[SEATING], rows[DEALS] = rounds.rows(), boards.rows()
    if problem is not None:  # as the full audit: a log that does not verify leaves no state
        return Since(cert, None, checked, signed.size - state.projection.signed[0], games)
    writer = _Writer(out, files)
    writer.reuse(kept_files(writer.put, projection, built, held, (state.projection, leading)))
    _put_own(writer, bodies, rows)
    return Since(cert, writer.state(signed, tree), checked,
                 signed.size - state.projection.signed[0], games)


def _index_problem(root: Path, start: int, new: list[tuple[int, bytes]], events: list[Any]) -> str | None:
    """Checks the stream index for the new entries, as the full audit checks it for all (`check_index`):
    each stream the new entries belong to lists them, after as many earlier entries as their first
    seq says; returns what is wrong. The streams no new entry belongs to were checked by the earlier
    audit, and the writer never rewrites what the index says of signed entries."""
    if read_head(root) is None:  # a ledger no writer has indexed: nothing to check, as in full
        return None
    mine: dict[str, tuple[int, array]] = {}
    for (entry, _), event in zip(new, events):
        mine.setdefault(event.stream, (event.seq, array("Q")))[1].append(entry)
    for stream, (seq, want) in mine.items():
        path = stream_path(root, stream)
        try:
            _, pairs = read_stream_file(path)
        except (LedgerError, OSError) as exc:
            return f"流索引文件无法读取 / the index has no readable file for stream {stream!r} ({exc})"
        entries = pairs[0::2]
        have = array("Q", [e for e in entries if start <= e < start + len(new)])
        if sum(1 for e in entries if e < start) != seq or have != want:
            return (f"流索引与账本不符 / the index of stream {stream!r} lists entries {list(have)[:5]} after {start}, the log "
                    f"holds {list(want)[:5]} from seq {seq}")
    return None


def _checkpoints_between(root: Path, kept: Kept, new: list[tuple[int, bytes]], signed: Checkpoint, log: Verifier) -> None:
    """Checks each checkpoint stored between the certified one and the newest, as `verify` checks
    successive ones: signed by the log's key, and its root the one the new entries give at its size.

    :raises CertificateError: naming the checkpoint that is not.
    """
    start, tree = kept.signed[0], _frontier(kept)
    for size in (s for s in checkpoint_sizes(root) if start < s < signed.size):
        extend(tree, leaf_hashes([stored for _, stored in new[tree.size - start:size - start]]))
        try:
            root_signed = stored_checkpoint(root, size, log).root
        except (LedgerError, OSError) as exc:
            raise CertificateError(f"检查点 {size} 无效 / checkpoint {size}, signed between the certified one and the newest, "
                                   f"does not verify: {exc}") from None
        if root_signed != tree.root():
            raise CertificateError(f"检查点 {size} 与日志不一致 / checkpoint {size} signs root {root_signed.hex()}, the log's "
                                   f"entries give {tree.root().hex()}")


def _same_log(checked: CheckedCertificate, signed: Checkpoint, where: Path) -> None:
    """Refuses a certificate of another log, or of a checkpoint the log now has not reached.

    :raises CertificateError: saying which.
    """
    cp = checked.checkpoint
    if cp.origin != signed.origin:
        raise CertificateError(f"{where}: 证书所证的是另一日志 / the certificate is of another log: its subject is "
                               f"{cp.origin!r}, this ledger's origin is {signed.origin!r}")
    if cp.size > signed.size:
        raise CertificateError(f"{where}: 日志已回退 / the log was rolled back: the certificate names checkpoint {cp.size}, "
                               f"the newest signed checkpoint is {signed.size}")


def _open_state(where: Path, checked: CheckedCertificate) -> tuple[AuditState, StateFiles]:
    """Returns the state the certificate names, once its bytes are those the auditor signed, and its
    files' directory (each file is checked against the state as it is opened: `_loaded`).

    :raises SinceRefused: when it is missing, altered, of another checkpoint, or of other code.
    """
    named = checked.audit.state
    if named is None or not named.name or "/" in named.name or named.name in (".", ".."):
        raise SinceRefused(f"证书未记审计状态 / {where} names no audit state (an audit whose log did not verify, or "
                           "written before `--since` existed): nothing to continue from")
    path = where.with_name(named.name)
    try:
        data = path.read_bytes()
        files = StateFiles(path.with_name(path.name + ".d"))
    except OSError as exc:
        raise SinceRefused(f"审计状态文件无法读取 / the audit state {path} cannot be read ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != named.digest.get("sha256"):
        raise SinceRefused(f"审计状态文件与证书不符，已被改动 / the audit state {path} is not the one the certificate names "
                           f"(SHA-256 {digest}, the certificate's {named.digest.get('sha256')}): it was altered or replaced")
    try:
        state = msgspec.json.decode(data, type=AuditState)
    except msgspec.DecodeError as exc:
        raise SinceRefused(f"the audit state {path} is unreadable ({exc})") from None
    cp = checked.checkpoint
    if state.kind != KIND or tuple(state.projection.signed) != (cp.size, cp.root.hex()):
        raise SinceRefused(f"the audit state {path} is not of checkpoint {cp.size} the certificate names")
    if state.projection.code != code_fingerprint():
        raise SinceRefused(f"审计状态由其他版本的代码得出 / the audit state {path} was derived by other code "
                           f"({state.projection.code}; this is {code_fingerprint()}): it is not continued")
    return state, files


def _loaded(state: AuditState, files: StateFiles) -> tuple[Any, dict[str, pa.Table], Held, Held, Rows]:
    """Returns the state's projection (its tables opened from their files, read only where asked for),
    built tables, held entries, bodies, and the scoped queries' rows.

    :raises SinceRefused: when a file is not the one its state names.
    """
    kept = state.projection
    try:
        projection, built, held = load(files, kept)
        bodies = _held(kept.signed[0], *(kept_file(files, state, n) for n in (BODIES_ENTRIES, BODIES, BODIES_ENDS)))
        rows = msgspec.json.decode(kept_file(files, state, ROWS), type=Rows)
    except (StateRefused, OSError, msgspec.DecodeError) as exc:
        raise SinceRefused(f"审计状态文件缺失或被改动 / the audit state's files in {files.directory} cannot be used: {exc}") from None
    return projection, built, held, bodies, rows


def _held(size: int, entries: bytes, data: bytes, ends: bytes) -> Held:
    at, bounds = array("q"), array("q")
    at.frombytes(entries)
    bounds.frombytes(ends)
    return Held(size, at, data, bounds)


def _frontier(kept: Kept) -> CompactRange:
    """Returns the state's compact range, which must give its checkpoint's root.

    :raises SinceRefused: when it does not.
    """
    tree = CompactRange()
    tree.size, tree._stack = kept.signed[0], [bytes.fromhex(h) for h in kept.frontier]
    if tree.root().hex() != kept.signed[1]:
        raise SinceRefused(f"the audit state's compact range does not give the root of checkpoint {kept.signed[0]}")
    return tree


def _extend(root: Path, kept: Kept, held: Held, projection: Any, built: dict[str, pa.Table], signed: Checkpoint,
            told: Callable[[int], None], on_new: Callable[[list[tuple[int, bytes]], list[Any]], None]
            ) -> tuple[Any, dict[str, pa.Table], Held, CompactRange, dict[str, int]]:
    """Extends the state's projection by the entries signed since (projection_cache's extension); returns
    it, the built tables, the held entries, the tree, and the tables whose earlier rows lead unchanged.

    :raises CertificateError: when the log signed now does not extend the certified one, or its entries cannot be read.
    """
    _frontier(kept)
    try:
        projection, built, tree, held, _, leading = extended(root, kept, held, projection, built, signed, told, on_new)
    except StateRefused as exc:
        raise CertificateError(f"日志不是所证日志的延续，拒绝增量审计 / the log now does not extend the log certified at "
                               f"checkpoint {kept.signed[0]} (root {kept.signed[1]}): {exc}") from None
    return projection, built, held, tree, leading


def _certified(root: Path, projection: Any, built: dict[str, pa.Table], held: Held, bodies: Held, signed: Checkpoint,
               tournament: str | None, problem: str | None, scope: tuple[Touched, Rows, Rows],
               kept: tuple[SeatingRounds, BoardDeals]) -> Certification:
    """Runs every check over the extended projection, its log proved to the newest signed checkpoint
    (and failed, as in full, when the stream index does not list the new entries: `problem`); the
    per-game queries over the touched games only (`scope`: them, the earlier rows, the rows given),
    and the seating and deal checks over the rounds and boards a new entry can change (`kept`)."""
    read = _bodies_read(bodies, projection, tournament, scope, kept[1])
    projection.body = lambda: held.merged(read).body()  # what `tables()` gives, only if asked
    projection.held = held  # a round judged as of a later ruling reads the rulings and the games' openings there (as_of)
    db = database(projection, built, body=True, bodies=held.table(read))  # the kept tables scanned in their files, `events` too
    scoping(db, projection, built, *scope)
    session = Session(projection, db, "extended", signed)
    report = VerifyReport(ok=problem is None, size=signed.size, root=signed.root.hex(), checkpoints=1, signed=signed.size,
                          unsigned=LogReader(root).unsigned(), error=None if problem is None else f"stream index: {problem}")
    return certify_session(report, session, tournament, *kept)


def _bodies_read(bodies: Held, projection: Any, tournament: str | None, scope: tuple[Touched, Rows, Rows], boards: BoardDeals) -> Held:
    """Returns the bodies the checks read: the touched games' (the scoped queries, huxi_claims among
    them) and those of every game on a touched board (the deal check compares a board's tables), not
    the season's (issue 32.1); all of them where a check runs over every game (an audit of one
    tournament, an earlier state without a scoped query's rows or the boards' findings)."""
    (streams, _), earlier, _ = scope
    if tournament is not None or boards.touched is None or any(name not in earlier for name in SCOPED):
        return bodies
    games = _games_where(projection, ["stream", "tournament", "board"], "board", {b for _, b in boards.touched})
    read = streams | {g["stream"] for g in games if g["board"] and (g["tournament"] or "", g["board"]) in boards.touched}
    if not read:
        return bodies.only(pa.array([], pa.int64()))
    return bodies.only(rows_where(projection.sources()["events"], "stream", read, ["entry"])["entry"].combine_chunks())


def _games_where(projection: Any, columns: list[str], key: str, values: set[str]) -> list[dict[str, Any]]:
    """Returns some columns of the games whose `key` is among `values`, as rows (`rows_where`)."""
    return rows_where(projection.sources()["games"], key, values, columns).select(columns).to_pylist()


def _boards_of(projection: Any, touched: set[str]) -> set[tuple[str, str]]:
    """Returns the Paohuzi boards (tournament, board) a touched game is played on (第五条: a board's
    tables are compared with each other only)."""
    games = _games_where(projection, ["stream", "game", "tournament", "board"], "stream", touched)
    return {(g["tournament"] or "", g["board"] or "") for g in games if g["stream"] in touched and g["game"] == "paohuzi" and g["board"]}


def _fresh_from(projection: Any, touched: set[str], kinds: list[tuple[str, str, int | None]]) -> dict[str, int]:
    """Returns, by tournament, the first round whose seating a new entry can change (its standings
    are judged on the entries before it was seated, the later rulings left out: tournament_checks.as_of):
    the round after a touched game's, a new seating's own round, round 1 after a registration or an
    opening (the draw's players); a round's closing adds no row a seating check reads. After a new
    arbitration event (an appeal, a decision, a ruling) every round of every tournament is judged again,
    as a full audit judges them."""
    tournaments = [t["tournament"] for t in projection.tournaments]
    if any(kind in ARBITRATION_KINDS for kind, _, _ in kinds):
        return {t: 1 for t in tournaments}
    fresh: dict[str, int] = {}
    for game in _games_where(projection, ["stream", "tournament", "round"], "stream", touched):
        if game["stream"] in touched and game["tournament"] is not None:
            fresh[game["tournament"]] = min(fresh.get(game["tournament"], 1 << 30), (game["round"] or 0) + 1)
    for kind, stream, rnd in kinds:
        if kind.startswith("tournament.") and kind != "tournament.round_closed":
            fresh[stream] = min(fresh.get(stream, 1 << 30), rnd if kind == "tournament.round_seated" and rnd is not None else 1)
    return fresh
