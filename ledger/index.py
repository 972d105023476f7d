"""The stream index, written at append beside the tiles: where each stream's events are in the log.

`index/streams/<hh>/<h>` (h = the first 32 hex digits of SHA-256 of the stream id) holds the
stream id, then one 16-byte record per event of the stream in seq order: its entry index and
the offset of its frame in its segment (u64 little-endian each). A stream's next seq is the
record count, so the writer learns it from the file's size; a re-send is judged by reading the
one entry the index points to. `index/head` names the tree size up to which tiles and index
were made durable and where that entry starts, so the writer resumes there without reading the log.

Nobody signs the index, so the writer does not believe a file's size on its word: the head also
carries the index's seal (`Seal`), a MAC by the writer's key over every file's name and size,
folded per directory. An index file emptied, cut or planted by someone without the key would
otherwise reset a stream's count and let the writer sign a second event at a used number.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import itertools
import os
import stat
import struct
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ledger.errors import LedgerCorrupt
from ledger.layout import write_atomic
from ledger.segments import fsync_dir, make_dirs

if TYPE_CHECKING:
    import pyarrow as pa

INDEX = "index"
STREAMS = "streams"
HEAD = "head"
RECORD = struct.Struct("<QQ")
NAME_LEN = struct.Struct("<H")


class Head(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Tiles and index are durable for the first `size` entries; entry `size` starts at byte
    `offset` of the segment whose first entry is `segment`; `seal` is the stream index files'
    seal then (`Seal.encoded`) and `mac` binds all four to the writer's key (empty in a head
    written before seals: the writer builds that index again from the entries)."""

    size: int
    segment: int
    offset: int
    seal: str = ""
    mac: str = ""
    notes_changed: int = 0
    notes_newest: int = -1
    """The newest note kept in its own file when `checkpoints/` last changed (its ctime: `notes_changed`),
    which spares the writer's rollback check a listing of every note while it stays so (-1: not known)."""
    state: str = ""
    state_note: str = ""
    """The 256 directory digests of the streams' state at `size` (base64, `ledger/state.py`) and
    the note of that size that signs them: a reader checks a stream's records against them with the
    public key (empty: not known, a ledger whose newest note predates states)."""


DIRECTORIES = 256
"""The index files are spread over `streams/00` … `streams/ff` by their name's first two hex digits."""
SEAL_BYTES = 16


def seal_key(origin_key: bytes) -> bytes:
    """Returns the key of the index's seal, derived from the writer's proof-of-origin key (domain-separated)."""
    return hmac.new(origin_key, b"matchledger/stream-index/v1", hashlib.sha256).digest()


class Seal:
    """What the writer knows the stream index files to be: per directory, the XOR of a keyed
    hash of each file's (name, size). Only the key's holder can compute it, so a directory whose
    files were added, removed, cut or grown by anyone else no longer matches. The writer keeps it
    current as it writes (`changed`), checks a directory the first time it opens an index there
    (`check`: one listing, the files' sizes only), and writes it in the head with a MAC. An index
    it let go and opens again is checked by its file's size then (`let_go`): someone who changed
    that file meanwhile, while the writer ran, is refused too."""

    def __init__(self, key: bytes, encoded: str = "") -> None:
        self._key = key
        raw = bytes.fromhex(encoded) if encoded else bytes(DIRECTORIES * SEAL_BYTES)
        self._dirs = [int.from_bytes(raw[i:i + SEAL_BYTES], "big") for i in range(0, len(raw), SEAL_BYTES)]
        self._checked: set[int] = set()
        self._let_go: dict[str, int] = {}  # file name -> size, of the indexes the writer let go since it checked them

    def _item(self, name: str, size: int) -> int:
        digest = hmac.new(self._key, f"{name} {size}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:SEAL_BYTES], "big")

    def changed(self, path: Path, old: int, new: int) -> None:
        """Records that the writer took a file from `old` to `new` bytes (0: no file)."""
        slot = int(path.parent.name, 16)
        for size in (old, new):
            if size:
                self._dirs[slot] ^= self._item(path.name, size)

    def let_go(self, index: StreamIndex) -> None:
        """Notes the size of the file of an index the writer lets go (all on disk), for `check` when it is opened again."""
        self._let_go[index.path.name] = index.file_size

    def check(self, index: StreamIndex) -> None:
        """Checks a stream index just opened: its directory against the seal, once per writer, and
        an index the writer let go by its file's size.

        :raises LedgerCorrupt: when the files are not those the writer left.
        """
        size = self._let_go.pop(index.path.name, None)
        if size is not None and size != index.file_size:
            raise _tampered(index.path.parent)
        self.check_directory(index.path)

    def check_directory(self, path: Path) -> None:
        """Checks the directory of index file `path` against the seal, once per writer.

        :raises LedgerCorrupt: when its files are not those the writer left.
        """
        slot = int(path.parent.name, 16)
        if slot in self._checked:
            return
        folded = 0
        try:
            with os.scandir(path.parent) as listing:
                for entry in listing:
                    size = entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else -1
                    if size:
                        folded ^= self._item(entry.name, size)
        except FileNotFoundError:
            pass
        if folded != self._dirs[slot]:
            raise _tampered(path.parent)
        self._checked.add(slot)

    def encoded(self) -> str:
        return b"".join(d.to_bytes(SEAL_BYTES, "big") for d in self._dirs).hex()

    def head(self, size: int, segment: int, offset: int, notes: tuple[int, int] = (0, -1), state: tuple[str, str] = ("", "")) -> Head:
        """Returns the index head of this size and position with this seal, what is known of
        `checkpoints/` (`Head.notes_changed`, `Head.notes_newest`) and the signed state (`Head.state`,
        `Head.state_note`: signed, so not MACed), MACed."""
        unmacked = Head(size, segment, offset, self.encoded(), "", *notes, *state)
        return msgspec.structs.replace(unmacked, mac=self._mac(unmacked))

    def _mac(self, head: Head) -> str:
        text = f"{head.size} {head.segment} {head.offset} {head.seal}"
        if head.notes_newest >= 0:
            text += f" notes {head.notes_changed} {head.notes_newest}"
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def vouches(self, head: Head) -> bool:
        """Tells whether the head was written by this key's holder."""
        return bool(head.mac) and hmac.compare_digest(self._mac(head), head.mac)


def _tampered(directory: Path) -> LedgerCorrupt:
    return LedgerCorrupt(None, f"流索引目录 {directory} 的文件不是写入者留下的（有人无密钥地增删、截短或加长了索引文件）；"
                         f"请运行 `matchledger repair` 由条目重建索引（原文件留作证据）/ "
                         f"the stream index files in {directory} are not those the writer left: someone without "
                         f"its key added, removed, cut or grew one; run `matchledger repair` to build the index again "
                         f"from the entries (the files are kept as evidence)")


def stream_path(root: Path, stream: str) -> Path:
    """Returns the index file of a stream."""
    digest = hashlib.sha256(stream.encode()).hexdigest()[:32]
    return root / INDEX / STREAMS / digest[:2] / digest


def read_head(root: Path) -> Head | None:
    """Returns the index head, or None for a ledger written before the index existed.

    :raises LedgerCorrupt: when the head is not readable.
    """
    path = root / INDEX / HEAD
    if not path.exists():
        return None
    try:
        return msgspec.json.decode(_read_regular(path), type=Head)
    except (msgspec.DecodeError, OSError) as exc:
        raise LedgerCorrupt(None, f"索引头 {path} 无法读取或解析 / index head {path}: {exc}") from None


def _read_regular(path: Path) -> bytes:
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(path)
    if path.is_symlink() or not path.is_file():
        raise OSError(f"{path} is not a regular file")
    return path.read_bytes()


class StreamIndex:
    """One stream's records in seq order: the first `stored` are on disk and read by seq (one
    `pread` of the block of BLOCK_RECORDS around it, the last block kept), the rest, appended since
    the last `flush`, in memory. The writer's memory is thus what it appended since the last full
    checkpoint, whatever the stream's length (a `log.batches` of 5 M batches is 80 MB on disk,
    none of it loaded)."""

    def __init__(self, stream: str, path: Path, stored: int = 0) -> None:
        self.stream = stream
        self.path = path
        self.stored = stored
        self.header = len(_header(stream))
        self.new_entries = array("Q")
        """The entries of the records not yet on disk (`flush` writes them)."""
        self.new_offsets = array("Q")
        self._near: tuple[int, array] = (0, array("Q"))  # the last block of stored records read: (first seq, records)

    def __len__(self) -> int:
        return self.stored + len(self.new_entries)

    @property
    def file_size(self) -> int:
        """The size of the file holding the stored records (0: none, and no file)."""
        return self.header + self.stored * RECORD.size if self.stored else 0

    def append(self, entry: int, offset: int) -> None:
        self.new_entries.append(entry)
        self.new_offsets.append(offset)

    def extend(self, entries: array, offsets: array) -> None:
        self.new_entries.extend(entries)
        self.new_offsets.extend(offsets)

    def record(self, seq: int) -> tuple[int, int]:
        """Returns (entry index, frame offset) of event `seq` (negative: from the end).

        :raises IndexError: when the stream has no such event.
        :raises LedgerCorrupt: when the file holds fewer records than it did when opened.
        """
        if seq < 0:
            seq += len(self)
        if not 0 <= seq < len(self):
            raise IndexError(f"stream {self.stream!r} has no seq {seq} ({len(self)} events)")
        if seq >= self.stored:
            return self.new_entries[seq - self.stored], self.new_offsets[seq - self.stored]
        first, pairs = self._near
        if not 0 <= 2 * (seq - first) < len(pairs):  # read the aligned block around it: a walk by seq reads a block per BLOCK_RECORDS
            first = seq - seq % BLOCK_RECORDS
            pairs = self.read(first, min(first + BLOCK_RECORDS, self.stored))
            self._near = (first, pairs)
        return pairs[2 * (seq - first)], pairs[2 * (seq - first) + 1]

    def forget_near(self) -> None:
        """Drops the block of records kept from the last read (the file changed under it)."""
        self._near = (0, array("Q"))

    def entry(self, seq: int) -> int:
        """Returns the entry index of event `seq` (negative: from the end)."""
        return self.record(seq)[0]

    def read(self, lo: int, hi: int) -> array:
        """Returns the stored records of seqs `lo` to `hi` - 1 (`hi` ≤ `stored`), entry index and frame
        offset interleaved, with one `pread`.

        :raises LedgerCorrupt: when the file is gone or shorter than that.
        """
        pairs = array("Q")
        if hi <= lo:
            return pairs
        want = (hi - lo) * RECORD.size
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                data = os.pread(fd, want, self.header + lo * RECORD.size)
            finally:
                os.close(fd)
        except OSError as exc:
            raise LedgerCorrupt(None, f"索引文件无法读取 / index of stream {self.stream!r} ({self.path}): "
                                f"{exc.strerror or exc}") from None
        if len(data) != want:
            raise LedgerCorrupt(None, f"索引文件比其记录短 / index file {self.path} of stream {self.stream!r} ends before seq "
                                f"{hi - 1} (it held {self.stored} records when opened): it was cut while the writer had it open")
        pairs.frombytes(data)
        return pairs


BLOCK_RECORDS = 64
"""Stored records read at once for a question by seq (1 KiB; one block is kept per open index)."""
CHUNK_RECORDS = 4096
"""Records read at once when a reader walks a stream's index (64 KiB)."""


def iter_records(index: StreamIndex, start: int = 0) -> Iterator[tuple[int, int]]:
    """Yields (entry index, frame offset) of each event from seq `start` on, reading the stored
    records CHUNK_RECORDS at a time: a reader that stops early reads no further."""
    for lo in range(start, index.stored, CHUNK_RECORDS):
        pairs = index.read(lo, min(lo + CHUNK_RECORDS, index.stored))
        yield from zip(pairs[0::2], pairs[1::2])
    first = max(start - index.stored, 0)
    yield from zip(index.new_entries[first:], index.new_offsets[first:])


def load_stream(root: Path, stream: str) -> StreamIndex:
    """Opens a stream's index (an empty index when the stream has no events): checks the file's
    header and counts its records from its size, reading none of them. A torn last record (a crash
    during its append) is not counted; recovery rewrites it (`truncate_from`, `flush`). A file
    holding only part of its header (a crash between its creation and its first write) is an empty
    index: `flush` writes it anew.

    :raises LedgerCorrupt: when the file is not a regular file or names another stream.
    """
    path = stream_path(root, stream)
    header = _header(stream)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return StreamIndex(stream, path)
    except OSError as exc:
        raise LedgerCorrupt(None, f"流 {stream!r} 的索引文件无法读取 / index of stream {stream!r}: {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LedgerCorrupt(None, f"流 {stream!r} 的索引文件 {path} 不是普通文件 / index of stream {stream!r}: {path} is not a regular file")
        start = os.pread(fd, len(header), 0)
        if start != header[:len(start)]:
            raise LedgerCorrupt(None, f"索引文件 {path} 不属于流 {stream!r} / index file {path} does not belong to stream {stream!r}")
    finally:
        os.close(fd)
    return StreamIndex(stream, path, max(info.st_size - len(header), 0) // RECORD.size)


def _header(stream: str) -> bytes:
    name = stream.encode()
    return NAME_LEN.pack(len(name)) + name


def flush(index: StreamIndex) -> tuple[Path, list[Path]] | None:
    """Writes the records not yet on disk after the stored ones (over a torn record a crash left)
    and lets them go from memory; returns the file written, if any, with the directories it
    created (a new file's directory must be synced too: it is returned among them as the file
    itself when only the file is new)."""
    if not index.new_entries:
        return None
    created: list[Path] = []
    new = array("Q", bytes(16 * len(index.new_entries)))
    new[0::2], new[1::2] = index.new_entries, index.new_offsets
    path = index.path
    if index.stored == 0:
        created = [*make_dirs(path.parent), path]
        data = _header(index.stream) + new.tobytes()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o640)
        at = 0
    else:
        data = new.tobytes()
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
        at = index.header + index.stored * RECORD.size
    try:
        done = 0
        while done < len(data):
            done += os.pwrite(fd, data[done:], at + done)
    finally:
        os.close(fd)
    index.stored += len(index.new_entries)
    index.new_entries, index.new_offsets = array("Q"), array("Q")
    index.forget_near()
    return path, created


class _Entries:
    """The entry indexes of a stream's records as a sequence (stored ones read a block at a time), for `bisect`."""

    def __init__(self, index: StreamIndex) -> None:
        self.index = index

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, seq: int) -> int:
        return self.index.entry(seq)


def count_below(index: StreamIndex, entry: int) -> int:
    """Returns how many of a stream's records are of entries before `entry` (a binary search: O(log n) reads)."""
    return bisect.bisect_left(_Entries(index), entry)


def truncate_from(index: StreamIndex, entry: int) -> None:
    """Drops the records of entries at or after `entry`, on disk too, and a torn record after
    them (recovery re-adds them from the log)."""
    keep = count_below(index, entry)
    index.forget_near()
    if keep >= index.stored:
        del index.new_entries[keep - index.stored:], index.new_offsets[keep - index.stored:]
    else:
        index.new_entries, index.new_offsets = array("Q"), array("Q")
    if keep == 0:
        index.path.unlink(missing_ok=True)
        index.stored = 0
    elif keep <= index.stored:
        if index.path.exists():
            with open(index.path, "r+b") as f:
                f.truncate(index.header + keep * RECORD.size)
        index.stored = keep


def list_stream_files(root: Path) -> list[Path]:
    """Returns every stream index file."""
    base = root / INDEX / STREAMS
    if not base.is_dir():
        return []
    return [Path(entry.path) for sub in sorted(os.scandir(base), key=lambda e: e.name) if sub.is_dir()
            for entry in sorted(os.scandir(sub.path), key=lambda e: e.name)]


def open_stream_file(path: Path) -> StreamIndex:
    """Opens the stream index a file in the index holds, whatever its stream (one open: its header
    read, its records counted from its size, as `load_stream`).

    :raises LedgerCorrupt: when it is not a regular file, its header is malformed, or it names a
        stream whose index lives elsewhere.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise LedgerCorrupt(None, f"索引文件 {path} 不是普通文件 / index file {path} is not a regular file")
            head = os.pread(fd, NAME_LEN.size, 0)
            name = os.pread(fd, NAME_LEN.unpack(head)[0], NAME_LEN.size) if len(head) == NAME_LEN.size else b""
        finally:
            os.close(fd)
    except OSError as exc:
        raise LedgerCorrupt(None, f"索引文件 {path} 无法读取 / index file {path}: {exc.strerror or exc}") from None
    if len(head) < NAME_LEN.size or len(name) != NAME_LEN.unpack(head)[0]:
        raise LedgerCorrupt(None, f"索引文件 {path} 被截短 / index file {path} is truncated")
    try:
        stream = name.decode()
    except UnicodeDecodeError:
        raise LedgerCorrupt(None, f"索引文件 {path} 中的流标识格式错误 / index file {path} has a malformed stream id") from None
    if hashlib.sha256(stream.encode()).hexdigest()[:32] != path.name:
        raise LedgerCorrupt(None, f"索引文件 {path} 存放的是流 {stream!r}，而该流的索引不在此处 / "
                            f"index file {path} holds stream {stream!r}, whose index lives elsewhere")
    return StreamIndex(stream, path, (info.st_size - NAME_LEN.size - len(name)) // RECORD.size)


def read_stream_file(path: Path) -> tuple[str, array]:
    """Returns a stream index file's stream id and its records: entry index and frame offset,
    interleaved (`[0::2]` the entries, `[1::2]` the offsets).

    :raises LedgerCorrupt: when the file is malformed.
    """
    data = _read_regular(path)
    if len(data) < NAME_LEN.size:
        raise LedgerCorrupt(None, f"索引文件 {path} 被截短 / index file {path} is truncated")
    (length,) = NAME_LEN.unpack_from(data)
    try:
        stream = data[2:2 + length].decode()
    except UnicodeDecodeError:
        raise LedgerCorrupt(None, f"索引文件 {path} 中的流标识格式错误 / index file {path} has a malformed stream id") from None
    if hashlib.sha256(stream.encode()).hexdigest()[:32] != path.name:
        raise LedgerCorrupt(None, f"索引文件 {path} 存放的是流 {stream!r}，而该流的索引不在此处 / "
                            f"index file {path} holds stream {stream!r}, whose index lives elsewhere")
    pairs = array("Q")
    body = data[2 + length:]
    if len(body) % RECORD.size:
        raise LedgerCorrupt(None, f"流 {stream!r} 的索引文件在一条记录中间结束 / index file of stream {stream!r} ends inside a record")
    pairs.frombytes(body)
    return stream, pairs


def check_index(root: Path, coded: pa.DictionaryArray, size: int, starts: pa.UInt64Array | None = None) -> str | None:
    """Compares every stream index file with the first `size` entries, whose streams are given in
    log order, dictionary-coded, and (given `starts`) whose frames start there in their segments;
    returns what is wrong, if anything (nothing for a ledger whose index no writer has built yet).
    A file is right when its entries rise, each is one of its stream's, and it lists as many as
    the stream has: they are then that stream's entries in log order. The files' entries are
    looked up in Arrow a batch of files at a time, so nothing the size of the log is sorted (on a
    22 M-entry season the sort by stream took 12.0 s and 122 MB, this 8.2 s and 81 MB; issue 32).
    `verify` checks both halves of each record: a wrong offset makes reads of that event fail
    although its entry number is right."""
    import pyarrow.compute as pc  # only verification needs Arrow; the writer's open stays light

    if read_head(root) is None:
        return None
    coded = coded.slice(0, size)
    names = coded.dictionary.to_pylist()
    code_of = {name: code for code, name in enumerate(names)}
    counts = dict(zip(*(pc.value_counts(coded.indices).flatten()[k].to_pylist() for k in (0, 1))))
    seen: set[str] = set()
    batch = _IndexBatch(coded, starts)
    for path in list_stream_files(root):
        try:
            stream, pairs = read_stream_file(path)
        except (LedgerCorrupt, OSError) as exc:
            return batch.check() or str(exc)
        seen.add(stream)
        code = code_of.get(stream, -1)
        n = counts.get(code, 0)
        entries = pairs[0::2]
        have = entries[:n] if len(entries) > n and entries[n] >= size else entries
        if len(have) != n or (n and have[-1] >= size) or any(a >= b for a, b in zip(have, have[1:])):
            return batch.check() or _first_difference(stream, have, _entries_of(coded, code))
        if n and (problem := batch.add(stream, code, have, pairs[1::2][:n])):
            return problem
    if problem := batch.check():
        return problem
    missing = sorted(s for s in set(code_of) - seen if counts.get(code_of[s], 0))  # a stream with no entry in range needs no file yet
    if missing:
        n = counts[code_of[missing[0]]]
        return f"索引缺少流 {missing[0]!r} 的文件（{n} 个条目） / the index has no file for stream {missing[0]!r} ({n} entries)"
    return None


_INDEX_BATCH = 1 << 20
"""How many index records are looked up in the log together (8 MB of entry numbers)."""


class _IndexBatch:
    """Stream files whose entries rise and are as many as their streams', checked against the log
    a batch at a time: each entry must be one of its file's stream, and (given the frames' starts)
    each offset its frame's."""

    def __init__(self, coded: pa.DictionaryArray, starts: pa.UInt64Array | None) -> None:
        self._coded, self._starts = coded, starts
        self._files: list[tuple[str, int, array, array]] = []
        self._held = 0

    def add(self, stream: str, code: int, entries: array, offsets: array) -> str | None:
        """Adds a file's records; checks the batch when it is full and returns its first difference."""
        self._files.append((stream, code, entries, offsets))
        self._held += len(entries)
        return self.check() if self._held >= _INDEX_BATCH else None

    def check(self) -> str | None:
        """Checks the files added since the last check; returns the first one's difference, in their order."""
        files, self._files, self._held = self._files, [], 0
        if not files or self._agree(files):
            return None
        return next(filter(None, (self._difference(*file) for file in files)), None)

    def _agree(self, files: list[tuple[str, int, array, array]]) -> bool:
        import pyarrow as pa
        import pyarrow.compute as pc

        entries = _uint64(array("Q", itertools.chain.from_iterable(f[2] for f in files)))
        ends = pa.array(itertools.accumulate(len(f[2]) for f in files), pa.int32())
        expected = pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(ends, pa.array([f[1] for f in files], pa.int32())))
        if not self._coded.indices.take(entries).equals(expected.cast(self._coded.indices.type)):
            return False
        offsets = _uint64(array("Q", itertools.chain.from_iterable(f[3] for f in files)))
        return self._starts is None or offsets.equals(self._starts.take(entries))

    def _difference(self, stream: str, code: int, have: array, offsets: array) -> str | None:
        import pyarrow.compute as pc

        entries = _uint64(have)
        if not pc.all(pc.equal(self._coded.indices.take(entries), code)).as_py():
            return _first_difference(stream, have, _entries_of(self._coded, code))
        if self._starts is None:
            return None
        frame_starts, offset = self._starts.take(entries), _uint64(offsets)
        if offset.equals(frame_starts):
            return None
        seq = pc.index(pc.not_equal(offset, frame_starts), True).as_py()
        return (f"索引给出流 {stream!r} 第 {seq} 号事件（第 {have[seq]} 号条目）的偏移为 {offsets[seq]}，"
                f"其帧始于 {frame_starts[seq].as_py()} / "
                f"the index gives offset {offsets[seq]} for seq {seq} of stream {stream!r} (entry {have[seq]}), "
                f"its frame starts at {frame_starts[seq].as_py()}")


def _uint64(values: array) -> pa.UInt64Array:
    """Returns an `array("Q")` as an Arrow array over its own bytes (no copy)."""
    import pyarrow as pa

    return pa.Array.from_buffers(pa.uint64(), len(values), [None, pa.py_buffer(values)])


def _entries_of(coded: pa.DictionaryArray, code: int) -> array:
    """Returns one stream's entries (by its code) in log order: needed only when a file is wrong."""
    import pyarrow.compute as pc

    return array("Q", pc.indices_nonzero(pc.equal(coded.indices, code)).to_pylist())


def _first_difference(stream: str, have: array, want: array) -> str:
    for seq, (h, w) in enumerate(zip(have, want)):
        if h != w:
            return (f"索引给出流 {stream!r} 第 {seq} 号事件在第 {h} 号条目，日志中它在第 {w} 号条目 / "
                    f"the index gives entry {h} for seq {seq} of stream {stream!r}, the log has it at entry {w}")
    if len(have) < len(want):
        return (f"流 {stream!r} 的索引止于第 {len(have) - 1} 号事件，日志在第 {want[len(have)]} 号条目有第 {len(want) - 1} 号事件 / "
                f"the index of stream {stream!r} stops at seq {len(have) - 1}, the log holds seq {len(want) - 1} at entry {want[len(have)]}")
    return (f"流 {stream!r} 的索引列出 {len(have)} 个条目，日志中有 {len(want)} 个 / "
            f"the index of stream {stream!r} lists {len(have)} entries, the log holds {len(want)}")


# -- the source book's index: what the re-send and ownership checks need, without the log's history --

BOOK = "book"
BOOK_HEAD = "book.head"


class BookHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`index/book` holds, in its first `length` bytes (whose SHA-256 is `sha256`), what the
    source book folded from the log's first `size` entries (`ledger/sources.py`); `mac` binds the
    three to the writer's key, so that a file edited by someone without it is rebuilt, not believed."""

    size: int
    length: int
    sha256: str
    root: str
    """The Merkle root of the log at `size` (hex): a log cut and grown again since is told apart."""
    mac: str = ""


def book_head(key: bytes, size: int, length: int, sha256: str, root: str) -> BookHead:
    """Returns the head of the book's index, its MAC made with the writer's key (`book_key`)."""
    mac = hmac.new(key, f"{size} {length} {sha256} {root}".encode(), hashlib.sha256).hexdigest()
    return BookHead(size, length, sha256, root, mac)


def book_key(origin_key: bytes) -> bytes:
    """Returns the key of the book index's MAC, derived from the writer's proof-of-origin key (domain-separated)."""
    return hmac.new(origin_key, b"matchledger/book-index/v1", hashlib.sha256).digest()


def read_book_index(root: Path, key: bytes) -> tuple[BookHead, bytes] | None:
    """Returns the head of the source book's index and its bytes, or None when it is missing,
    damaged, does not match its head or its head is not this writer's (then the book is rebuilt
    from the entries)."""
    try:
        head = msgspec.json.decode(_read_regular(root / INDEX / BOOK_HEAD), type=BookHead)
        data = _read_regular(root / INDEX / BOOK)[:head.length]
    except (msgspec.DecodeError, OSError):
        return None
    if len(data) != head.length or hashlib.sha256(data).hexdigest() != head.sha256:
        return None
    if not hmac.compare_digest(book_head(key, head.size, head.length, head.sha256, head.root).mac, head.mac):
        return None
    return head, data


def write_book_index(root: Path, at: int, data: bytes, head: BookHead) -> None:
    """Writes `data` at byte `at` of the book's index (cutting what a crash left beyond), syncs it,
    then moves the head (temp file, fsync, rename): a crash leaves the old head or the new one,
    each matching the bytes before it."""
    base = root / INDEX
    created = make_dirs(base)
    fd = os.open(base / BOOK, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o640)
    try:
        os.ftruncate(fd, at)
        done = 0
        while done < len(data):
            done += os.pwrite(fd, data[done:], at + done)
        os.fsync(fd)
    finally:
        os.close(fd)
    write_atomic(base / BOOK_HEAD, msgspec.json.encode(head))
    for directory in created:
        fsync_dir(directory.parent)
