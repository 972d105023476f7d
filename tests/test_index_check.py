"""The stream index check (`ledger.index.check_index`, run by `verify` and beside the audit's load)
against the way it was first written, kept here as the oracle: each stream's entries found by a
stable sort of the whole log's streams, compared with its file. The check itself never sorts the
log (issue 32: the sort of a season's 22 M entries held 350 MB); it must find what the sort found,
and the same first difference, on deliberately broken index files (DESIGN.md ledger/: the stream
index is derived data, every record of it checked against the entries)."""

from __future__ import annotations

from array import array
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ledger import index as ledger_index
from ledger import store
from ledger.errors import LedgerCorrupt
from ledger.frames import stream_codes
from ledger.index import NAME_LEN, check_index, list_stream_files, read_stream_file
from ledger.recorder import validate_lines
from tests.ledger_support import game_lines


def _sorted_check(root: Path, coded: pa.DictionaryArray, size: int, starts: pa.UInt64Array | None) -> str | None:
    """The oracle: each stream's entries by a stable sort of every entry's stream code."""
    coded = coded.slice(0, size)
    order = pc.sort_indices(coded.indices)
    names = coded.dictionary.to_pylist()
    counts = dict(zip(*(pc.value_counts(coded.indices).flatten()[k].to_pylist() for k in (0, 1))))
    start, where = 0, {}
    for code, name in enumerate(names):
        where[name] = (start, counts.get(code, 0))
        start += counts.get(code, 0)
    seen = set()
    for path in list_stream_files(root):
        try:
            stream, pairs = read_stream_file(path)
        except (LedgerCorrupt, OSError) as exc:
            return str(exc)
        seen.add(stream)
        entries = pairs[0::2]
        first, n = where.get(stream, (0, 0))
        have = entries[:n] if len(entries) > n and entries[n] >= size else entries
        want = order.slice(first, n)
        if not pa.array(have, pa.uint64()).equals(want.cast(pa.uint64())):
            return ledger_index._first_difference(stream, have, array("Q", want.to_pylist()))
        if starts is None:
            continue
        offsets, frame_starts = pa.array(pairs[1::2][:len(have)], pa.uint64()), starts.take(want)
        if not offsets.equals(frame_starts):
            seq = pc.index(pc.not_equal(offsets, frame_starts), True).as_py()
            return (f"索引给出流 {stream!r} 第 {seq} 号事件（第 {have[seq]} 号条目）的偏移为 {offsets[seq].as_py()}，"
                    f"其帧始于 {frame_starts[seq].as_py()} / "
                    f"the index gives offset {offsets[seq].as_py()} for seq {seq} of stream {stream!r} (entry {have[seq]}), "
                    f"its frame starts at {frame_starts[seq].as_py()}")
    missing = sorted(s for s in set(where) - seen if where[s][1])
    if missing:
        return (f"索引缺少流 {missing[0]!r} 的文件（{where[missing[0]][1]} 个条目） / "
                f"the index has no file for stream {missing[0]!r} ({where[missing[0]][1]} entries)")
    return None


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger of 12 streams interleaved (games of 20 events each) under a checkpoint."""
    root = tmp_path_factory.mktemp("index") / "L"
    store.init(root, origin="test.local/index-check")
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(12, 20), led.config.max_entry_bytes))
        led.checkpoint()
    return root


def _records(path: Path) -> tuple[bytes, array]:
    data = path.read_bytes()
    head = 2 + NAME_LEN.unpack_from(data)[0]
    pairs = array("Q")
    pairs.frombytes(data[head:])
    return data[:head], pairs


def _rewrite(path: Path, change: str, other: Path) -> None:
    """Breaks one stream file the way `change` names."""
    head, pairs = _records(path)
    entries, offsets = pairs[0::2], pairs[1::2]
    _, others = _records(other)
    if change == "two entries swapped":
        entries[3], entries[4] = entries[4], entries[3]
    elif change == "an entry repeated":
        entries[5] = entries[4]
    elif change == "an entry of another stream":
        entries[2] = others[2 * 2]
    elif change == "an entry beyond the log":
        entries[-1] = 10**6
    elif change == "the last record dropped":
        entries, offsets = entries[:-1], offsets[:-1]
    elif change == "the first record dropped":
        entries, offsets = entries[1:], offsets[1:]
    elif change == "a record of another stream added":
        entries.append(others[0])
        offsets.append(others[1])
    elif change == "a record beyond the log added":  # a writer's next entry, not yet checked: allowed
        entries.append(10**6)
        offsets.append(0)
    elif change == "an offset changed":
        offsets[7] += 1
    else:
        raise AssertionError(change)
    out = array("Q", [0]) * (2 * len(entries))
    out[0::2], out[1::2] = entries, offsets
    path.write_bytes(head + out.tobytes())


CHANGES = ["two entries swapped", "an entry repeated", "an entry of another stream", "an entry beyond the log",
           "the last record dropped", "the first record dropped", "a record of another stream added",
           "a record beyond the log added", "an offset changed"]


@pytest.mark.parametrize("batch", [1 << 20, 7], ids=["one batch", "batches of 7 records"])
@pytest.mark.parametrize("change", [*CHANGES, "a file deleted", "two files broken", "intact"])
def test_the_index_check_finds_what_a_sort_of_the_log_finds(built: Path, tmp_path: Path, change: str, batch: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    root = tmp_path / "L"
    shutil.copytree(built, root)
    files = sorted(list_stream_files(root))
    coded, starts = stream_codes(root, 10**9)  # every entry's stream and frame
    size = len(coded)
    if change == "a file deleted":
        files[4].unlink()
    elif change == "two files broken":  # the first in the files' order is the one reported
        _rewrite(files[8], "an offset changed", files[0])
        _rewrite(files[5], "two entries swapped", files[0])
    elif change != "intact":
        _rewrite(files[5], change, files[6])
    monkeypatch.setattr(ledger_index, "_INDEX_BATCH", batch)
    for given in (starts, None):
        found = check_index(root, coded, size, given)
        assert found == _sorted_check(root, coded, size, given)
    if change in ("intact", "a record beyond the log added"):
        assert found is None
    elif change != "an offset changed":  # without the frames' starts an offset is not looked at
        assert found is not None
