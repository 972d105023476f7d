"""Audit certificates (issue 32.3, DESIGN.md "Nothing unsigned counts"): `audit --certificate` writes
an in-toto statement with a SLSA VSA predicate in a DSSE envelope signed by the auditor's key, and
`check-certificate` verifies it offline with the auditor's and the log's public keys alone."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from audit.certification.certificate import canonical, code_fingerprint, pae, seal
from ledger import Signer
from ledger.notes import sign_note
from tests.ledger_support import cli, flat

Doc = dict[str, Any]
AUDIT = "urn:matchledger:audit:v1"


def _simulate(root: Path, *extra: str) -> None:
    result = cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "2", "--seed", "5", "--ledger", str(root),
                 "--json", *extra)
    assert result.exit_code == 0, result.output


def _keygen(path: Path, name: str = "auditor-wu") -> Path:
    assert cli("keygen", "--name", name, "--out", str(path)).exit_code == 0
    return path


def _certify(root: Path, out: Path, key: Path) -> tuple[int, Doc]:
    result = cli("audit", "--ledger", str(root), "--key", str(root / "signer.pub"), "--certificate", str(out),
                 "--auditor-key", str(key), "--json", "-q")
    return result.exit_code, json.loads(result.stdout)


def _check(cert: Path, auditor_pub: Path, root: Path, *extra: str) -> Any:
    return cli("check-certificate", str(cert), "--auditor-key", str(auditor_pub), "--key", str(root / "signer.pub"), *extra)


def _open(cert: Path) -> tuple[Doc, Doc]:
    envelope = json.loads(cert.read_bytes())
    return envelope, json.loads(base64.b64decode(envelope["payload"]))


def _rewrite(cert: Path, out: Path, change: Callable[[Doc], None], signer: Signer | None = None) -> Path:
    """Writes `cert` with its statement changed: keeping the auditor's signature, or signed again by `signer`."""
    envelope, statement = _open(cert)
    change(statement)
    payload = json.dumps(statement, ensure_ascii=False).encode()
    if signer is not None:
        out.write_bytes(seal(payload, signer))
    else:
        envelope["payload"] = base64.b64encode(payload).decode()
        out.write_text(json.dumps(envelope))
    return out


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Doc]:
    """A simulated Junqi tournament, audited with a certificate: the ledger, the certificate, the audit's JSON."""
    base = tmp_path_factory.mktemp("clean")
    root, key = base / "l", _keygen(base / "auditor-wu.key")
    _simulate(root)
    code, audited = _certify(root, base / "season.cert.json", key)
    assert code == 0, audited["reason"]
    return root, base / "season.cert.json", audited


def test_pae_is_dsse_v1() -> None:
    """DSSE protocol: the signature covers PAE(type, body) (the spec's own test vector)."""
    assert pae("http://example.com/HelloWorld", b"hello world") == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_certificate_of_a_simulated_tournament_verifies(clean: tuple[Path, Path, Doc]) -> None:
    """Issue 32.3: the subject is the log's signed checkpoint the audit verified to; the findings
    digest is the SHA-256 of `audit --format json`'s findings as canonical JSON."""
    root, cert, audited = clean
    result = _check(cert, cert.with_name("auditor-wu.pub"), root, "--json")
    assert result.exit_code == 0, result.output
    checked = json.loads(result.stdout)
    assert (checked["verdict"], checked["certified"], checked["size"], checked["root"]) == ("CERTIFIED", True, audited["size"], audited["root"])
    statement = checked["statement"]
    summary = statement["predicate"][AUDIT]
    assert statement["subject"] == [{"name": checked["origin"], "digest": {"rfc6962": audited["root"]}, "annotations": {"treeSize": audited["size"]}}]
    assert summary["findings"]["sha256"] == hashlib.sha256(canonical(audited["findings"])).hexdigest()
    assert [(c["check"], c["passed"], c["failed"]) for c in summary["checks"]] == [(c["check"], c["passed"], c["failed"]) for c in audited["checks"]]
    assert summary["logKey"]["pinned"] and summary["games"] == audited["games"] > 0
    assert {p["game"] for p in summary["profiles"]} == {"junqi"} and all(p["profile"].startswith("sha256:") for p in summary["profiles"])
    assert statement["predicate"]["verificationResult"] == "PASSED" and audited["certificate"]["path"] == str(cert)
    text = _check(cert, cert.with_name("auditor-wu.pub"), root)
    assert text.exit_code == 0 and "证书有效" in text.stdout and "CERTIFIED" in text.stdout


def test_code_fingerprint_is_the_in_toto_dir_hash() -> None:
    """in-toto DigestSet `dirHash`: `find … | LC_ALL=C sort | xargs sha256sum | sha256sum` over the code's .py and .sql files."""
    base = Path(__file__).resolve().parents[1]
    script = ("find schemas ledger replay audit -type f \\( -name '*.py' -o -name '*.sql' \\) | LC_ALL=C sort | "
              "xargs sha256sum | sha256sum | cut -f1 -d' '")
    expected = subprocess.run(["sh", "-c", script], cwd=base, capture_output=True, text=True, check=True).stdout.strip()
    assert code_fingerprint()[0] == expected


def _verdict(s: Doc) -> None:
    s["predicate"][AUDIT]["verdict"] = "NOT CERTIFIED"


def _counts(s: Doc) -> None:
    s["predicate"][AUDIT]["checks"][1]["passed"] -= 1
    s["predicate"][AUDIT]["checks"][1]["checked"] -= 1


def _root(s: Doc) -> None:
    s["subject"][0]["digest"]["rfc6962"] = "00" * 32


def _findings(s: Doc) -> None:
    s["predicate"][AUDIT]["findings"]["sha256"] = hashlib.sha256(b"[]\n").hexdigest()


def _note(s: Doc) -> None:
    s["predicate"][AUDIT]["checkpoint"] = s["predicate"][AUDIT]["checkpoint"].replace("\n", "\n\n", 1)


def _size(s: Doc) -> None:
    s["subject"][0]["annotations"]["treeSize"] -= 1
    s["predicate"][AUDIT]["treeSize"] -= 1


@pytest.mark.parametrize("change", [_verdict, _counts, _root, _findings, _note, _size], ids=lambda f: f.__name__.strip("_"))
def test_a_field_changed_after_signing_is_refused(clean: tuple[Path, Path, Doc], tmp_path: Path, change: Callable[[Doc], None]) -> None:
    """DSSE: the auditor's Ed25519 signature covers PAE of the whole statement; any field changed breaks it."""
    root, cert, _ = clean
    result = _check(_rewrite(cert, tmp_path / "c.json", change), cert.with_name("auditor-wu.pub"), root)
    assert result.exit_code == 1
    assert "the signature by auditor-wu+" in flat(result.stderr) and "was changed after it was signed" in flat(result.stderr)


def test_a_signature_byte_changed_is_refused(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """DSSE: one flipped bit of the signature is refused."""
    root, cert, _ = clean
    envelope = json.loads(cert.read_bytes())
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[7] ^= 0x01
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    (tmp_path / "c.json").write_text(json.dumps(envelope))
    result = _check(tmp_path / "c.json", cert.with_name("auditor-wu.pub"), root)
    assert result.exit_code == 1 and "does not verify over the payload" in flat(result.stderr)


def _forged_note(s: Doc) -> None:
    """The checkpoint note replaced by one of another root, signed by a key named as the log's."""
    note = s["predicate"][AUDIT]["checkpoint"]
    origin, size = note.split("\n")[:2]
    body = f"{origin}\n{size}\n{base64.b64encode(bytes(32)).decode()}\n"
    s["predicate"][AUDIT]["checkpoint"] = sign_note(body, Signer.generate(origin))


def _certified_with_findings(s: Doc) -> None:
    s["predicate"][AUDIT]["findings"]["count"] = 3


def _passed_miscounted(s: Doc) -> None:
    s["predicate"][AUDIT]["checks"][1]["passed"] -= 1


def _verdict_without_result(s: Doc) -> None:
    s["predicate"][AUDIT]["verdict"] = "NOT CERTIFIED"


def _profile_swapped(s: Doc) -> None:
    s["predicate"][AUDIT]["profiles"][0]["profile"] = "sha256:" + "0" * 64


SIGNED_AGAIN = [
    (_root, "): subject digest rfc6962 '" + "00" * 32 + "' (the note's: '"),
    (_size, "): subject treeSize"),
    (_forged_note, "the certificate's checkpoint note: note carries no signature by"),
    (_certified_with_findings, "verdict CERTIFIED with 3 findings, 0 failed checks"),
    (_passed_miscounted, "check rules: passed"),
    (_verdict_without_result, "verificationResult PASSED with verdict NOT CERTIFIED"),
    (_profile_swapped, "the policy digest is not the digest of the rule profiles listed"),
]


@pytest.mark.parametrize(("change", "why"), SIGNED_AGAIN, ids=[c.__name__.strip("_") for c, _ in SIGNED_AGAIN])
def test_a_statement_the_auditor_signed_is_still_checked(clean: tuple[Path, Path, Doc], tmp_path: Path,
                                                         change: Callable[[Doc], None], why: str) -> None:
    """Issue 32.3: the subject must be the checkpoint the log's key signed (a careless or lying auditor
    cannot name another root), and a statement contradicting itself is refused."""
    root, cert, _ = clean
    auditor = Signer.load(cert.with_name("auditor-wu.key"))
    result = _check(_rewrite(cert, tmp_path / "c.json", change, auditor), cert.with_name("auditor-wu.pub"), root)
    assert result.exit_code == 1 and "证书未通过核验" in result.stderr
    assert why in flat(result.stderr)


def test_another_auditor_key_is_refused(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """VSA: consumers accept only the (signer, verifier) pairs they trust: another key, even of the same
    name, or a signature claiming the trusted key's id, is refused."""
    root, cert, _ = clean
    other = _keygen(tmp_path / "mallory.key", name="auditor-wu")
    result = _check(cert, other.with_suffix(".pub"), root)
    assert result.exit_code == 1 and "carries no signature by the auditor key auditor-wu+" in flat(result.stderr)
    envelope, _ = _open(cert)
    forged = json.loads(_rewrite(cert, tmp_path / "c.json", lambda s: None, Signer.load(other)).read_bytes())
    forged["signatures"][0]["keyid"] = envelope["signatures"][0]["keyid"]
    (tmp_path / "c.json").write_text(json.dumps(forged))
    result = _check(tmp_path / "c.json", cert.with_name("auditor-wu.pub"), root)
    assert result.exit_code == 1 and "does not verify over the payload" in flat(result.stderr)


def test_the_log_key_is_not_an_auditor_key(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """Issue 32.3: the certificate is signed by the auditor's own key, not the log's (a usage error, exit 2)."""
    root, cert, _ = clean
    result = cli("audit", "--ledger", str(root), "--certificate", str(tmp_path / "c.json"), "--auditor-key", str(root / "signer.key"), "-q")
    assert result.exit_code == 2 and "is the log's own key" in flat(result.stderr)
    assert not (tmp_path / "c.json").exists()
    result = _check(cert, root / "signer.pub", root)
    assert result.exit_code == 2 and "is the log's own key" in flat(result.stderr)


def test_misuse_is_exit_2(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """README's exit codes: an option without its partner, an output inside the ledger or over a file, a missing certificate."""
    root, cert, _ = clean
    key = str(cert.with_name("auditor-wu.key"))
    alone = cli("audit", "--ledger", str(root), "--certificate", str(tmp_path / "c.json"))
    assert alone.exit_code == 2 and "--certificate FILE and --auditor-key KEY go together" in flat(alone.output)
    inside = cli("audit", "--ledger", str(root), "--certificate", str(root / "c.json"), "--auditor-key", key)
    assert inside.exit_code == 2 and "lies inside the ledger" in flat(inside.stderr)
    over = cli("audit", "--ledger", str(root), "--certificate", str(cert), "--auditor-key", key)
    assert over.exit_code == 2 and "exists; pass --force to replace it" in flat(over.stderr)
    missing = _check(tmp_path / "none.json", cert.with_name("auditor-wu.pub"), root)
    assert missing.exit_code == 2 and "no such file (expected an audit certificate" in flat(missing.stderr)
    (tmp_path / "junk.json").write_text("{}")
    junk = _check(tmp_path / "junk.json", cert.with_name("auditor-wu.pub"), root)
    assert junk.exit_code == 1 and "not a DSSE envelope" in flat(junk.stderr)


@pytest.mark.parametrize("fault", ["false-result", "bad-byte"])
def test_a_not_certified_audit_certificate_says_so_and_verifies(tmp_path: Path, fault: str) -> None:
    """Issue 32.3: a certificate of a NOT CERTIFIED audit is a true statement of that verdict: it
    verifies, says FAILED, and carries the findings' digest (a damaged log names the newest signed
    checkpoint, whose log did not verify)."""
    root, key = tmp_path / "l", _keygen(tmp_path / "auditor-wu.key")
    _simulate(root, "--inject", fault)
    code, audited = _certify(root, tmp_path / "c.json", key)
    assert code == 1 and not audited["ok"]
    result = _check(tmp_path / "c.json", tmp_path / "auditor-wu.pub", root, "--json")
    assert result.exit_code == 0, result.output
    checked = json.loads(result.stdout)
    summary = checked["statement"]["predicate"][AUDIT]
    assert (checked["verdict"], checked["certified"], checked["reason"]) == ("NOT CERTIFIED", False, audited["reason"])
    assert checked["statement"]["predicate"]["verifiedLevels"] == ["FAILED"]
    assert summary["findings"] == {"count": len(audited["findings"]), "sha256": hashlib.sha256(canonical(audited["findings"])).hexdigest()}
    assert summary["findings"]["count"] > 0
    text = _check(tmp_path / "c.json", tmp_path / "auditor-wu.pub", root)
    assert text.exit_code == 0 and "NOT CERTIFIED" in text.stdout


def test_the_payload_is_what_was_signed(clean: tuple[Path, Path, Doc]) -> None:
    """DSSE: the envelope's payload decodes to the statement the signature covers, byte for byte."""
    _, cert, _ = clean
    envelope, statement = _open(cert)
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/verification_summary/v1"
    assert statement["predicate"]["verifier"]["id"].endswith(envelope["signatures"][0]["keyid"])


def test_a_tournament_audit_certifies_its_scope(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """Issue 32.3: a certificate of `audit --tournament` names its scope and the profiles of that tournament only;
    the subject is still the whole log at the signed checkpoint."""
    root, cert, audited = clean
    tournament = _open(cert)[1]["predicate"][AUDIT]["profiles"][0]["tournament"]
    result = cli("audit", "--ledger", str(root), "--tournament", tournament, "--certificate", str(tmp_path / "t.json"),
                 "--auditor-key", str(cert.with_name("auditor-wu.key")), "-q")
    assert result.exit_code == 0 and "审计证书已写入" in result.stdout and "certificate written to" in result.stdout
    checked = json.loads(_check(tmp_path / "t.json", cert.with_name("auditor-wu.pub"), root, "--json").stdout)
    summary = checked["statement"]["predicate"][AUDIT]
    assert summary["tournament"] == tournament and {p["tournament"] for p in summary["profiles"]} == {tournament}
    assert (checked["size"], checked["root"]) == (audited["size"], audited["root"])


def test_unsigned_entries_are_counted_not_certified(clean: tuple[Path, Path, Doc], tmp_path: Path) -> None:
    """DESIGN.md "Nothing unsigned counts": frames appended after the newest signed note (no key
    needed) are counted as unsigned; the subject stays the signed checkpoint."""
    from ledger import LogReader
    from ledger.fastscan import frame_batch
    from ledger.layout import SEGMENTS
    from ledger.segments import list_segments

    root, cert, audited = clean
    copy = tmp_path / "l"
    shutil.copytree(root, copy)
    signed, _ = LogReader(copy).extent()
    last = [data for _, data in LogReader(copy).entries(signed - 1, 1)]
    with open(list_segments(copy / SEGMENTS)[-1][1], "ab") as f:
        f.write(frame_batch(signed, last, True))
    code, _ = _certify(copy, tmp_path / "c.json", cert.with_name("auditor-wu.key"))
    assert code == 0
    checked = json.loads(_check(tmp_path / "c.json", cert.with_name("auditor-wu.pub"), copy, "--json").stdout)
    assert checked["size"] == audited["size"] == signed and checked["root"] == audited["root"]
    assert checked["statement"]["predicate"][AUDIT]["unsigned"] == 1
