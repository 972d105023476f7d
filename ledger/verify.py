"""Full verification (fsck) of a ledger, streaming one segment at a time.

Re-reads every frame, checks its CRC, length and position, recomputes every leaf and the tree,
and compares the root at every stored checkpoint after checking its signature. Sequence numbers
are the writer's to enforce; the signed roots cover them.
Successive checkpoints are consistent exactly when each one's root is the root of a prefix of
the same leaves, which this recomputation establishes.

How the work is spread (all of it is done on every run): segments are read (a few MB at a time,
`scan_file`) and scanned a few at a time in threads (the C scanner releases the GIL); the
checkpoint notes are read meanwhile and their Ed25519 signatures checked in batches in another
thread (in C with the GIL released, see `SignatureChecks`); the tree grows segment by segment in
the calling thread, which computes the root at each checkpoint size on the way (`extend_roots`)
rather than a tree per checkpoint. Whatever runs at the same time, the report is the one a
sequential check gives: a bad checkpoint note is reported before any damage to the entries, the
first bad note first.

On the 10,000-game event of the audit (3.1 M entries, 520 MB, 10,006 checkpoints) that is about
1.2 s of CPU: 0.5 s reading, CRC and leaf hashes, 0.2 s the tree and its 10,006 roots, 0.35 s the
signatures (libsodium; 0.64 s with OpenSSL alone), 0.1 s reading the notes.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ledger.checkpoints import (
    Checkpoint,
    CheckpointReading,
    SignatureChecks,
    list_checkpoint_names,
    newest_checkpoint,
    parse_checkpoint,
    read_checkpoint,
    read_note_file,
)
from ledger.commitments import Commitment, check_heads, check_history, commitments
from ledger.errors import KeyFileError, LedgerCorrupt, SignatureError
from ledger.fastscan import CHUNK, SegmentScan, extend_roots, scan_file
from ledger.frames import check_segment_start, committed_end, frame_follows, indexed_streams, stream_codes
from ledger.index import check_index, read_head
from ledger.layout import CHECKPOINTS, CONFIG, LATEST, SEGMENTS, config_digest, load_config
from ledger.merkle import EMPTY_ROOT, CompactRange
from ledger.notelog import NOTES, NoteFile
from ledger.notes import Verifier, split_note
from ledger.segments import list_segments
from ledger.state import check_state, read_state_line
from ledger.store import load_verifier
from ledger.tiles import TileAudit
from schemas import decode
from schemas.log import WITNESS_STREAM, WitnessAdded

WORKERS = min(os.cpu_count() or 1, 4)
SIGNATURE_BATCH = 1024


@dataclass
class VerifyReport:
    """The verdict of a full verification; `index` names the first bad entry when there is one."""

    ok: bool
    size: int
    root: str
    checkpoints: int
    index: int | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    signed: int = 0
    """The tree size of the newest checkpoint."""
    unsigned: int = 0
    """Committed entries after the newest checkpoint: checked for damage, verified by no signature, never counted."""
    commitments: list[Commitment] = field(default_factory=list)
    """Each checkpoint's stream commitment, for a caller that checks the index itself (`verify(index=False)`)."""
    state: str | None = None
    """The newest checkpoint's state of all streams (its line), for the same caller."""


class _Failed(Exception):
    def __init__(self, index: int | None, message: str) -> None:
        super().__init__(message)
        self.index = index


def verify(root: Path, index: bool = True, witness_keys: Sequence[Verifier] = ()) -> VerifyReport:
    """Verifies a whole ledger and reports the first problem found: every frame, leaf and
    checkpoint, the stored tiles and (unless `index` is False) the stream index.

    The notes are listed before the segments, so a checkpoint a live writer signs meanwhile is
    not held against entries the scan never saw. Co-signatures are checked for the witnesses the
    log records (`log.witness_added`, each required on the checkpoint it co-signed) and for the
    keys given, never for keys merely lying in a folder of the ledger.
    """
    load_config(root)
    verifier = load_verifier(root)
    try:
        registered = recorded_witnesses(root)
    except LedgerCorrupt as exc:
        return _note_failure(f"witness registrations: {exc}", [])
    witnesses = _unique([*witness_keys, *(w for w, _, _ in registered)])
    with ThreadPoolExecutor(max_workers=WORKERS) as pool, ThreadPoolExecutor(max_workers=1) as signing:
        checks = SignatureChecks()
        tail: list[str] = []
        strays: list[str] = []
        readings = _read_checkpoints(root, verifier, witnesses, checks, signing, tail, strays)
        if strays:  # named so by no writer: planted, or copied by hand (the readers and the writer pass it by)
            checks.wait()
            return _note_failure(f"checkpoints/ 中有写入者不会使用的检查点文件名 / checkpoints/ holds {len(strays)} file(s) named like "
                                 f"a note but not as the writer names one (a 20-digit size): {', '.join(strays[:5])}", [])
        found = list_segments(root / SEGMENTS)
        segments = _Scans(pool, found)
        if not readings or any(r.malformed or r.checkpoint is None or r.checkpoint.size != r.size for r in readings):
            segments.cancel()
            checks.wait()  # a note is bad whatever the entries hold: the notes decide, in order
            verdict = _notes_verdict(readings, checks, [])
            return verdict or _note_failure("the ledger holds no checkpoint notes (init signs the empty tree's): they were removed", [])
        checks.start(signing)
        checkpoints = [r.checkpoint for r in readings if r.checkpoint is not None]
        tree = CompactRange()
        try:
            _check_served(root, verifier, checkpoints[-1].size)
            _check_settings(root, checkpoints)
            _served_older(root, verifier, checkpoints[-1].size, tail)
            head = read_head(root)
            legacy = head is None  # written before tiles and index: the next writer builds them
            if legacy:
                tail.append("尚未建立瓦片和流索引（账本早于它们），下一个写入者会建立 / "
                            "tiles and stream index not built yet (a ledger from before them); the next writer builds them")
            tiles = TileAudit(root, 0 if legacy else checkpoints[-1].size, legacy, head.size if head else None)
            _check_entries(tree, checkpoints, found, segments, tail, tiles)
            if tiles.rebuilt:
                tail.append(f"索引头（第 {head.size if head else 0} 号条目）之后的部分瓦片缺失或不完整（实时服务的提交或崩溃所致），"
                            f"下一个完整检查点或写入者会由条目写出 / "
                            f"partial tiles are missing or short beyond the index head (entry {head.size if head else 0}), as a live "
                            f"service's commits or a crash leave them: {', '.join(tiles.rebuilt[:3])}; the next full checkpoint "
                            f"or writer writes them from the entries")
            problem = check_history(root, [c.size for c in checkpoints], [first for first, _ in found])
            if problem:
                raise _Failed(None, problem)
            if index:
                indexed = _indexed(root, checkpoints[-1].size, tail)
                _check_index(root, checkpoints, indexed)
            failed = None
        except _Failed as exc:
            failed = exc
        finally:
            segments.cancel()
        checks.wait()
    notes: list[str] = []
    bad_note = _notes_verdict(readings, checks, notes) or _witness_verdict(readings, checks, registered)
    if bad_note is not None:
        return bad_note
    notes += tail
    if failed is not None:
        return VerifyReport(False, tree.size, tree.root().hex(), len(checkpoints), failed.index, str(failed), notes)
    newest = checkpoints[-1]
    unsigned = tree.size - newest.size
    if unsigned:
        notes.append(unsigned_note(newest.size, unsigned))
    return VerifyReport(True, newest.size, newest.root.hex(), len(checkpoints), notes=notes, signed=newest.size,
                        commitments=commitments(checkpoints), state=read_state_line(newest.extensions),
                        unsigned=unsigned)


def unsigned_note(signed: int, unsigned: int) -> str:
    """Says that entries after the newest signed checkpoint count for nothing (zh-Hans, then English)."""
    return (f"最新签名检查点（大小 {signed}）之后有 {unsigned} 个未签名条目，不予认证 / {unsigned} unsigned entries after the "
            f"newest signed checkpoint (size {signed}): verified to size {signed} only; nothing after it is certified or shown")


def recorded_witnesses(root: Path) -> list[tuple[Verifier, int, int]]:
    """Returns the witnesses the log records: (key, checkpoint size co-signed, entry of the record).

    :raises LedgerCorrupt: when a record is unreadable.
    """
    found = []
    for entry, data in indexed_streams(root, [WITNESS_STREAM], 2**63)[WITNESS_STREAM]:
        event = decode(data)
        if not isinstance(event, WitnessAdded):
            raise LedgerCorrupt(entry, f"见证流中出现了 {event.kind} 事件 / {event.kind} in the witness stream")
        try:
            found.append((Verifier.parse(event.verifier), event.size, entry))
        except KeyFileError as exc:
            raise LedgerCorrupt(entry, f"见证流中的验证公钥无效 / {exc}") from None
    return found


def _unique(keys: list[Verifier]) -> list[Verifier]:
    return list({(k.name, k.public): k for k in keys}.values())


def _witness_verdict(readings: list[CheckpointReading], checks: SignatureChecks,
                     registered: list[tuple[Verifier, int, int]]) -> VerifyReport | None:
    """Returns a failure when a checkpoint lacks a co-signature the log records."""
    cosigned = {}
    for reading in readings:
        cosigned[reading.size] = set(reading.outcome(checks)[1])
    for witness, size, entry in registered:
        if witness.name not in cosigned.get(size, set()):
            where = "is missing" if size not in cosigned else "carries no valid co-signature by it"
            return _note_failure(f"entry {entry} records {witness.name!r} as a witness of checkpoint {size}, "
                                 f"but that checkpoint {where}", [])
    return None


def _check_served(root: Path, verifier: Verifier, signed: int) -> None:
    """Checks the `checkpoint` file and the index head against the newest note."""
    try:
        served = newest_checkpoint(root, verifier)
    except LedgerCorrupt as exc:
        raise _Failed(None, str(exc)) from None
    if served is not None and served.size > signed:
        raise _Failed(None, f"`checkpoint` 文件的大小 {served.size} 超出最新的检查点说明（{signed}） / "
                      f"the `checkpoint` file holds size {served.size}, beyond the newest note ({signed})")
    if served is not None and served.size < signed:
        raise _Failed(None, f"日志提供的最新检查点大小为 {served.size}，早于保存的检查点说明（{signed}）：`checkpoint` 文件或 "
                      f"index/checkpoints 被回滚 / the newest checkpoint the log serves is of size {served.size}, older than the kept note of size "
                      f"{signed}: the `checkpoint` file or index/checkpoints was rolled back")
    head = read_head(root)
    if head is not None and head.size > signed:
        raise _Failed(None, f"索引记录的检查点大小为 {head.size}，但最新的检查点说明只到 {signed}：检查点说明被删除或回滚 / "
                      f"the index records a checkpoint of size {head.size}, but the newest checkpoint note is of "
                      f"size {signed}: checkpoint notes were removed or rolled back")


def _check_settings(root: Path, checkpoints: list[Checkpoint]) -> None:
    """Checks `ledger.json` against the settings digest every checkpoint note signs."""
    digest = config_digest(root)
    for checkpoint in checkpoints:
        if checkpoint.config_digest not in (None, digest):
            raise _Failed(None, f"{CONFIG} 在签名后被改动 / {CONFIG} was changed after checkpoint {checkpoint.size} signed it "
                          f"(sha256 {checkpoint.config_digest}, now {digest})")


def _served_older(root: Path, verifier: Verifier, signed: int, tail: list[str]) -> None:
    """Notes a `checkpoint` file that serves an older note than the newest kept one."""
    try:
        served = parse_checkpoint(read_note_file(root / LATEST), verifier).size
    except (FileNotFoundError, SignatureError):
        return  # none served, or a bad one: _check_served reports it
    if served < signed:
        tail.append(f"`checkpoint` 文件提供的是旧检查点（大小 {served}，最新为 {signed}）：两次写入间崩溃或文件被回滚，"
                    f"读取它的客户端看到的更少 / the `checkpoint` file serves size {served}, older than the newest "
                    f"note ({signed}): a crash between the two writes, or the file was rolled back; clients served it see less")


def _indexed(root: Path, signed: int, tail: list[str]) -> int:
    """Returns how many entries the stream index must cover: those up to the index head. A live
    service's commits sign checkpoints before the index is durable (`Ledger.checkpoint(index=False)`);
    after a crash the next writer indexes the entries beyond the head, which is noted."""
    head = read_head(root)
    if head is None or head.size >= signed:
        return signed
    tail.append(f"流索引只对前 {head.size} 个条目已持久化，其后已签名的 {signed - head.size} 个条目由下一个写入者建立索引"
                f"（实时服务停止时未做最后一次完整检查点） / the stream index is durable for the first {head.size} entries; "
                f"the next writer indexes the {signed - head.size} signed after them (a live service stopped without its last full checkpoint)")
    return head.size


def _check_index(root: Path, checkpoints: list[Checkpoint], indexed: int) -> None:
    """Checks the stream index against the first `indexed` entries, every checkpoint's stream
    commitment against the entries the newest checkpoint covers, and the newest's state of all streams."""

    coded, starts = stream_codes(root, checkpoints[-1].size)
    problem = check_index(root, coded, indexed, starts)
    if problem:
        raise _Failed(None, f"stream index: {problem}")
    heads: dict[str, tuple[int, int]] = {}
    newest = checkpoints[-1]
    problem = check_heads(coded, commitments(checkpoints), heads) or check_state(heads, read_state_line(newest.extensions), newest.size)
    if problem:
        raise _Failed(None, problem)


def _read_checkpoints(root: Path, verifier: Verifier, witnesses: list[Verifier], checks: SignatureChecks,
                      signing: ThreadPoolExecutor, tail: list[str], strays: list[str]) -> list[CheckpointReading]:
    """Reads every stored checkpoint note, in their own files and in the notes file, queueing its
    signatures in `checks` and starting them in `signing` a batch at a time; returns them by size
    (other names ending in `.note` go to `strays`).
    A note of a size that also has its own file (co-signed later) must state the same body; the
    file's is the one judged."""
    readings: list[CheckpointReading] = []
    names = list_checkpoint_names(root, strays)
    if names:
        directory = os.open(root / CHECKPOINTS, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for n, (size, name) in enumerate(names, 1):
                note = _read_small(name, directory).decode()
                readings.append(read_checkpoint(size, name, note, verifier, witnesses, checks))
                if n % SIGNATURE_BATCH == 0:
                    checks.start(signing)
        finally:
            os.close(directory)
    own = {r.size: r for r in readings}
    with NoteFile(root) as logged:
        size = 0
        for n, found in enumerate(logged, 1):
            size, name = max(found.size, size), f"{CHECKPOINTS}/{NOTES} at byte {found.offset}"
            try:
                note = found.data.decode()
            except UnicodeDecodeError:
                readings.append(CheckpointReading(size, name, None, "not UTF-8 text"))
                continue
            if size in own:
                kept = own[size].checkpoint
                if kept is not None and _body(note) != kept.body:
                    readings.append(CheckpointReading(size, name, None, f"its body differs from {own[size].name}'s"))
                continue
            readings.append(read_checkpoint(size, name, note, verifier, witnesses, checks))
            if n % SIGNATURE_BATCH == 0:
                checks.start(signing)
        if logged.complete < logged.length:
            tail.append(f"{CHECKPOINTS}/{NOTES} 末尾有一条被截断的检查点记录（追加时崩溃），下一个写入者会截去 / "
                        f"a checkpoint note cut short at the end of {CHECKPOINTS}/{NOTES} (a crash during its append); the next writer cuts it")
    readings.sort(key=lambda r: r.size)  # (stable: a bad logged note stays after the file of its size)
    return readings


def _body(note: str) -> str | None:
    try:
        return split_note(note)[0]
    except SignatureError:
        return None


def _read_small(name: str, directory: int, chunk: int = 1 << 16) -> bytes:
    """Reads a small file of a directory (open file objects cost twice as much for ten thousand notes)."""
    fd = os.open(name, os.O_RDONLY, dir_fd=directory)
    try:
        parts = [os.read(fd, chunk)]
        while parts[-1]:
            parts.append(os.read(fd, chunk))
    finally:
        os.close(fd)
    return b"".join(parts)


def _notes_verdict(readings: list[CheckpointReading], checks: SignatureChecks, notes: list[str]) -> VerifyReport | None:
    """Returns the report of the first bad checkpoint note, if any, gathering co-signers in `notes`."""
    sizes: set[int] = set()
    for reading in readings:
        size, name = reading.size, reading.name
        try:
            cp, signed = reading.outcome(checks)
        except SignatureError as exc:
            return _note_failure(f"checkpoint of size {size} ({name}): {exc}", notes)
        if signed:
            notes.append(f"大小为 {size} 的检查点由 {'、'.join(signed)} 联署 / checkpoint of size {size} co-signed by {', '.join(signed)}")
        if cp.size != size:
            return _note_failure(f"checkpoint file {name} holds a checkpoint of size {cp.size}", notes)
        if size in sizes:
            return _note_failure(f"checkpoint of size {size} ({name}): a second note of that size", notes)
        sizes.add(size)
    return None


def _note_failure(message: str, notes: list[str]) -> VerifyReport:
    return VerifyReport(False, 0, EMPTY_ROOT.hex(), 0, None, message, notes)


def _check_entries(tree: CompactRange, checkpoints: list[Checkpoint], found: list[tuple[int, Path]],
                   segments: Iterable[SegmentScan], notes: list[str], tiles: TileAudit) -> None:
    walk = _Walk(tree, checkpoints, tiles)
    covered = checkpoints[-1].size if checkpoints else 0
    horizon = committed_end([(first, path, path.stat().st_size) for first, path in found])
    walk.leaves(b"")
    expected, torn = 0, False
    for n, ((first, path), part) in enumerate(zip(found, segments)):
        later = len(found) - n - 1
        try:
            check_segment_start(path, first, expected)
        except LedgerCorrupt as exc:
            raise _Failed(exc.index, str(exc).split(": ", 1)[1]) from None
        # beyond the checkpoints, only committed frames count: those before a commit mark, in this
        # segment or a later one (a batch may go on into the next segment)
        marked = max(part.last_commit, horizon - first) if part.error is None else part.last_commit
        limit = min(part.frames, max(covered - first, marked)) if tree.size == first else 0
        walk.leaves(memoryview(part.leaves)[: 32 * limit])
        if part.error is not None and (first + part.frames < covered or later
                                       or frame_follows(path.read_bytes(), part.error_offset, first + part.frames + 1)):
            raise _Failed(first + part.frames, f"{part.error} (segment {path.name}, offset {part.error_offset})")
        if (part.error is not None or limit < part.frames) and not torn:
            torn = True
            notes.append(f"第 {tree.size - 1} 号条目之后有未确认的残尾（写入中断），下一个写入者会丢弃 / "
                         f"unacknowledged tail after entry {tree.size - 1} ({part.error or 'no commit mark'}); the next writer drops it")
        expected = first + part.frames
    if tree.size < covered:
        raise _Failed(tree.size, f"日志在第 {tree.size} 个条目后结束，但检查点覆盖 {covered} 个：条目被删除 / "
                      f"log ends after {tree.size} entries, but a checkpoint covers {covered}: entries were removed")
    problem = tiles.finish()
    if problem:
        raise _Failed(None, problem)


_buffers = threading.local()


def _scan_segment(first: int, path: Path) -> SegmentScan:
    """Scans a segment file a chunk at a time through this thread's reusable buffer."""
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None:
        buffer = _buffers.buffer = bytearray(CHUNK)
    return scan_file(path, first, buffer)


class _Scans:
    """Each segment's scan in order, up to `ahead` segments read and scanned at once in the pool
    from the moment it is made (the C scanner releases the GIL); memory stays bounded by `ahead`
    segments."""

    def __init__(self, pool: ThreadPoolExecutor, found: list[tuple[int, Path]], ahead: int = WORKERS) -> None:
        self._pool, self._todo = pool, iter(found)
        self._pending: deque[Future[SegmentScan]] = deque()
        for _ in range(ahead):
            self._submit()

    def _submit(self) -> None:
        for first, path in self._todo:
            self._pending.append(self._pool.submit(_scan_segment, first, path))
            return

    def __iter__(self) -> Iterator[SegmentScan]:
        while self._pending:
            part = self._pending.popleft().result()
            self._submit()
            yield part

    def cancel(self) -> None:
        """Drops the scans not started yet."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()


class _Walk:
    """Feeds leaf hashes into the tree, comparing the root at every checkpoint on the way."""

    def __init__(self, tree: CompactRange, checkpoints: list[Checkpoint], tiles: TileAudit) -> None:
        self.tree = tree
        self.tiles = tiles
        self.pending = checkpoints
        self.next = 0  # the first checkpoint the tree has not reached yet
        self.proven = 0  # entries below this index are covered by a matching checkpoint

    def leaves(self, blob: bytes | memoryview) -> None:
        problem = self.tiles.feed(blob)
        if problem:
            raise _Failed(None, problem)
        tree, start, pending = self.tree, self.tree.size, self.pending
        top = start + len(blob) // 32
        stop = self.next
        while stop < len(pending) and pending[stop].size <= top:
            stop += 1
        reached = pending[self.next:stop]
        saved = list(tree._stack)
        roots = extend_roots(tree, blob, [cp.size for cp in reached])
        if roots == b"".join(cp.root for cp in reached):
            self.next = stop
            self.proven = reached[-1].size if reached else self.proven
            return
        bad = next(i for i, cp in enumerate(reached) if roots[32 * i:32 * i + 32] != cp.root)
        self.proven = reached[bad - 1].size if bad else self.proven
        cp = reached[bad]
        tree._stack[:], tree.size = saved, start  # the report gives the tree at the failing checkpoint
        extend_roots(tree, blob[: 32 * (cp.size - start)], [])
        raise _Failed(self.proven, f"第 {self.proven}–{cp.size - 1} 号条目与检查点 {cp.size} 不符（其根为 {cp.root.hex()}，"
                      f"条目给出 {tree.root().hex()}） / entries {self.proven}–{cp.size - 1} do not match checkpoint {cp.size}: "
                      f"it has root {cp.root.hex()}, the entries give {tree.root().hex()}")
