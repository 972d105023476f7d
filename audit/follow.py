"""The reader a follower (the live audit) reads the committed log through, in the shape of the
ledger's one reader (`ledger/reader.py` `LogReader`: `size`, `entries`, `stream`), over today's
readers: swapping it for `LogReader(root)` is a change of one import (issue 29 point 3).

Nothing unsigned counts: `size` is the newest signed checkpoint's, and `entries` without a limit
reads no further. `entries_read` counts the entries handed out, so a test can show what a restart
reads again.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from ledger import EntryReader, indexed_size, read_streams, signed_size
from ledger.frames import decode_key, iter_entries


class FrameReader:
    """A ledger's committed entries by index and by stream, read from its segments as needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._reader = EntryReader(root)
        self.entries_read = 0

    def size(self) -> int:
        """Returns the size of the newest signed checkpoint (its signature checked).

        :raises LedgerCorrupt: when that checkpoint does not verify.
        """
        return signed_size(self.root)

    def entries(self, start: int = 0, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (index, stored bytes) of the entries from `start`, at most `limit` of them (all up to
        the signed size when None); a limit past the committed entries is an error, not a short read.

        :raises LedgerCorrupt: when an entry cannot be read.
        """
        if limit is None:
            end = self.size()
            found: Iterator[tuple[int, bytes]] = islice(iter_entries(self.root, start), max(0, end - start))
        elif limit > 0:  # a follower reads from the last checkpoint on: scanned from where it ends, not from its tile's start
            self._reader.start_near(start)
            found = enumerate(self._reader.read(start, limit), start)
        else:
            found = iter(())
        for item in found:
            self.entries_read += 1
            yield item

    def stream(self, name: str, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (index, stored bytes) of a stream's events from seq `after` on, among the first `upto`
        entries (the signed size when None): those the stream index on disk covers through it, the
        rest from the entries after it.

        :raises LedgerCorrupt: when the index or an entry cannot be read.
        """
        upto = self.size() if upto is None else upto
        indexed = min(indexed_size(self.root), upto)
        found = read_streams(self.root, [name], indexed)[name]
        seq = len(found)
        self.entries_read += len(found)
        yield from found[after:]
        for entry, data in self.entries(indexed, upto - indexed):
            if decode_key(data, entry).stream == name:
                if seq >= after:
                    yield entry, data
                seq += 1
