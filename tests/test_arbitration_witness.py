"""`witness --url` works on every visit against what `serve` answers (issue 30 point 12): GET
/consistency gives the two signed checkpoints and the proof (RFC 6962 consistency, C2SP
tlog-witness), and the witness reads their sizes from the notes; a proof that fails is called a fork."""

from __future__ import annotations

import base64
import hashlib
import http.server
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

import ledger as ledger_api
from ledger import bundle as ledger_bundle
from tests.ledger_support import cli


class _Served(http.server.BaseHTTPRequestHandler):
    """GET /checkpoint and /consistency?old=N as `serve` answers them (audit/service/serve.py)."""

    root: Path
    tamper = False

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urllib.parse.urlsplit(self.path)
        verifier = ledger_api.load_verifier(self.root)
        if url.path == "/checkpoint":
            checkpoint = ledger_api.newest_checkpoint(self.root, verifier)
            body = checkpoint.note.encode() if checkpoint else b""
        else:
            old = int(urllib.parse.parse_qs(url.query)["old"][0])
            proof = ledger_bundle.prove_consistency(self.root, old, None)
            if self.tamper:
                proof = msgspec.structs.replace(proof, proof=[_forged_hash()] * len(proof.proof))
            body = msgspec.json.encode(msgspec.to_builtins(proof))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _forged_hash() -> str:
    """A hash no tree of the log holds: a proof made of it cannot connect two roots."""
    return base64.b64encode(hashlib.sha256(b"forged").digest()).decode()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "l"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "1", "--ledger", str(root)).exit_code == 0
    handler = type("Handler", (_Served,), {"root": root})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _visit(root: Path, url: str, state: Path) -> tuple[int, str]:
    result = cli("witness", "--url", url, "--key", str(root / "signer.pub"), "--state", str(state))
    return result.exit_code, result.output


def test_witness_url_reads_what_serve_answers_on_every_visit(served: tuple[Path, str], tmp_path: Path) -> None:
    """Visit, the log grows, visit again: the second visit proves consistency from `serve`'s answer."""
    root, url = served
    state = tmp_path / "seen.note"
    assert _visit(root, url, state)[0] == 0
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "2", "--ledger", str(root)).exit_code == 0
    code, out = _visit(root, url, state)
    assert code == 0 and "the older tree is a prefix" in out, out


def test_a_proof_that_fails_is_called_a_fork(served: tuple[Path, str], tmp_path: Path) -> None:
    """A served proof that does not connect the remembered root to the new one: exit 1, "a fork"."""
    root, url = served
    state = tmp_path / "seen.note"
    assert _visit(root, url, state)[0] == 0
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "2", "--ledger", str(root)).exit_code == 0
    _Served.tamper = True
    try:
        code, out = _visit(root, url, state)
    finally:
        _Served.tamper = False
    assert code == 1 and "a fork" in out, out
