"""Evidence as `prove` writes it and `check-proof` reads it: a bundle made against an older
checkpoint carries that checkpoint's co-signatures only (never those of a newer note), and one
loader reads a bundle or a receipt, refusing a file that is neither with its name."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ledger_support import cli, event_line


def _record(root: Path, tmp_path: Path, stream: str) -> None:
    events = tmp_path / f"{stream}.jsonl"
    events.write_bytes(b"".join(event_line(stream, seq) + b"\n" for seq in range(5)))
    assert cli("record", "--ledger", str(root), str(events)).exit_code == 0


def test_a_bundle_against_an_older_checkpoint_carries_only_its_cosignatures(tmp_path: Path) -> None:
    """Arbiter one co-signs the checkpoint at size 5 (stream `ga` complete), arbiter two the later one
    (stream `gb`). `prove --stream ga` proves against size 5, the first checkpoint covering `ga`: its
    note, with one's co-signature and not two's, which belongs to another note and does not travel."""
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    for name in ("one", "two"):
        assert cli("keygen", "--name", f"arbiter-{name}", "--out", str(tmp_path / f"{name}.key")).exit_code == 0
    _record(root, tmp_path, "ga")
    assert cli("cosign", "--ledger", str(root), "--key", str(tmp_path / "one.key")).exit_code == 0
    _record(root, tmp_path, "gb")
    assert cli("cosign", "--ledger", str(root), "--key", str(tmp_path / "two.key")).exit_code == 0
    bundle = tmp_path / "ga.json"
    assert cli("prove", "--ledger", str(root), "--stream", "ga", "--out", str(bundle)).exit_code == 0
    note = json.loads(bundle.read_text())["checkpoint"]
    assert note.split("\n")[1] == "5" and "\n— arbiter-one " in note and "arbiter-two" not in note
    key = ["--key", str(root / "signer.pub")]
    one = cli("check-proof", str(bundle), *key, "--witness-key", str(tmp_path / "one.pub"), "--json")
    assert one.exit_code == 0 and json.loads(one.stdout)["cosigners"] == ["arbiter-one"]
    two = cli("check-proof", str(bundle), *key, "--witness-key", str(tmp_path / "two.pub"))
    assert two.exit_code == 1 and "carries 0 of the 1 co-signatures required; missing: arbiter-two" in two.stderr
    newer = tmp_path / "gb.json"
    assert cli("prove", "--ledger", str(root), "--stream", "gb", "--out", str(newer)).exit_code == 0
    assert cli("check-proof", str(newer), *key, "--witness-key", str(tmp_path / "two.pub")).exit_code == 0


def test_check_proof_names_a_file_that_is_neither_a_bundle_nor_a_receipt(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    for text, said in (("[1, 2]", "not an evidence bundle or a receipt"),
                       ('{"format": "matchledger-receipt/1"}', "not a receipt"),
                       ('{"format": "matchledger-bundle/2", "stream": 3}', "not an evidence bundle")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        result = cli("check-proof", str(bad), "--key", str(root / "signer.pub"))
        assert result.exit_code == 1 and result.stderr.startswith(f"error: {bad}: {said}: "), result.output
