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


def test_prove_against_a_cosigned_or_chosen_checkpoint(tmp_path: Path) -> None:
    """Issue 30.13: `prove --cosigned` (or `--size N`) proves a stream against a later checkpoint an
    arbiter co-signed, so the bundle carries that co-signature; a size that does not cover the stream,
    or one never signed, is refused."""
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    assert cli("keygen", "--name", "arbiter-two", "--out", str(tmp_path / "two.key")).exit_code == 0
    _record(root, tmp_path, "ga")
    _record(root, tmp_path, "gb")
    assert cli("cosign", "--ledger", str(root), "--key", str(tmp_path / "two.key")).exit_code == 0
    key, two = ["--key", str(root / "signer.pub")], ["--witness-key", str(tmp_path / "two.pub")]
    for how in (["--cosigned"], ["--size", "10"]):
        bundle = tmp_path / f"ga{len(how)}.json"
        assert cli("prove", "--ledger", str(root), "--stream", "ga", "--out", str(bundle), *how).exit_code == 0
        assert json.loads(bundle.read_text())["checkpoint"].split("\n")[1] == "10"
        checked = cli("check-proof", str(bundle), *key, *two, "--json")
        assert checked.exit_code == 0 and json.loads(checked.stdout)["cosigners"] == ["arbiter-two"], checked.output
    anchored = json.loads((tmp_path / "ga1.json").read_text())  # completeness: the covering checkpoint (5) and its consistency to 10
    assert anchored["anchor"]["checkpoint"].split("\n")[1] == "5" and anchored["head"]["count"] == 5
    for name, change in (("short", lambda b: b["entries"].pop()), ("unanchored", lambda b: b.pop("anchor")),
                         ("forked", lambda b: b["anchor"]["consistency"].reverse())):
        broken = json.loads(json.dumps(anchored))
        change(broken)
        (tmp_path / f"{name}.json").write_text(json.dumps(broken))
        assert cli("check-proof", str(tmp_path / f"{name}.json"), *key).exit_code == 1, name
    plain = tmp_path / "plain.json"
    assert cli("prove", "--ledger", str(root), "--stream", "ga", "--out", str(plain)).exit_code == 0
    assert cli("check-proof", str(plain), *key, *two).exit_code == 1  # the covering checkpoint (5) was not co-signed
    for size, said in (("5", None), ("3", "no checkpoint of size 3"), ("4", "no checkpoint of size 4")):
        result = cli("prove", "--ledger", str(root), "--stream", "gb", "--out", str(tmp_path / f"x{size}.json"), "--size", size)
        if said is None:
            assert result.exit_code == 1 and "does not cover the stream's last entry" in result.stderr, result.output
        else:
            assert result.exit_code == 1 and said in result.stderr, result.output


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
