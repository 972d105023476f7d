"""The ledger: one append-only, tamper-evident log with a single writer.

Appends are atomic batches, acknowledged once their bytes are synced (group commit). Each
stream's events must arrive with the next expected sequence number; an identical re-send is
acknowledged without a second copy, and a different event at a used number is a conflict.
"""

from __future__ import annotations

import bisect
import fcntl
import os
import shutil
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import msgspec

from ledger.anchor import check_writer_key, log_key
from ledger.batch import PIECE, BatchPlan, Pending
from ledger.checkpoints import (
    Checkpoint,
    cosign_note,
    list_checkpoint_names,
    log_checkpoint,
    newest_checkpoint,
    newest_note_file,
    newest_size,
    notes_changed,
    repair_latest,
    serves,
    write_checkpoint,
)
from ledger.commitments import UNKNOWN, HistoryWriter, StreamHead, append_history, heads_line, history_path, open_history
from ledger.errors import CheckpointError, DiskError, ForeignEntries, LedgerCorrupt, LedgerError, LedgerLocked
from ledger.fastscan import extend, frame_batch, leaf_hashes
from ledger.frames import Tail, decode_key, move_aside_from, move_derived_aside, new_aside, read_frame, read_tail
from ledger.index import HEAD, INDEX, STREAMS, Head, Seal, StreamIndex, flush, load_stream, read_head, seal_key, truncate_from
from ledger.layout import CHECKPOINTS, CONFIG, LOCK, PRIVATE_KEY, PUBLIC_KEY, SEGMENTS, LedgerConfig, config_digest, load_config, write_atomic
from ledger.merkle import CompactRange
from ledger.notelog import NoteWriter
from ledger.notes import Signer, Verifier
from ledger.outputs import OutputRefused, ledger_holding
from ledger.segments import OVERHEAD, FileOps, OriginProofs, SegmentWriter, fsync_dir, list_segments, segment_path, sync_file
from ledger.state import StreamState, encode_digests, read_state_line, signed_head_state
from ledger.tiles import WIDTH, TileReader, TileWriter
from schemas import decode, encode
from schemas.log import WITNESS_STREAM, WitnessAdded

OPEN_INDEXES = 4096
"""Clean stream indexes the writer keeps open (at most about 2 KB each): those of the tables in
play and the log's own streams; one let go is opened again, from its file's size, when next used."""


@dataclass(frozen=True)
class AppendResult:
    """What an append did: events appended, identical re-sends acknowledged, the new tree size,
    and the recovery the writer made when it opened the ledger, if any."""

    appended: int
    duplicates: int
    size: int
    recovered: str | None = None
    leaves: bytes = b""
    """The RFC 6962 leaf hashes of the entries appended, 32 bytes each, in order."""


def init(root: Path, origin: str | None = None, **settings: int) -> Path:
    """Creates an empty ledger with a fresh Ed25519 key pair; returns the verifier key's path.
    `settings` override the defaults of `LedgerConfig` (max_entry_bytes, segment_bytes, checkpoint_interval).

    The ledger is built in a temporary directory beside `root` and renamed into place, so a crash
    leaves no half-made ledger; directories are made 0750 and the key 0600 whatever the umask.

    :raises LedgerError: when `root` is empty, already holds a ledger or anything else, or a
        setting is out of range.
    """
    _check_init_target(root)
    try:
        config = msgspec.convert({"origin": origin or f"matchledger.local/{uuid.uuid4().hex[:12]}", **settings}, LedgerConfig)
    except msgspec.ValidationError as exc:
        raise LedgerError(f"ledger settings: {exc}") from None
    signer = Signer.generate(config.origin)
    root.parent.mkdir(parents=True, exist_ok=True)
    building = root.parent / f".{root.name}.init-{uuid.uuid4().hex[:8]}"
    try:
        for directory in (building, building / SEGMENTS, building / CHECKPOINTS):
            directory.mkdir(mode=0o750)
            directory.chmod(0o750)
        signer.save(building / PRIVATE_KEY)
        write_atomic(building / PUBLIC_KEY, (str(signer.verifier) + "\n").encode())
        write_atomic(building / CONFIG, msgspec.json.format(msgspec.json.encode(config)) + b"\n")
        write_checkpoint(building, signer, 0, CompactRange().root(), config_digest(building))
        os.rename(building, root)  # replaces an empty directory, never a full one
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    fsync_dir(root.parent)
    return root / PUBLIC_KEY


def _check_init_target(root: Path) -> None:
    if str(root) in ("", "."):
        raise LedgerError("give the new ledger's directory with --ledger DIR (not the working directory)")
    if (root / CONFIG).exists():
        raise LedgerError(f"{root} already holds a ledger")
    outer = ledger_holding(root.parent)
    if outer is not None:  # a ledger made in another's `segments/` or `checkpoints/` breaks that one
        raise OutputRefused(f"{root} lies inside the ledger {outer}; only its recorder writes there, choose another place")
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise LedgerError(f"{root} exists and is not a directory")
    if root.exists() and any(root.iterdir()):
        raise LedgerError(f"{root} is a directory with files in it and not a ledger; give a new or empty directory")


def load_verifier(root: Path) -> Verifier:
    """Reads the key a ledger's signatures are checked with: the pinned one, else `signer.pub` (ledger/anchor.py).

    :raises KeyFileError: when the file is missing or malformed.
    :raises LedgerCorrupt: when `signer.pub` is not the pinned key, or not `signer.key`'s.
    """
    return log_key(root).verifier


class Ledger:
    """The single writer of a ledger directory; use `Ledger.open` as a context manager.

    Opening reads the latest checkpoint, the tiles of its right edge, the index head and whatever
    the log holds beyond that head (nothing, after a clean close), never the whole log: the tiles
    give the signed tree, which the writer checks against the checkpoint's root and only extends.
    """

    def __init__(self, root: Path, ops: FileOps | None = None, lock: int | None = None) -> None:
        """(`lock`: the writer lock's descriptor, taken by the caller (`lock_ledger`), who keeps
        it and releases it: `ledger/repair.py` holds it while the writer is not open.)"""
        self.root = root
        self.config = load_config(root)
        self._writer: SegmentWriter | None = None
        self._own_lock = lock is None
        self._lock_fd: int | None = _lock(root) if lock is None else lock
        self._notes = NoteWriter(root)  # the live service's checkpoint notes (ledger/notelog.py)
        self._history = HistoryWriter(root)
        self._proofs: OriginProofs | None = None
        self._syncer: ThreadPoolExecutor | None = None  # syncs a batch's proof of origin beside its segment
        try:
            self._ops = ops or FileOps()
            self.signer = Signer.load(root / PRIVATE_KEY)
            check_writer_key(self.signer)
            self.recovered: str | None = None
            self._streams: OrderedDict[str, StreamIndex] = OrderedDict()  # clean indexes, least recently used first
            self._dirty: dict[str, StreamIndex] = {}  # indexes with records not yet on disk: kept until flushed
            self._since: set[str] = set()  # streams with entries the next checkpoint is the first to cover
            self._served_behind = False  # the `checkpoint` file and the partial tiles lag the newest note (see `checkpoint`)
            self._indexing = False  # an IndexJob is out (see `start_index`)
            self._signed_at: tuple[int, int] | None = None  # (segment, offset) where the newest checkpoint's last entry ends
            self._seal: Seal  # what the writer knows the stream index files to be (set by `_sealed_head`)
            self._state: StreamState  # the signed state of every stream, kept current (set by `_sealed_head`)
            self._rebuilt = False  # the index carried no seal of this writer's: built again from the entries
            self._recovering = False  # reading the log beyond the index head (`_catch_up`)
            self._config_digest = config_digest(root)
            if self._notes.cut_torn():
                self.recovered = ("截去了崩溃留在 checkpoints/notes 末尾的残缺检查点记录 / "
                                  "cut the checkpoint note a crash left cut short at the end of checkpoints/notes")
            self._proofs = OriginProofs(root, self.signer.origin_key())
            self._checkpoint = newest_checkpoint(root, self.signer.verifier)
            self._seal_key = seal_key(self.signer.origin_key())
            head, own = self._own_head()
            self._notes_known = self._known_notes(head if own else None)
            _check_not_rolled_back(root, self._checkpoint, self._notes_known[1])
            _check_config_bound(self._checkpoint, self._config_digest)
            self._served_behind = self._checkpoint is not None and not serves(root, self._checkpoint)
            if self._served_behind:
                size = self._checkpoint.size  # type: ignore[union-attr]
                self.recovered = _join(self.recovered, f"重写了落后于最新检查点（大小 {size}）的 `checkpoint` 文件及其部分瓦片 / "
                                       f"rewrote the `checkpoint` file, which lagged the newest note (size {size}), with its partial tiles")
            self._open(head, own)
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(cls, root: Path, ops: FileOps | None = None) -> Ledger:
        """Opens a ledger for writing: takes the lock and recovers a torn tail.

        :raises LedgerLocked: when another writer holds it.
        :raises LedgerCorrupt: when damage lies inside the checkpointed range, the stored tree
            or index disagrees with the signed checkpoint, or a kept note is newer than the newest
            checkpoint served (a rollback).
        :raises ForeignEntries: when committed entries after the newest note carry no proof of
            origin by this writer (they are moved aside first; nothing is signed).
        """
        return cls(root, ops)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def size(self) -> int:
        """Returns the number of entries in the log."""
        return self._tree.size

    def root_hash(self) -> bytes:
        """Returns the Merkle root of the whole log."""
        return self._tree.root()

    @property
    def checkpoint_size(self) -> int:
        """Returns the tree size of the latest checkpoint."""
        return self._checkpoint.size if self._checkpoint else 0

    def next_seq(self, stream: str) -> int:
        """Returns the sequence number the stream expects next."""
        return len(self._stream(stream))

    def entry_of(self, stream: str, seq: int) -> int:
        """Returns the log index of a stream's event `seq` (which must be recorded)."""
        return self._stream(stream).entry(seq)

    def _stream(self, stream: str) -> StreamIndex:
        """Returns a stream's index: an open one, else opened (its file's size read) among the
        clean ones, of which the least recently used beyond OPEN_INDEXES are let go (a clean index
        is all on disk, so opening it again gives it back as it was). It is checked against the
        seal first, but in recovery, which checks the directories once it cut the records a crash
        left beyond the head (`_catch_up`)."""
        index = self._dirty.get(stream)
        if index is not None:
            return index
        index = self._streams.get(stream)
        if index is not None:
            self._streams.move_to_end(stream)
            return index  # (a StreamIndex is falsy when empty: callers test `is None`)
        index = self._streams[stream] = load_stream(self.root, stream)
        if not self._recovering:
            self._seal.check(index)
        self._let_go_unused()
        return index

    def _let_go_unused(self) -> None:
        while len(self._streams) > OPEN_INDEXES:
            self._seal.let_go(self._streams.popitem(last=False)[1])

    def _dirty_stream(self, stream: str) -> StreamIndex:
        """Returns a stream's index to add records to; it stays open until they are flushed."""
        index = self._dirty.get(stream)
        if index is None:
            index = self._dirty[stream] = self._stream(stream)
            self._streams.pop(stream, None)
        return index

    # -- opening and recovery --------------------------------------------------------------

    def _open(self, found: Head | None, own: bool) -> None:
        signed = self.checkpoint_size
        head = self._sealed_head(found, own)
        reader = TileReader(self.root)
        self._segment_starts = [first for first, _ in list_segments(self.root / SEGMENTS)] or [0]
        if head is None:  # a ledger written before tiles and index: build them from the entries
            self._tree, self._tiles = CompactRange(), TileWriter(self.root, 0, [])
            head = Head(0, 0, 0)
        else:
            if head.size > signed:
                raise LedgerCorrupt(None, f"索引记录了大小 {head.size} 的检查点，但最新的检查点签名记录大小为 {signed}：签名记录被删除或回滚 / "
                                    f"the index records a checkpoint of size {head.size}, but the newest checkpoint "
                                    f"note is of size {signed}: checkpoint notes were removed or rolled back")
            if head.size == signed:  # else the tiles of the signed size may be a crash's (not synced): the entries decide
                self._check_signed_edge(reader, signed)
            self._tree, self._tiles = reader.edge(head.size), TileWriter.resume(self.root, reader, head.size)
        legacy = not (self.root / INDEX / HEAD).exists()
        if head.size == signed:
            self._signed_at = (head.segment, head.offset)
        added = self._catch_up(head, signed, reader)
        assert self._proofs is not None
        self._proofs.cut_beyond(self.size)  # proofs of batches a crash left uncommitted
        if self._tiles.repair_partials():
            self.recovered = _join(self.recovered, "由条目重写了崩溃留下的不完整部分瓦片 / "
                                   "rewrote the partial tiles a crash left short (derived from the entries)")
        self._segment_starts = [first for first, _ in list_segments(self.root / SEGMENTS)] or [0]  # recovery may drop some
        if legacy and added and not self._rebuilt:
            self.recovered = _join(self.recovered, f"为早于瓦片和索引写入的 {added} 个条目建立了瓦片和索引 / "
                                   f"built tiles and index for {added} entries written before they existed")
        self._open_writer()
        self._resume_history(signed)
        if self.size != signed:
            self.checkpoint()  # what a crash left acknowledged but unsigned, now checked against the signed tree
        elif legacy or head.size != self.size or self._served_behind:
            self._make_durable()
            self._serve()
            self._write_head()

    def _own_head(self) -> tuple[Head | None, bool]:
        """Returns the index head (None: there is none; an empty one: not even JSON) and whether
        this writer wrote it (its MAC), read once per open."""
        try:
            head = read_head(self.root)
        except LedgerCorrupt:  # not even a head: someone without the key wrote it
            return Head(0, 0, 0), False
        return head, head is not None and Seal(self._seal_key).vouches(head)

    def _known_notes(self, head: Head | None) -> tuple[int, int]:
        """Returns when `checkpoints/` last changed and the size of the newest note kept there in
        its own file: from this writer's index head (`head`) when the directory has not changed
        since, else by listing it (the change noted first: one meanwhile is seen next time)."""
        changed = notes_changed(self.root)
        if head is not None and head.notes_newest >= 0 and head.notes_changed == changed:
            return changed, head.notes_newest
        return changed, newest_note_file(self.root)

    def _sealed_head(self, head: Head | None, own: bool) -> Head | None:
        """Returns the index head, with the seal it carries in force, or None (the index is built
        from the entries) when there is none or it is not this writer's (`own`): a head without a
        MAC (written before seals) or with a wrong one, or index files without a head. Then the
        old index is moved aside as evidence, under `repaired/`."""
        if head is not None and own:
            self._seal = Seal(self._seal_key, head.seal)
            self._state = self._signed_state(head)
            return head
        self._seal = Seal(self._seal_key)
        self._state = StreamState(self.root, None)
        if head is None and not (self.root / INDEX / STREAMS).exists():
            return None  # no writer has indexed this ledger yet
        aside = new_aside(self.root)
        moved = move_derived_aside(self.root, aside, (f"{INDEX}/{HEAD}", f"{INDEX}/{STREAMS}"))
        self.recovered = _join(self.recovered, f"流索引没有本写入者的封印（写于封印之前，或被无密钥者改动）：已移至 "
                               f"{aside.relative_to(self.root)}/ 作为证据，并由条目重建 / the stream index carried no seal of "
                               f"this writer's (written before seals, or changed by someone without the key): moved aside to "
                               f"{aside.relative_to(self.root)}/ ({', '.join(moved)}) and built again from the entries")
        self._rebuilt = True
        return None

    def _signed_state(self, head: Head) -> StreamState:
        """Returns the streams' state the head carries when its note signs it at the head's size, else
        one to build from the index files (a ledger from before states, or a crash between them)."""
        signed = signed_head_state(head, self.signer.verifier)
        return StreamState(self.root, signed[0] if signed is not None else None)

    def _check_signed_edge(self, reader: TileReader, signed: int) -> None:
        if self._checkpoint is None or not signed:
            return
        stored = reader.edge(signed).root()
        if stored != self._checkpoint.root:
            raise LedgerCorrupt(None, f"存储的哈希瓦片在大小 {signed} 算出的根与签名检查点的根不符 / "
                                f"the stored tiles give root {stored.hex()} at size {signed}, "
                                f"the signed checkpoint {self._checkpoint.root.hex()}")

    def _catch_up(self, head: Head, signed: int, reader: TileReader) -> int:
        """Indexes and hashes what the log holds beyond the head, dropping a torn tail, a segment at a
        time up to the signed size; returns how many entries. The index files of the streams it
        touches are cut back to the head first (a crash may have left records beyond it), and only
        then checked against the seal."""
        cut: dict[str, StreamIndex] = {}
        self._recovering = True
        try:
            tail = read_tail(self.root, head.segment, head.offset, head.size, signed,
                             lambda part: self._take(part, head.size, signed, reader, cut))
            if tail.recovered:
                self.recovered = _join(self.recovered, tail.recovered)
            if tail.entries:
                self._take(tail, head.size, signed, reader, cut)
        finally:
            self._recovering = False
        for index in cut.values():
            self._seal.check_directory(index.path)
        return tail.first + len(tail.entries) - head.size

    def _take(self, tail: Tail, size: int, signed: int, reader: TileReader, cut: dict[str, StreamIndex]) -> None:
        """Indexes and hashes a run of the entries beyond the head (of size `size`), which follows those taken before."""
        touched = {key.stream for key in tail.keys}
        for stream in touched - cut.keys():
            truncate_from(index := self._stream(stream), size)  # now the file is the head's
            cut[stream] = index
        self._state.touch(touched)
        leaves = leaf_hashes(tail.entries)
        _compare_stored_tiles(reader, tail.first, leaves)
        self._check_origin(tail.first, signed, tail, leaves)
        for i, key in enumerate(tail.keys):
            self._add_record(tail.first + i, key.stream, key.seq, tail.offsets[i], signed)
        if tail.first < signed <= tail.first + len(tail.entries):  # where the signed range's last entry ends
            k = signed - 1 - tail.first
            segment = self._segment_starts[bisect.bisect_right(self._segment_starts, signed - 1) - 1]
            self._signed_at = (segment, tail.offsets[k] + OVERHEAD + len(tail.entries[k]))
        self._grow(leaves, signed)

    def _check_origin(self, start: int, signed: int, tail: Tail, leaves: bytes) -> None:
        """Lets the writer sign only the entries after the newest note that it can show it wrote:
        each batch there must carry its proof of origin (ledger/segments.py). From the first batch
        that does not, the frames are moved aside as evidence, and nothing is signed.

        :raises ForeignEntries: naming the entries, where they were and where they are now.
        """
        end = start + len(tail.entries)
        if end <= signed:
            return
        batches, first = [], signed
        for stop in (c for c in tail.commits if c > signed):
            batches.append((first, memoryview(leaves)[32 * (first - start):32 * (stop - start)]))
            first = stop
        assert self._proofs is not None
        foreign = self._proofs.first_unproven(batches, signed)
        if foreign is None:
            self.recovered = _join(self.recovered, f"签署了崩溃后留在最新检查点（大小 {signed}）之后的 {end - signed} 个未签名条目："
                                   f"每批都带有本写入者的来源证明 / "
                                   f"signed the {end - signed} entries after the newest checkpoint (size {signed}) "
                                   f"that a crash left unsigned: each batch carries this writer's proof of origin")
            return
        segment = self._segment_starts[bisect.bisect_right(self._segment_starts, foreign) - 1]
        aside, moved = move_aside_from(self.root, segment, tail.offsets[foreign - start])
        where = aside.relative_to(self.root)
        raise ForeignEntries(
            f"日志最新签名检查点（大小 {signed}）之后的条目 {foreign}–{end - 1}（共 {end - foreign} 条）没有本写入者的来源证明，"
            f"未签署；已作为证据移至 {where}/ / entries {foreign}–{end - 1} ({end - foreign}) after the newest signed checkpoint "
            f"(size {signed}) carry no proof of origin by this writer: nobody signed them and they were not signed; "
            f"moved aside as evidence to {where}/ ({'; '.join(moved)})"
            + (f"; the {foreign - signed} entries before them are this writer's and are signed at the next open" if foreign > signed else ""))

    def _add_record(self, entry: int, stream: str, seq: int, offset: int, signed: int) -> None:
        index = self._dirty_stream(stream)
        if seq != len(index):
            raise LedgerCorrupt(entry, f"流 {stream!r} 此处的序号为 {seq}，应为 {len(index)} / "
                                       f"stream {stream!r} has seq {seq} where {len(index)} was due")
        if entry >= signed:
            self._since.add(stream)
        index.append(entry, offset)

    def _resume_history(self, signed: int) -> None:
        """Finds the newest checkpoint's record in `index/checkpoints` (a record beyond it, left by a
        crash before its note was written, is cut at the next append). A ledger written before the
        history gets a record per stored note, with positions unknown but for the newest one, which
        is all the next checkpoint's stream commitment needs."""
        with open_history(self.root) as history:
            found = history.upto(signed) if history is not None else None
            if found is not None:
                self._history_len = found
                return
            known = {p[0]: p for p in map(history.position, range(len(history)))} if history is not None else {}
        end = self._signed_at or self._end()
        records = [known.get(size, (size, UNKNOWN, UNKNOWN)) for size, _ in list_checkpoint_names(self.root) if size < signed]
        records.append((signed, *end))
        created = not history_path(self.root).exists()
        (self.root / INDEX).mkdir(exist_ok=True, mode=0o750)
        append_history(self.root, records, keep=0)
        if created:
            fsync_dir(self.root / INDEX)
        self._history_len = len(records)
        if signed:
            self.recovered = _join(self.recovered, f"记录了 {len(records)} 个检查点各自的结束位置（index/checkpoints） / "
                                   f"recorded where each of the {len(records)} checkpoints ends (index/checkpoints)")

    def _grow(self, leaves: bytes | memoryview, signed: int) -> None:
        """Extends the tree and the tiles; passing the signed size, the root must be the signed one."""
        start = self.size
        cut = signed - start if start < signed else None
        if cut is not None and cut * 32 <= len(leaves):
            extend(self._tree, leaves[:32 * cut])
            assert self._checkpoint is not None
            if self._tree.root() != self._checkpoint.root:
                raise LedgerCorrupt(None, f"条目在大小 {signed} 算出的根与签名检查点的根不符 / "
                                    f"the entries give root {self._tree.root().hex()} at size {signed}, "
                                    f"the signed checkpoint {self._checkpoint.root.hex()}")
            extend(self._tree, leaves[32 * cut:])
        else:
            extend(self._tree, leaves)
        self._tiles.append(leaves)

    def _end(self) -> tuple[int, int]:
        """Returns where the last entry ends: (its segment's first entry, the byte after it). A last
        segment left empty (a batch that began it was cut back) holds none: the one before does."""
        assert self._writer is not None
        if self._writer.size or len(self._segment_starts) < 2:
            return self._segment_starts[-1], self._writer.size
        first = self._segment_starts[-2]
        return first, segment_path(self.root / SEGMENTS, first).stat().st_size

    def _open_writer(self) -> None:
        path = segment_path(self.root / SEGMENTS, self._segment_starts[-1])
        self._writer = SegmentWriter(path, self._ops, path.stat().st_size if path.exists() else 0)

    # -- appending -------------------------------------------------------------------------

    def append(self, batch: Iterable[Pending], checkpoint: bool = True) -> AppendResult:
        """Appends a batch atomically after checking every sequence number, reading it a piece at a
        time; signs a checkpoint when the batch ends a game or a round, or the checkpoint interval
        has passed (`checkpoint=False`: never; the caller signs one itself, as the live service
        does after every append).

        The batch fills the current segment and goes on in new ones; only its last frame carries
        the commit mark, which commits it all (`frames.committed_end`). Any error part-way, the
        input's own included, cuts the segments back to where the batch began.

        :raises SequenceError: on a gap or a conflict, naming the input line; nothing is appended.
        :raises DiskError: when the batch cannot be made durable; nothing is acknowledged.
        """
        plan = self.plan()
        events = iter(batch)
        return self._append(plan, (plan.check(piece) for piece in iter(lambda: list(islice(events, PIECE)), [])), checkpoint)

    def plan(self) -> BatchPlan:
        """Returns an empty plan of a batch after the log's last entry, under the ledger's one set of append rules."""
        return BatchPlan(self.size, self.next_seq, self.read_stream_entry, self.config.max_entry_bytes, self.entry_of)

    def append_planned(self, plan: BatchPlan, fresh: Sequence[Pending], checkpoint: bool = True) -> AppendResult:
        """Appends the fresh events a plan of this ledger has checked (the service's group commit plans
        on its event loop), as `append` does, without checking or hashing them again.

        :raises LedgerError: when the log grew since the plan was made (it would no longer hold).
        :raises DiskError: as `append`.
        """
        if plan.first != self.size or plan.placed or len(fresh) != plan.count:
            raise LedgerError(f"a plan of {plan.count} entries after entry {plan.first - 1} cannot be appended to a log of "
                              f"{self.size} entries ({len(fresh)} given, {plan.placed} placed)")
        return self._append(plan, (fresh[lo:lo + PIECE] for lo in range(0, len(fresh), PIECE)), checkpoint)

    def _append(self, plan: BatchPlan, pieces: Iterable[Sequence[Pending]], checkpoint: bool) -> AppendResult:
        """Writes the fresh pieces of a plan (each checked as it is taken), commits and indexes them."""
        assert self._writer is not None
        began = (list(self._segment_starts), self._writer.size)
        held: Sequence[Pending] = []  # the last fresh piece, written once it is known whether more follow
        try:
            for fresh in pieces:
                if fresh:
                    self._write(held, plan, commit=False)
                    held = fresh
            self._write(held, plan, commit=True)
        except Exception:  # a refusal or a failed write (a crash or an interrupt leaves what the next writer drops)
            self._rollback(*began)
            raise
        if plan.count:
            self._index_batch(plan)
            self._grow(memoryview(plan.leaves), 0)
            if checkpoint and (self.size - self.checkpoint_size >= self.config.checkpoint_interval or plan.ends_game):
                self.checkpoint()
        return AppendResult(plan.count, plan.duplicates, self.size, self.recovered, bytes(plan.leaves))

    def _write(self, fresh: Sequence[Pending], plan: BatchPlan, commit: bool) -> None:
        """Frames and writes a piece of a batch, going on in a new segment when the current one is
        full (a frame longer than a segment gets one of its own); syncs it when it ends the batch."""
        assert self._writer is not None
        lo, limit = 0, self.config.segment_bytes
        try:
            if commit and plan.count:  # the proof of origin, written before the commit mark, synced with it
                assert self._proofs is not None
                self._proofs.append(plan.first, plan.leaves)
            while lo < len(fresh):
                hi, room = lo, limit - self._writer.size
                while hi < len(fresh) and (len(fresh[hi].data) + OVERHEAD <= room or (hi == lo and not self._writer.size)):
                    room -= len(fresh[hi].data) + OVERHEAD
                    hi += 1
                if hi == lo:
                    self._roll_segment(plan.first + plan.placed)
                    continue
                offset = self._writer.size
                self._writer.write(frame_batch(plan.first + plan.placed, [p.data for p in fresh[lo:hi]], commit and hi == len(fresh)))
                plan.place(fresh[lo:hi], offset)
                lo = hi
            if commit:
                self._sync_batch(proven=plan.count > 0)
        except OSError as exc:
            raise DiskError(f"batch of {plan.count} events not appended ({os.strerror(exc.errno or 0)}); nothing was acknowledged") from None

    def _sync_batch(self, proven: bool) -> None:
        """Syncs the batch's segment bytes and, at the same time on another thread, its proof of
        origin: the batch is acknowledged once both are durable.

        :raises OSError: when either sync fails.
        """
        assert self._writer is not None and self._proofs is not None
        if not proven:
            self._writer.sync()
            return
        if self._syncer is None:
            self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="matchledger-proof-sync")
        proof = self._syncer.submit(self._proofs.sync)
        try:
            self._writer.sync()
        finally:
            proof.result()

    def _rollback(self, segments: list[int], size: int) -> None:
        """Cuts the log back to where a failed batch began: the segments it created go (the last
        first), the one it began in is cut to its size before, and its proof of origin goes. What a
        failure here leaves is uncommitted, and the next writer drops it."""
        assert self._writer is not None
        try:
            created = self._segment_starts[len(segments):]
            if created:
                self._writer.close()
                for first in reversed(created):
                    segment_path(self.root / SEGMENTS, first).unlink(missing_ok=True)
                fsync_dir(self.root / SEGMENTS)
                self._segment_starts = segments
                self._open_writer()
            self._writer.cut(size)
            self._proofs.cut_beyond(self.size)  # type: ignore[union-attr]
        except OSError:
            pass

    def _index_batch(self, plan: BatchPlan) -> None:
        """Adds a committed batch's records to the stream index (their seqs were checked by the plan)."""
        for stream, records in plan.streams.items():
            self._dirty_stream(stream).extend(records.entries, records.offsets)
        self._since.update(plan.streams)
        self._state.touch(plan.streams)

    def _roll_segment(self, first: int) -> None:
        """Starts segment `first`, the current one synced first: a segment is complete on disk
        before the next exists, so only the last can end torn."""
        assert self._writer is not None
        self._writer.sync()
        self._writer.close()
        self._segment_starts.append(first)
        self._writer = SegmentWriter(segment_path(self.root / SEGMENTS, first), self._ops, 0)

    def checkpoint(self, index: bool = True) -> Checkpoint:
        """Signs a checkpoint of the current tree unless the latest already covers it: the index
        and tiles are made durable first, so everything a signed note covers can be read back.

        With `index=False` (the live service's group commits, which sign one note per commit) only
        the full tiles, the history record and the note are, the note appended to the notes file
        (`ledger/notelog.py`: no new file per commit). The stream index, the partial tiles and the
        served `checkpoint` file wait, and the head stays behind, until a checkpoint with `index`
        (the service's periodic full checkpoint, and its close), which writes the partial tiles of
        the newest size and then serves its note: a static tlog-tiles client always finds the
        served checkpoint's tiles, and `hash_tile` computes a newer size's partial tiles from the
        full tiles and the entries meanwhile. A crash re-derives the index and the partial tiles
        beyond the head from the entries, and serves the newest kept note again, as after any crash.

        :raises CheckpointError: when the note cannot be written; the entries stay appended.
        """
        if index and self._indexing:
            raise LedgerError("a background index job is out: finish it (`finish_index`) before a full checkpoint")
        if self._checkpoint is not None and self._checkpoint.size == self.size:
            if index and (self._dirty or self._tiles.partials or self._served_behind):
                self._make_durable()
                self._serve()
                self._write_head()
            return self._checkpoint
        assert self._writer is not None
        heads = [StreamHead(s, len(held), held.entry(-1)) for s in self._since for held in (self._stream(s),)]
        lines = (heads_line(heads), self._state.line(self._stream, self._seal.check_directory))
        try:
            self._make_durable(index)
            # the history record first: a record beyond the newest note is a crash's and is cut at open
            self._history.append([(self.size, *self._end())], keep=self._history_len)
            if index:
                self._checkpoint = write_checkpoint(self.root, self.signer, self.size, self.root_hash(), self._config_digest, *lines)
                self._notes_known = (notes_changed(self.root), self.size)
            else:
                self._checkpoint = log_checkpoint(self.root, self._notes, self.signer, self.size, self.root_hash(),
                                                  self._config_digest, *lines)
            self._history_len += 1  # (after the note: a record whose note failed is cut by the next checkpoint)
            self._served_behind = not index
            if index:
                self._tiles.drop_filled()
                self._write_head()
        except OSError as exc:
            raise CheckpointError(f"{self.size} entries are appended and durable, but no checkpoint covers them yet "
                                  f"({os.strerror(exc.errno or 0) if exc.errno else exc}); run `matchledger record` again "
                                  f"(an empty file will do) to sign one") from None
        self._since.clear()
        return self._checkpoint

    def _serve(self) -> None:
        """Serves the newest note in the `checkpoint` file (synced), once its partial tiles are
        written and synced (`_make_durable`), and drops the partial tiles of the tiles filled since."""
        if self._checkpoint is not None and self._served_behind:
            repair_latest(self.root, self._checkpoint)
        self._served_behind = False
        self._tiles.drop_filled()

    def _make_durable(self, index: bool = True) -> None:
        """Syncs the full tiles written since the last checkpoint, and with `index` the index
        records and the partial tile of each level at the current size too, written here (the head
        written next says the writer resumes from them; the `checkpoint` file served next names
        that size), and every directory that gained an entry (a new file, a renamed tile, a new
        directory). Without `index` no partial tile is written (see `checkpoint`)."""
        files, directories = self._durable_files(index)
        _sync(files, directories)
        self._forget_durable(index)

    def _durable_files(self, index: bool) -> tuple[list[Path], list[Path]]:
        """Writes what `_make_durable` makes durable (with `index`: the stream index records and
        the partial tiles); returns the files and the directories to sync."""
        tiles = self._tiles
        files, entries = [], [d for d in tiles.new_dirs if index or not d.name.endswith(".p")]
        for stream in sorted(self._dirty) if index else ():
            held = self._dirty[stream]
            size = held.file_size
            if (written := flush(held)) is not None:
                self._seal.changed(written[0], size, held.file_size)
                files.append(written[0])
                entries += written[1]
        if index:
            for stream, flushed in self._dirty.items():  # now clean: back among the indexes let go when unused
                self._streams[stream] = flushed
            self._dirty.clear()
            self._let_go_unused()
            tiles.write_partials()
            entries += [d for d in tiles.new_dirs if d.name.endswith(".p") and d not in entries]
        synced = tiles.dirty | set(tiles.partials.values()) if index else tiles.dirty
        files += synced
        entries += synced  # tiles are renamed into place
        return files, sorted({p.parent for p in entries})

    def _forget_durable(self, index: bool) -> None:
        tiles = self._tiles
        tiles.dirty.clear()
        if index:
            tiles.partials.clear()
            tiles.new_dirs.clear()
        else:
            tiles.new_dirs[:] = [d for d in tiles.new_dirs if d.name.endswith(".p")]

    def start_index(self) -> IndexJob:
        """Starts making the stream index and the partial tiles durable at the current size, the
        size of the newest checkpoint (signed without `index`), and then serving that checkpoint:
        what a full checkpoint adds to one, off the commits' path. Here (the writer, between
        appends) the records and tiles are written; the returned job syncs them, serves the note
        in the `checkpoint` file and writes the index head, on any thread, while appends and
        checkpoints without `index` go on (they touch none of those files: the index files get
        only records of entries already synced, the partial tiles are this size's). Hand the job
        back to `finish_index` once it ran; until then no full checkpoint is taken.

        :raises LedgerError: when the newest checkpoint does not cover every entry, or a job is out.
        :raises DiskError: when the records or tiles cannot be written.
        """
        if self._indexing or self._checkpoint is None or self._checkpoint.size != self.size:
            raise LedgerError("an index job starts right after a checkpoint of every entry, one at a time")
        try:
            files, directories = self._durable_files(True)
        except OSError as exc:
            raise DiskError(f"the stream index could not be written ({os.strerror(exc.errno or 0) if exc.errno else exc})") from None
        job = IndexJob(self.root, files, directories, self._checkpoint, self._head(), self._tiles.take_filled())
        self._forget_durable(True)
        self._indexing = True
        return job

    def finish_index(self, job: IndexJob) -> None:
        """Takes back a job that ran: drops the partial tiles of the tiles filled before its size.

        :raises DiskError: when the job failed (the head stays behind: a restart re-derives the
            index beyond it from the entries).
        """
        self._indexing = False
        if job.error is not None:
            raise DiskError(f"the stream index could not be made durable at size {job.head.size} ({job.error})")
        self._tiles.drop(job.filled)

    def _head(self) -> Head:
        """Returns the index head at the current size: the seal, what is known of the notes, and the
        streams' state with the note that signs it, when the newest note is of this size and signs it."""
        state = ("", "")
        checkpoint = self._checkpoint
        line = read_state_line(checkpoint.extensions) if checkpoint is not None and checkpoint.size == self.size else None
        if checkpoint is not None and line is not None and line == self._state.line(self._stream, self._seal.check_directory):
            assert self._state.digests is not None
            state = (encode_digests(self._state.digests), checkpoint.note)
        return self._seal.head(self.size, *self._end(), self._notes_known, state)

    def _write_head(self) -> None:
        """Records where tiles and index are durable (the caller made them so)."""
        assert self._writer is not None
        head = self._head()
        (self.root / INDEX).mkdir(exist_ok=True, mode=0o750)
        write_atomic(self.root / INDEX / HEAD, msgspec.json.encode(head))

    def cosign(self, arbiter: Signer, size: int | None = None, ts: int | None = None) -> Checkpoint:
        """Adds an arbiter's co-signature to the checkpoint of `size` (the latest by default) and
        records the arbiter as a witness in the log, so that `verify` requires that co-signature
        from then on, whatever happens to the note or the `witnesses/` folder.

        :raises LedgerCorrupt: when there is no checkpoint of that size.
        """
        size = self.checkpoint_size if size is None else size
        checkpoint = cosign_note(self.root, arbiter, size, self.signer.verifier)
        if (str(arbiter.verifier), size) not in self.witnesses():
            event = WitnessAdded(stream=WITNESS_STREAM, seq=self.next_seq(WITNESS_STREAM), ts=ts or int(time.time() * 1000),
                                 verifier=str(arbiter.verifier), size=size)
            self.append([Pending(0, event, encode(event), own=True)])
            self.checkpoint()
        return checkpoint

    def witnesses(self) -> list[tuple[str, int]]:
        """Returns the witnesses the log records: (verifier key, size of the checkpoint co-signed)."""
        return [(e.verifier, e.size) for e in (decode(self.read_stream_entry(WITNESS_STREAM, seq))
                                              for seq in range(self.next_seq(WITNESS_STREAM))) if isinstance(e, WitnessAdded)]

    # -- reading ---------------------------------------------------------------------------

    def read_stream_entry(self, stream: str, seq: int) -> bytes:
        """Returns the stored bytes of one event of a stream, checked against its frame.

        :raises LedgerCorrupt: when the index points at a frame that is not that event.
        """
        entry, offset = self._stream(stream).record(seq)
        n = bisect.bisect_right(self._segment_starts, entry) - 1
        data = read_frame(segment_path(self.root / SEGMENTS, self._segment_starts[n]), offset, entry)
        key = decode_key(data, entry)
        if (key.stream, key.seq) != (stream, seq):
            raise LedgerCorrupt(entry, f"索引指此处为流 {stream!r} 的序号 {seq}，条目却是流 {key.stream!r} 的序号 {key.seq} / "
                                f"the index gives seq {seq} of stream {stream!r} here, the entry is seq {key.seq} of {key.stream!r}")
        return data

    def close(self) -> None:
        """Releases the writer lock."""
        self._notes.close()
        self._history.close()
        if self._syncer is not None:
            self._syncer.shutdown()
            self._syncer = None
        if self._proofs is not None:
            self._proofs.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._lock_fd is not None and self._own_lock:
            os.close(self._lock_fd)
        self._lock_fd = None


@dataclass
class IndexJob:
    """What a full checkpoint adds to a checkpoint without `index`, to run off the writer's thread
    (`Ledger.start_index`): the index records and partial tiles of one size, written, to sync;
    then that size's note served and the index head moved to it, in that order, as
    `checkpoint(index=True)` does. A crash part-way leaves the head behind, as any crash."""

    root: Path
    files: list[Path]
    directories: list[Path]
    checkpoint: Checkpoint
    head: Head
    filled: list[tuple[int, int]]
    error: str | None = None

    def run(self) -> None:
        """Syncs, serves, writes the head (any thread); an OSError is kept in `error`, for `finish_index`."""
        try:
            _sync(self.files, self.directories)
            repair_latest(self.root, self.checkpoint)
            write_atomic(self.root / INDEX / HEAD, msgspec.json.encode(self.head))
        except OSError as exc:
            self.error = os.strerror(exc.errno or 0) if exc.errno else str(exc)


def _sync(files: Iterable[Path], directories: Iterable[Path]) -> None:
    for path in files:
        sync_file(path)
    for directory in directories:
        fsync_dir(directory)


def _check_config_bound(checkpoint: Checkpoint | None, digest: str) -> None:
    """Refuses settings that differ from those the newest checkpoint signed.

    :raises LedgerCorrupt: naming the file.
    """
    bound = checkpoint.config_digest if checkpoint else None
    if bound is not None and bound != digest:
        raise LedgerCorrupt(None, f"{CONFIG} 在大小 {checkpoint.size} 的检查点签署之后被改动 / "  # type: ignore[union-attr]
                            f"{CONFIG} was changed after checkpoint {checkpoint.size} signed it "  # type: ignore[union-attr]
                            f"(sha256 {bound}, now {digest})")


def _check_not_rolled_back(root: Path, checkpoint: Checkpoint | None, files: int) -> None:
    """Refuses a log whose newest checkpoint is older than a note it keeps: the `checkpoint` file or
    `index/checkpoints` was rolled back, and signing on would sign a second root for a size; and one
    with entries but no note at all (every note removed).

    :raises LedgerCorrupt: naming both sizes, or the missing notes.
    """
    kept, served = newest_size(root, files), checkpoint.size if checkpoint else 0
    if checkpoint is None and any(path.stat().st_size for _, path in list_segments(root / SEGMENTS)):  # init signs size 0
        raise LedgerCorrupt(None, "账本有条目却没有任何检查点签名记录：签名记录被删除，拒绝重新签署 / the ledger holds entries but no "
                            "checkpoint note (init signs the empty tree's): the notes were removed; the writer refuses to open "
                            "rather than sign the log again as if a crash had left it unsigned")
    if kept > served:
        raise LedgerCorrupt(None, f"{CHECKPOINTS}/ 保存了大小 {kept} 的签名记录，比日志当前的最新检查点（大小 {served}）更新："
                            f"`checkpoint` 文件或 index/checkpoints 被回滚；同一大小绝不签署第二个根，写入者拒绝打开 / "
                            f"{CHECKPOINTS}/ keeps a note of size {kept}, newer than the newest checkpoint the log "
                            f"serves (size {served}): the `checkpoint` file or index/checkpoints was rolled back; "
                            f"a second root is never signed for a size, so the writer refuses to open")


def _join(first: str | None, second: str) -> str:
    return second if first is None else f"{first}; {second}"


def _compare_stored_tiles(reader: TileReader, start: int, leaves: bytes) -> None:
    """Checks re-derived leaf hashes against the level-0 tiles already stored for them: a stored hash
    that differs means the entry changed after it was hashed, which no crash explains.

    :raises LedgerCorrupt: naming the first such entry.
    """
    count = len(leaves) // 32
    first_tile, last_tile = start // WIDTH, (start + count - 1) // WIDTH
    for n in range(first_tile, last_tile + 1):
        stored = reader.stored_prefix(0, n)
        lo = max(start, n * WIDTH)
        hi = min(start + count, n * WIDTH + len(stored) // 32)
        if stored[32 * (lo - n * WIDTH):32 * (hi - n * WIDTH)] == leaves[32 * (lo - start):32 * (hi - start)]:
            continue  # the common case: one comparison per tile
        for i in range(lo, hi):
            have = stored[32 * (i - n * WIDTH):32 * (i - n * WIDTH + 1)]
            want = leaves[32 * (i - start):32 * (i - start + 1)]
            if have != want and have != bytes(32):
                raise LedgerCorrupt(i, "条目与其哈希瓦片中存放的哈希不符：条目在记录之后被改动 / "
                                    "the entry differs from the hash stored for it in its tile: it was changed after it was recorded")


def lock_ledger(root: Path) -> int:
    """Takes a ledger's writer lock for the caller; returns its descriptor (closing it releases it).

    :raises LedgerLocked: when another writer holds it.
    """
    return _lock(root)


def _lock(root: Path) -> int:
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LedgerLocked(f"ledger {root} is locked by another writer (pid {holder})") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd
