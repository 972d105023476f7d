"""The persisted tree and index (C2SP tlog-tiles, DESIGN.md ledger/): read by an independent reading
of the spec, opened in constant time, checked by verify, migrated from the earlier layout."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ledger import recorder as record_mod
from ledger import store
from ledger.errors import LedgerCorrupt
from ledger.recorder import validate_lines
from ledger.verify import verify
from tests.ledger_support import cli, event_line, game_lines, snapshot

LEGACY = Path(__file__).parent / "data" / "legacy-ledger"


def _build(root: Path, entries: int, streams: int = 8, batch: int = 1000) -> None:
    store.init(root, origin="test.local/tiles")
    per = entries // streams
    lines = game_lines(streams, per)
    with store.Ledger.open(root) as led:
        for i in range(0, len(lines), batch):
            led.append(validate_lines(lines[i:i + batch], led.config.max_entry_bytes))
        led.checkpoint()


# -- an independent reading of https://c2sp.org/tlog-tiles, written here from the spec ----------

def _spec_path(level: int | str, n: int, width: int | None = None) -> str:
    digits = str(n).zfill(3)
    digits = digits.zfill(-(-len(digits) // 3) * 3)
    parts = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    path = f"tile/{level}/" + "/".join(["x" + p for p in parts[:-1]] + [parts[-1]])
    return path if width is None else f"{path}.p/{width}"


def _spec_hashes(root: Path, level: int, count: int) -> list[bytes]:
    """Reads the first `count` hashes of a level, full tiles then the partial tile of that width."""
    out: list[bytes] = []
    for n in range(-(-count // 256)):
        width = min(256, count - 256 * n)
        name = _spec_path(level, n) if width == 256 else _spec_path(level, n, width)
        data = (root / name).read_bytes()
        assert len(data) == 32 * width, name
        out += [data[i:i + 32] for i in range(0, len(data), 32)]
    return out


def _spec_root(root: Path, size: int) -> bytes:
    """RFC 6962 MTH from the stored tiles, with nodes of heights between tile levels recomputed."""
    levels = [_spec_hashes(root, level, size >> (8 * level)) for level in range((size.bit_length() + 7) // 8)]

    def node(height: int, index: int) -> bytes:
        level, rest = divmod(height, 8)
        hashes = levels[level][index << rest:(index + 1) << rest]
        while len(hashes) > 1:
            hashes = [hashlib.sha256(b"\x01" + hashes[i] + hashes[i + 1]).digest() for i in range(0, len(hashes), 2)]
        return hashes[0]

    edge, start = [], 0
    for height in range(size.bit_length() - 1, -1, -1):
        if size >> height & 1:
            edge.append(node(height, start >> height))
            start += 1 << height
    acc = edge[-1]
    for left in reversed(edge[:-1]):
        acc = hashlib.sha256(b"\x01" + left + acc).digest()
    return acc


def test_tiles_verify_against_the_checkpoint_by_an_independent_reading(tmp_path: Path) -> None:
    """tlog-tiles: full tiles of 256 hashes, partial tiles `.p/W`, level 0 the RFC 6962 leaf hashes."""
    root = tmp_path / "ledger"
    _build(root, 66_000, streams=10, batch=777)
    note = (root / "checkpoint").read_text().split("\n")
    size, signed_root = int(note[1]), base64.b64decode(note[2])
    assert size == 66_000 and (root / _spec_path(2, 0, 1)).is_file()  # 65,536 leaves fill one level-1 tile
    assert _spec_root(root, size) == signed_root
    entries = [json.dumps(json.loads(line), separators=(",", ":")) for line in game_lines(10, 6_600)[:256]]
    leaves = _spec_hashes(root, 0, 256)
    first = (root / "segments").iterdir().__next__().read_bytes()
    assert leaves[0] == hashlib.sha256(b"\x00" + first[16:16 + int.from_bytes(first[:4], "little") & 0x7FFFFFFF]).digest()
    assert len(entries) == len(leaves)


# -- constant-time open ------------------------------------------------------------------------------

def _bytes_read_by_record(root: Path, line: bytes) -> int:
    """Bytes this process reads through the kernel while one event is recorded (/proc/self/io rchar)."""
    def rchar() -> int:
        return int(next(x for x in Path("/proc/self/io").read_text().split("\n") if x.startswith("rchar")).split()[1])

    before = rchar()
    result = record_mod.record(root, [line])
    after = rchar()
    assert result.appended == 1
    return after - before - 64  # the reading of /proc/self/io itself


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io to count bytes read")
def test_recording_one_event_reads_the_same_bytes_at_1k_and_100k_entries(tmp_path: Path) -> None:
    """DESIGN.md ledger/ (persisted tree and index): an append costs the same on the first day and at
    the end of a season. Opening reads one partial tile per tile level (at most 8 KiB each), the
    index head and the stream's own index; the larger log differs only by its wider level-1 tile."""
    small, large = tmp_path / "small", tmp_path / "large"
    _build(small, 1_024 + 100)
    _build(large, 98_304 + 100)  # 384 full level-0 tiles: the same level-0 partial width as the small one
    for root in (small, large):
        record_mod.record(root, [event_line("warm", 0)])  # the first open of a process loads code
    reads = {name: _bytes_read_by_record(root, event_line("new-stream", 0)) for name, root in (("small", small), ("large", large))}
    print("bytes read:", reads)
    assert reads["large"] <= reads["small"] + 8 * 1024 and reads["large"] < 32 * 1024


# -- tampering and damage in the new files ---------------------------------------------------------------

@pytest.fixture()
def ledger(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/tiles")
    for part in range(3):  # checkpoints at 200, 400 and 600
        with store.Ledger.open(root) as led:
            led.append(validate_lines(game_lines(4, 50, start=50 * part), led.config.max_entry_bytes))
            led.checkpoint()
    return root


def test_a_flipped_byte_in_a_full_tile_is_named_by_verify(ledger: Path) -> None:
    tile = ledger / _spec_path(0, 1)
    data = bytearray(tile.read_bytes())
    data[32 * 5 + 3] ^= 1
    tile.write_bytes(bytes(data))
    report = verify(ledger)
    assert not report.ok and report.error == "tile/0/001: hash 5 differs from its entries' (node 261 at height 0)"


def test_a_flipped_byte_in_the_right_edge_is_refused_by_the_writer(ledger: Path) -> None:
    """The signer only extends the tree it last signed: a stored edge that does not give the signed root is refused."""
    tile = ledger / _spec_path(0, 2, 88)
    data = bytearray(tile.read_bytes())
    data[0] ^= 1
    tile.write_bytes(bytes(data))
    before = snapshot(ledger)
    with pytest.raises(LedgerCorrupt, match="the stored tiles give root .* at size 600, the signed checkpoint"):
        record_mod.record(ledger, [event_line("late", 0)])
    assert snapshot(ledger) == before
    assert not verify(ledger).ok


def test_a_flipped_byte_in_the_index_is_named_by_verify(ledger: Path) -> None:
    from ledger.index import stream_path

    path = stream_path(ledger, "g1")
    data = bytearray(path.read_bytes())
    data[-16] ^= 1  # the entry index of the stream's last record
    path.write_bytes(bytes(data))
    report = verify(ledger)
    assert not report.ok and (report.error or "").startswith("stream index: 索引给出流 ") and "/ the index gives entry " in (report.error or "")


def test_an_index_pointing_elsewhere_never_acknowledges_a_different_event(ledger: Path) -> None:
    """A re-send is judged by the entry the index names, and that entry's key is checked first."""
    from ledger.index import stream_path

    g0, g1 = stream_path(ledger, "g0").read_bytes(), stream_path(ledger, "g1").read_bytes()
    stream_path(ledger, "g0").write_bytes(g0[:4] + g1[4:])  # g0's records now point at g1's entries
    with pytest.raises(LedgerCorrupt, match="the index gives seq 0 of stream 'g0' here, the entry is seq 0 of 'g1'"):
        record_mod.record(ledger, [event_line("g0", 0)])


def test_signature_laundering_is_refused(ledger: Path, tmp_path: Path) -> None:
    """Security issue, item 1: an insider edits a signed entry (CRC recomputed) and deletes the notes
    covering it; the next writer must not sign over the change, and verify must fail."""
    from ledger import segments

    seg = segments.list_segments(ledger / "segments")[0][1]
    data = bytearray(seg.read_bytes())
    frames = [(off, p.nbytes) for _, off, p, _ in segments.iter_frames(bytes(data), 0)]
    off, length = frames[450]
    payload = bytes(data[off + 16:off + 16 + length]).replace(b'"ts":1', b'"ts":9')
    assert payload != data[off + 16:off + 16 + length]
    word = int.from_bytes(data[off:off + 4], "little")
    forged = segments.frame(450, payload, bool(word & segments.COMMIT))
    data[off:off + len(forged)] = forged
    seg.write_bytes(bytes(data))
    for note in (ledger / "checkpoints").iterdir():
        if int(note.stem) > 400:
            note.unlink()
    shutil.copy(ledger / "checkpoints" / f"{400:020d}.note", ledger / "checkpoint")
    before = snapshot(ledger)
    with pytest.raises(LedgerCorrupt, match="checkpoint notes were removed or rolled back"):
        record_mod.record(ledger, [event_line("late", 0)])
    assert snapshot(ledger) == before
    report = verify(ledger)
    assert not report.ok and "checkpoint notes were removed or rolled back" in (report.error or "")
    (ledger / "index" / "head").unlink()  # the insider removes the head too: the stored tiles still know entry 450
    with pytest.raises(LedgerCorrupt, match="entry 450: 条目与其哈希瓦片.* / the entry differs from the hash stored for it in its tile"):
        record_mod.record(ledger, [event_line("late", 0)])


def test_an_edited_signed_entry_is_never_signed_over(ledger: Path, tmp_path: Path) -> None:
    """Without deleting notes, the writer extends the signed tree and never re-hashes stored entries:
    the new checkpoint still commits to the original entry, so the forged one fails its proof."""
    from ledger import segments

    seg = segments.list_segments(ledger / "segments")[0][1]
    data = bytearray(seg.read_bytes())
    _, off, payload, commit = list(segments.iter_frames(bytes(data), 0))[10]
    forged_payload = bytes(payload).replace(b'"ts":1', b'"ts":9')
    forged = segments.frame(10, forged_payload, commit)
    data[off:off + len(forged)] = forged
    seg.write_bytes(bytes(data))
    record_mod.record(ledger, [event_line("late", 0)])
    assert not verify(ledger).ok
    bundle = tmp_path / "b.json"
    stream = json.loads(forged_payload)["stream"]
    proved = cli("prove", "--ledger", str(ledger), "--stream", stream, "--out", str(bundle))  # checks the bundle before handing it on
    assert proved.exit_code == 1 and "inclusion proof gives root" in proved.stderr and not bundle.exists()


# -- migration -------------------------------------------------------------------------------------------

def test_a_ledger_written_before_tiles_migrates_with_the_same_roots(tmp_path: Path) -> None:
    """A ledger from before this change opens: tiles and index are built once, reported, and every
    checkpoint root is unchanged."""
    root = tmp_path / "legacy"
    shutil.copytree(LEGACY, root)
    (root / "signer.key").chmod(0o600)
    notes_before = {p.name: p.read_bytes() for p in (root / "checkpoints").iterdir()}
    assert not (root / "tile").exists()
    result = record_mod.record(root, [])
    assert result.recovered == ("为早于瓦片和索引写入的 1200 个条目建立了瓦片和索引 / built tiles and index for 1200 entries written before "
                                "they existed; 记录了 4 个检查点各自的结束位置（index/checkpoints） / "
                                "recorded where each of the 4 checkpoints ends (index/checkpoints)")
    assert {p.name: p.read_bytes() for p in (root / "checkpoints").iterdir()} == notes_before
    report = verify(root)
    assert report.ok and report.size == 1200 and report.checkpoints == 4
    assert _spec_root(root, 1200) == base64.b64decode((root / "checkpoint").read_text().split("\n")[2])
    again = record_mod.record(root, [event_line("g0", 300)])
    assert again.recovered is None and again.appended == 1


def test_export_tiles_serves_any_tlog_tiles_client(ledger: Path, tmp_path: Path) -> None:
    """`export --tiles`: a client holding only the public key fetches checkpoint, tiles and entry
    bundles as static files and checks every entry against the signed root."""
    out = tmp_path / "served"
    result = cli("export", "--ledger", str(ledger), "--tiles", str(out), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["size"] == 600
    note = (out / "checkpoint").read_text().split("\n")
    size, signed_root = int(note[1]), base64.b64decode(note[2])
    assert _spec_root(out, size) == signed_root
    entries = []
    for n in range(-(-size // 256)):
        width = min(256, size - 256 * n)
        bundle = (out / _spec_path("entries", n, None if width == 256 else width)).read_bytes()
        while bundle:
            length = int.from_bytes(bundle[:2], "big")
            entries.append(bundle[2:2 + length])
            bundle = bundle[2 + length:]
    leaves = _spec_hashes(out, 0, size)
    assert [hashlib.sha256(b"\x00" + e).digest() for e in entries] == leaves
    assert json.loads(entries[0])["stream"] == "g0"


def test_a_reader_following_the_log_bundle_by_bundle_scans_each_frame_about_once(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """C2SP tlog-tiles entry bundles (the service's `/tile/entries/N`, issue 14 point 6): a witness
    that follows the log fetches bundle 0, 1, 2, … in order. Each read starts where the last one
    ended, so each frame is scanned about once in all, not once per bundle from the segment's start
    (quadratic in the segment's length), and the entries are the stored ones."""
    from ledger import LogReader, entries

    root = tmp_path / "l"
    _build(root, 2600, batch=2600)
    scanned = [0]
    frames = entries.iter_frames

    def counting(data: bytes, first: int):  # noqa: ANN202
        for frame in frames(data, first):
            scanned[0] += 1
            yield frame

    monkeypatch.setattr(entries, "iter_frames", counting)
    reader, got = entries.EntryReader(root), []
    for n in range(2600 // 256 + 1):
        got += reader.read(256 * n, min(256, 2600 - 256 * n))
    log = LogReader(root).packed()
    assert got == [bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(len(log))]
    assert scanned[0] <= 2600 + 11, scanned  # from the segment's start for each bundle (before): 23,310


# -- the live service's commits: notes appended to one file, partial tiles and the served checkpoint at full checkpoints

def _live_commits(root: Path, commits: int = 6, per: int = 30) -> list[int]:
    """Records 40 entries with a full checkpoint (the head), then `commits` group commits as the
    live service signs them (`checkpoint(index=False)`: each note appended to checkpoints/notes,
    no partial tile and no served file written); closes as a crash would (no full checkpoint).
    Returns each commit's size."""
    store.init(root, origin="test.local/live")
    sizes = []
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(4, 10), led.config.max_entry_bytes))
        led.checkpoint()
        for n in range(commits):
            led.append(validate_lines(game_lines(3, per // 3, start=10 + n * (per // 3)), led.config.max_entry_bytes))
            sizes.append(led.checkpoint(index=False).size)
    return sizes


def _partials(root: Path) -> list[Path]:
    return sorted((root / "tile" / "0" / "000.p").iterdir(), key=lambda p: int(p.name))


def test_partial_tiles_wait_for_the_full_checkpoint_and_are_computed_meanwhile(tmp_path: Path) -> None:
    """The live commits write no partial tile and leave the served `checkpoint` file at the last full
    checkpoint's size, whose tiles are all there (a static tlog-tiles client sees them lag together).
    `hash_tile` answers the newer sizes' partial tiles from the entries meanwhile; the next writer
    (or full checkpoint) writes them and serves the newest note; a partial tile a crash left short is
    rewritten from the entries."""
    from ledger import LogReader
    from ledger.merkle import leaf_hash
    from ledger.tlog import hash_tile

    root = tmp_path / "L"
    sizes = _live_commits(root)
    assert json.loads((root / "index" / "head").read_text())["size"] == 40 and sizes[-1] == 220
    assert [p.name for p in _partials(root)] == ["40"]
    assert (root / "checkpoint").read_text().split("\n")[1] == "40"
    log = LogReader(root).packed()
    leaves = b"".join(leaf_hash(bytes(log.data[log.ends[i]:log.ends[i + 1]])) for i in range(220))
    for size in sizes:
        assert hash_tile(root, 0, 0, size) == leaves[:32 * size]
    report = verify(root)
    assert report.ok, report.error
    assert any("partial tiles are missing or short beyond the index head (entry 40)" in n for n in report.notes), report.notes
    with store.Ledger.open(root) as led:
        assert "rewrote the `checkpoint` file, which lagged the newest note (size 220)" in (led.recovered or "")
        assert led.size == 220
    assert [p.name for p in _partials(root)] == ["40", "220"] and _partials(root)[-1].read_bytes() == leaves
    assert (root / "checkpoint").read_text().split("\n")[1] == "220"
    report = verify(root)
    assert report.ok and not any("partial tiles" in n for n in report.notes), report
    _partials(root)[0].write_bytes(b"")  # a crash's: an earlier partial tile left empty
    assert verify(root).ok
    with store.Ledger.open(root) as led:
        assert "rewrote the partial tiles a crash left short" in (led.recovered or "")
    assert _partials(root)[0].read_bytes() == leaves[:32 * 40]


def test_a_changed_partial_tile_inside_the_signed_range_is_named(tmp_path: Path) -> None:
    """A partial tile that holds other hashes than its entries' (no crash writes those) is named by
    verify, and the writer refuses to extend over it."""
    root = tmp_path / "L"
    _live_commits(root)
    tile = _partials(root)[0]
    data = bytearray(tile.read_bytes())
    data[32 * 30] ^= 1
    tile.write_bytes(bytes(data))
    report = verify(root)
    assert not report.ok and str(report.error).startswith(f"{tile.relative_to(root)}: hash 30 differs from its entries'"), report.error
    with pytest.raises(LedgerCorrupt):
        store.Ledger.open(root)


def test_the_newest_note_is_found_in_the_notes_file_and_a_removed_one_is_named(tmp_path: Path) -> None:
    """The served `checkpoint` file lags the live commits' notes: `index/checkpoints` (synced before
    each note) names the newest, found in checkpoints/notes, which is the newest checkpoint for
    readers and the next writer (which serves it again); notes removed or changed there are named."""
    from ledger.checkpoints import kept_note, newest_checkpoint
    from ledger.notelog import notes_path
    from ledger.store import load_verifier

    root = tmp_path / "L"
    sizes = _live_commits(root)
    assert not any(p.name.endswith(".note") and int(p.name[:-5]) in sizes for p in (root / "checkpoints").iterdir())
    assert getattr(newest_checkpoint(root, load_verifier(root)), "size", None) == sizes[-1]
    assert verify(root).ok
    whole = notes_path(root).read_bytes()
    notes = whole.split(b"\0")[:-1]
    assert [int(n.split(b"\n")[1]) for n in notes] == sizes
    changed = bytearray(whole)
    at = whole.index(notes[-1]) + notes[-1].split(b"\n")[2].index(b"=") - 5 + len(b"\n".join(notes[-1].split(b"\n")[:2])) + 1  # its root
    changed[at] ^= 1
    notes_path(root).write_bytes(bytes(changed))
    with pytest.raises(LedgerCorrupt, match=f"checkpoint of size {sizes[-1]}: signature"):
        newest_checkpoint(root, load_verifier(root))
    report = verify(root)
    assert not report.ok and f"checkpoint of size {sizes[-1]} (checkpoints/notes at byte" in str(report.error), report.error
    notes_path(root).write_bytes(b"".join(n + b"\0" for n in notes[:-2]))  # the two newest notes removed
    with pytest.raises(LedgerCorrupt, match=f"records a checkpoint of size {sizes[-2]}, .* its note is missing"):
        newest_checkpoint(root, load_verifier(root))
    assert not verify(root).ok
    notes_path(root).write_bytes(whole)
    with store.Ledger.open(root) as led:
        assert led.checkpoint_size == sizes[-1]
    assert (root / "checkpoint").read_text() == kept_note(root, sizes[-1])
