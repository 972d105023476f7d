"""The kept notes of the live service's checkpoints, appended to one file: `checkpoints/notes`.

A live service signs a checkpoint per group commit; creating a file per note (with its
temporary name, rename and directory sync) cost more of the writer's CPU than the syncs. So the
notes of `Ledger.checkpoint(index=False)` are appended to one append-only file, each note followed
by a NUL byte (a signed note holds no control character but newlines, so the NUL frames it and
a reader can find the note that starts after any byte). Each append is synced before the
commit is acknowledged. Other checkpoints (`record`, a full checkpoint, co-signed notes) keep
their own file, `checkpoints/<size>.note`; readers look in both (`checkpoints.kept_note`).

The notes are in increasing size, so the note of a size is found by a binary search over the
file's bytes (O(log n) reads). A crash can leave the last note cut short (no NUL after it): that
note's size has its record in `index/checkpoints`, written first, and the next writer cuts it and
signs that size again, to the same note. A NUL-terminated note that does not verify is evidence.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ledger.layout import CHECKPOINTS, write_all
from ledger.segments import fsync_dir

NOTES = "notes"
END = b"\0"
CHUNK = 1 << 13


@dataclass(frozen=True)
class LoggedNote:
    """A note in the notes file: the size its body states (-1 when it states none), where it starts, its bytes."""

    size: int
    offset: int
    data: bytes

    @property
    def end(self) -> int:
        return self.offset + len(self.data) + 1


def notes_path(root: Path) -> Path:
    return root / CHECKPOINTS / NOTES


def size_of(data: bytes) -> int:
    """Returns the tree size a note's body states (its second line), or -1."""
    lines = data.split(b"\n", 2)
    return int(lines[1]) if len(lines) > 2 and lines[1].isdigit() else -1


class NoteFile:
    """Reads the notes file (absent: no notes) by byte position; the caller closes it."""

    def __init__(self, root: Path) -> None:
        try:
            self._fd: int | None = os.open(notes_path(root), os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            self._fd = None
        self.length = os.fstat(self._fd).st_size if self._fd is not None else 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> NoteFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, offset: int, count: int) -> bytes:
        assert self._fd is not None
        return os.pread(self._fd, count, offset)

    def note_at(self, offset: int) -> LoggedNote | None:
        """Returns the first complete note starting at or after `offset`, or None."""
        if self._fd is None:
            return None
        if offset:  # a note starts after a NUL
            start = self._find(offset - 1)
            if start is None:
                return None
            offset = start + 1
        end = self._find(offset)
        if end is None:
            return None
        data = self._read(offset, end - offset)
        return LoggedNote(size_of(data), offset, data)

    def _find(self, offset: int) -> int | None:
        """Returns the position of the first NUL at or after `offset`."""
        while offset < self.length:
            chunk = self._read(offset, CHUNK)
            at = chunk.find(END)
            if at >= 0:
                return offset + at
            offset += len(chunk)
        return None

    def __iter__(self) -> Iterator[LoggedNote]:
        """Yields every complete note, in file order (reading the file once, in large pieces)."""
        if self._fd is None:
            return
        offset, rest = 0, b""
        while offset < self.length:
            chunk = self._read(offset, 1 << 20)
            if not chunk:
                break
            base = offset - len(rest)
            data = rest + chunk
            offset += len(chunk)
            start = 0
            while (end := data.find(END, start)) >= 0:
                yield LoggedNote(size_of(data[start:end]), base + start, data[start:end])
                start = end + 1
            rest = data[start:]

    @property
    def complete(self) -> int:
        """Returns where the last complete note ends (what follows it is a torn append)."""
        at = self.length
        while at > 0:
            chunk = self._read(max(0, at - CHUNK), at - max(0, at - CHUNK))
            found = chunk.rfind(END)
            if found >= 0:
                return at - len(chunk) + found + 1
            at -= len(chunk)
        return 0

    def last(self, count: int = 2) -> list[LoggedNote]:
        """Returns the last `count` complete notes, oldest first."""
        found: list[LoggedNote] = []
        end = self.complete
        while end > 0 and len(found) < count:
            start = end - 1
            while start > 0:  # back to the NUL before this note
                chunk = self._read(max(0, start - CHUNK), start - max(0, start - CHUNK))
                found_at = chunk.rfind(END)
                if found_at >= 0:
                    start = start - len(chunk) + found_at + 1
                    break
                start -= len(chunk)
            data = self._read(start, end - 1 - start)
            found.insert(0, LoggedNote(size_of(data), start, data))
            end = start
        return found

    def find(self, size: int) -> LoggedNote | None:
        """Returns the note of a tree size (a binary search over the file's bytes), or None."""
        lo, hi = 0, self.complete  # the note sought, if any, starts before hi
        while hi - lo > 2 * CHUNK:
            mid = (lo + hi) // 2
            note = self.note_at(mid)
            if note is None or note.offset >= hi or note.size > size:
                hi = mid
            elif note.size == size:
                return note
            elif note.size < 0:
                break  # (a note stating no size: the linear search below meets it)
            else:
                lo = note.end
        at = lo
        while (note := self.note_at(at)) is not None:
            if note.size == size:
                return note
            if note.size > size:
                return None
            at = note.end
        return None


class NoteWriter:
    """Appends notes to the notes file and syncs each; the writer's lock makes it the only one."""

    def __init__(self, root: Path) -> None:
        self.path = notes_path(root)
        self._fd: int | None = None

    def cut_torn(self) -> bool:
        """Cuts a note a crash left cut short at the end of the file; tells whether it did."""
        with NoteFile(self.path.parent.parent) as notes:
            complete, length = notes.complete, notes.length
        if complete == length:
            return False
        fd = os.open(self.path, os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.ftruncate(fd, complete)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def append(self, note: str) -> None:
        """Appends a note and syncs it; a failed write is cut off again (best effort: else the next
        note would be glued to its bytes), so the file only ever ends with whole notes or a crash's."""
        if self._fd is None:
            created = not self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            if created:
                fsync_dir(self.path.parent)
        length = os.fstat(self._fd).st_size
        try:
            write_all(self._fd, note.encode() + END)
            os.fdatasync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, length)
            except OSError:
                pass
            raise

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
