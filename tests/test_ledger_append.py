"""Append rules (per-stream sequence numbers, idempotent re-send, conflicts), bad input refused
with the line and field named and the ledger byte-identical, the writer lock, export and proofs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger import LogReader, store
from ledger import reader as reader_module
from ledger.errors import LedgerLocked
from tests.ledger_support import cli, committed_entries, event_line, game_lines, snapshot


@pytest.fixture()
def ledger(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/ledger")
    return root


def _record(ledger: Path, lines: list[bytes], tmp_path: Path):  # noqa: ANN202
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return cli("record", "--ledger", str(ledger), str(path), "--json")


def test_record_then_identical_resend_is_acknowledged_once(ledger: Path, tmp_path: Path) -> None:
    lines = game_lines(3, 4)
    first = _record(ledger, lines, tmp_path)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout) == {"appended": 12, "duplicates": 0, "size": 12, "recovered": None}
    again = _record(ledger, lines + game_lines(3, 1, start=4), tmp_path)
    assert json.loads(again.stdout) == {"appended": 3, "duplicates": 12, "size": 15, "recovered": None}


def test_record_from_stdin(ledger: Path) -> None:
    result = cli("record", "--ledger", str(ledger), "-", "--json", input=b"\n".join(game_lines(1, 3)))
    assert json.loads(result.stdout)["appended"] == 3


def test_resend_judged_by_canonical_bytes(ledger: Path, tmp_path: Path) -> None:
    """Whitespace and key order do not make a re-send a conflict: the canonical encoding decides."""
    _record(ledger, [event_line("g", 0)], tmp_path)
    reordered = b'{ "ts": 1000, "seq": 0, "stream": "g", "ms": 500, "seat": 0, "kind": "game.move_time" }'
    assert json.loads(_record(ledger, [reordered], tmp_path).stdout) == {"appended": 0, "duplicates": 1, "size": 1, "recovered": None}


BAD_INPUT = [
    ("malformed-json", b'{"kind": "game.move_time",', "第 3 行 line 3: malformed JSON"),
    ("unknown-kind", event_line("g0", 1, kind="game.teleported"), "第 3 行 line 3: Invalid value 'game.teleported' - at `$.kind`"),
    ("unknown-field", event_line("g0", 1, colour="red"), "第 3 行 line 3: Object contains unknown field `colour` - at `$`"),
    ("wrong-type", event_line("g0", 1, ms="fast"), "第 3 行 line 3: Expected `int`, got `str` - at `$.ms`"),
    ("missing-field", b'{"kind":"game.move_time","stream":"g0","seq":1,"seat":0,"ms":5}',
     "第 3 行 line 3: Object missing required field `ts` - at `$`"),
    ("sequence-gap", event_line("g0", 5), "第 3 行 line 3: 字段 `seq`：流 g0 下一个应为第 2 号，收到第 5 号（跳号） / "
                                           "field `seq`: stream 'g0' expects seq 2, got 5 (gap)"),
    ("conflict", event_line("g0", 0, ms=99), "第 3 行 line 3: 字段 `seq`：流 g0 的第 0 号已记录了另一个事件（冲突） / "
                                        "field `seq`: stream 'g0' already holds a different event at seq 0 (conflict)"),
    ("oversized", event_line("g0", 1, kind="game.penalty", seat=0, card="red", reason="x" * 70_000), "第 3 行 line 3: event is"),
]


@pytest.mark.parametrize(("name", "bad", "message"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_is_refused_and_ledger_unchanged(ledger: Path, tmp_path: Path, name: str, bad: bytes, message: str) -> None:
    assert _record(ledger, game_lines(1, 1), tmp_path).exit_code == 0
    before = snapshot(ledger)
    result = _record(ledger, [event_line("g0", 1), event_line("g1", 0), bad, event_line("g0", 2)], tmp_path)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert snapshot(ledger) == before


def test_second_writer_gets_a_clear_error(ledger: Path) -> None:
    with store.Ledger.open(ledger):
        with pytest.raises(LedgerLocked, match=r"is locked by another writer \(pid \d+\)"):
            store.Ledger.open(ledger)


def test_export_then_record_elsewhere_gives_the_same_root(ledger: Path, tmp_path: Path) -> None:
    _record(ledger, game_lines(4, 5), tmp_path)
    out = tmp_path / "export.jsonl"
    assert cli("export", "--ledger", str(ledger), "--jsonl", str(out)).exit_code == 0
    other = tmp_path / "other"
    assert cli("init", "--ledger", str(other)).exit_code == 0
    assert cli("record", "--ledger", str(other), str(out)).exit_code == 0
    roots = [json.loads(cli("verify", "--ledger", str(d), "--json").stdout)["root"] for d in (ledger, other)]
    assert roots[0] == roots[1]


def test_evidence_bundle_verifies_offline_and_detects_edits(ledger: Path, tmp_path: Path) -> None:
    _record(ledger, game_lines(5, 7), tmp_path)
    out = tmp_path / "g3.json"
    assert cli("prove", "--ledger", str(ledger), "--stream", "g3", "--out", str(out)).exit_code == 0
    key = str(ledger / "signer.pub")
    ok = cli("check-proof", str(out), "--key", key, "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["entries"] == 7
    bundle = json.loads(out.read_text())
    bundle["entries"][2]["entry"] = bundle["entries"][2]["entry"].replace('"ms":502', '"ms":9')
    out.write_text(json.dumps(bundle))
    bad = cli("check-proof", str(out), "--key", key)
    assert bad.exit_code == 1 and "entry 13: inclusion proof gives root" in bad.stderr


def test_init_refuses_existing_ledger_and_key_readable_by_others(ledger: Path) -> None:
    assert "already holds a ledger" in cli("init", "--ledger", str(ledger)).stderr
    (ledger / "signer.key").chmod(0o644)
    result = cli("record", "--ledger", str(ledger), "-", input=event_line("g", 0))
    assert result.exit_code == 1 and "is accessible by others (mode 644)" in result.stderr


def test_consistency_between_stored_checkpoints(ledger: Path, tmp_path: Path) -> None:
    """Any two stored checkpoints can be proven consistent (RFC 6962 §2.1.2); a forged one cannot."""
    for start in range(0, 9, 3):
        _record(ledger, game_lines(3, 3, start=start), tmp_path)  # checkpoints at sizes 9, 18, 27
    result = cli("consistency", "--ledger", str(ledger), "--old", "9", "--new", "27", "--json")
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["old"], json.loads(result.stdout)["new"]) == (9, 27)
    assert cli("consistency", "--ledger", str(ledger), "--old", "18").exit_code == 0
    missing = cli("consistency", "--ledger", str(ledger), "--old", "10")
    # a size never signed: misuse (README: 2)
    assert missing.exit_code == 2 and "no checkpoint of size 10; 4 are stored, the nearest: 0, 9, 18, 27" in missing.stderr


def test_ledger_defaults_to_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--ledger defaults to $MATCHLEDGER_LEDGER when it is set."""
    monkeypatch.setenv("MATCHLEDGER_LEDGER", str(tmp_path / "env-ledger"))
    assert cli("init").exit_code == 0
    assert json.loads(cli("record", "-", "--json", input=event_line("g", 0)).stdout)["appended"] == 1
    assert json.loads(cli("verify", "--json").stdout)["size"] == 1


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    """The entry size limit is a ledger setting (default 64 KiB), enforced with the line named."""
    root = tmp_path / "small"
    assert cli("init", "--ledger", str(root), "--max-entry-bytes", "300").exit_code == 0
    big = event_line("g", 0, kind="game.penalty", seat=0, card="red", reason="x" * 400)
    result = cli("record", "--ledger", str(root), "-", input=big)
    assert result.exit_code == 1 and "line 1: event is" in result.stderr and "over the limit of 300" in result.stderr
    bad = cli("init", "--ledger", str(tmp_path / "tiny"), "--max-entry-bytes", "10")
    assert bad.exit_code == 1 and "ledger settings: Expected `int` >= 256 - at `$.max_entry_bytes`" in bad.stderr


def test_reading_while_a_writer_appends_gets_the_entries_listed(ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit's read of the whole log takes each segment up to the size it listed: entries a
    writer appends right after the listing are left for the next read, not refused for want of
    room in the buffer sized by the listing."""
    assert _record(ledger, game_lines(2, 5), tmp_path).exit_code == 0
    list_sizes, appended = reader_module.segment_sizes, [5]

    def listing_then_append(root: Path) -> list[tuple[int, Path, int]]:
        listed = list_sizes(root)
        assert _record(ledger, game_lines(2, 5, start=appended[0]), tmp_path).exit_code == 0
        appended[0] += 5
        return listed

    monkeypatch.setattr(reader_module, "segment_sizes", listing_then_append)
    read = LogReader(ledger).packed()
    monkeypatch.undo()
    stored = [p for _, p in committed_entries(ledger)]
    assert len(read) == 10 and len(stored) > 10
    assert [bytes(read.data[read.ends[i]:read.ends[i + 1]]) for i in range(10)] == stored[:10]
