"""The append rules, one set for every writer (`record`, the service's group commit): every
sequence number checked, identical re-sends recognised, the size limit, and the log's own kinds and
streams kept for the ledger's own commands; what the batch adds to each stream gathered for the
index, while memory stays bounded by a piece plus 48 bytes an entry (its leaf hash, entry index and
offset), whatever the size of the batch."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from ledger.errors import SequenceError
from ledger.fastscan import leaf_hashes
from ledger.merkle import leaf_hash
from ledger.segments import OVERHEAD
from schemas.arbitration import ARBITER_STREAM
from schemas.envelope import Event
from schemas.log import BATCHES_STREAM, SOURCES_STREAM, WITNESS_STREAM

PIECE = 4096
"""Events planned, framed and written at a time."""

CHECKPOINT_KINDS = frozenset({"game.ended", "tournament.round_closed"})
"""Kinds whose batch is signed at once: a result is evidence the moment it is recorded."""

LOG_KINDS = {"source.batch": BATCHES_STREAM, "source.registered": SOURCES_STREAM, "source.revoked": SOURCES_STREAM,
             "log.witness_added": WITNESS_STREAM, "arbiter.registered": ARBITER_STREAM}
"""The log's own kinds and the stream each belongs in: authority over the log (who may send, who
witnesses, who arbitrates), which only the ledger's own commands write (with any kind under `log.`
or `source.`, in a `log.*` stream)."""


_SUSPECT_KINDS = ("log.", "source.", "arbiter.")
"""Kind prefixes that send an event through `check_authority` (one test an event on the hot path)."""


def is_log_kind(kind: str) -> bool:
    """Tells whether a kind is one of the log's own, which no sender may write."""
    return kind in LOG_KINDS or kind.startswith(("log.", "source."))


def is_log_stream(stream: str) -> bool:
    """Tells whether a stream is one of the log's own (`log.*`), which no sender may write."""
    return stream.startswith("log.")


class Pending:
    """One validated input event waiting to be appended: its input line, the stream, seq and kind the
    log checks, its canonical bytes, and whether the ledger's own command made it (`own`: only
    such events may be of the log's own kinds and streams). The decoded event itself is not kept."""

    __slots__ = ("line", "stream", "seq", "kind", "data", "own")

    def __init__(self, line: int, event: Event, data: bytes, own: bool = False) -> None:
        self.line, self.stream, self.seq, self.kind, self.data = line, event.stream, event.seq, event.kind, data
        self.own = own


def check_authority(p: Pending) -> None:
    """Keeps the log's own kinds and streams to the ledger's own commands, and those kinds to those streams.

    :raises SequenceError: (reason `log-kind` or `log-stream`) naming the input line.
    """
    if is_log_kind(p.kind):
        if not p.own:
            raise SequenceError(p.line, f"字段 `kind`：{p.kind} 是日志自身的记录种类，只有账本自己的命令才能写入，来源不得写入 / "
                                f"field `kind`: {p.kind!r} is one of the log's own kinds; only the ledger's own commands write it", "log-kind")
        home = LOG_KINDS.get(p.kind)
        if (p.stream != home) if home else not is_log_stream(p.stream):
            raise SequenceError(p.line, f"字段 `stream`：{p.kind} 应写在 {home or 'log.* 流'}，而非 {p.stream} / "
                                f"field `stream`: {p.kind!r} belongs in {home or 'a `log.*` stream'}, not {p.stream!r}", "log-kind")
    elif is_log_stream(p.stream) and not p.own:
        raise SequenceError(p.line, f"字段 `stream`：{p.stream} 是日志自身的流，任何来源都不得写入 / "
                            f"field `stream`: {p.stream!r} is one of the log's own streams; no sender may write it", "log-stream")


class StreamRecords:
    """A stream's entries in this batch, in seq order from `first_seq`, and their frames' offsets."""

    __slots__ = ("first_seq", "entries", "offsets")

    def __init__(self, first_seq: int) -> None:
        self.first_seq = first_seq
        self.entries, self.offsets = array("Q"), array("Q")


class BatchPlan:
    """The checks and records of one batch appended after entry `first - 1` (the service plans a
    whole group commit as one, a batch at a time: a refused batch leaves the plan as it was)."""

    def __init__(self, first: int, next_seq: Callable[[str], int], stored: Callable[[str, int], bytes], max_bytes: int,
                 entry_of: Callable[[str, int], int] | None = None) -> None:
        self.first = first
        self.count = 0  # fresh entries planned
        self.placed = 0  # fresh entries given a place in a segment
        self.duplicates = 0
        self.leaves = bytearray()
        self.streams: dict[str, StreamRecords] = {}
        self.ends_game = False
        self._due: dict[str, int] = {}
        self._next_seq, self._stored, self._max, self._entry_of = next_seq, stored, max_bytes, entry_of

    def check(self, piece: Sequence[Pending]) -> list[Pending]:
        """Returns the events of a piece that are new, in order; identical re-sends are counted.

        :raises SequenceError: on a gap, a conflict, an oversized event or one of the log's own
            kinds or streams from a sender, naming its input line; the plan is then as before.
        """
        return self._check(piece, None)

    def check_entries(self, piece: Sequence[Pending]) -> tuple[list[Pending], list[int]]:
        """Returns the events of a piece that are new, and the entry of each event of the piece (an
        identical re-send's is its earlier entry). Needs `entry_of`.

        :raises SequenceError: as `check`; the plan is then as before.
        """
        entries: list[int] = []
        return self._check(piece, entries), entries

    def _check(self, piece: Sequence[Pending], entries: list[int] | None) -> list[Pending]:
        fresh: list[Pending] = []
        here: dict[tuple[str, int], tuple[bytes, int]] = {}
        due: dict[str, int] = {}
        for p in piece:
            if p.own or p.kind.startswith(_SUSPECT_KINDS) or p.stream.startswith("log."):
                check_authority(p)
            stream, seq = p.stream, p.seq
            expected = due.get(stream)
            if expected is None:
                expected = self._due.get(stream)
                if expected is None:
                    expected = self._next_seq(stream)
            if seq > expected:
                raise SequenceError(p.line, f"字段 `seq`：流 {stream} 下一个应为第 {expected} 号，收到第 {seq} 号（跳号） / "
                                    f"field `seq`: stream {stream!r} expects seq {expected}, got {seq} (gap)", "seq-gap")
            if seq < expected:
                entry = self._same(stream, seq, p.data, here)
                if entry is None:
                    raise SequenceError(p.line, f"字段 `seq`：流 {stream} 的第 {seq} 号已记录了另一个事件（冲突） / "
                                        f"field `seq`: stream {stream!r} already holds a different event at seq {seq} (conflict)", "seq-conflict")
                if entries is not None:
                    entries.append(entry)
                continue
            if len(p.data) > self._max:
                raise SequenceError(p.line, f"事件大小 {len(p.data)} 字节，超过上限 {self._max} 字节 / "
                                    f"event is {len(p.data)} bytes, over the limit of {self._max}", "event-too-large")
            entry = self.first + self.count + len(fresh)
            due[stream] = seq + 1
            here[(stream, seq)] = (p.data, entry)
            if entries is not None:
                entries.append(entry)
            fresh.append(p)
        self._take(fresh, due, len(piece) - len(fresh))
        return fresh

    def _take(self, fresh: list[Pending], due: dict[str, int], duplicates: int) -> None:
        """Adds a checked piece to the plan (nothing is added before the whole piece passed)."""
        entry = self.first + self.count
        for p in fresh:
            records = self.streams.get(p.stream)
            if records is None:
                records = self.streams[p.stream] = StreamRecords(p.seq)
            records.entries.append(entry)
            entry += 1
            self.ends_game = self.ends_game or p.kind in CHECKPOINT_KINDS
        self._due.update(due)
        self.duplicates += duplicates
        self.leaves += leaf_hashes([p.data for p in fresh])
        self.count += len(fresh)

    def _same(self, stream: str, seq: int, data: bytes, here: dict[tuple[str, int], tuple[bytes, int]]) -> int | None:
        """Returns the entry of the event the stream already holds at `seq` if it is `data` (in this
        piece, earlier in this batch (compared by leaf hash), or in the log), else None."""
        if (stream, seq) in here:
            held, entry = here[(stream, seq)]
            return entry if held == data else None
        records = self.streams.get(stream)
        if records is not None and seq >= records.first_seq:
            entry = records.entries[seq - records.first_seq]
            at = 32 * (entry - self.first)
            return entry if self.leaves[at:at + 32] == leaf_hash(data) else None
        if self._stored(stream, seq) != data:
            return None
        return self._entry_of(stream, seq) if self._entry_of is not None else -1

    def place(self, written: Sequence[Pending], offset: int) -> None:
        """Records where a written run of fresh events lies: their frames from byte `offset` of a segment."""
        for p in written:
            self.streams[p.stream].offsets.append(offset)
            offset += len(p.data) + OVERHEAD
        self.placed += len(written)
