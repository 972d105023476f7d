"""Issue 16, "Transparency tooling as the ecosystem has it": C2SP signed-note names, consistency
proofs checked offline, a witness that remembers the last checkpoint (over a ledger and over HTTP),
co-signature thresholds on evidence, and `verify` trusting only the keys it is given or the log registers."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.errors import KeyFileError, SignatureError
from ledger.notes import Signer, check_key_name, is_key_name, sign_note
from tests.ledger_support import cli, event_line, flat, snapshot

# -- C2SP signed-note names -------------------------------------------------------------------

VALID_NAMES = ["example.com/log", "arbiter-zhang", "裁判张", "matchledger.local/3f2a", "a"]
INVALID_NAMES = ["", "two words", "a+b", "tab\there", "ideographic\u3000space", "no\u00a0break", "line\u2028sep",
                 "ogham\u1680space", "nel\x85", "nul\x00", "zero\u200dwidth"]
"""Key names of the C2SP signed-note spec: non-empty, no Unicode White_Space (as Go's
unicode.IsSpace), no `+`; control and format characters are refused too (stricter than the spec,
never laxer)."""


@pytest.mark.parametrize("name", VALID_NAMES)
def test_signed_note_accepts_key_names_the_spec_allows(name: str) -> None:
    assert is_key_name(name) and check_key_name(name) == name


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_signed_note_refuses_key_names_go_would_reject(name: str) -> None:
    assert not is_key_name(name)
    with pytest.raises(KeyFileError, match="is not valid for a signed note"):
        Signer.generate(name)


@pytest.mark.parametrize("text", ["no newline at the end", "tab\tinside\n", "bell\x07\n"])
def test_a_note_go_would_not_open_is_never_signed(text: str) -> None:
    with pytest.raises(SignatureError):
        sign_note(text, Signer.generate("log"))


def test_init_keygen_and_cosign_refuse_a_bad_name(tmp_path: Path) -> None:
    bad = cli("init", "--ledger", str(tmp_path / "l"), "--origin", "my log")
    assert bad.exit_code == 1 and "not valid for a signed note" in flat(bad.output) and not (tmp_path / "l").exists()
    key = cli("keygen", "--name", "arbiter+zhang", "--out", str(tmp_path / "a.key"))
    assert key.exit_code == 1 and "not valid for a signed note" in flat(key.output) and list(tmp_path.iterdir()) == []
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    good = Signer.generate("arbiter")  # a key file whose name was edited to one with a space
    forged = tmp_path / "forged.key"
    forged.write_text(good.encoded().replace("+arbiter+", "+arbiter zhang+") + "\n")
    forged.chmod(0o600)
    before = snapshot(root)
    result = cli("cosign", "--ledger", str(root), "--key", str(forged))
    assert result.exit_code == 1 and "not valid for a signed note" in flat(result.output)
    assert snapshot(root) == before


# -- consistency proofs offline ---------------------------------------------------------------

def _record(root: Path, tmp_path: Path, stream: str, count: int) -> None:
    events = tmp_path / f"{stream}.jsonl"
    events.write_bytes(b"\n".join(event_line(stream, seq) for seq in range(count)) + b"\n")
    assert cli("record", "--ledger", str(root), str(events)).exit_code == 0


@pytest.fixture
def grown(tmp_path: Path) -> Path:
    """A ledger with checkpoints at sizes 0, 5 and 12."""
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    _record(root, tmp_path, "a", 5)
    _record(root, tmp_path, "b", 7)
    return root


def _note(root: Path, size: int) -> Path:
    return root / "checkpoints" / f"{size:020d}.note"


def test_consistency_out_is_checked_offline_with_the_key_alone(grown: Path, tmp_path: Path) -> None:
    """RFC 6962 §2.1.4: the proof written by `consistency --out` ties checkpoint 5 to checkpoint 12."""
    proof = tmp_path / "p.json"
    assert cli("consistency", "--ledger", str(grown), "--old", "5", "--out", str(proof)).exit_code == 0
    away = tmp_path / "away"
    away.mkdir()
    for name, src in (("old.note", _note(grown, 5)), ("new.note", _note(grown, 12)), ("key.pub", grown / "signer.pub")):
        shutil.copy(src, away / name)
    ok = cli("check-consistency", str(away / "old.note"), str(away / "new.note"), str(proof), "--key", str(away / "key.pub"), "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["ok"] is True and json.loads(ok.stdout)["new"] == 12
    swapped = cli("check-consistency", str(away / "new.note"), str(away / "old.note"), str(proof), "--key", str(away / "key.pub"))
    assert swapped.exit_code == 1 and "the log shrank" in flat(swapped.output)
    data = json.loads(proof.read_text())
    data["proof"][0] = data["proof"][-1] if len(data["proof"]) > 1 else "AAAA" + data["proof"][0][4:]
    proof.write_text(json.dumps(data))
    bad = cli("check-consistency", str(away / "old.note"), str(away / "new.note"), str(proof), "--key", str(away / "key.pub"))
    assert bad.exit_code == 1 and "consistency from size 5 to 12" in flat(bad.output)


def test_check_consistency_names_a_missing_input(grown: Path, tmp_path: Path) -> None:
    result = cli("check-consistency", str(_note(grown, 5)), str(_note(grown, 12)), str(tmp_path / "none.json"), "--key",
                 str(grown / "signer.pub"))
    assert result.exit_code == 2 and "none.json: no such file (expected a consistency proof)" in flat(result.output)


# -- the witness ------------------------------------------------------------------------------

def test_witness_remembers_the_last_checkpoint_and_proves_growth(grown: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.note"
    first = cli("witness", "--ledger", str(grown), "--state", str(state))
    assert first.exit_code == 0 and "first visit" in flat(first.output) and state.read_text() == _note(grown, 12).read_text()
    assert "unchanged at size 12" in cli("witness", "--ledger", str(grown), "--state", str(state)).output
    _record(grown, tmp_path, "c", 3)
    grew = cli("witness", "--ledger", str(grown), "--state", str(state), "--json")
    answer = json.loads(grew.stdout)
    assert grew.exit_code == 0 and answer.pop("trust")["verified_size"] == 15 and answer | {"root": None, "origin": None} == {
        "ok": True, "origin": None, "size": 15, "root": None, "previous_size": 12, "state": str(state)}


def test_witness_catches_a_rolled_back_log(grown: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(grown, old)  # the log at size 12, with the same key
    state = tmp_path / "state.note"
    _record(grown, tmp_path, "c", 3)
    assert cli("witness", "--ledger", str(grown), "--state", str(state)).exit_code == 0
    remembered = state.read_text()
    result = cli("witness", "--ledger", str(old), "--state", str(state))
    assert result.exit_code == 1 and "the log shrank" in flat(result.output)
    assert state.read_text() == remembered  # what the witness saw is kept


def test_witness_catches_a_fork(grown: Path, tmp_path: Path) -> None:
    """Two signed checkpoints of one size with different roots: equivocation, shown to the witness."""
    from ledger.checkpoints import checkpoint_body

    signer = Signer.load(grown / "signer.key")
    lines = _note(grown, 12).read_text().split("\n")
    forged = sign_note(checkpoint_body(lines[0], 12, bytes(32), (lines[3],)), signer)
    state = tmp_path / "state.note"
    state.write_text(forged)
    result = cli("witness", "--ledger", str(grown), "--state", str(state))
    assert result.exit_code == 1 and "two different roots for size 12" in flat(result.output)


class _LogServer(http.server.SimpleHTTPRequestHandler):
    """A static server of `export --tiles` output that answers `/consistency?old=N&new=M` from
    files `consistency/N-M.json` (as `consistency --out` writes them)."""

    def translate_path(self, path: str) -> str:
        url = urllib.parse.urlsplit(path)
        if url.path == "/consistency":
            query = urllib.parse.parse_qs(url.query)
            return super().translate_path(f"/consistency/{query['old'][0]}-{query['new'][0]}.json")
        return super().translate_path(url.path)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    site = tmp_path / "site"
    site.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_LogServer, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", site
    server.shutdown()
    server.server_close()


def _publish(root: Path, site: Path, proofs: list[tuple[int, int]]) -> None:
    """Lays out the log as tlog-tiles in `site` with the consistency proofs asked for."""
    tiles = site.parent / "tiles"
    assert cli("export", "--ledger", str(root), "--tiles", str(tiles), "--force").exit_code == 0
    shutil.copytree(tiles, site, dirs_exist_ok=True)
    (site / "consistency").mkdir(exist_ok=True)
    for old, new in proofs:
        out = site / "consistency" / f"{old}-{new}.json"
        assert cli("consistency", "--ledger", str(root), "--old", str(old), "--new", str(new), "--out", str(out), "--force").exit_code == 0


def test_witness_over_http_reads_checkpoint_and_consistency(grown: Path, tmp_path: Path, served: tuple[str, Path]) -> None:
    url, site = served
    key, state = str(grown / "signer.pub"), tmp_path / "state.note"
    _publish(grown, site, [])
    assert cli("witness", "--url", url, "--state", str(state), "--key", key).exit_code == 0
    assert "size 12" in state.read_text() or "\n12\n" in state.read_text()
    _record(grown, tmp_path, "c", 3)
    _publish(grown, site, [(12, 15)])
    grew = cli("witness", "--url", url, "--state", str(state), "--key", key, "--json")
    assert grew.exit_code == 0, grew.output
    assert json.loads(grew.stdout)["previous_size"] == 12 and json.loads(grew.stdout)["size"] == 15
    _record(grown, tmp_path, "d", 2)
    _publish(grown, site, [])  # no proof served for 15 → 17: the witness computes it from the tiles (tlog-tiles)
    shutil.rmtree(site / "tile" / "1", ignore_errors=True)
    for tile in (site / "tile" / "0").rglob("*"):  # and without the tiles, it cannot
        if tile.is_file():
            tile.unlink()
    missing = cli("witness", "--url", url, "--state", str(state), "--key", key)
    assert missing.exit_code == 1 and "HTTP 404" in flat(missing.output), missing.output
    assert "\n15\n" in state.read_text()
    _publish(grown, site, [])
    tiles = cli("witness", "--url", url, "--state", str(state), "--key", key, "--json")
    assert tiles.exit_code == 0 and json.loads(tiles.stdout)["size"] == 17, tiles.output


def test_witness_options_are_checked(grown: Path, tmp_path: Path) -> None:
    before = snapshot(grown)
    inside = cli("witness", "--ledger", str(grown), "--state", str(grown / "seen.note"))
    assert inside.exit_code == 2 and "lies inside the ledger" in flat(inside.output) and snapshot(grown) == before
    state = str(tmp_path / "s.note")
    assert cli("witness", "--state", state).exit_code == 2
    assert cli("witness", "--url", "http://127.0.0.1:9", "--state", state).exit_code == 2  # no --key: nothing to trust
    assert cli("witness", "--url", "file:///etc", "--key", str(grown / "signer.pub"), "--state", state).exit_code == 2


# -- co-signatures ----------------------------------------------------------------------------

@pytest.fixture
def cosigned(grown: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Arbiter A co-signed checkpoint 12 in the ledger (`cosign`, which records A as a witness and so
    signs checkpoint 13) and the checkpoint of an evidence bundle it was shown; B co-signed nothing."""
    from ledger.notes import add_signature

    for name in ("a", "b"):
        assert cli("keygen", "--name", f"arbiter-{name}", "--out", str(tmp_path / f"{name}.key")).exit_code == 0
    assert cli("cosign", "--ledger", str(grown), "--key", str(tmp_path / "a.key")).exit_code == 0
    bundle = tmp_path / "bundle.json"
    assert cli("prove", "--ledger", str(grown), "--stream", "a", "--out", str(bundle)).exit_code == 0
    data = json.loads(bundle.read_text())
    data["checkpoint"] = add_signature(data["checkpoint"], Signer.load(tmp_path / "a.key"))
    bundle.write_text(json.dumps(data))
    return bundle, tmp_path / "a.pub", tmp_path / "b.pub"


def test_check_proof_requires_the_witness_cosignatures(grown: Path, cosigned: tuple[Path, Path, Path]) -> None:
    bundle, a, b = cosigned
    base = ["check-proof", str(bundle), "--key", str(grown / "signer.pub")]
    ok = cli(*base, "--witness-key", str(a), "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["cosigners"] == ["arbiter-a"]
    lacking = cli(*base, "--witness-key", str(b))
    assert lacking.exit_code == 1 and "carries 0 of the 1 co-signatures required; missing: arbiter-b" in flat(lacking.output)
    assert cli(*base, "--witness-key", str(a), "--witness-key", str(b)).exit_code == 1
    assert cli(*base, "--witness-key", str(a), "--witness-key", str(b), "--witness-threshold", "1").exit_code == 0
    assert cli(*base, "--witness-key", str(a), "--witness-threshold", "2").exit_code == 2


def test_verify_trusts_no_key_lying_in_the_ledger(grown: Path, cosigned: tuple[Path, Path, Path]) -> None:
    """A key dropped into witnesses/ is neither required nor trusted; a registered witness is required."""
    _, a, b = cosigned
    shutil.copy(b, grown / "witnesses" / "planted.pub")
    result = cli("verify", "--ledger", str(grown), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["ok"] is True
    assert cli("verify", "--ledger", str(grown), "--witness-key", str(b)).exit_code == 1  # B co-signed nothing: not ok (issue 30 point 13)
    stripped = grown / "checkpoints" / f"{12:020d}.note"
    stripped.write_text("".join(line + "\n" for line in stripped.read_text().splitlines() if "arbiter-a" not in line))
    failed = cli("verify", "--ledger", str(grown), "--json")
    assert failed.exit_code == 1 and json.loads(failed.stdout)["ok"] is False
