"""The live audit's view of the log: the ledger's one reader (`ledger/reader.py` `LogReader`:
`size`, `entries`, `stream`, `streams`) with a count of the entries it handed out, so that a test
can show what a restart reads again (issue 29 point 3: the auditor follows the committed log from its
own position).

Nothing unsigned counts: every read stops at the newest signed checkpoint's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from ledger.reader import LogReader


class CountingReader:
    """A ledger's signed entries by index and by stream, counted as they are handed out."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._log = LogReader(root)
        self.entries_read = 0

    def size(self) -> int:
        """Returns the size of the newest signed checkpoint (its signature checked).

        :raises LedgerCorrupt: when that checkpoint does not verify.
        """
        return self._log.size()

    def entries(self, start: int = 0, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (index, stored bytes) of the signed entries from `start`, at most `limit` of them.

        :raises LedgerCorrupt: when an entry cannot be read.
        """
        for item in self._log.entries(start, limit):
            self.entries_read += 1
            yield item

    def stream(self, name: str, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yields (index, stored bytes) of a stream's events from seq `after` on, among the first `upto` entries.

        :raises LedgerCorrupt: when the index or an entry cannot be read.
        """
        for item in self._log.stream(name, after, upto):
            self.entries_read += 1
            yield item

    def streams(self, names: Sequence[str], upto: int | None = None) -> dict[str, list[tuple[int, bytes]]]:
        """Returns several streams at once, each segment opened once for them all."""
        found = self._log.streams(names, upto)
        self.entries_read += sum(map(len, found.values()))
        return found
