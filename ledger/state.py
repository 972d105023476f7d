"""The signed state of every stream: what lets a reader prove it holds a stream's *newest* entries.

A checkpoint's stream commitment (`ledger/commitments.py`) names only the streams that gained
entries in its interval, so an index file cut back to an earlier checkpoint's boundary still gives
a stream that checks out, as it was then. Each checkpoint therefore also signs, in an extension
line, the state of all streams at its size: the streams are spread over the index's 256
directories (`streams/<hh>`), each directory's heads are hashed into a digest, and the line holds
the SHA-256 of the 256 digests. A directory's digest covers the canonical JSON line
`[stream, count, last]` of each of its streams, sorted bytewise (`bucket_digest`).

The writer keeps the digests current (`StreamState`), loading a directory's heads the first time
one of its streams changes, and writes the 256 digests with the note they were signed in into the
index head (`Head.state`, `Head.state_note`). A reader of stream S then recomputes S's directory
from the index files at that note's size, takes the other 255 digests from the head and checks
the signed line: nobody without the key can cut, drop or add a record of any stream there.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from ledger.checkpoints import Checkpoint, parse_checkpoint
from ledger.commitments import StreamHead
from ledger.errors import LedgerCorrupt, LedgerError, SignatureError
from ledger.index import DIRECTORIES, INDEX, STREAMS, Head, StreamIndex, count_below, open_stream_file, read_head
from ledger.notes import Verifier

STATE_LINE = "matchledger-state "
"""The checkpoint extension line: `matchledger-state <base64 SHA-256 of the 256 directory digests>` (no
count of streams: the writer would need every directory's to keep one, and a reader gains nothing by it)."""
_BUCKET_DOMAIN = b"matchledger-state/v1\n"


def slot_of(stream: str) -> int:
    """Returns the index directory (0–255) a stream's index file lives in."""
    return hashlib.sha256(stream.encode()).digest()[0]


_ENCODER = msgspec.json.Encoder()


def head_line(stream: str, count: int, last: int) -> bytes:
    """Returns a stream head's canonical line: its JSON array (a `StreamHead`'s, as the stream
    commitment's leaves) and a newline."""
    return _ENCODER.encode((stream, count, last)) + b"\n"


def bucket_digest(lines: Iterable[bytes]) -> bytes:
    """Returns the digest of one directory's stream heads (their lines in any order)."""
    return hashlib.sha256(_BUCKET_DOMAIN + b"".join(sorted(lines))).digest()


def state_line(digests: list[bytes]) -> str:
    """Returns the extension line committing to these 256 directory digests."""
    return f"{STATE_LINE}{base64.b64encode(hashlib.sha256(b''.join(digests)).digest()).decode()}"


def read_state_line(extensions: tuple[str, ...]) -> str | None:
    """Returns a checkpoint's state line, or None when it has none (signed before states existed)."""
    return next((line for line in extensions if line.startswith(STATE_LINE)), None)


def encode_digests(digests: list[bytes]) -> str:
    return base64.b64encode(b"".join(digests)).decode()


def decode_digests(text: str) -> list[bytes] | None:
    """Returns the 256 digests a head carries, or None when the text is not that."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    if len(raw) != 32 * DIRECTORIES:
        return None
    return [raw[i:i + 32] for i in range(0, len(raw), 32)]


def directory_heads(root: Path, slot: int, size: int | None = None) -> dict[str, tuple[int, int]]:
    """Returns (count, last entry) of every stream whose index file is in directory `slot`, from the
    files: all their records, or (given `size`) those of entries below `size` (a binary search each).

    :raises LedgerCorrupt: when a file is malformed.
    """
    directory = root / INDEX / STREAMS / f"{slot:02x}"
    try:
        names = sorted(entry.name for entry in os.scandir(directory))
    except FileNotFoundError:
        return {}
    heads: dict[str, tuple[int, int]] = {}
    for name in names:
        index = open_stream_file(directory / name)
        count = len(index) if size is None else count_below(index, size)
        if count:
            heads[index.stream] = (count, index.entry(count - 1))
    return heads


class StreamState:
    """The writer's copy of the signed state: the 256 digests as of the last checkpoint, the heads
    of the directories it has loaded, and the streams changed since (`touch`). `line` brings it to
    the current size, reading a directory's index files the first time one of its streams changed;
    without digests it can trust (a ledger from before states, or a head it did not write) it
    builds all 256 once."""

    def __init__(self, root: Path, digests: list[bytes] | None) -> None:
        self.root = root
        self.digests = digests
        self._loaded: dict[int, dict[str, bytes]] = {}
        self._pending: set[str] = set()
        self._slots: dict[str, int] = {}  # (a commit touches the same streams again and again: one hash each)
        self._line = ""  # the line as of the last call (nothing pending since: the same)

    def touch(self, streams: Iterable[str]) -> None:
        """Notes streams that gained entries."""
        self._pending.update(streams)

    def line(self, current: Callable[[str], StreamIndex], check: Callable[[Path], None]) -> str:
        """Returns the state line at the writer's current size: `current` gives a stream's index as
        the writer holds it (records not yet on disk included), `check` checks an index directory
        against the writer's seal before its files are believed.

        :raises LedgerCorrupt: from `check`, or when an index file is malformed.
        """
        if self.digests is None:
            self._build(current, check)
        elif self._line and not self._pending:
            return self._line
        assert self.digests is not None
        touched: set[int] = set()
        slots = self._slots
        for stream in self._pending:
            slot = slots.get(stream)
            if slot is None:
                slot = slots[stream] = slot_of(stream)
            heads = self._load(slot, check)
            index = current(stream)
            count = len(index)
            heads[stream] = head_line(stream, count, index.entry(count - 1))
            touched.add(slot)
        self._pending.clear()
        for slot in touched:
            self.digests[slot] = bucket_digest(self._loaded[slot].values())
        self._line = state_line(self.digests)
        return self._line

    def _load(self, slot: int, check: Callable[[Path], None]) -> dict[str, bytes]:
        heads = self._loaded.get(slot)
        if heads is None:
            check(self.root / INDEX / STREAMS / f"{slot:02x}" / "_")
            heads = self._loaded[slot] = {s: head_line(s, *head) for s, head in directory_heads(self.root, slot).items()}
        return heads

    def _build(self, current: Callable[[str], StreamIndex], check: Callable[[Path], None]) -> None:
        """Loads every directory (the pending streams are applied after, from `current`)."""
        for slot in range(DIRECTORIES):
            self._load(slot, check)
        self.digests = [bucket_digest(self._loaded[slot].values()) for slot in range(DIRECTORIES)]



class StateProof(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What shows a stream's records at a signed size: the note that signs the state, the 256
    directory digests (base64) and every stream head of the stream's directory there (from which its
    digest is recomputed, and which holds the stream's own head, or none: it had no entries then),
    and the consistency proof between that note and the one its entries were proved against."""

    checkpoint: str
    digests: str
    heads: list[StreamHead]
    consistency: list[str] = []


class StateError(ValueError):
    """A state proof does not show what it claims (the message says what differs)."""


def signed_head_state(head: Head, verifier: Verifier) -> tuple[list[bytes], Checkpoint] | None:
    """Returns the 256 digests an index head carries and the note that signs them, when that note
    is valid, of the head's size, and its state line is theirs; else None (a head from before
    states, a crash between them, or one changed by someone without the key)."""
    digests = decode_digests(head.state)
    if digests is None:
        return None
    try:
        note = parse_checkpoint(head.state_note, verifier)
    except (SignatureError, LedgerError, ValueError):
        return None
    if note.size != head.size or read_state_line(note.extensions) != state_line(digests):
        return None
    return digests, note


def state_proof(root: Path, stream: str, verifier: Verifier, newest: Checkpoint) -> tuple[StateProof, Checkpoint] | None:
    """Returns the state proof of a stream from the index head and the files of its directory, at
    the head's size, with the note that signs it (`newest`: the newest signed checkpoint), or None
    for a ledger whose newest note predates states (nothing to prove against).

    :raises LedgerCorrupt: when the head carries no state its note signs at its size.
    """
    if read_state_line(newest.extensions) is None:
        return None
    head = read_head(root)
    signed = signed_head_state(head, verifier) if head is not None else None
    if head is None or signed is None:
        raise LedgerCorrupt(None, "流索引没有签名的状态（索引头缺失或被改动）；请运行 `matchledger repair` / the stream index head carries "
                                  "no signed state of its size (missing or changed by someone without the key): run `matchledger repair`")
    note = signed[1]
    heads = directory_heads(root, slot_of(stream), note.size)
    return StateProof(note.note, head.state, [StreamHead(s, *heads[s]) for s in sorted(heads)]), note


def check_state_proof(proof: StateProof, stream: str, entries: list[int], verifier: Verifier) -> Checkpoint:
    """Checks a state proof of `stream` whose entries (log indexes, in order) were found: the note's
    signature, the directory's digest recomputed from the heads, the 256 digests' hash against the
    note's state line, and the stream's head against the entries below its size. Returns the note.

    :raises StateError: naming what differs (an index cut, rolled back, deleted or planted, or a
        proof edited).
    """
    try:
        note = parse_checkpoint(proof.checkpoint, verifier)
    except (SignatureError, LedgerError, ValueError) as exc:
        raise StateError(f"流状态所附的检查点无效 / the state's note: {exc}") from None
    line, digests, slot = read_state_line(note.extensions), decode_digests(proof.digests), slot_of(stream)
    if line is None or digests is None or any(slot_of(h.stream) != slot for h in proof.heads):
        raise StateError(f"该证明不是大小 {note.size} 时流索引目录 {slot:02x} 的状态 / the proof at size {note.size} is not a state of "
                         f"streams/{slot:02x}")
    digests[slot] = bucket_digest(head_line(h.stream, h.count, h.last) for h in proof.heads)
    if state_line(digests) != line:
        raise StateError(f"流索引目录 {slot:02x} 与大小 {note.size} 的签名状态不符（索引文件被截短、回滚、删除或加入）/ the stream heads "
                         f"of streams/{slot:02x} do not give the state signed at size {note.size}: an index file there was cut, "
                         f"rolled back, deleted or planted (run `matchledger verify`)")
    below = [entry for entry in entries if entry < note.size]
    mine = next((h for h in proof.heads if h.stream == stream), None)
    signed = (mine.count, mine.last) if mine is not None else (0, -1)
    if signed != (len(below), below[-1] if below else -1):
        raise StateError(f"流 {stream} 在大小 {note.size} 有 {mine.count if mine else 0} 个条目，此处只有 {len(below)} 个 / the signed "
                         f"state at size {note.size} gives stream {stream!r} {mine.count if mine else 0} entries, the last at entry "
                         f"{mine.last if mine else '–'}; {len(below)} were found below that size: entries were removed")
    return note


def check_state(heads: dict[str, tuple[int, int]], line: str | None, size: int) -> str | None:
    """Compares the state a checkpoint of `size` signs (its state line: None, one signed before
    states, signs none) with every stream's (count, last entry) at that size, as the entries give
    them (`ledger.commitments.check_heads` fills `heads`); returns the difference, if any."""
    if line is None:
        return None
    buckets: list[list[bytes]] = [[] for _ in range(DIRECTORIES)]
    for stream, (count, last) in heads.items():
        buckets[slot_of(stream)].append(head_line(stream, count, last))
    if state_line([bucket_digest(b) for b in buckets]) != line:
        return (f"检查点 {size} 所签的流状态与条目不符 / checkpoint {size} signs a state of all streams that the {len(heads)} "
                f"streams of its entries do not give")
    return None
