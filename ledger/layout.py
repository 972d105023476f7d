"""Where a ledger keeps its files, its settings, and the atomic file writes it relies on."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Annotated

import msgspec

from ledger.errors import LedgerCorrupt, LedgerNotFound
from ledger.segments import fsync_dir
from schemas.codec import DEFAULT_MAX_ENTRY_BYTES

CONFIG = "ledger.json"
PRIVATE_KEY = "signer.key"
PUBLIC_KEY = "signer.pub"
SEGMENTS = "segments"
CHECKPOINTS = "checkpoints"
LATEST = "checkpoint"
LOCK = "lock"
WITNESSES = "witnesses"


class LedgerConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A ledger's settings, fixed at `init`."""

    format: int = 1
    origin: str
    max_entry_bytes: Annotated[int, msgspec.Meta(ge=256, le=16 * 1024 * 1024)] = DEFAULT_MAX_ENTRY_BYTES
    segment_bytes: Annotated[int, msgspec.Meta(ge=4096)] = 64 * 1024 * 1024
    checkpoint_interval: Annotated[int, msgspec.Meta(ge=1)] = 100_000


def load_config(root: Path) -> LedgerConfig:
    """Reads a ledger's settings.

    :raises LedgerNotFound: when `root` is not a ledger directory.
    """
    try:
        return msgspec.json.decode(read_config_bytes(root), type=LedgerConfig)
    except msgspec.DecodeError as exc:
        raise LedgerCorrupt(None, f"{root / CONFIG} 不是有效的账本设置 / {root / CONFIG} is not valid ledger settings: {exc}") from None


def read_config_bytes(root: Path) -> bytes:
    """Returns the stored bytes of a ledger's settings.

    :raises LedgerNotFound: when `root` is not a ledger directory.
    :raises LedgerCorrupt: when the settings are not a regular file.
    """
    path = root / CONFIG
    if not path.exists() and not path.is_symlink():
        raise LedgerNotFound(f"{root} is not a ledger (no {CONFIG}); run `matchledger init --ledger {root}`")
    if path.is_symlink() or not path.is_file():
        raise LedgerCorrupt(None, f"{path} 不是普通文件 / {path} is not a regular file")
    return path.read_bytes()


def config_digest(root: Path) -> str:
    """Returns the SHA-256 of a ledger's stored settings, which every checkpoint note binds."""
    return hashlib.sha256(read_config_bytes(root)).hexdigest()


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Writes every byte to a file descriptor (`os.write` may write fewer than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_unsynced(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replaces a file atomically (readers see the old or the new content), without syncing it: for
    files the writer can derive again, whose writer's lock makes it the only one writing them."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        write_all(fd, data)
    except OSError as exc:  # a full disk: no temporary file left behind, and the file named
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.close(fd)
    os.replace(tmp, path)


def write_atomic(path: Path, data: bytes) -> None:
    """Writes a file so that readers see the old or the new content, never a mix: temp file,
    fsync, rename, fsync of the directory."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")  # unique: two writers never share one
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: the file named
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
