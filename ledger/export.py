"""Exports of the log: its entries as stored, and its tiles for any tlog-tiles client."""

from __future__ import annotations

from pathlib import Path

from ledger.checkpoints import newest_checkpoint
from ledger.errors import LedgerError
from ledger.frames import iter_entries, read_entries
from ledger.outputs import OutputDirectory, output_directory, output_file
from ledger.store import load_verifier
from ledger.tiles import WIDTH, TileReader, entries_path, level_count, tile_path

HERE = Path()
"""The export's own root, for the tile paths relative to it."""
ENTRY_LIMIT = 0xFFFF
"""An entry bundle prefixes each entry with a big-endian uint16 length (c2sp.org/tlog-tiles)."""


def export_jsonl(root: Path, out: Path, force: bool = False) -> int:
    """Writes every entry exactly as stored, one per line; returns how many.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    """
    count = 0
    with output_file(out, force) as f:
        for _, data in iter_entries(root):
            f.write(data + b"\n")
            count += 1
    return count


def export_tiles(root: Path, out: Path, force: bool = False) -> int:
    """Lays out the log as a tlog-tiles client fetches it over plain HTTP file serving: the latest
    checkpoint at `checkpoint`, the hash tiles at `tile/<L>/<N>[.p/<W>]` and the entry bundles at
    `tile/entries/<N>[.p/<W>]`, all for the checkpoint's tree size; returns that size.

    Written into a fresh directory renamed into place (`output_directory`): with `force` the old
    directory is replaced as a whole, and no link planted in it is followed.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists and is not empty without `force`.
    :raises LedgerError: when the log has no checkpoint or an entry is too long for an entry bundle.
    """
    checkpoint = newest_checkpoint(root, load_verifier(root))
    if checkpoint is None:
        raise LedgerError(f"ledger {root} has no checkpoint to export")
    size = checkpoint.size
    with output_directory(out, force) as tree:
        tree.write("checkpoint", checkpoint.note.encode())
        reader = TileReader(root)
        level = 0
        while level_count(size, level):
            _export_level(reader, tree, level, level_count(size, level))
            level += 1
        _export_bundles(root, tree, size)
    return size


def _export_level(reader: TileReader, tree: OutputDirectory, level: int, count: int) -> None:
    for n in range(-(-count // WIDTH)):
        width = min(WIDTH, count - n * WIDTH)
        tree.write(str(tile_path(HERE, level, n, width)), reader.tile(level, n, width))


def _export_bundles(root: Path, tree: OutputDirectory, size: int) -> None:
    log = read_entries(root)
    if len(log) < size:
        raise LedgerError(f"the log holds {len(log)} entries, fewer than its checkpoint's {size}")
    for n in range(-(-size // WIDTH)):
        parts = []
        for i in range(n * WIDTH, min(size, (n + 1) * WIDTH)):
            data = log.data[log.ends[i]:log.ends[i + 1]]
            if len(data) > ENTRY_LIMIT:
                raise LedgerError(f"entry {i} is {len(data)} bytes; an entry bundle holds at most {ENTRY_LIMIT}")
            parts += [len(data).to_bytes(2, "big"), bytes(data)]
        tree.write(str(entries_path(HERE, n, min(WIDTH, size - n * WIDTH))), b"".join(parts))
