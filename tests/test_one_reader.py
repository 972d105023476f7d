"""One reader (issue 29.1): every module outside the writer reads the log through `ledger/reader.py`'s
`LogReader`; none opens `segments/`, parses frames or imports a reader it replaced. And the ledger's
facade (issue 29.2) holds the names pinned here: growing it is a decision, made in this file.

The structure is read with `ast` from the source (as tests/test_layering.py), imports inside
functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ledger
from ledger import Ledger, LogReader, Pending, init
from ledger.fastscan import frame_batch
from ledger.index import read_head
from ledger.layout import SEGMENTS
from ledger.segments import list_segments
from schemas import decode, encode
from tests.ledger_support import cli, committed_entries, event_line, flat

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("ledger", "audit", "replay", "bench", "schemas")

WRITER_SIDE = {
    "ledger/reader.py": "the reader itself",
    "ledger/frames.py": "the frame parser behind the reader",
    "ledger/segments.py": "the frame format and the segment writer",
    "ledger/fastscan.py": "the C scanner and its Python twin, behind the reader",
    "ledger/layout.py": "names the ledger's files",
    "ledger/entries.py": "EntryReader, the reader's position cache over the segments (entry bundles, a partial tile's leaves)",
    "ledger/tlog.py": "entry bundles, cut from the entries EntryReader reads",
    "ledger/store.py": "the writer's open, recovery and append",
    "ledger/verify.py": "checks the raw frames, by design",
    "ledger/group_commit.py": "the writer reads back entries it committed and has not signed yet (a re-send's receipt)",
    "ledger/tiles.py": "the writer computes a partial tile from committed entries before it signs them",
    "ledger/commitments.py": "the writer's checkpoint history checks the frame positions it records",
    "ledger/bundle.py": "the proof builder reads a stream for the size it proves (frames.committed_streams, the code "
                        "LogReader.stream runs); the reader checks streams with its proofs, so it cannot import the reader",
    "audit/simulator/faults.py": "the bad-byte drill edits a segment as an insider with write access would",
}
"""Product modules that may open segments/ or call the frame parser, and why."""

FRAME_PARSER = {
    "ledger.segments": {"iter_frames", "list_segments", "segment_path"},
    "ledger.fastscan": {"scan_leaves", "scan_file", "segment_packed"},
    "ledger.frames": {"iter_packed", "packed_segments", "segment_sizes", "committed_streams", "indexed_streams", "read_frame",
                      "read_tail", "interval_keys", "stream_codes", "committed_end", "open_regular", "check_frame_ends"},
    "ledger.layout": {"SEGMENTS"},
    "ledger.entries": {"EntryReader", "leaf_hashes_of"},
}
OLD_READERS = {"read_entries", "iter_entries", "iter_payloads", "stream_entries", "read_streams", "read_stream_entries", "read_events",
               "read_stream_events", "signed_events", "signed_stream", "check_signed", "newest_signed", "signed_extent", "signed_size"}
OLD_MODULES = {"ledger.read", "ledger.signed"}

TESTS_RAW = {
    "tests/ledger_support.py": "committed_entries: the attacks' unsigned tail, which LogReader never shows",
    "tests/test_ledger_tiles.py": "tests EntryReader's position cache itself",
    "tests/test_fastscan.py": "tests the scanner itself",
}
"""Test modules that may call the reader's speed code or the parser's readers directly (tests that
corrupt a ledger may open segments/ to do it: that is an attack, not a reading)."""

FACADE = {
    "AppendResult", "Ledger", "Pending", "init", "record",
    "LogReader",
    "BundleError", "Checkpoint", "EvidenceBundle", "Receipt", "VerifyReport", "check_bundle", "check_receipt", "newest_checkpoint",
    "prove", "verify",
    "Signer", "Verifier", "load_verifier", "pinned_key",
    "check_output", "write_output",
    "LedgerCorrupt", "LedgerError", "LedgerNotFound",
}


def _sources(*packages: str) -> list[tuple[str, ast.AST]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8")))
            for package in packages for p in sorted((ROOT / package).rglob("*.py")) if ".venv" not in p.parts]


def _imports(tree: ast.AST) -> list[tuple[str, str]]:
    """(module, name) of every `from X import name` and `import X` (name "") in a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
    return found


def _raw_reads(tree: ast.AST) -> list[str]:
    """What a module does that only the reader and the writer may: the frame parser's names it imports
    (or reaches through its module), and `segments` spelt as a path."""
    found = [f"{m}.{n}" for m, n in _imports(tree) if n in FRAME_PARSER.get(m, ())]
    modules = {alias.asname or alias.name.split(".")[-1]: f"ledger.{alias.name}" for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module == "ledger" for alias in node.names}
    found += [f"{modules[n.value.id]}.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
              and n.attr in FRAME_PARSER.get(modules.get(n.value.id, ""), ())]
    found += [f"path {n.value!r}" for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ("segments", "segments/")]
    return found


def _old_reads(tree: ast.AST) -> list[str]:
    found = [f"{m}.{n}" if n else m for m, n in _imports(tree) if m in OLD_MODULES or (m.startswith("ledger") and n in OLD_READERS)]
    found += [f"ledger.{n}" for m, n in _imports(tree) if m == "ledger" and f"ledger.{n}" in OLD_MODULES]
    return found


def test_only_the_reader_and_the_writer_read_frames() -> None:
    """Issue 29.1: one door. No product module but the reader and the listed writer-side ones opens
    segments/ or calls the frame parser (segments.iter_frames, the fastscan scans, frames' readers)."""
    offending = {path: found for path, tree in _sources(*PRODUCT) if path not in WRITER_SIDE and (found := _raw_reads(tree))}
    assert offending == {}


def test_no_module_imports_a_reader_the_one_reader_replaced() -> None:
    """Issue 29.1: read_entries, read_events, signed_events … are gone; nothing brings them back."""
    offending = {path: found for path, tree in _sources(*PRODUCT, "tests") if (found := _old_reads(tree))}
    assert offending == {}
    assert not (ROOT / "ledger" / "read.py").exists() and not (ROOT / "ledger" / "signed.py").exists()


def test_tests_read_through_the_reader_too() -> None:
    """Issue 29.1: a test that reads the log reads it as a user would; only the listed ones reach past the door."""
    found = {}
    for path, tree in _sources("tests"):
        reached = [f"{m}.{n}" for m, n in _imports(tree)
                   if n in {"EntryReader", "leaf_hashes_of", "iter_packed", "packed_segments", "committed_streams", "indexed_streams"}]
        if reached and path not in TESTS_RAW:
            found[path] = reached
    assert found == {}


def test_the_exceptions_are_still_needed() -> None:
    """The lists above may only shrink: an exception that no longer reads raw frames is removed."""
    sources = dict(_sources(*PRODUCT, "tests"))
    stale = [path for path in WRITER_SIDE if path not in sources or not _raw_reads(sources[path]) and path not in (
        "ledger/frames.py", "ledger/segments.py", "ledger/fastscan.py", "ledger/layout.py")]
    assert stale == []


def test_the_checker_finds_a_raw_read() -> None:
    """The checker itself, on a module that parses frames the old way."""
    tree = ast.parse("from ledger.segments import iter_frames\nfrom ledger import frames\nframes.iter_packed(root, 0)\n"
                     "p = root / 'segments'\nfrom ledger.read import read_events\n")
    assert _raw_reads(tree) == ["ledger.segments.iter_frames", "ledger.frames.iter_packed", "path 'segments'"]
    assert _old_reads(tree) == ["ledger.read.read_events"]


def test_the_facade_holds_the_pinned_names() -> None:
    """Issue 29.2: `ledger`'s public surface is what callers outside ledger/ need (about 25 names);
    a name added or dropped is a decision made here."""
    assert set(ledger.__all__) == FACADE and len(ledger.__all__) == len(FACADE)
    assert all(hasattr(ledger, name) for name in FACADE)
    assert not any(hasattr(ledger, name) for name in ("flip_byte", "EntryReader", "read_events", "signed_events", "Writer"))


# -- the reader's verbs -----------------------------------------------------------------------------

def _ledger(tmp_path: Path, signed: int, unsigned: int) -> Path:
    """A ledger with `signed` entries under its newest checkpoint and `unsigned` committed after it
    (appended without a checkpoint, as a crash before the note leaves them)."""
    root = tmp_path / "l"
    init(root)
    events = [decode(event_line(f"g{n % 3}", n // 3)) for n in range(signed + unsigned)]
    with Ledger.open(root) as led:
        led.append([Pending(0, e, encode(e)) for e in events[:signed]], checkpoint=False)
        led.checkpoint()
        if unsigned:
            led.append([Pending(0, e, encode(e)) for e in events[signed:]], checkpoint=False)
    return root


def test_the_reader_never_reads_past_the_signed_size(tmp_path: Path) -> None:
    """DESIGN.md "Nothing unsigned counts": size() is the newest verified checkpoint's; entries,
    stream, events and the packed read stop there, and unsigned() counts what follows."""
    root = _ledger(tmp_path, 30, 7)
    reader = LogReader(root)
    assert (reader.size(), reader.unsigned(), reader.extent()) == (30, 7, (30, 7))
    committed = committed_entries(root)
    assert len(committed) == 37
    assert list(reader.entries()) == committed[:30]
    assert list(reader.entries(25, 100)) == committed[25:30] and list(reader.entries(40)) == []
    assert list(reader.entries(3, 4)) == committed[3:7] and list(reader.entries(3, 0)) == []
    g1 = [(i, data) for i, data in committed if decode(data).stream == "g1"]
    assert list(reader.stream("g1")) == [item for item in g1 if item[0] < 30]
    assert list(reader.stream("g1", after=2, upto=20)) == [item for item in g1 if item[0] < 20][2:]
    assert list(reader.stream("g1", upto=10**6)) == [item for item in g1 if item[0] < 30]
    assert list(reader.stream("nothing")) == []
    assert [e.seq for e in reader.events("g1")] == list(range(10))
    assert len(reader.packed()) == 30 and reader.packed().unsigned == 7 and len(list(reader.events())) == 30
    assert reader.check(reader.packed()).size == 30


def test_the_reader_reads_the_whole_log_and_a_run_alike(tmp_path: Path) -> None:
    """The packed scan (the whole log, several segments) and the position cache (a run away from the
    start) are two ways behind one verb: they give the same entries."""
    root = tmp_path / "l"
    init(root, segment_bytes=1 << 20)
    lines = [decode(event_line(f"g{n % 7}", n // 7, kind="game.penalty", seat=0, card="red", reason="x" * 300)) for n in range(9000)]
    with Ledger.open(root) as led:
        for lo in range(0, len(lines), 1000):
            led.append([Pending(0, e, encode(e)) for e in lines[lo:lo + 1000]], checkpoint=False)
        led.checkpoint()
    reader = LogReader(root)
    whole = list(reader.entries())
    assert len(whole) == 9000 and [i for i, _ in whole] == list(range(9000))
    assert list(reader.entries(4000, 4500)) == whole[4000:8500]
    assert list(reader.entries(8990, 5)) == whole[8990:8995]
    assert len(list_segments(root / SEGMENTS)) > 2
    assert [d for _, d in whole[:3]] == [encode(e) for e in lines[:3]]


def test_a_stream_past_the_index_head_is_read_from_the_frames(tmp_path: Path) -> None:
    """Issue 33 through the reader: the index a service flushes lags what is committed and signed;
    `stream` reads the index to its head, then the frames after it, up to the signed size."""
    root = _ledger(tmp_path, 12, 0)
    with Ledger.open(root) as led:
        more = [decode(event_line("g0", 4 + n)) for n in range(3)]
        led.append([Pending(0, e, encode(e)) for e in more], checkpoint=False)
        led.checkpoint(index=False)  # signed, the index on disk not flushed (a running service between flushes)
        head = read_head(root)
        reader = LogReader(root)
        assert head is not None and head.size == 12 < reader.size() == 15
        assert [decode(d).seq for _, d in reader.stream("g0")] == list(range(7))
        assert [i for i, _ in reader.stream("g0", after=4)] == [12, 13, 14]
        assert [decode(d).seq for _, d in reader.stream("g0", upto=13)] == list(range(5))


def test_an_edited_signed_entry_is_refused_by_the_checked_reads(tmp_path: Path) -> None:
    """Issue 28.6 through the reader: check (the whole log) and proved_stream (one stream) refuse an
    entry edited inside the signed range, naming it."""
    root = _ledger(tmp_path, 30, 0)
    edited = [data.replace(b'"ms":504', b'"ms":904') if i == 14 else data for i, data in committed_entries(root)]
    assert decode(edited[14]).stream == "g2" and edited[14] != committed_entries(root)[14][1]  # g2's seq 4: its key unchanged
    _, path = list_segments(root / SEGMENTS)[0]
    path.write_bytes(frame_batch(0, edited, True))  # re-framed with good CRCs, as an insider would
    reader = LogReader(root)
    with pytest.raises(ledger.LedgerCorrupt, match="the signed range was changed: entry 14 differs"):
        reader.check(reader.packed())
    with pytest.raises(ledger.LedgerCorrupt, match="stream 'g2' does not match the signed tree"):
        reader.proved_stream("g2")
    with pytest.raises(ledger.LedgerCorrupt):
        reader.checked_events()
    entries, checkpoint = reader.proved_stream("g1")
    assert checkpoint.size == 30 and [decode(d).seq for d in entries] == list(range(10))


def test_one_trust_line_says_the_signed_size_and_the_unsigned_count(tmp_path: Path) -> None:
    """Issue 29.1: the trust line and the count of unsigned entries are one line, built from the
    reader, zh-Hans first; --json carries the count as `trust.unsigned`."""
    root = _ledger(tmp_path, 30, 7)
    result = cli("replay", "--ledger", str(root))
    lines = [line for line in result.output.splitlines() if "verified against the signed checkpoint" in line]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("已核对至签名检查点") and "最新签名检查点之后 7 个未签名条目不计" in lines[0]
    assert "size 30" in lines[0] and "the 7 unsigned entries after the newest signed checkpoint are not shown" in flat(lines[0])
    assert sum("未签名条目" in line or "unsigned entries" in line for line in result.output.splitlines()) == 1  # no second note
