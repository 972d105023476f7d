"""Planning one append a piece at a time: every sequence number checked, identical re-sends
recognised, and what the batch adds to each stream gathered for the index, while memory stays
bounded by a piece plus 48 bytes an entry (its leaf hash, entry index and offset), whatever the
size of the batch."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from ledger.errors import SequenceError
from ledger.fastscan import leaf_hashes
from ledger.merkle import leaf_hash
from ledger.segments import OVERHEAD
from schemas.envelope import Event

PIECE = 4096
"""Events planned, framed and written at a time."""

CHECKPOINT_KINDS = frozenset({"game.ended", "tournament.round_closed"})
"""Kinds whose batch is signed at once: a result is evidence the moment it is recorded."""


class Pending:
    """One validated input event waiting to be appended: its input line, the stream, seq and kind the
    log checks, and its canonical bytes. The decoded event itself is not kept."""

    __slots__ = ("line", "stream", "seq", "kind", "data")

    def __init__(self, line: int, event: Event, data: bytes) -> None:
        self.line, self.stream, self.seq, self.kind, self.data = line, event.stream, event.seq, event.kind, data


class StreamRecords:
    """A stream's entries in this batch, in seq order from `first_seq`, and their frames' offsets."""

    __slots__ = ("first_seq", "entries", "offsets")

    def __init__(self, first_seq: int) -> None:
        self.first_seq = first_seq
        self.entries, self.offsets = array("Q"), array("Q")


class BatchPlan:
    """The checks and records of one batch appended after entry `first - 1`."""

    def __init__(self, first: int, next_seq: Callable[[str], int], stored: Callable[[str, int], bytes], max_bytes: int) -> None:
        self.first = first
        self.count = 0  # fresh entries planned
        self.placed = 0  # fresh entries given a place in a segment
        self.duplicates = 0
        self.leaves = bytearray()
        self.streams: dict[str, StreamRecords] = {}
        self.ends_game = False
        self._due: dict[str, int] = {}
        self._next_seq, self._stored, self._max = next_seq, stored, max_bytes

    def check(self, piece: Sequence[Pending]) -> list[Pending]:
        """Returns the events of a piece that are new, in order; identical re-sends are counted.

        :raises SequenceError: on a gap, a conflict or an oversized event, naming its input line.
        """
        fresh: list[Pending] = []
        here: dict[tuple[str, int], bytes] = {}
        for p in piece:
            stream, seq = p.stream, p.seq
            due = self._due.get(stream)
            if due is None:
                due = self._next_seq(stream)
            if seq > due:
                raise SequenceError(p.line, f"field `seq`: stream {stream!r} expects seq {due}, got {seq} (gap)")
            if seq < due:
                if not self._same(stream, seq, p.data, here):
                    raise SequenceError(p.line, f"field `seq`: stream {stream!r} already holds a different event at seq {seq} (conflict)")
                self.duplicates += 1
                continue
            if len(p.data) > self._max:
                raise SequenceError(p.line, f"event is {len(p.data)} bytes, over the limit of {self._max}")
            self._due[stream] = seq + 1
            here[(stream, seq)] = p.data
            records = self.streams.get(stream)
            if records is None:
                records = self.streams[stream] = StreamRecords(seq)
            records.entries.append(self.first + self.count + len(fresh))
            self.ends_game = self.ends_game or p.kind in CHECKPOINT_KINDS
            fresh.append(p)
        self.leaves += leaf_hashes([p.data for p in fresh])
        self.count += len(fresh)
        return fresh

    def _same(self, stream: str, seq: int, data: bytes, here: dict[tuple[str, int], bytes]) -> bool:
        """Tells whether `data` is the event the stream already holds at `seq`: in this piece, earlier
        in this batch (compared by leaf hash), or in the log."""
        if (stream, seq) in here:
            return here[(stream, seq)] == data
        records = self.streams.get(stream)
        if records is not None and seq >= records.first_seq:
            at = 32 * (records.entries[seq - records.first_seq] - self.first)
            return self.leaves[at:at + 32] == leaf_hash(data)
        return self._stored(stream, seq) == data

    def place(self, written: Sequence[Pending], offset: int) -> None:
        """Records where a written run of fresh events lies: their frames from byte `offset` of a segment."""
        for p in written:
            self.streams[p.stream].offsets.append(offset)
            offset += len(p.data) + OVERHEAD
        self.placed += len(written)
