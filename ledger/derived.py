"""Derived files the writer keeps inside a ledger beside the log: data computed from the log and
persisted so that it is not computed again (the live service's findings), never evidence.

They live under `derived/<name>/` and follow the recorder's rules for the files it writes: only the
process holding the writer lock writes them (the caller holds it: `matchledger serve`), never through
a symbolic link, appended or truncated in place, a small file replaced whole (temporary name, then
rename). They are not synced: a crash may cut one short, so a reader checks each against what it
records of the log and rebuilds it when they disagree. `verify` never reads them.

Also here: how far the index on disk goes, and the log's Merkle root at a size, which is how a
derived file is tied to the log it came from.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from ledger.index import read_head
from ledger.layout import replace_unsynced, write_all
from ledger.tiles import TileReader

DERIVED = "derived"


class DerivedFiles:
    """The derived files of one kind (`derived/<name>/` in a ledger), read and written in place."""

    def __init__(self, root: Path, name: str) -> None:
        self.directory = root / DERIVED / name
        for path in (root / DERIVED, self.directory):
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                raise OSError(f"{path} is not a directory of the ledger")

    def _path(self, name: str) -> Path:
        return self.directory / name

    def _open(self, name: str, flags: int) -> int:
        fd = os.open(self._path(name), flags | os.O_NOFOLLOW, 0o640)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{self._path(name)} is not a regular file")
        return fd

    def read(self, name: str, start: int = 0, count: int = -1) -> bytes:
        """Returns `count` bytes of a file from `start` (all that follow with -1); b"" when there is no file."""
        try:
            fd = self._open(name, os.O_RDONLY)
        except FileNotFoundError:
            return b""
        try:
            if count < 0:
                count = os.fstat(fd).st_size - start
            return os.pread(fd, max(count, 0), start)
        finally:
            os.close(fd)

    def size(self, name: str) -> int:
        """Returns a file's size (0 when there is none)."""
        try:
            return os.lstat(self._path(name)).st_size
        except FileNotFoundError:
            return 0

    def append(self, name: str, data: bytes) -> None:
        """Appends bytes to a file (created empty first when missing)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = self._open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)

    def truncate(self, name: str, size: int) -> None:
        """Cuts a file to `size` bytes (creating it empty when missing)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = self._open(name, os.O_WRONLY | os.O_CREAT)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def replace(self, name: str, data: bytes) -> None:
        """Replaces a small file whole: written under a temporary name, then renamed over it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        replace_unsynced(self._path(name), data, 0o640)

    def write_named(self, name: str, fill: Callable[[HashingFile], object]) -> tuple[str, int]:
        """Writes a file as `fill` makes it, hashing it as it goes, and names it by its content
        (`name-<sha256>`): a kept table is never held whole in memory (issue 32.1). Returns the
        file's name and size; on an error no file, not even a partial one, is left.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self._path(f".{name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o640)
        out = HashingFile(fd)
        try:
            fill(out)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        named = f"{name}-{out.sha256.hexdigest()}"
        os.replace(tmp, self._path(named))
        return named, out.size

    def names(self) -> list[str]:
        """Returns the names of this kind's files (none when there is no directory)."""
        if not self.directory.is_dir() or self.directory.is_symlink():
            return []
        return sorted(p.name for p in self.directory.iterdir() if not p.name.startswith("."))

    def remove(self, name: str) -> None:
        """Removes one file (nothing when it is not there)."""
        self._path(name).unlink(missing_ok=True)

    def clear(self) -> None:
        """Removes every file of this kind (they are rebuilt from the log)."""
        if self.directory.is_dir() and not self.directory.is_symlink():
            shutil.rmtree(self.directory)


class HashingFile:
    """A file being written, hashed as it is: the sink `DerivedFiles.write_named` gives its `fill`
    (Arrow's IPC writer takes it as a Python file)."""

    closed = False

    def __init__(self, fd: int) -> None:
        self.fd, self.sha256, self.size = fd, hashlib.sha256(), 0

    def write(self, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        write_all(self.fd, view)
        self.sha256.update(view)
        self.size += len(view)
        return len(view)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:  # written straight to the descriptor: nothing is buffered here
        pass

    def close(self) -> None:  # the descriptor is `write_named`'s to close
        self.closed = True


def indexed_size(root: Path) -> int:
    """Returns how many entries the stream index on disk covers (the live service flushes it every few
    seconds; entries after it are found through the log).

    :raises LedgerCorrupt: when the index head is not readable.
    """
    head = read_head(root)
    return head.size if head is not None else 0


def tree_root(root: Path, size: int) -> bytes:
    """Returns the Merkle tree hash of the log's first `size` entries, from the stored tiles.

    :raises LedgerCorrupt: when the tiles do not hold it.
    """
    return TileReader(root).subtree(0, size) if size else b""
