"""Where commands may write their outputs: never inside a ledger directory (only the recorder writes
there), never through a symbolic link, never over an existing file unless asked, and always as a
complete file (written to a temporary name, synced, then renamed). A directory output (an export) is
written into a fresh directory beside its target and renamed into place as a whole
(`output_directory`): nothing is ever written into a directory someone else may have filled."""

from __future__ import annotations

import os
import shutil
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


class OutputDirectory:
    """A fresh directory being filled beside the output it will become: every name in it is made
    relative to an open descriptor of its parent, new (`O_EXCL`) and never through a link
    (`O_NOFOLLOW`), so a link planted where the output goes is never followed."""

    def __init__(self, fd: int) -> None:
        self._dirs: dict[str, int] = {"": fd}

    def write(self, relative: str, data: bytes) -> None:
        """Writes a whole file at `relative` (a `/`-separated path; its directories are made)."""
        with self.open(relative) as f:
            f.write(data)

    @contextmanager
    def open(self, relative: str) -> Iterator[BinaryIO]:
        """Yields a new file at `relative` to write; it is synced when the block ends.

        :raises OutputRefused: when `relative` is not a plain relative path, or the name exists.
        """
        *parents, name = _parts(relative)
        at = self._directory(parents)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=at)
        except FileExistsError:
            raise OutputRefused(f"{relative} is written twice in one output") from None
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())

    def read(self, relative: str) -> bytes:
        """Returns the bytes of a file written here (never through a link)."""
        *parents, name = _parts(relative)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=self._directory(parents))
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def _directory(self, parts: list[str]) -> int:
        """Returns the descriptor of a directory under this one, made (without following links) if new."""
        key = "/".join(parts)
        if key not in self._dirs:
            parent = self._directory(parts[:-1])
            try:
                os.mkdir(parts[-1], 0o755, dir_fd=parent)
            except FileExistsError:
                pass  # made by this output before (only this process writes in the fresh directory)
            self._dirs[key] = os.open(parts[-1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        return self._dirs[key]

    def close(self) -> None:
        """Syncs and closes every directory's descriptor."""
        for fd in reversed(list(self._dirs.values())):
            os.fsync(fd)
            os.close(fd)
        self._dirs.clear()


def _parts(relative: str) -> list[str]:
    """Returns the names of a relative output path.

    :raises OutputRefused: when it is absolute or has an empty, `.` or `..` name.
    """
    parts = relative.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise OutputRefused(f"{relative!r} is not a plain relative path inside the output")
    return parts


@contextmanager
def output_directory(path: Path, force: bool = False) -> Iterator[OutputDirectory]:
    """Yields a fresh directory (`.<name>.<random>.tmp`, beside `path`) to write an output tree
    into; once the block ends it is renamed to `path`, with `force` replacing the old directory as
    a whole (its content, planted links included, is removed, never written through).

    :raises OutputRefused: as `check_output`, or when `path` appeared meanwhile.
    """
    target = check_output(path, force, directory=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    parent = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    tmp = f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        os.mkdir(tmp, 0o700, dir_fd=parent)  # nobody else can plant anything in it while it is filled
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        tree = OutputDirectory(fd)
        try:
            yield tree
            os.fchmod(fd, 0o777 & ~_umask())  # as any directory the user makes, once complete
        finally:
            tree.close()
        _put_in_place(parent, tmp, target, force)
    except BaseException:
        shutil.rmtree(tmp, dir_fd=parent, ignore_errors=True)
        raise
    finally:
        os.close(parent)


def _put_in_place(parent: int, tmp: str, target: Path, force: bool) -> None:
    """Renames the filled directory to the target's name (over an empty directory, or, with
    `force`, after the old one is moved aside); the old one is then removed without following links.

    :raises OutputRefused: when the target is there and may not be replaced.
    """
    old = f".{target.name}.{uuid.uuid4().hex[:12]}.old"
    moved = False
    if force:
        try:
            os.rename(target.name, old, src_dir_fd=parent, dst_dir_fd=parent)
            moved = True
        except FileNotFoundError:
            pass
    try:
        os.rename(tmp, target.name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError as exc:  # a name planted meanwhile: a file, a link, a directory with something in it
        if moved:
            os.rename(old, target.name, src_dir_fd=parent, dst_dir_fd=parent)
        raise OutputRefused(f"{target} appeared while the output was written; pass --force to replace it ({exc.strerror})") from None
    os.fsync(parent)
    if moved:
        shutil.rmtree(old, dir_fd=parent, ignore_errors=True)  # rmtree never follows a link; a planted link is just removed


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_NAME_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")


def stream_file_name(stream: str, suffix: str) -> str:
    """Returns the file name of a stream's output: `/` as `_`, any other byte but letters, digits,
    `.` and `-` (so `_` and `%` too, and a leading `.`) as `%XX`. No two streams share a name
    (`a/b` is `a_b`, `a_b` is `a%5Fb`)."""
    out = []
    for at, byte in enumerate(stream.encode()):
        char = chr(byte)
        if char == "/":
            out.append("_")
        elif char in _NAME_SAFE and not (at == 0 and char == "."):
            out.append(char)
        else:
            out.append(f"%{byte:02X}")
    return "".join(out) + suffix
