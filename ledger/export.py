"""Exports of the log: its entries as stored, and its tiles for any tlog-tiles client."""

from __future__ import annotations

from pathlib import Path

from ledger.checkpoints import Checkpoint
from ledger.errors import LedgerError
from ledger.fastscan import leaf_hashes
from ledger.outputs import OutputDirectory, output_directory, output_file
from ledger.reader import LogReader, StoredEntries
from ledger.tiles import WIDTH, entries_path, tile_path, tiles_of

HERE = Path()
"""The export's own root, for the tile paths relative to it."""
ENTRY_LIMIT = 0xFFFF
"""An entry bundle prefixes each entry with a big-endian uint16 length (c2sp.org/tlog-tiles)."""


def export_jsonl(root: Path, out: Path, force: bool = False) -> Checkpoint:
    """Writes the signed entries exactly as stored, one per line, once they give the newest signed
    root (nothing unsigned is exported); returns the checkpoint they were checked against.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    :raises LedgerCorrupt: when the entries do not give the signed root.
    """
    reader = LogReader(root)
    log = reader.packed()
    checkpoint = reader.check(log)
    with output_file(out, force) as f:  # checks the output first
        for i in range(checkpoint.size):
            f.write(bytes(log.data[log.ends[i]:log.ends[i + 1]]) + b"\n")
    return checkpoint


def export_tiles(root: Path, out: Path, force: bool = False) -> Checkpoint:
    """Lays out the log as a tlog-tiles client fetches it over plain HTTP file serving: the latest
    checkpoint at `checkpoint`, the hash tiles at `tile/<L>/<N>[.p/<W>]` and the entry bundles at
    `tile/entries/<N>[.p/<W>]`, all for the checkpoint's tree size, once its entries give its root
    (the tiles are computed from them); returns that checkpoint.

    Written into a fresh directory renamed into place (`output_directory`): with `force` the old
    directory is replaced as a whole, and no link planted in it is followed.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists and is not empty without `force`.
    :raises LedgerCorrupt: when the log has no checkpoint or its entries do not give the signed root.
    :raises LedgerError: when an entry is too long for an entry bundle.
    """
    reader = LogReader(root)
    log = reader.packed()
    checkpoint = reader.check(log)
    size = checkpoint.size
    leaves = leaf_hashes([bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(size)])
    with output_directory(out, force) as tree:
        tree.write("checkpoint", checkpoint.note.encode())
        for level, n, width, hashes in tiles_of(leaves):  # from the checked entries: a stored tile may have been edited
            tree.write(str(tile_path(HERE, level, n, width)), hashes)
        _export_bundles(log, tree, size)
    return checkpoint


def _export_bundles(log: StoredEntries, tree: OutputDirectory, size: int) -> None:
    for n in range(-(-size // WIDTH)):
        parts = []
        for i in range(n * WIDTH, min(size, (n + 1) * WIDTH)):
            data = log.data[log.ends[i]:log.ends[i + 1]]
            if len(data) > ENTRY_LIMIT:
                raise LedgerError(f"entry {i} is {len(data)} bytes; an entry bundle holds at most {ENTRY_LIMIT}")
            parts += [len(data).to_bytes(2, "big"), bytes(data)]
        tree.write(str(entries_path(HERE, n, min(WIDTH, size - n * WIDTH))), b"".join(parts))
