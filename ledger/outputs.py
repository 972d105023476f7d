"""Where commands may write their outputs: never inside a ledger directory (only the recorder writes
there), never through a symbolic link, never over an existing file unless asked, and always as a
complete file (written to a temporary name, synced, then renamed)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ledger.errors import LedgerError
from ledger.layout import CONFIG


class OutputRefused(LedgerError):
    """An output path is refused: inside a ledger, a symbolic link, or an existing file without --force."""


def ledger_holding(path: Path) -> Path | None:
    """Returns the ledger directory that `path` (resolved) lies in or is, if any."""
    target = path.resolve()
    for directory in (target, *target.parents):
        if (directory / CONFIG).is_file():
            return directory
    return None


def check_output(path: Path, force: bool = False, directory: bool = False) -> Path:
    """Returns the resolved path an output may be written to.

    :raises OutputRefused: when it lies inside a ledger, is a symbolic link, is of the wrong kind,
        or exists and `force` is not given.
    """
    if str(path) == "":
        raise OutputRefused("the output path is empty")
    if path.is_symlink():
        raise OutputRefused(f"{path} is a symbolic link; give the real path")
    ledger = ledger_holding(path)
    if ledger is not None:
        raise OutputRefused(f"{path} lies inside the ledger {ledger}; only the recorder writes there, choose another place")
    target = path.resolve()
    if target.exists():
        if target.is_dir() != directory:
            raise OutputRefused(f"{path} exists and is {'not ' if directory else ''}a directory")
        if not force and not (directory and not any(target.iterdir())):
            raise OutputRefused(f"{path} exists; pass --force to replace it")
    return target


@contextmanager
def output_file(path: Path, force: bool = False, mode: int = 0o644) -> Iterator[BinaryIO]:
    """Yields a file to write an output into; it replaces `path` only once complete and synced.

    :raises OutputRefused: as `check_output`.
    """
    target = check_output(path, force)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if not force and target.exists():
            raise OutputRefused(f"{path} appeared while it was written; pass --force to replace it")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_output(path: Path, data: bytes, force: bool = False, mode: int = 0o644) -> None:
    """Writes a whole output file (see `output_file`).

    :raises OutputRefused: as `check_output`.
    """
    with output_file(path, force, mode) as f:
        f.write(data)
