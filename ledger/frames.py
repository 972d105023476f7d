"""The frame parser of a ledger's segments, behind the one reader (`ledger/reader.py`): only the
reader and the writer's own recovery, repair and `verify` call it (tests/test_one_reader.py).

Ways in: the segments packed one at a time (`iter_packed`) for the consumers of every entry; one
frame at a known place (`read_frame`); streams through the index and the frames after its head
(`committed_streams`); and the frames beyond the index head (`read_tail`) for the writer's recovery.
"""

from __future__ import annotations

import bisect
import mmap
import os
import stat
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import msgspec

from ledger.errors import LedgerCorrupt, LedgerError
from ledger.fastscan import SegmentPacked, scan_leaves, segment_packed
from ledger.index import Head, iter_records, load_stream, read_head
from ledger.layout import SEGMENTS, load_config
from ledger.segments import COMMIT, HEADER, LENGTH_MASK, OVERHEAD, TRAILER, FrameError, fsync_dir, iter_frames, list_segments, segment_path, sync_file


class EntryKey(msgspec.Struct, frozen=True):
    """The part of an entry the log itself checks: its stream and sequence number."""

    stream: str
    seq: int


_key = msgspec.json.Decoder(EntryKey)
_keys = msgspec.json.Decoder(list[EntryKey])


def decode_key(data: bytes | memoryview, entry: int) -> EntryKey:
    """Returns an entry's stream and sequence number.

    :raises LedgerCorrupt: when the bytes carry none.
    """
    try:
        return _key.decode(data)
    except msgspec.DecodeError as exc:
        raise LedgerCorrupt(entry, f"条目不是可读的事件 / entry is not a readable event: {exc}") from None


def decode_keys(payloads: list[bytes], first: int) -> list[EntryKey]:
    """Decodes the keys of many entries in one call, naming the first unreadable entry.

    :raises LedgerCorrupt: at that entry.
    """
    if not payloads:
        return []
    try:
        return _keys.decode(b"[" + b",".join(payloads) + b"]")
    except msgspec.DecodeError:
        return [decode_key(p, first + i) for i, p in enumerate(payloads)]


# The recorder writes every entry as `{"kind":"…","stream":"…",…}` (the schema's field order): for
# those the stream is read by one vectorised match over a segment; any other entry is decoded.
_CANONICAL_STREAM = r'^\{"kind":"[^"\\]*","stream":"(?P<stream>[^"\\]*)"'


def stream_codes(root: Path, count: int):  # noqa: ANN201 - pyarrow arrays (pyarrow is imported late)
    """Returns the stream of each of the first `count` entries, dictionary-encoded, and where each
    one's frame starts in its segment (uint64), reading one segment at a time (memory stays bounded
    by a segment).

    :raises LedgerCorrupt: naming the first unreadable entry.
    """
    import pyarrow as pa  # only here: the writer's path needs no Arrow

    chunks, starts = [], []
    for first, part in iter_packed(root, count):
        stop = min(part.last_commit, max(0, count - first))
        chunks.append(_segment_streams(part, first, stop).dictionary_encode())
        starts.append(_frame_starts(part, stop))
        if first + stop >= count:
            break
    if not chunks:
        return pa.array([], pa.string()).dictionary_encode(), pa.array([], pa.uint64())
    return pa.chunked_array(chunks).unify_dictionaries().combine_chunks(), pa.chunked_array(starts, pa.uint64()).combine_chunks()


def _frame_starts(part: SegmentPacked, stop: int):  # noqa: ANN202 - a pyarrow UInt64Array
    """Returns where each of a segment's first `stop` frames starts: frames lie end to end from the
    segment's first byte, each its payload and OVERHEAD bytes of header and trailer."""
    import pyarrow as pa
    import pyarrow.compute as pc

    framing = array("q", range(0, stop * OVERHEAD, OVERHEAD))
    payloads = pc.subtract(pa.array(part.ends[:stop], pa.int64()), part.ends[0])
    return pc.add(payloads, pa.Array.from_buffers(pa.int64(), stop, [None, pa.py_buffer(framing)])).cast(pa.uint64())


def _segment_streams(part: SegmentPacked, first: int, stop: int):  # noqa: ANN202 - a pyarrow StringArray
    """Returns the stream of each of a segment's first `stop` entries."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = pc.subtract(pa.array(part.ends[:stop + 1], pa.int64()), part.ends[0])
    texts = pa.LargeStringArray.from_buffers(stop, offsets.buffers()[1], pa.py_buffer(part.data))
    streams = pc.struct_field(pc.extract_regex(texts, _CANONICAL_STREAM), [0]).cast(pa.string())
    if streams.null_count == 0:
        return streams
    found = streams.to_pylist()
    for k in pc.indices_nonzero(pc.is_null(streams)).to_pylist():
        found[k] = decode_key(part.data[part.ends[k] - part.ends[0]:part.ends[k + 1] - part.ends[0]], first + k).stream
    return pa.array(found, pa.string())


# -- where the committed log ends ------------------------------------------------------------------

def committed_end(segments: list[tuple[int, Path, int]]) -> int:
    """Returns how many entries lie before the log's last commit mark, given its segments as (first
    entry, path, size in bytes). A batch may go on from one segment into the next, its commit mark
    on its last frame only: an entry is committed when a commit mark follows it, in its own segment
    or a later one. After a clean append this reads one frame, the last, whose mark commits all.
    """
    for first, path, size in reversed(segments):
        last = _last_frame(path, size)
        if last is not None and last[1]:
            return last[0] + 1
        marked = _last_mark(path, first, size)
        if marked:
            return first + marked
    return 0


def _last_frame(path: Path, size: int) -> tuple[int, bool] | None:
    """Returns (entry, has the commit mark) of a segment's last frame within its first `size` bytes,
    or None when that frame is not intact (a torn tail, which a full scan then finds)."""
    if size < OVERHEAD:
        return None
    with open_regular(path) as f:
        f.seek(size - TRAILER.size)
        word = int.from_bytes(f.read(TRAILER.size), "little")
        start = size - OVERHEAD - (word & LENGTH_MASK)
        if start < 0:
            return None
        f.seek(start)
        head = f.read(HEADER.size)
    if len(head) < HEADER.size or HEADER.unpack(head)[0] != word:
        return None
    entry = HEADER.unpack(head)[2]
    try:
        read_frame(path, start, entry)
    except LedgerCorrupt:
        return None
    return entry, bool(word & COMMIT)


def _last_mark(path: Path, first: int, size: int) -> int:
    """Returns how many of a segment's frames lie before its last commit mark (0 when it has none)."""
    with open_regular(path) as f:
        data = f.read(size)
    return scan_leaves(data, first).last_commit


def check_segment_start(path: Path, first: int, expected: int) -> None:
    """Checks that a segment (named by its first entry) starts where the one before it ended.

    :raises LedgerCorrupt: when a segment is missing, inserted or renamed.
    """
    if first != expected:
        raise LedgerCorrupt(expected, f"段文件 {path.name} 从第 {first} 号条目开始，应从第 {expected} 号开始 / "
                            f"segment {path.name} starts at entry {first}, expected {expected}")


# -- one frame -----------------------------------------------------------------------------------

def read_frame(path: Path, offset: int, entry: int, opened: BinaryIO | None = None) -> bytes:
    """Returns the payload of the frame of `entry` at `offset` of a segment, its CRC and place checked
    (`opened`: the segment already open, for a caller reading many frames of it).

    :raises LedgerCorrupt: when no intact frame of that entry is there.
    """
    try:
        with open_regular(path) if opened is None else nullcontext(opened) as f:
            f.seek(offset)
            head = f.read(HEADER.size)
            length = int.from_bytes(head[:4], "little") & LENGTH_MASK if len(head) == HEADER.size else 0
            data = head + f.read(length + TRAILER.size)
    except OSError as exc:
        raise LedgerCorrupt(entry, f"无法读取 {path.name} / cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        found = next(iter_frames(data, entry), None)
    except FrameError as exc:
        raise LedgerCorrupt(entry, f"帧已损坏或错位（{path.name}，偏移 {offset}） / {exc} ({path.name}, offset {offset})") from None
    if found is None:
        raise LedgerCorrupt(entry, f"{path.name} 的偏移 {offset} 处没有帧 / no frame at offset {offset} of {path.name}")
    return bytes(found[2])


def open_regular(path: Path):  # noqa: ANN201 - a binary file object
    """Opens a file for reading, refusing anything but a regular file (a FIFO would hang the reader).

    :raises OSError: when the path is missing or not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def indexed_streams(root: Path, streams: Iterable[str], size: int) -> dict[str, list[tuple[int, bytes]]]:
    """Returns, for each stream, (entry index, stored bytes) of its events among the first `size`
    entries found through the stream index (each frame's place, CRC and key checked), each
    segment opened once for all of them.

    :raises LedgerCorrupt: when the index points at anything but a stream's events in order.
    """
    starts = [first for first, _ in list_segments(root / SEGMENTS)]
    files: dict[int, int] = {}
    found: dict[str, list[tuple[int, bytes]]] = {}
    try:
        for stream in streams:
            entries = found[stream] = []
            for seq, (entry, offset) in enumerate(iter_records(load_stream(root, stream))):  # a chunk of records at a time
                if entry >= size:
                    break
                first = starts[bisect.bisect_right(starts, entry) - 1] if starts else 0
                if first not in files:
                    with open_regular(segment_path(root / SEGMENTS, first)) as f:
                        files[first] = os.dup(f.fileno())
                data = _frame_at(files[first], offset, entry)
                key = decode_key(data, entry)
                if (key.stream, key.seq) != (stream, seq):
                    raise LedgerCorrupt(entry, f"索引指此处为流 {stream!r} 的序号 {seq}，条目却是流 {key.stream!r} 的序号 {key.seq} / "
                                               f"the index gives seq {seq} of stream {stream!r} here, "
                                               f"the entry is seq {key.seq} of {key.stream!r}")
                entries.append((entry, data))
    finally:
        for fd in files.values():
            os.close(fd)
    return found


def _frame_at(fd: int, offset: int, entry: int) -> bytes:
    """Returns the payload of the frame of `entry` at `offset` of an open segment, its CRC and place checked."""
    try:
        head = os.pread(fd, HEADER.size, offset)
        length = int.from_bytes(head[:4], "little") & LENGTH_MASK if len(head) == HEADER.size else 0
        data = head + os.pread(fd, length + TRAILER.size, offset + HEADER.size)
        frame = next(iter_frames(data, entry), None)
    except OSError as exc:
        raise LedgerCorrupt(entry, f"无法读取其段文件 / cannot read its segment: {exc.strerror or exc}") from None
    except FrameError as exc:
        raise LedgerCorrupt(entry, f"帧已损坏或错位（偏移 {offset}） / {exc} (offset {offset})") from None
    if frame is None:
        raise LedgerCorrupt(entry, f"偏移 {offset} 处没有帧 / no frame at offset {offset}")
    return bytes(frame[2])


def committed_streams(root: Path, streams: list[str], size: int) -> dict[str, list[tuple[int, bytes]]]:
    """Returns, for each stream, (entry index, stored bytes) of its events among the first `size`
    entries: through the stream index up to its head, then from the frames after the head, as the
    writer's open reads them. A running service makes its index durable only every few seconds
    and not at all while idle, so the index alone lags what is committed and signed (issue 33);
    this reads without the writer's lock and writes nothing.

    :raises LedgerCorrupt: when the index or the frames are not the streams' events in order.
    """
    head = read_head(root)
    indexed = min(head.size, size) if head is not None else size
    found = indexed_streams(root, streams, indexed)
    if head is None or indexed == size:
        return found
    for entry, data in _frames_from(root, head, size - head.size):
        key = decode_key(data, entry)
        if key.stream in found:
            if key.seq != len(found[key.stream]):
                raise LedgerCorrupt(entry, f"第 {entry} 号条目是流 {key.stream!r} 的序号 {key.seq}，应为序号 {len(found[key.stream])} / "
                                           f"entry {entry} is seq {key.seq} of stream {key.stream!r}, "
                                           f"seq {len(found[key.stream])} was due")
            found[key.stream].append((entry, data))
    return found


def _frames_from(root: Path, head: Head, count: int) -> list[tuple[int, bytes]]:
    """Returns the `count` entries after the index head, read from their segments (each frame's
    CRC and place checked); frames a writer appends meanwhile, beyond them, are not read.

    :raises LedgerCorrupt: when the frames there are not those entries.
    """
    found: list[tuple[int, bytes]] = []
    for start, path in list_segments(root / SEGMENTS):
        if start < head.segment or len(found) == count:
            continue
        with open_regular(path) as f:
            f.seek(head.offset if start == head.segment else 0)
            data = f.read()
        expected = head.size + len(found)
        try:
            for index, _, payload, _ in iter_frames(data, expected):
                found.append((index, bytes(payload)))
                if len(found) == count:
                    break
        except FrameError as exc:
            raise LedgerCorrupt(head.size + len(found), f"{path.name} 中的帧已损坏或错位 / {exc} in {path.name}") from None
    if len(found) < count:
        raise LedgerCorrupt(head.size + len(found), f"日志在第 {head.size + count - 1} 号条目之前就结束了 / "
                            f"the log ends before entry {head.size + count - 1}")
    return found


def interval_keys(root: Path, segment: int, offset: int, first: int, count: int) -> list[EntryKey]:
    """Returns the keys of `count` entries from entry `first`, which starts at byte `offset` of the
    segment whose first entry is `segment`; each frame's CRC and place are checked.

    :raises LedgerCorrupt: when the frames there are not those entries.
    """
    keys: list[EntryKey] = []
    for start, path in list_segments(root / SEGMENTS):
        if start < segment or len(keys) == count:
            continue
        with open_regular(path) as f:
            f.seek(offset if start == segment else 0)
            data = f.read()
        expected, payloads = first + len(keys), []
        try:
            for _, _, payload, _ in iter_frames(data, expected):
                payloads.append(bytes(payload))
                if len(keys) + len(payloads) == count:
                    break
        except FrameError as exc:
            raise LedgerCorrupt(expected + len(payloads), f"{path.name} 中的帧已损坏或错位 / {exc} in {path.name}") from None
        keys += decode_keys(payloads, expected)
    if len(keys) < count:
        raise LedgerCorrupt(first + len(keys), f"日志在第 {first + count - 1} 号条目之前就结束了 / the log ends before entry {first + count - 1}")
    return keys


# -- the tail beyond the index head ---------------------------------------------------------------

@dataclass
class Tail:
    """The committed entries beyond the index head: bytes, keys, and where each frame is."""

    entries: list[bytes] = field(default_factory=list)
    keys: list[EntryKey] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    recovered: str | None = None
    commits: list[int] = field(default_factory=list)
    """The entry after each commit mark among them: where each committed batch ends."""
    first: int = 0
    """The entry index of the first of them."""

    def take_below(self, end: int) -> Tail:
        """Removes and returns those before entry `end`."""
        k = max(0, min(len(self.entries), end - self.first))
        taken = Tail(self.entries[:k], self.keys[:k], self.offsets[:k], None, [c for c in self.commits if c <= self.first + k], self.first)
        del self.entries[:k], self.keys[:k], self.offsets[:k]
        self.commits = [c for c in self.commits if c > self.first + k]
        self.first += k
        return taken


def read_tail(root: Path, segment: int, offset: int, size: int, signed: int, signed_part: Callable[[Tail], None]) -> Tail:
    """Reads the frames after entry `size - 1` (which ends at `offset` of segment `segment`), dropping
    a torn or unfinished last batch that no checkpoint covers (in every segment it reached), and
    returns those after entry `signed - 1`. Those before it are handed to `signed_part` a segment
    at a time as they are read, so that rebuilding the index of a whole season holds one segment.

    :raises LedgerCorrupt: on damage within the first `signed` entries, or anywhere but the end.
    """
    found = [(first, path) for first, path in list_segments(root / SEGMENTS) if first >= segment]
    if size and (not found or found[0][0] != segment):
        raise LedgerCorrupt(size - 1, f"存放该条目的段文件 {segment_path(root / SEGMENTS, segment).name} 缺失 / "
                            f"segment {segment_path(root / SEGMENTS, segment).name}, which holds it, is missing")
    horizon = committed_end([(first, path, path.stat().st_size) for first, path in found])
    tail, expected, cut = Tail(first=size), size, None
    for n, (first, path) in enumerate(found):
        start = offset if first == segment else 0
        if first != segment:
            check_segment_start(path, first, expected)
        if start:
            check_frame_ends(path, start, expected - 1)
        expected, end, why = _read_segment_tail(tail, path, start, expected, signed, len(found) - n - 1, horizon)
        if end is not None and cut is None:
            cut = (n, end, why)
        if tail.first < signed and tail.entries:
            signed_part(tail.take_below(signed))
    committed = tail.first + len(tail.entries)
    if committed < signed:
        raise LedgerCorrupt(committed, f"日志只有 {committed} 个条目，但大小为 {signed} 的检查点覆盖更多 / "
                            f"log holds {committed} entries but checkpoint {signed} covers more")
    if cut is not None:
        dropped = _drop_after(found, cut[0], cut[1])
        tail.recovered = (f"已恢复：丢弃第 {committed - 1} 号条目之后未确认的 {dropped} 字节残尾（写入中断） / "
                          f"recovered: dropped an unacknowledged tail of {dropped} bytes after entry {committed - 1} ({cut[2]})")
    return tail


def check_frame_ends(path: Path, end: int, entry: int, opened: BinaryIO | None = None) -> bool:
    """Checks that the frame of `entry` ends at byte `end` of a segment; returns whether it carries a
    commit mark (a checkpoint's last entry always does: a note follows a commit). `opened`: the
    segment already open (verify checks ten thousand checkpoints' positions with one open a segment)."""
    if end < OVERHEAD:
        raise LedgerCorrupt(entry, f"第 {entry} 号条目的帧不可能结束于 {path.name} 的第 {end} 字节 / "
                            f"no frame of entry {entry} can end at byte {end} of {path.name}")
    with open_regular(path) if opened is None else nullcontext(opened) as f:
        if end > os.fstat(f.fileno()).st_size:
            raise LedgerCorrupt(entry, f"{path.name} 比索引头记录的短：条目被删除 / "
                                f"{path.name} is shorter than the index head says: entries were removed")
        f.seek(end - TRAILER.size)
        word = int.from_bytes(f.read(TRAILER.size), "little")
        read_frame(path, end - OVERHEAD - (word & LENGTH_MASK), entry, f)
    return bool(word & COMMIT)


def _read_segment_tail(tail: Tail, path: Path, start: int, expected: int, signed: int, later: int,
                       horizon: int) -> tuple[int, int | None, str]:
    """Adds a segment's committed frames from byte `start` (entry `expected` first) to the tail: those
    before entry `horizon`, the log's last commit mark. Returns the entry after its last intact frame,
    the byte where its uncommitted part starts (None when it has none) and why that part is there."""
    with open_regular(path) as f:
        f.seek(start)
        data = f.read()
    frames: list[tuple[int, memoryview, bool]] = []
    error = None
    try:
        for _, off, payload, commit in iter_frames(data, expected):
            frames.append((off, payload, commit))
    except FrameError as exc:
        error = exc
    if error is not None:
        _refuse_unless_torn(error, expected + len(frames), path, start, data, signed, later)
    committed = min(len(frames), max(0, horizon - expected))
    if committed < len(frames) and expected + committed < signed:
        raise LedgerCorrupt(expected + committed, f"检查点覆盖范围内 {path.name} 中有未完成的批次 / "
                            f"unfinished batch in {path.name} inside the checkpointed range")
    for k, (off, payload, commit) in enumerate(frames[:committed], expected + 1):
        tail.entries.append(bytes(payload))
        tail.offsets.append(start + off)
        if commit:
            tail.commits.append(k)
    tail.keys += decode_keys(tail.entries[len(tail.entries) - committed:], expected)
    if committed < len(frames):
        return expected + len(frames), start + frames[committed][0], str(error) if error else "frames without a commit mark"
    if error is not None:
        return expected + len(frames), start + error.offset, str(error)
    return expected + len(frames), None, ""


def _drop_after(found: list[tuple[int, Path]], n: int, end: int) -> int:
    """Drops everything after byte `end` of segment n and every later segment (the last first, so
    that a crash meanwhile leaves no gap between segments); returns how many bytes went."""
    dropped = 0
    for _, path in reversed(found[n + 1:]):
        dropped += path.stat().st_size
        path.unlink()
    if len(found) > n + 1:
        fsync_dir(found[n][1].parent)
    path = found[n][1]
    dropped += path.stat().st_size - end
    with open(path, "r+b") as f:
        f.truncate(end)
        os.fsync(f.fileno())
    return dropped


REPAIRED = "repaired"
"""Where files moved aside are kept as evidence, one directory per occasion (UTC time): a repair's
old derived files, and foreign frames a writer found after the newest signed note."""


def new_aside(root: Path) -> Path:
    """Returns a new directory's path under `repaired/` (named by the UTC time; never a symlink's target).

    :raises LedgerError: when `repaired/` is a symbolic link.
    """
    if (root / REPAIRED).is_symlink():
        raise LedgerError(f"{root / REPAIRED} is a symbolic link; files moved aside are kept only inside the ledger")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside, n = root / REPAIRED / stamp, 1
    while aside.exists() or aside.is_symlink():
        n += 1
        aside = root / REPAIRED / f"{stamp}-{n}"
    return aside


def move_derived_aside(root: Path, aside: Path, names: Iterable[str]) -> list[str]:
    """Moves the files and directories `names` (relative to the ledger's root) that exist into
    `aside`, durably; returns those moved. For what the entries determine and are rebuilt from
    (tiles, the stream index): the old files are evidence, so they are kept, not deleted."""
    aside.mkdir(parents=True, mode=0o750, exist_ok=True)
    moved = []
    for name in names:
        if (root / name).exists():
            (aside / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / name, aside / name)
            moved.append(name)
    for directory in {root, *((root / name).parent for name in moved), aside.parent}:
        if directory.exists():
            fsync_dir(directory)
    return moved


def move_aside_from(root: Path, segment: int, offset: int) -> tuple[Path, list[str]]:
    """Moves the log's bytes from byte `offset` of segment `segment` on into a new directory under
    `repaired/` (a whole segment file from its start, else its tail as `<name>.from-<offset>`),
    the segment cut there, durably; returns the directory and the names of what was moved."""
    directory = root / SEGMENTS
    aside = new_aside(root)
    (aside / SEGMENTS).mkdir(parents=True, mode=0o750)
    moved = []
    for first, path in reversed([(f, p) for f, p in list_segments(directory) if f >= segment]):
        if first > segment or (offset == 0 and first > 0):
            os.replace(path, aside / SEGMENTS / path.name)  # the last first: no gap between segments meanwhile
            moved.append(f"{SEGMENTS}/{path.name}")
            continue
        kept = aside / SEGMENTS / f"{path.name}.from-{offset}"
        with open_regular(path) as f:
            f.seek(offset)
            kept.write_bytes(f.read())
        sync_file(kept)
        with open(path, "r+b") as f:
            f.truncate(offset)
            os.fsync(f.fileno())
        moved.append(f"{SEGMENTS}/{path.name} from byte {offset}")
    for synced in (aside / SEGMENTS, aside, aside.parent, root, directory):
        fsync_dir(synced)
    return aside, list(reversed(moved))


def _refuse_unless_torn(error: FrameError, index: int, path: Path, start: int, data: bytes, signed: int, later: int) -> None:
    """Refuses a damaged frame that is not a torn tail: inside the signed range, before a later
    segment, or with a well-formed frame of the next entry after it.

    :raises LedgerCorrupt: naming the entry.
    """
    if index < signed:
        raise LedgerCorrupt(index, f"检查点覆盖范围（大小 {signed}）内的帧已损坏（{path.name}，偏移 {start + error.offset}） / "
                            f"{error} inside the checkpointed range (size {signed}; {path.name}, offset {start + error.offset})")
    if later:
        raise LedgerCorrupt(index, f"{path.name} 中的帧已损坏，且其后还有段文件 / {error} in {path.name}, with later segments after it")
    if frame_follows(data, error.offset, index + 1):
        raise LedgerCorrupt(index, f"帧已损坏，且其后还有已确认的条目：是损坏，不是写入中断留下的残尾 / "
                            f"{error}, and acknowledged entries follow it: damage, not a torn tail")


def frame_follows(data: bytes, offset: int, index: int) -> bool:
    """Tells whether a well-formed frame of entry `index` starts where the frame at `offset` says it ends."""
    if len(data) - offset < OVERHEAD:
        return False
    word, _, _ = HEADER.unpack_from(data, offset)
    after = offset + OVERHEAD + (word & LENGTH_MASK)
    try:
        return next(iter_frames(data[after:], index), None) is not None
    except FrameError:
        return False



# -- the whole log, a segment at a time -----------------------------------------------------------

def segment_sizes(root: Path) -> list[tuple[int, Path, int]]:
    """Returns (first index, path, size in bytes) of every segment, in order."""
    return [(first, path, path.stat().st_size) for first, path in list_segments(root / SEGMENTS)]


def _read_into(path: Path, buffer: memoryview) -> memoryview:
    """Reads a file's first bytes into a buffer (reused from segment to segment: fresh pages cost
    more than the reading); returns the part read, shorter when the file is."""
    held = 0
    with path.open("rb", buffering=0) as f:
        while held < len(buffer) and (got := f.readinto(buffer[held:])):
            held += got
    return buffer[:held]


def iter_packed(root: Path, checkpointed: int, base: int = 0) -> Iterator[tuple[int, SegmentPacked]]:
    """Yields (first index, its entries back to back) one segment at a time; only the entries up
    to the segment's `last_commit` are committed (counting those a later segment's commit mark
    commits: see `committed_end`). Offsets count from `base` and go on from one
    segment's committed entries to the next, as if their buffers were joined.

    :raises LedgerCorrupt: when a damaged frame stops the reading before entry `checkpointed`.
    """
    load_config(root)
    return packed_segments(segment_sizes(root), checkpointed, base, None)


def packed_segments(segments: list[tuple[int, Path, int]], checkpointed: int, base: int,
                    into: bytearray | mmap.mmap | None) -> Iterator[tuple[int, SegmentPacked]]:
    """As iter_packed, over the segments listed (each read up to its listed size); given `into`,
    with room for their bytes, the entries are written there at their offsets."""
    horizon = committed_end(segments)
    expected = 0
    scratch = bytearray(max((size for _, _, size in segments), default=0))
    for first, path, size in segments:
        check_segment_start(path, first, expected)
        part = segment_packed(_read_into(path, memoryview(scratch)[:size]), first, base, into)
        if part.error is None:  # frames a later segment's commit mark commits (a batch spanning segments)
            part = part._replace(last_commit=min(part.frames, max(part.last_commit, horizon - first)))
        yield first, part
        expected, base = first + part.last_commit, part.ends[part.last_commit]
        if part.error is not None or part.last_commit < part.frames:
            if expected < checkpointed:
                why = part.error or "an unfinished batch"
                raise LedgerCorrupt(first + part.frames, f"检查点覆盖范围（大小 {checkpointed}）内有损坏的帧或未完成的批次 / "
                                    f"{why} inside the checkpointed range (size {checkpointed})")
            return
