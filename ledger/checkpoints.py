"""Checkpoints: C2SP signed notes of (origin, tree size, root), with their history kept."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path

from ledger.errors import LedgerCorrupt, SignatureError
from ledger.fastscan import verify_signatures
from ledger.layout import CHECKPOINTS, LATEST, WITNESSES, write_atomic
from ledger.notelog import NoteFile, NoteWriter
from ledger.notes import Signer, Verifier, add_signature, sign_note, split_note


@dataclass(frozen=True)
class Checkpoint:
    """A signed statement that the log of `origin` had `size` entries with Merkle root `root`."""

    origin: str
    size: int
    root: bytes
    note: str
    extensions: tuple[str, ...] = ()

    @property
    def body(self) -> str:
        return checkpoint_body(self.origin, self.size, self.root, self.extensions)

    @property
    def config_digest(self) -> str | None:
        """Returns the digest of the ledger's settings the note binds, if it carries one."""
        for line in self.extensions:
            if line.startswith(CONFIG_LINE):
                return line[len(CONFIG_LINE):]
        return None


CONFIG_LINE = "matchledger-config sha256:"
"""The extension line that binds a checkpoint to its ledger's settings (ledger.json)."""


def checkpoint_body(origin: str, size: int, root: bytes, extensions: tuple[str, ...] = ()) -> str:
    """Returns the note text of a checkpoint: origin, size and base64 root, one per line, then
    any extension lines (C2SP tlog-checkpoint)."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n" + "".join(f"{line}\n" for line in extensions)


def parse_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """Verifies a checkpoint note's signature and reads it: the batched reading (`read_checkpoint`)
    with a batch of one, so one note and ten thousand are judged by the same code.

    :raises SignatureError: when the signature or the body is bad.
    """
    checks = SignatureChecks()
    reading = read_checkpoint(0, "", note, verifier, [], checks)
    checks.wait()
    return reading.outcome(checks)[0]


def _read_body(body: str, note: str, verifier: Verifier) -> Checkpoint | str:
    """Reads a checkpoint body, or returns what is wrong with it."""
    lines = body.split("\n")
    try:
        origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True)
    except (IndexError, ValueError):
        return "malformed checkpoint body"
    if origin != verifier.name or len(root) != 32 or size < 0:
        return f"checkpoint body does not name origin {verifier.name!r} with a 32-byte root"
    return Checkpoint(origin, size, root, note, tuple(line for line in lines[3:] if line))


def checkpoint_path(root: Path, size: int) -> Path:
    """Returns where the checkpoint of a given tree size is kept."""
    return root / CHECKPOINTS / f"{size:020d}.note"


NOTE_NAME = re.compile(r"[0-9]{20}\.note")
"""A kept note's file name (`checkpoint_path`)."""


def list_checkpoint_names(root: Path, strays: list[str] | None = None) -> list[tuple[int, str]]:
    """Returns the stored checkpoints as (size, file name in the checkpoints directory), smallest
    first: the names `checkpoint_path` gives (`NOTE_NAME`), the one rule every reader and the writer
    go by. Other names ending in `.note` (none a writer made) are added to `strays`, for `verify`."""
    try:
        names = os.listdir(root / CHECKPOINTS)
    except FileNotFoundError:
        return []
    if strays is not None:
        strays += sorted(name for name in names if name.endswith(".note") and not NOTE_NAME.fullmatch(name))
    return sorted((int(name[:-5]), name) for name in names if NOTE_NAME.fullmatch(name))


def kept_note(root: Path, size: int) -> str:
    """Returns the kept note of a tree size: its own file (`checkpoints/<size>.note`, which a
    co-signature may have extended), else the notes file of the live service's checkpoints.

    :raises FileNotFoundError: when neither holds one.
    :raises LedgerCorrupt: when the note's file is not a regular UTF-8 file.
    """
    try:
        return read_note_file(checkpoint_path(root, size))
    except FileNotFoundError:
        pass
    with NoteFile(root) as notes:
        found = notes.find(size)
    if found is None:
        raise FileNotFoundError(checkpoint_path(root, size))
    try:
        return found.data.decode()
    except UnicodeDecodeError:
        raise LedgerCorrupt(None, f"{CHECKPOINTS}/notes 第 {found.offset} 字节处的签名记录不是 UTF-8 文本 / "
                            f"{CHECKPOINTS}/notes: the note at byte {found.offset} is not UTF-8 text") from None


def has_note(root: Path, size: int) -> bool:
    """Tells whether a note of that tree size is kept (in its own file or in the notes file)."""
    if checkpoint_path(root, size).is_file():
        return True
    with NoteFile(root) as notes:
        return notes.find(size) is not None


def logged_sizes(root: Path) -> list[int]:
    """Returns the sizes of the notes in the notes file, in file order (reading it whole)."""
    with NoteFile(root) as notes:
        return [note.size for note in notes]


def _newest_note_name(names: list[str]) -> str | None:
    """Returns the name of the newest note among a directory's names: the greatest, as they are
    zero-padded, found without a pass in Python over every name (every open asks, and a season
    keeps a note per game); the notes file and any other name above the notes are set aside."""
    for _ in range(3):
        newest = max(names, default=None)
        if newest is None or NOTE_NAME.fullmatch(newest):
            return newest
        names.remove(newest)
    return max(filter(NOTE_NAME.fullmatch, names), default=None)  # more names than the notes file above them


def newest_size(root: Path, files: int | None = None) -> int:
    """Returns the largest tree size a kept note states (0 when none): the newest note's file
    (`files`, when the caller knows it: `newest_note_file`) or the notes file's last note."""
    with NoteFile(root) as notes:
        last = notes.last(1)
    return max(newest_note_file(root) if files is None else files, last[-1].size if last else 0)


def newest_note_file(root: Path) -> int:
    """Returns the tree size of the newest note kept in its own file (0 when none), listing `checkpoints/`."""
    try:
        names = os.listdir(root / CHECKPOINTS)
    except FileNotFoundError:
        return 0
    return int((_newest_note_name(names) or "0.note")[:-5])


def notes_changed(root: Path) -> int:
    """Returns when `checkpoints/` last gained or lost a name (its ctime, in ns; no process can set
    it back), so that a listing of it can be kept for as long as this stays the same."""
    try:
        return os.stat(root / CHECKPOINTS).st_ctime_ns
    except FileNotFoundError:
        return 0


def log_checkpoint(root: Path, notes: NoteWriter, signer: Signer, size: int, tree_root: bytes, config_digest: str,
                   *more: str) -> Checkpoint:
    """Signs a checkpoint bound to the ledger's settings and appends its note to the notes file,
    synced (the live service's group commits). The served `checkpoint` file is not written: it is
    replaced at the next full checkpoint, with the partial tiles of its size."""
    extensions = (CONFIG_LINE + config_digest, *more)
    note = sign_note(checkpoint_body(signer.name, size, tree_root, extensions), signer)
    notes.append(note)
    return Checkpoint(signer.name, size, tree_root, note, extensions)


def write_checkpoint(root: Path, signer: Signer, size: int, tree_root: bytes, config_digest: str, *more: str) -> Checkpoint:
    """Signs and stores a checkpoint bound to the ledger's settings (and any further extension
    lines), kept in its own file and served as the latest, both durable when this returns (the
    caller has made the tiles of its size durable first)."""
    kept = _kept_of_size(root, size, tree_root, signer.verifier)
    if kept is not None:  # signed before a crash left the `checkpoint` file behind: serve that note again
        write_atomic(root / LATEST, kept.note.encode())
        return kept
    extensions = (CONFIG_LINE + config_digest, *more)
    note = sign_note(checkpoint_body(signer.name, size, tree_root, extensions), signer)
    write_atomic(checkpoint_path(root, size), note.encode())
    write_atomic(root / LATEST, note.encode())
    return Checkpoint(signer.name, size, tree_root, note, extensions)


def _kept_of_size(root: Path, size: int, tree_root: bytes, verifier: Verifier) -> Checkpoint | None:
    """Returns the note already kept for a tree size, which must state this root: what was signed
    is append-only, and a second root is never signed for a size.

    :raises LedgerCorrupt: when a kept note of that size states another root or does not verify.
    """
    path = checkpoint_path(root, size)
    if not path.exists() and not path.is_symlink():
        return None
    try:
        kept = parse_checkpoint(read_note_file(path), verifier)
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"{CHECKPOINTS}/{path.name} 已存在且验证不通过，已保存的签名记录绝不覆盖 / "
                            f"{CHECKPOINTS}/{path.name} already exists and does not verify ({exc}); a kept note is never "
                            f"overwritten") from None
    if kept.root != tree_root:
        raise LedgerCorrupt(None, f"已签署的大小 {size} 的检查点根为 {kept.root.hex()}，现在的条目给出 {tree_root.hex()}：同一大小绝不签署第二个根 / "
                            f"checkpoint {size} was signed with root {kept.root.hex()}, the entries now give {tree_root.hex()}: "
                            f"a second root is never signed for a size (the log was rolled back and rewritten)")
    return kept


def cosign_note(root: Path, signer: Signer, size: int, log: Verifier) -> Checkpoint:
    """Adds an arbiter's signature to the stored checkpoint of `size` (once: a second co-signature
    by the same key changes nothing) and keeps the arbiter's verifier key in `witnesses/`.
    The caller holds the writer's lock.

    :raises LedgerCorrupt: when there is no checkpoint of that size, or its note is not the log's.
    """
    try:
        note = kept_note(root, size)
    except FileNotFoundError:
        sizes = checkpoint_sizes(root)
        raise LedgerCorrupt(None, f"没有大小为 {size} 的检查点 / "
                            f"no checkpoint of size {size}; stored sizes end with {', '.join(map(str, sizes[-5:]))}") from None
    try:
        parse_checkpoint(note, log)  # first: an arbiter never co-signs what the log's key did not sign
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"检查点未经日志密钥签名，拒绝副署 / checkpoint of size {size}: {exc}; not co-signed") from None
    body, sigs = split_note(note)
    verifier = signer.verifier
    if not any(name == verifier.name and blob[:4] == verifier.key_id for name, blob in sigs):
        note = add_signature(note, signer)
        write_atomic(checkpoint_path(root, size), note.encode())  # (a logged note gets its own file, which readers prefer)
    witness = root / WITNESSES / f"{verifier.key_id.hex()}.pub"  # named by key id: a key name never becomes a path
    witness.parent.mkdir(exist_ok=True, mode=0o750)
    write_atomic(witness, (str(verifier) + "\n").encode())
    try:
        serves = parse_checkpoint(read_note_file(root / LATEST), log).size == size
    except (FileNotFoundError, SignatureError):
        serves = False
    if serves:  # the served file carries the co-signature too
        write_atomic(root / LATEST, note.encode())
    return parse_checkpoint(note, log)


def latest_checkpoint(root: Path, verifier: Verifier) -> Checkpoint | None:
    """Returns the largest stored checkpoint, verified.

    :raises LedgerCorrupt: when its signature does not verify.
    """
    size = newest_size(root)
    try:
        return parse_checkpoint(kept_note(root, size), verifier)
    except FileNotFoundError:
        return None
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"大小为 {size} 的检查点签名无效 / checkpoint of size {size}: {exc}") from None


def newest_checkpoint(root: Path, verifier: Verifier) -> Checkpoint | None:
    """Returns the newest checkpoint, verified, in constant time: the served `checkpoint` file,
    whose note must be kept in `checkpoints/` with the same body (the kept one may carry more
    co-signatures). A note newer than the served file can only be left by a crash between the two
    writes; the writer signs that size again, to the same note (Ed25519 signatures are deterministic).

    :raises LedgerCorrupt: when a note does not verify, or the served checkpoint's note is missing
        or differs from it.
    """
    try:
        served = parse_checkpoint(read_note_file(root / LATEST), verifier)
    except FileNotFoundError:
        return latest_checkpoint(root, verifier)  # none served yet: a ledger cut short at init
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"`checkpoint` 文件的签名无效 / the `checkpoint` file does not verify: {exc}") from None
    try:
        kept = parse_checkpoint(kept_note(root, served.size), verifier)
    except FileNotFoundError:
        raise LedgerCorrupt(None, f"当前检查点（大小 {served.size}）的签名记录不在 {CHECKPOINTS}/ 中：检查点签名记录被删除 / "
                            f"the note of the served checkpoint (size {served.size}) is missing from "
                            f"{CHECKPOINTS}/: checkpoint notes were removed") from None
    except SignatureError as exc:
        raise LedgerCorrupt(None, f"大小为 {served.size} 的检查点签名无效 / checkpoint of size {served.size}: {exc}") from None
    if kept.body != served.body:
        raise LedgerCorrupt(None, f"`checkpoint` 文件与已保存的大小 {served.size} 的签名记录不一致 / "
                            f"the `checkpoint` file and the kept note of size {served.size} differ")
    return _newer_kept(root, verifier, served.size) or kept


def _newer_kept(root: Path, verifier: Verifier, served: int) -> Checkpoint | None:
    """Returns the newest kept note beyond the served size, which a crash leaves when the served
    file was not synced: `index/checkpoints` records each checkpoint before its note is written, so
    the newest note is that of its last record, or of the one before (a crash between the two).

    :raises LedgerCorrupt: when the record before the last is beyond the served size and its note is
        missing (notes were removed), or a note does not verify.
    """
    from ledger.commitments import open_history  # (commitments reads the notes this module writes)

    with open_history(root) as history:
        sizes = [history.size(n) for n in range(max(0, len(history) - 2), len(history))] if history is not None else []
    for last, size in enumerate(reversed(sizes)):
        if size <= served:
            return None
        try:
            newer = parse_checkpoint(kept_note(root, size), verifier)
            if newer.size != size:
                raise LedgerCorrupt(None, f"检查点文件 {checkpoint_path(root, size).name} 存放的是大小 {newer.size} 的检查点 / "
                                    f"{checkpoint_path(root, size).name} holds the checkpoint of size {newer.size}")
            return newer
        except FileNotFoundError:
            if last:
                raise LedgerCorrupt(None, f"index/checkpoints 记录了大小 {size} 的检查点（超出 `checkpoint` 文件的 {served}），"
                                    f"但其签名记录不在 {CHECKPOINTS}/ 中：检查点签名记录被删除 / "
                                    f"index/checkpoints records a checkpoint of size {size}, beyond the `checkpoint` file's "
                                    f"{served}, but its note is missing from {CHECKPOINTS}/: checkpoint notes were removed") from None
        except SignatureError as exc:
            raise LedgerCorrupt(None, f"大小为 {size} 的检查点签名无效 / checkpoint of size {size}: {exc}") from None
    return None


def serves(root: Path, checkpoint: Checkpoint) -> bool:
    """Tells whether the `checkpoint` file holds this checkpoint's note."""
    try:
        return read_note_file(root / LATEST) == checkpoint.note
    except (FileNotFoundError, LedgerCorrupt):
        return False


def repair_latest(root: Path, checkpoint: Checkpoint) -> bool:
    """Rewrites the `checkpoint` file when it lags the newest note; tells whether it did."""
    try:
        if read_note_file(root / LATEST) == checkpoint.note:
            return False
    except FileNotFoundError:
        pass
    write_atomic(root / LATEST, checkpoint.note.encode())
    return True


def _size_of(note: str | None, verifier: Verifier) -> str:
    if note is None:
        return "missing"
    try:
        return f"size {parse_checkpoint(note, verifier).size}"
    except SignatureError as exc:
        return f"unreadable: {exc}"


def read_note_file(path: Path) -> str:
    """Reads a stored note, refusing anything but a regular UTF-8 file.

    :raises FileNotFoundError: when it is missing.
    :raises LedgerCorrupt: when it is not a regular file or not UTF-8.
    """
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(path)
    if path.is_symlink() or not path.is_file():
        raise LedgerCorrupt(None, f"{path.name} 不是普通文件 / {path.name} is not a regular file")
    try:
        return path.read_bytes().decode()
    except UnicodeDecodeError:
        raise LedgerCorrupt(None, f"{path.name} 不是 UTF-8 文本 / {path.name} is not UTF-8 text") from None


class SignatureChecks:
    """Signature checks gathered while notes are read and run in batches, one key per batch.

    `start` hands the checks queued so far to an executor (or runs them at once); with the C
    accelerator a batch runs with the GIL released, so it overlaps other work (the `cryptography`
    package holds the GIL while it verifies). The verdicts are OpenSSL's Ed25519 verification's either way.
    """

    def __init__(self) -> None:
        self._queued: dict[bytes, tuple[Verifier, list[bytes], list[bytes]]] = {}
        self._started: dict[bytes, int] = {}  # how many of a key's checks were handed over
        self._batches: list[tuple[bytes, int, Future[bytes] | bytes]] = []
        self._passed: dict[bytes, bytearray] = {}

    def add(self, verifier: Verifier, message: bytes, signature: bytes) -> tuple[bytes, int]:
        """Queues one check and returns its ticket."""
        queued = self._queued.setdefault(verifier.public, (verifier, [], []))
        queued[1].append(message)
        queued[2].append(signature)
        return verifier.public, len(queued[1]) - 1

    def start(self, executor: Executor | None = None) -> None:
        """Runs the checks queued since the last call, in `executor` or else at once."""
        for public, (verifier, messages, signatures) in self._queued.items():
            first = self._started.get(public, 0)
            if first == len(messages):
                continue
            self._started[public] = len(messages)
            batch = (verifier, messages[first:], signatures[first:])
            self._batches.append((public, first, executor.submit(verify_signatures, *batch) if executor else verify_signatures(*batch)))

    def wait(self) -> None:
        """Starts what is left and waits for every batch."""
        self.start()
        for public, first, batch in self._batches:
            passed = batch.result() if isinstance(batch, Future) else batch
            self._passed.setdefault(public, bytearray())[first:first + len(passed)] = passed
        self._batches.clear()

    def passed(self, ticket: tuple[bytes, int]) -> bool:
        """Tells whether a checked signature verified (after `wait`)."""
        public, index = ticket
        return bool(self._passed[public][index])


@dataclass
class CheckpointReading:
    """A stored checkpoint note read without its signatures checked yet: what `parse_checkpoint`
    and `cosigners` find, split in two so that many notes' signatures can be checked in one batch.

    `checkpoint` is its content when the note is well formed (a signature may still fail); `outcome`
    gives the verdict once the batch has run, with the error `parse_checkpoint` or `cosigners` would
    raise for the note.
    """

    size: int  # from the file name
    name: str  # the file name
    checkpoint: Checkpoint | None
    _before_signature: str | None = None  # malformed note or no signature by the log's key
    _signature: tuple[bytes, int] | None = None
    _signer: str = ""
    _body: str | None = None  # what is wrong with the body
    _cosignatures: list[tuple[str, tuple[bytes, int]]] = field(default_factory=list)

    @property
    def malformed(self) -> bool:
        """Tells whether the note fails whatever its signatures give."""
        return self._before_signature is not None or self._body is not None

    def outcome(self, checks: SignatureChecks) -> tuple[Checkpoint, list[str]]:
        """Returns the checkpoint and the witnesses who co-signed it.

        :raises SignatureError: as `parse_checkpoint` then `cosigners` would.
        """
        if self._before_signature is not None:
            raise SignatureError(self._before_signature)
        assert self._signature is not None
        if not checks.passed(self._signature):
            raise SignatureError(f"signature of {self._signer!r} does not verify")
        if self._body is not None:
            raise SignatureError(self._body)
        signed = []
        for name, ticket in self._cosignatures:
            if not checks.passed(ticket):
                raise SignatureError(f"co-signature of {name!r} does not verify")
            signed.append(name)
        assert self.checkpoint is not None
        return self.checkpoint, signed


def read_checkpoint(size: int, name: str, note: str, verifier: Verifier, witnesses: list[Verifier],
                    checks: SignatureChecks) -> CheckpointReading:
    """Reads a stored checkpoint note, queueing its signature and co-signatures in `checks`."""
    try:
        body, sigs = split_note(note)
    except SignatureError as exc:
        return CheckpointReading(size, name, None, str(exc))
    message = body.encode()
    for signer, blob in sigs:  # the first line by the log's key decides, as in verify_note
        if signer == verifier.name and blob[:4] == verifier.key_id:
            ticket = checks.add(verifier, message, blob[4:])
            break
    else:
        return CheckpointReading(size, name, None, f"note carries no signature by {verifier.name!r}")
    checkpoint = _read_body(body, note, verifier)
    if isinstance(checkpoint, str):
        return CheckpointReading(size, name, None, None, ticket, signer, checkpoint)
    cosignatures = [(cosigner, checks.add(witness, message, blob[4:])) for witness in witnesses  # as in cosigners
                    for cosigner, blob in sigs if cosigner == witness.name and blob[:4] == witness.key_id]
    return CheckpointReading(size, name, checkpoint, None, ticket, signer, None, cosignatures)


def checkpoint_sizes(root: Path) -> list[int]:
    """Returns the tree sizes of every stored checkpoint note (in its own file or the notes file), ascending."""
    return sorted({size for size, _ in list_checkpoint_names(root)} | {s for s in logged_sizes(root) if s >= 0})


def covering_checkpoint(root: Path, entry: int, verifier: Verifier) -> Checkpoint:
    """Returns the first stored checkpoint whose tree holds entry `entry` (the one an identical
    re-send's receipt names): its size found in `index/checkpoints` by a binary search (O(log n)
    reads; no list of every size signed is kept or read whole), the next record's when a crash
    left that record without its note.

    :raises LedgerCorrupt: when no stored checkpoint covers the entry.
    """
    from ledger.commitments import open_history  # (commitments reads the notes this module writes)

    with open_history(root) as history:
        if history is None:  # a ledger no writer has opened since the history began: its notes, listed
            later: Iterable[int] = [size for size in checkpoint_sizes(root) if size > entry]
        else:
            later = (history.size(n) for n in range(history.first_above(entry), len(history)))
        for size in later:
            if has_note(root, size):
                return stored_checkpoint(root, size, verifier)
    raise LedgerCorrupt(entry, "没有覆盖此条目的已签名检查点 / no stored checkpoint covers this entry")


def stored_checkpoint(root: Path, size: int, verifier: Verifier) -> Checkpoint:
    """Reads and verifies the stored checkpoint note of a tree size.

    :raises SignatureError: when it does not verify. :raises OSError: when there is none.
    """
    return parse_checkpoint(kept_note(root, size), verifier)
