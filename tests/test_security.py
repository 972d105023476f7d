"""What an insider with write access but no key, a careless operator and hostile input must not
achieve (security issue): each case failed on the code before it was fixed."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from ledger import recorder as record_mod
from ledger import store
from ledger.errors import LedgerError
from ledger.verify import verify
from tests.ledger_support import cli, event_line, game_lines, snapshot


@pytest.fixture()
def ledger(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/security")
    record_mod.record(root, game_lines(3, 4))
    return root


# -- item 2: outputs never destroy the ledger -----------------------------------------------------

def _segment(root: Path) -> Path:
    return next((root / "segments").iterdir())


@pytest.mark.parametrize("command", [
    ["export", "--jsonl", "{segment}"],
    ["export", "--jsonl", "{ledger}/signer.key"],
    ["show", "--game", "g0", "--svg", "{ledger}/signer.key"],
    ["prove", "--stream", "g0", "--out", "{ledger}/checkpoints/new.note"],
    ["prove", "--stream", "g0", "--out", "{ledger}/signer.pub"],
    ["report", "--game", "g0", "--out", "{ledger}/ledger.json"],
    ["export", "--parquet", "{ledger}/tile"],
])
def test_no_output_option_writes_inside_a_ledger(ledger: Path, command: list[str]) -> None:
    before = snapshot(ledger)
    args = [a.format(segment=_segment(ledger), ledger=ledger) for a in command]
    result = cli(*args[:1], "--ledger", str(ledger), *args[1:], "--force")
    assert result.exit_code == 2 and "lies inside the ledger" in result.stderr, result.output
    assert snapshot(ledger) == before


def test_a_symlink_into_the_ledger_is_refused(ledger: Path, tmp_path: Path) -> None:
    link = tmp_path / "out.jsonl"
    link.symlink_to(ledger / "signer.key")
    before = snapshot(ledger)
    result = cli("export", "--ledger", str(ledger), "--jsonl", str(link), "--force")
    assert result.exit_code == 2 and "is a symbolic link" in result.stderr
    assert snapshot(ledger) == before


def test_an_existing_output_is_kept_unless_forced(ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "entries.jsonl"
    out.write_text("keep me\n")
    result = cli("export", "--ledger", str(ledger), "--jsonl", str(out))
    assert result.exit_code == 2 and "exists; pass --force" in result.stderr and out.read_text() == "keep me\n"
    assert cli("export", "--ledger", str(ledger), "--jsonl", str(out), "--force").exit_code == 0
    assert len(out.read_text().splitlines()) == 12
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- item 3: a contract-valid event never breaks the audit --------------------------------------------

@pytest.mark.parametrize(("field", "value", "message"), [
    ("ts", 2**63, "Expected `int` <= 253402300799999 - at `$.ts`"),
    ("ms", 2**63, "Expected `int` <= 9007199254740991 - at `$.ms`"),
    ("move_seq", -1, "Expected `int` >= 0 - at `$.move_seq`"),
    ("move_seq", 2**64, "Expected `int` <= 9223372036854775807 - at `$.move_seq`"),
])
def test_integers_are_bounded_by_the_contract(ledger: Path, field: str, value: int, message: str) -> None:
    before = snapshot(ledger)
    fields: dict[str, Any] = {field: value}
    line = event_line("g9", 0, **fields)
    result = cli("record", "--ledger", str(ledger), "-", input=line)
    assert result.exit_code == 1 and f"line 1: {message}" in result.stderr, result.stderr
    assert snapshot(ledger) == before


# -- item 6: co-signing ---------------------------------------------------------------------------------

def test_cosign_is_once_per_key_and_a_key_name_never_becomes_a_path(ledger: Path, tmp_path: Path) -> None:
    key = tmp_path / "arbiter.key"
    assert cli("keygen", "--name", "../signer", "--out", str(key)).exit_code == 0  # a valid C2SP name, not a path
    for _ in range(2):
        assert cli("cosign", "--ledger", str(ledger), "--key", str(key), "--size", "12").exit_code == 0
    note = (ledger / "checkpoints" / f"{12:020d}.note").read_text()
    assert note.count("— ../signer ") == 1
    assert (ledger / "signer.pub").read_text().startswith("test.local/security+")
    assert [p.suffix for p in (ledger / "witnesses").iterdir()] == [".pub"]
    assert verify(ledger).ok


@pytest.mark.parametrize("name", ["arbiter zhang", "arbiter+zhang", "arbiter\nzhang", ""])
def test_key_names_a_signed_note_would_reject_are_refused(tmp_path: Path, name: str) -> None:
    result = cli("keygen", "--name", name, "--out", str(tmp_path / "k.key"))
    assert result.exit_code == 1 and "is not valid for a signed note" in result.stderr
    assert not list(tmp_path.iterdir())


def test_a_removed_cosignature_or_witness_folder_is_detected(ledger: Path, tmp_path: Path) -> None:
    """The log records every witness; verify trusts the record, not the folder."""
    key = tmp_path / "arbiter.key"
    assert cli("keygen", "--name", "arbiter-zhang", "--out", str(key)).exit_code == 0
    assert cli("cosign", "--ledger", str(ledger), "--key", str(key), "--size", "12").exit_code == 0
    for path in (ledger / "witnesses").iterdir():
        path.unlink()
    (ledger / "witnesses").rmdir()
    assert verify(ledger).ok  # the key is in the log; the folder was only a copy
    note = ledger / "checkpoints" / f"{12:020d}.note"
    note.write_text("".join(line for line in note.read_text().splitlines(keepends=True) if "arbiter-zhang" not in line))
    report = verify(ledger)
    assert not report.ok
    assert report.error is not None
    assert "records 'arbiter-zhang' as a witness of checkpoint 12, but that checkpoint carries no valid co-signature" in report.error


# -- item 8: appended but not checkpointed --------------------------------------------------------------

def test_record_that_cannot_sign_says_so_and_exits_4(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ledger import store as store_mod

    def no_room(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_mod, "write_checkpoint", no_room)
    result = cli("record", "--ledger", str(ledger), "-", input=event_line("g9", 0))
    assert result.exit_code == 4
    assert "13 entries are appended and durable, but no checkpoint covers them yet" in result.stderr
    monkeypatch.undo()
    again = cli("record", "--ledger", str(ledger), "-", input=b"")
    assert again.exit_code == 0 and verify(ledger).ok and verify(ledger).checkpoints == 3


# -- items 10, 12, 13: clear errors instead of tracebacks; keys; duplicate keys ------------------------------

def test_a_fifo_in_place_of_a_segment_is_refused_not_waited_on(ledger: Path) -> None:
    seg = _segment(ledger)
    seg.rename(seg.with_name("kept"))
    os.mkfifo(seg)
    result = cli("verify", "--ledger", str(ledger))
    assert result.exit_code == 1 and "is not a regular file" in result.stderr


@pytest.mark.parametrize(("path", "content", "message"), [
    ("signer.pub", b"\xff\xfe", "is not UTF-8 text"),
    ("signer.pub", b"garbage", "malformed verifier key"),
    ("ledger.json", b"{", "is not valid ledger settings"),
])
def test_damaged_small_files_give_clear_errors(ledger: Path, path: str, content: bytes, message: str) -> None:
    (ledger / path).write_bytes(content)
    result = cli("verify", "--ledger", str(ledger))
    assert result.exit_code == 1 and message in result.stderr and "Traceback" not in result.output


def test_a_changed_ledger_json_is_detected(ledger: Path) -> None:
    """Item 14: every checkpoint binds the settings by an extension line."""
    config = json.loads((ledger / "ledger.json").read_text())
    config["max_entry_bytes"] = 16 * 1024 * 1024
    (ledger / "ledger.json").write_text(json.dumps(config))
    with pytest.raises(LedgerError, match="ledger.json was changed after checkpoint 12 signed it"):
        record_mod.record(ledger, [event_line("g9", 0)])


def test_keygen_never_overwrites(tmp_path: Path) -> None:
    assert cli("keygen", "--name", "a", "--out", str(tmp_path / "k.pub")).exit_code == 2
    assert not list(tmp_path.iterdir())
    assert cli("keygen", "--name", "a", "--out", str(tmp_path / "k.key")).exit_code == 0
    before = (tmp_path / "k.pub").read_text()
    result = cli("keygen", "--name", "b", "--out", str(tmp_path / "k.key"))
    assert result.exit_code == 2 and "exists" in result.stderr and (tmp_path / "k.pub").read_text() == before


def test_init_is_atomic_and_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        assert cli("init", "--ledger", str(tmp_path / "l")).exit_code == 0
    finally:
        os.umask(old)
    assert oct((tmp_path / "l").stat().st_mode & 0o777) == oct(0o750)
    assert oct((tmp_path / "l" / "segments").stat().st_mode & 0o777) == oct(0o750)
    assert oct((tmp_path / "l" / "signer.key").stat().st_mode & 0o777) == oct(0o600)
    assert [p.name for p in tmp_path.iterdir()] == ["l"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert "with files in it and not a ledger" in cli("init", "--ledger", str(tmp_path / "other")).stderr
    assert "not the working directory" in cli("init", "--ledger", "").stderr


@pytest.mark.parametrize(("line", "message"), [
    (b'{"kind":"game.move_time","stream":"evil","stream":"g","seq":0,"ts":1,"seat":0,"ms":5}', "Duplicate key 'stream' in an object"),
    (b'\xef\xbb\xbf{"kind":"game.move_time","stream":"g","seq":0,"ts":1,"seat":0,"ms":5}', "byte order mark (BOM)"),
    (b'{"kind":"game.move_time","stream":"g","seq":0,"ts":1,"seat":0,"ms":5,"x":' + b"[" * 2000 + b"]" * 2000 + b"}",
     "line 1: "),
])
def test_ambiguous_or_hostile_json_is_refused_by_name(ledger: Path, line: bytes, message: str) -> None:
    before = snapshot(ledger)
    result = cli("record", "--ledger", str(ledger), "-", input=line)
    assert result.exit_code == 1 and message in result.stderr and "Traceback" not in result.output
    assert snapshot(ledger) == before


def test_an_overlong_line_is_refused_before_it_is_read_whole(ledger: Path, tmp_path: Path) -> None:
    """Item 11: the reader stops at the contract's limit instead of holding a 300 MB line."""
    big = tmp_path / "big.jsonl"
    big.write_bytes(event_line("g9", 0) + b"\n" + b"x" * (1 << 20) + b"\n")
    result = cli("record", "--ledger", str(ledger), str(big))
    assert result.exit_code == 1 and "line 2: line is longer than 262146 bytes" in result.stderr


def test_a_batch_that_would_overflow_a_segment_starts_a_new_one(tmp_path: Path) -> None:
    """A batch stays in one segment (its commit mark makes it all or nothing), so a segment
    holds at most `segment_bytes` unless one batch alone is larger."""
    root = tmp_path / "l"
    store.init(root, segment_bytes=4096)
    for start in range(0, 60, 10):
        record_mod.record(root, game_lines(2, 10, start=start))
    sizes = [p.stat().st_size for p in sorted((root / "segments").iterdir())]
    assert len(sizes) > 3 and max(sizes) <= 4096
    assert verify(root).ok and verify(root).size == 120


def test_fuzz_record_never_crashes_and_never_half_appends(ledger: Path) -> None:
    """Random byte mutations of valid lines: each is either recorded whole or refused with a
    message naming the line, the ledger unchanged (MATCHLEDGER_FUZZ_CASES for more)."""
    seed = int(os.environ.get("MATCHLEDGER_FUZZ_SEED", random.randrange(1 << 30)))
    cases = int(os.environ.get("MATCHLEDGER_FUZZ_CASES", "60"))
    print(f"seed={seed} cases={cases}")
    rng = random.Random(seed)
    for case in range(cases):
        line = bytearray(event_line("fz", 0, ms=rng.randrange(10_000)))
        for _ in range(rng.randrange(1, 4)):
            line[rng.randrange(len(line))] = rng.choice(b'{}[]",:0123456789-eE.tfnul\\ \xff\x00')
        before = snapshot(ledger)
        result = cli("record", "--ledger", str(ledger), "-", input=bytes(line))
        assert "Traceback" not in result.output, f"seed {seed} case {case}: {bytes(line)!r}"
        if result.exit_code != 0:
            assert result.stderr.startswith("error: 第 1 行 line 1: ") and snapshot(ledger) == before, f"seed {seed} case {case}"
        else:
            assert verify(ledger).ok
            ledger_copy = snapshot(ledger)
            assert ledger_copy != before or "already present" in result.stdout
            store_line = cli("export", "--ledger", str(ledger), "--jsonl", str(ledger.parent / f"x{case}.jsonl"))
            assert store_line.exit_code == 0
            break  # the stream now has seq 0; later cases would be duplicates or conflicts


# -- items 7 and 9: the query layer ------------------------------------------------------------------

@pytest.fixture(scope="module")
def game_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("q") / "ledger"
    assert cli("simulate", "checkers", "--ledger", str(root), "--games", "2", "--seed", "5").exit_code == 0
    return root


@pytest.mark.parametrize("sql", ["EXPLAIN ANALYZE CREATE OR REPLACE VIEW moves AS SELECT 1", "EXPLAIN ANALYZE DROP VIEW moves",
                                 "EXPLAIN INSERT INTO events SELECT * FROM events"])
def test_explain_of_anything_but_a_select_is_refused(game_ledger: Path, sql: str) -> None:
    result = cli("query", "--ledger", str(game_ledger), sql)
    assert result.exit_code == 2 and "only read-only queries are allowed" in result.stderr
    assert cli("query", "--ledger", str(game_ledger), "EXPLAIN ANALYZE SELECT count(*) FROM moves").exit_code == 0


def test_a_runaway_query_stops_at_its_timeout(game_ledger: Path) -> None:
    result = cli("query", "--ledger", str(game_ledger), "--timeout", "0.5", "SELECT count(*) FROM range(100000000000) a")
    assert result.exit_code == 2 and "query stopped after 0.5 s (--timeout)" in result.stderr


def test_an_unsupported_statement_is_a_clear_error(game_ledger: Path) -> None:
    result = cli("query", "--ledger", str(game_ledger), "UPDATE EXTENSIONS")
    assert result.exit_code == 2 and "Traceback" not in result.output and result.stderr.startswith("error: ")


def _export(ledger: Path, out: Path) -> dict:
    assert cli("export", "--ledger", str(ledger), "--parquet", str(out)).exit_code == 0
    return json.loads((out / "manifest.json").read_text())


def test_a_changed_export_with_a_recomputed_manifest_is_refused(game_ledger: Path, tmp_path: Path) -> None:
    import hashlib

    out = tmp_path / "pq"
    manifest = _export(game_ledger, out)
    victim = out / manifest["files"][0]["path"]
    victim.write_bytes(victim.read_bytes() + b"\0")
    manifest["files"][0]["sha256"] = hashlib.sha256(victim.read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))
    result = cli("query", "--parquet", str(out), "--key", str(game_ledger / "signer.pub"), "SELECT 1")
    assert result.exit_code == 1 and "manifest.note is not the signature of this manifest.json" in result.stderr
    assert cli("query", "--parquet", str(out), "SELECT 1").exit_code == 2  # no key: nothing is trusted


def test_an_export_path_outside_the_export_is_refused(game_ledger: Path, tmp_path: Path) -> None:
    import hashlib

    from audit.lake.export import MANIFEST_FORMAT, load_parquet
    from ledger.notes import Signer, Verifier, sign_note

    out = tmp_path / "pq"
    manifest = _export(game_ledger, out)
    manifest["tables"].append("../outside/evil")
    data = json.dumps(manifest).encode()
    (out / "manifest.json").write_bytes(data)
    signer = Signer.load(game_ledger / "signer.key")  # even a manifest signed by the key names no path outside
    (out / "manifest.note").write_text(sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))
    with pytest.raises(ValueError, match=r"names table '../outside/evil', which no export has"):
        load_parquet(out, Verifier.load(game_ledger / "signer.pub"))



def test_an_event_the_contract_now_refuses_is_a_finding_not_a_crash(game_ledger: Path, tmp_path: Path) -> None:
    """Item 3: a log recorded before the bounds existed may hold ts ≥ 2⁶³; the audit reports it and stops cleanly."""
    import shutil

    from schemas import encode
    from schemas.common import MoveTimeUsed

    root = tmp_path / "old"
    shutil.copytree(game_ledger, root)
    old = MoveTimeUsed(stream="x1", seq=0, ts=2**63, seat=0, ms=5)  # built, not decoded: no bound is checked
    with store.Ledger.open(root) as led:
        led.append([store.Pending(1, old, encode(old))])
        led.checkpoint()
    result = cli("audit", "--ledger", str(root), "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["entry"] == verify(root).size - 1 and finding["seq"] is None  # an entry, never a seq (issue 30 point 10)
    assert "cannot be read under this version's contract (Expected `int` <= 253402300799999 - at `$.ts`)" in finding["message"]
