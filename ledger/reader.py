"""The one reader of a ledger (issue 29.1; after eventsourcing's recorder and tessera's LogReader):
every consumer outside the writer reads the log through `LogReader`.

Three verbs: `size()`, the signed size (the newest checkpoint verified under the log's key,
ledger/anchor.py: nothing unsigned counts), `entries(start, limit)` in log order and
`stream(name, after, upto)` through the stream index, neither ever past `size()`. The rest is built
on them: the whole signed log in one buffer (`packed`), decoded events, and the checks of what was
read against the signed tree (`check`, `proved_stream`, `checked_events`, issue 28.6).

The speed code stays behind this door: the packed segment scan (`ledger/fastscan.py`, C when
built), the index reads and the position cache of `ledger/entries.py`'s `EntryReader`.
"""

from __future__ import annotations

import gc
import mmap
import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ledger.anchor import log_key
from ledger.bundle import check_bundle, prove
from ledger.checkpoints import Checkpoint, newest_checkpoint, newest_size
from ledger.entries import EntryReader
from ledger.errors import LedgerCorrupt, LedgerError
from ledger.fastscan import extend, gather, leaf_hashes
from ledger.frames import committed_end, committed_streams, decode_keys, iter_packed, packed_segments, segment_sizes
from ledger.index import count_below, list_stream_files, load_stream, open_stream_file, read_head
from ledger.layout import load_config
from ledger.merkle import CompactRange, ProofError, consistency_proof, verify_consistency
from ledger.notes import Verifier
from ledger.state import StateError, check_state_proof, state_proof
from ledger.tiles import WIDTH, TileReader
from schemas import decode_stored, decode_stored_array
from schemas.envelope import Event

BATCH = 4096
"""Entries decoded per decoder call, and read per call by `entries` away from the log's start."""


class _Scratch:
    """An unnamed scratch file in the temp directory the log's payloads are written to, segment by
    segment, then mapped shared (issue 32.1): the page cache holds them, not the reader's memory, and
    a process touches only what it reads. Written, not filled through the mapping: a full disk is
    an error naming the directory, never a SIGBUS; on a tmpfs the pages cost what anonymous memory did."""

    def __enter__(self) -> _Scratch:
        self.fd, path = tempfile.mkstemp(prefix="matchledger-log-")
        self.path = path
        os.unlink(path)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # a mapping made keeps the file

    def put(self, data: bytes | memoryview, offset: int) -> None:
        """Writes bytes at an offset (a segment's payloads at theirs)."""
        view = memoryview(data).cast("B")
        try:
            while view:
                written = os.pwrite(self.fd, view, offset)
                view, offset = view[written:], offset + written
        except OSError as exc:
            raise OSError(exc.errno, f"临时目录写不下日志的临时文件，请把 TMPDIR 设到别处 / {exc.strerror} (the log is read into a "
                                     f"scratch file there; set TMPDIR elsewhere)", os.path.dirname(self.path)) from None

    def mapped(self, size: int) -> bytearray | mmap.mmap:
        """Returns the file's first `size` bytes mapped shared (an empty log: an empty buffer)."""
        return mmap.mmap(self.fd, size) if size else bytearray()


@dataclass(frozen=True)
class StoredEntries:
    """The signed entries of a log back to back in one buffer: entry i is data[ends[i]:ends[i+1]]."""

    data: bytes | memoryview
    ends: array
    unsigned: int = 0
    """Committed entries after the newest signed checkpoint, left out: nothing unsigned counts."""
    released: list[int] = field(default_factory=lambda: [0], compare=False, repr=False)
    """The entries below released[0] were given back (`release`): reading them is refused."""

    def __len__(self) -> int:
        return len(self.ends) - 1

    def json_array(self, indexes: array) -> bytes:
        """Returns the stored bytes of some entries (an int64 array of indexes) as one JSON array.

        :raises IndexError: when an index is not an entry.
        :raises LedgerError: when an entry was released.
        """
        if self.released[0] and len(indexes) and min(indexes) < self.released[0]:
            raise LedgerError(f"entry {min(indexes)} was read and released already (entries below {self.released[0]} are)")
        return gather(self.data, self.ends, indexes)

    def release(self, stop: int, shared: bool = False) -> None:
        """Gives the memory of the entries below `stop` back (issue 32.1: a reader going through the
        log in order holds what it has not read yet, not the log), and refuses them afterwards. Only
        a buffer `LogReader.packed` made (a shared mapping) is given back: with `shared`, this
        process's pages only (processes forked before still read them: the pages stay until `release`
        without it, or the buffer's end); without, the pages themselves. Never read as zeros."""
        buffer = self.data.obj if isinstance(self.data, memoryview) else None
        stop = min(stop, len(self))
        if not isinstance(buffer, mmap.mmap) or stop < self.released[0] or stop == self.released[0] and shared:
            return
        self.released[0] = stop
        if end := self.ends[stop] // mmap.PAGESIZE * mmap.PAGESIZE:  # whole pages: the one entry `stop` starts in stays
            try:
                buffer.madvise(mmap.MADV_DONTNEED if shared or not hasattr(mmap, "MADV_REMOVE") else mmap.MADV_REMOVE, 0, end)
            except OSError:  # a scratch file whose file system cannot punch holes: this process's pages at least
                buffer.madvise(mmap.MADV_DONTNEED, 0, end)

    def let_go(self, start: int, stop: int) -> None:
        """Unmaps this process's pages of entries `start`–`stop - 1` of a buffer `LogReader.packed`
        made, whose scratch file keeps them: read again, they come back from it (a pass over the log
        holds what it is reading, not what it read). Anything else is left as it is."""
        buffer = self.data.obj if isinstance(self.data, memoryview) else None
        if isinstance(buffer, mmap.mmap):
            low = -(-self.ends[start] // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages only: the entries around stay
            high = self.ends[min(stop, len(self))] // mmap.PAGESIZE * mmap.PAGESIZE
            if high > low:
                buffer.madvise(mmap.MADV_DONTNEED, low, high - low)

    def events(self) -> Iterator[Event]:
        """Yields the entries decoded, in log order (a batch per decoder call)."""
        for start in range(0, len(self), BATCH):
            data = self.json_array(array("q", range(start, min(start + BATCH, len(self)))))
            # Decoding makes thousands of containers and no cycle: the cyclic collector's passes over
            # them would find nothing, so it waits until the batch is decoded.
            enabled = gc.isenabled()
            gc.disable()
            try:
                events = decode_stored_array(data)
            finally:
                if enabled:
                    gc.enable()
            yield from events


HASHED = 1 << 16
"""Entries hashed at a time by `LogReader.check`: their bytes are copied out of the log to be hashed."""


def _leaves(log: StoredEntries, low: int, high: int) -> bytes:
    """Returns the leaf hashes of entries low … high − 1 of a log read."""
    ends, data = log.ends, log.data
    return leaf_hashes([bytes(data[ends[i]:ends[i + 1]]) for i in range(low, high)])


class LogReader:
    """Reads a ledger's signed entries; safe to share between threads (each call reads afresh, so
    `size()` grows as the log is signed further)."""

    def __init__(self, root: Path, verifier: Verifier | None = None) -> None:
        self.root = root
        self._verifier = verifier
        self._positions = EntryReader(root)

    @property
    def verifier(self) -> Verifier:
        """The key checkpoints are checked with: the one given, else the log's (pinned or the directory's).

        :raises LedgerNotFound: when the root is not a ledger.
        :raises KeyFileError: when the key is missing or malformed.
        """
        if self._verifier is None:
            self._verifier = log_key(self.root).verifier
        return self._verifier

    # -- the verbs ---------------------------------------------------------------------------------

    def newest(self) -> Checkpoint | None:
        """Returns the newest checkpoint verified under the log's key (None when there is none).

        :raises LedgerNotFound: when the root is not a ledger.
        :raises LedgerCorrupt: when the newest checkpoint does not verify or its notes were tampered with.
        """
        load_config(self.root)  # (a directory that is no ledger is named as such, before its key is looked for)
        return newest_checkpoint(self.root, self.verifier)

    def size(self) -> int:
        """Returns the signed size: the entries the newest verified checkpoint covers (0 when none).

        :raises LedgerCorrupt: as `newest`.
        """
        checkpoint = self.newest()
        return checkpoint.size if checkpoint is not None else 0

    def unsigned(self) -> int:
        """Returns how many committed entries follow the signed size (reading the last frames only)."""
        return self.extent()[1]

    def extent(self) -> tuple[int, int]:
        """Returns (`size()`, `unsigned()`) from one reading of the newest checkpoint."""
        signed = self.size()
        return signed, max(0, committed_end(segment_sizes(self.root)) - signed)

    def entries(self, start: int = 0, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (index, stored bytes) of the signed entries from `start`, at most `limit` of them.

        :raises LedgerCorrupt: when a frame cannot be read or is damaged.
        """
        size = self.size()
        stop = size if limit is None else min(size, start + max(0, limit))
        if start >= stop:
            return
        if start == 0 and stop > BATCH:  # the whole log (or most of it): the packed scan, a segment at a time
            for first, part in iter_packed(self.root, newest_size(self.root)):
                end = min(part.last_commit, stop - first)
                yield from enumerate(part.payloads(end)[max(0, start - first):], max(start, first))
                if first + end >= stop:
                    return
            return
        self._positions.start_near(start)
        for first in range(start, stop, BATCH):
            count = min(BATCH, stop - first)
            # One more entry when there is one: the reader notes where it starts, so that the next read starts there.
            found = self._positions.read(first, min(count + 1, size - first))[:count]
            yield from enumerate(found, first)

    def stream(self, name: str, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (log index, stored bytes) of one stream's events from its seq `after` on, among the
        first `upto` entries (at most `size()`), read through the stream index.

        :raises LedgerCorrupt: when the index points at anything but the stream's events in order.
        """
        yield from self.streams([name], upto)[name][after:]

    def streams(self, names: Sequence[str], upto: int | None = None) -> dict[str, list[tuple[int, bytes]]]:
        """Returns `stream(name)` of several streams at once, each segment opened once for them all.

        :raises LedgerCorrupt: as `stream`.
        """
        size = self.size() if upto is None else min(upto, self.size())
        if read_head(self.root) is None:  # a ledger no writer has indexed yet: the streams are found in the whole log
            found: dict[str, list[tuple[int, bytes]]] = {name: [] for name in names}
            for index, data in self.entries(0, size):
                for key in decode_keys([data], index):
                    if key.stream in found:
                        found[key.stream].append((index, data))
            return found
        return committed_streams(self.root, list(names), size)

    # -- decoded ----------------------------------------------------------------------------------

    def packed(self) -> StoredEntries:
        """Reads the signed entries into one buffer; the committed entries after them are counted in `unsigned`.

        :raises LedgerCorrupt: when a damaged frame stops the reading before the last checkpoint, or
            the newest checkpoint does not verify.
        """
        # Each segment's payloads are written to a scratch file right after the last's (an unfinished
        # batch's overwritten by the next segment's), then the file is mapped shared: the reader holds
        # none of it, processes forked later count only the pages they read, and
        # `StoredEntries.release` / `let_go` can give those back (issue 32.1: the log read is not held).
        load_config(self.root)
        segments = segment_sizes(self.root)  # read no further than these sizes, whatever a writer adds meanwhile
        ends = array("q", [0])
        signed = self.size()
        with _Scratch() as scratch:
            for _, part in packed_segments(segments, newest_size(self.root), 0, None):
                scratch.put(part.data, part.ends[0])
                ends += part.ends[1:part.last_commit + 1]
            unsigned = max(0, len(ends) - 1 - signed)
            if unsigned:
                del ends[signed + 1:]
            data = scratch.mapped(ends[-1])
        return StoredEntries(memoryview(data).toreadonly(), ends, unsigned)

    def events(self, stream: str | None = None) -> Iterator[Event]:
        """Yields the signed events decoded, in log order: the whole log's or one stream's (through
        the index: only that stream's entries are read)."""
        if stream is None:
            yield from self.packed().events()
        else:
            yield from decode_stored([data for _, data in self.stream(stream)])

    # -- checked against the signed tree (issue 28.6) -----------------------------------------------

    def signed(self) -> Checkpoint:
        """Returns the newest verified checkpoint.

        :raises LedgerCorrupt: when there is none, or it does not verify.
        """
        checkpoint = self.newest()
        if checkpoint is None:
            raise LedgerCorrupt(None, f"{self.root} 没有已签名的检查点：其中的内容都不能作为事实出示 / "
                                f"{self.root} holds no signed checkpoint: nothing it holds can be shown as fact")
        return checkpoint

    def check(self, log: StoredEntries) -> Checkpoint:
        """Checks that the whole log read (`packed`) gives the root of the newest signed checkpoint; returns it.

        :raises LedgerCorrupt: naming the first changed entry when it does not.
        """
        checkpoint = self.signed()
        size = checkpoint.size
        if len(log) < size:
            raise LedgerCorrupt(len(log), f"日志只有 {len(log)} 个条目，但大小为 {size} 的检查点签署了 {size} 个：条目被删除 / "
                                f"the log holds {len(log)} entries, but checkpoint {size} signs {size}: entries were removed")
        tree = CompactRange()
        for low in range(0, size, HASHED):  # a piece at a time: every entry copied at once doubled the log (issue 32.1)
            extend(tree, _leaves(log, low, min(low + HASHED, size)))
        if tree.root() != checkpoint.root:
            self._refuse_changed(_leaves(log, 0, size), size, tree.root(), checkpoint)
        return checkpoint

    def _refuse_changed(self, leaves: bytes, size: int, root: bytes, checkpoint: Checkpoint) -> None:
        first = self._first_changed(leaves, size)
        where = f"entry {first} differs from the hash the tiles hold for it" if first is not None else "an entry was changed"
        raise LedgerCorrupt(first, f"账本已签名部分被改动，拒绝显示 / the signed range was changed: {where}; entries 0–{size - 1} give "
                            f"root {root.hex()}, checkpoint {size} signs {checkpoint.root.hex()} (run `matchledger verify`)")

    def checked_streams(self) -> tuple[Checkpoint, Iterator[tuple[str, list[bytes]]]]:
        """Returns the newest signed checkpoint and an iterator of each stream's entries under it
        (stream, stored bytes in log order), a stream as soon as the index says its last entry is
        read: the log is read once, a segment at a time, every entry hashed on the way, so memory
        follows the streams still open, not the log (issue 32.1). After the last stream the hashes
        are checked against the checkpoint: a consumer shows nothing before the iterator has ended.

        :raises LedgerCorrupt: from the iterator, as `check`, or when the index ends a stream too soon.
        """
        checkpoint = self.signed()
        return checkpoint, self._streams_checked(checkpoint)

    def _streams_checked(self, checkpoint: Checkpoint) -> Iterator[tuple[str, list[bytes]]]:
        size = checkpoint.size
        last = self._last_entries(size)
        open_streams: dict[str, list[bytes]] = {}
        closed: set[str] = set()
        tree = CompactRange()
        read = 0
        for first, part in iter_packed(self.root, newest_size(self.root)):
            end = max(0, min(part.last_commit, size - first))
            payloads = part.payloads(end)
            extend(tree, leaf_hashes(payloads))
            for index, (data, key) in enumerate(zip(payloads, decode_keys(payloads, first)), first):
                name = key.stream
                items = open_streams.get(name)
                if items is None:
                    if name in closed:
                        raise LedgerCorrupt(index, f"索引与账本不符 / the stream index ends stream {name!r} at entry "
                                                   f"{last[name]}, but entry {index} is of it (run `matchledger verify`)")
                    items = open_streams[name] = []
                items.append(data)
                if last.get(name) == index:
                    del open_streams[name]
                    closed.add(name)
                    yield name, items
            read = first + end
            if read >= size:
                break
        if read < size:
            raise LedgerCorrupt(read, f"日志只有 {read} 个条目，但大小为 {size} 的检查点签署了 {size} 个：条目被删除 / "
                                f"the log holds {read} entries, but checkpoint {size} signs {size}: entries were removed")
        yield from sorted(open_streams.items())  # streams the index does not end (an index behind the signed size)
        tree_root = tree.root()
        if tree_root != checkpoint.root:
            leaves = b"".join(leaf_hashes(part.payloads(max(0, min(part.last_commit, size - first))))
                              for first, part in iter_packed(self.root, newest_size(self.root)) if first < size)
            self._refuse_changed(leaves, size, tree_root, checkpoint)

    def _last_entries(self, size: int) -> dict[str, int]:
        """Returns each stream's last entry below `size`, from the stream index; empty when the index
        is missing or does not yet cover the first `size` entries (then every stream ends with the log)."""
        head = read_head(self.root)
        if head is None or head.size < size:
            return {}
        last: dict[str, int] = {}
        for path in list_stream_files(self.root):
            index = open_stream_file(path)
            if below := count_below(index, size):  # a binary search: no stream's records read whole
                last[index.stream] = index.entry(below - 1)
        return last

    def _first_changed(self, leaves: bytes, size: int) -> int | None:
        """Returns the first entry whose leaf hash is not the stored tiles' (None when the tiles agree or cannot be read)."""
        tiles = TileReader(self.root)
        try:  # tile by tile: `TileReader.hashes` reads within one tile
            stored = b"".join(tiles.tile(0, n, min(WIDTH, size - n * WIDTH)) for n in range(-(-size // WIDTH)))
        except (LedgerError, OSError):
            return None
        return next((i for i in range(size) if leaves[32 * i:32 * i + 32] != stored[32 * i:32 * i + 32]), None)

    def proved_stream(self, name: str) -> tuple[list[bytes], Checkpoint]:
        """Returns a stream's entries under the newest signed checkpoint, each proved included in the
        signed tree with the stream's head under its commitment and its records under the signed
        state (the evidence bundle's check), and the checkpoint they are proved against: the newest
        once the state shows nothing after them (a ledger whose notes predate states: the covering one).

        :raises LedgerCorrupt: when an entry, a tile or the stream's head does not match the signed root.
        """
        if read_head(self.root) is None:  # a ledger from before the index: its stream is found in the whole log, checked whole
            log = self.packed()
            checkpoint = self.check(log)
            found = [bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(checkpoint.size)]
            return [data for data, key in zip(found, decode_keys(found, 0)) if key.stream == name], checkpoint
        newest = self.signed()
        index = load_stream(self.root, name)
        if not index or index.entry(0) >= newest.size:  # its first event is not signed yet (records are in log order)
            self._check_absent(name, newest)  # and no index file was deleted
            return [], newest
        bundle = prove(self.root, name)
        try:
            checked = check_bundle(bundle, self.verifier)
        except LedgerError as exc:
            raise LedgerCorrupt(None, f"账本已签名部分被改动，拒绝显示 / stream {name!r} does not match the signed tree: {exc} "
                                f"(run `matchledger verify`)") from None
        entries = [item.entry.encode() for item in bundle.entries]
        if checked.as_of is None:
            return entries, checked.checkpoint  # a ledger whose newest note predates states: complete as of the covering note
        return entries, self._extended(checked.checkpoint, newest)

    def _check_absent(self, name: str, newest: Checkpoint) -> None:
        """Checks that the signed state gives a stream the index has no signed entry of none either.

        :raises LedgerCorrupt: when it does (its index file was deleted or emptied).
        """
        proved = state_proof(self.root, name, self.verifier, newest)
        try:
            if proved is not None:
                check_state_proof(proved[0], name, [], self.verifier)
        except StateError as exc:
            raise LedgerCorrupt(None, f"{exc}") from None

    def _extended(self, proved: Checkpoint, newest: Checkpoint) -> Checkpoint:
        """Returns the newest checkpoint, once the tiles prove the one the entries were proved against a
        prefix of it: the signed state showed the stream has no entries after them, so they are the
        stream as of the newest size, and that is the size a reader names.

        :raises LedgerCorrupt: when the stored tiles give no such consistency proof.
        """
        if proved.size == newest.size:
            return newest
        tiles = TileReader(self.root)
        try:
            verify_consistency(proved.size, newest.size, proved.root, newest.root,
                               consistency_proof(proved.size, newest.size, tiles.subtree))
        except (ProofError, LedgerError, OSError) as exc:
            raise LedgerCorrupt(None, f"账本已签名部分被改动 / checkpoint {proved.size} is not a prefix of checkpoint {newest.size} "
                                      f"by the stored tiles: {exc} (run `matchledger verify`)") from None
        return newest

    def checked_events(self, stream: str | None = None) -> tuple[list[Event], Checkpoint]:
        """Returns the events a reader shows, decoded from the very bytes checked against the signed
        tree (one stream's, or the whole log's), and the checkpoint they were checked against.

        :raises LedgerCorrupt: when what was read does not match the signed root.
        """
        if stream is not None:
            entries, checkpoint = self.proved_stream(stream)
            return decode_stored(entries), checkpoint
        log = self.packed()
        checkpoint = self.check(log)
        return list(log.events()), checkpoint
