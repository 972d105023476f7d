"""`witness --url` against a static `export --tiles` directory (issue 30 point 12): no server answers
/consistency there (404), so the witness computes the RFC 6962 consistency proof from the tree's hash
tiles itself, as tlog-tiles clients do (c2sp.org/tlog-tiles), after checking that the tiles give the
signed root; a log that does not extend the remembered one is still called a fork."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ledger_support import cli


@pytest.fixture
def static(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    """A ledger, the directory its tiles are exported to, and that directory served as plain files."""
    root, site = tmp_path / "l", tmp_path / "site"
    _grow(root, 1)
    _export(root, site)
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, site, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _grow(root: Path, seed: int) -> None:
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", str(seed),
               "--ledger", str(root)).exit_code == 0


def _export(root: Path, site: Path) -> None:
    result = cli("export", "--ledger", str(root), "--tiles", str(site), "--force")
    assert result.exit_code == 0, result.output


def _visit(key: Path, url: str, state: Path) -> tuple[int, str]:
    result = cli("witness", "--url", url, "--key", str(key), "--state", str(state))
    return result.exit_code, result.output


def test_witness_proves_growth_from_the_tiles_of_a_static_directory(static: tuple[Path, Path, str], tmp_path: Path) -> None:
    """tlog-tiles: a client holding an old checkpoint proves the new tree extends it from the tiles alone."""
    root, site, url = static
    state = tmp_path / "seen.note"
    assert _visit(root / "signer.pub", url, state)[0] == 0
    _grow(root, 2)
    _export(root, site)
    code, out = _visit(root / "signer.pub", url, state)
    assert code == 0 and "the older tree is a prefix" in out, out


def test_a_changed_tile_is_named_not_taken_for_a_fork(static: tuple[Path, Path, str], tmp_path: Path) -> None:
    """A wrong hash in a served tile: the tiles do not give the signed root, and the witness says so."""
    root, site, url = static
    state = tmp_path / "seen.note"
    assert _visit(root / "signer.pub", url, state)[0] == 0
    _grow(root, 2)
    _export(root, site)
    tile = next(p for p in sorted((site / "tile" / "1").rglob("*")) if p.is_file())  # the roots of the level-0 tiles: on every path
    data = bytearray(tile.read_bytes())
    data[0] ^= 1
    tile.write_bytes(bytes(data))
    code, out = _visit(root / "signer.pub", url, state)
    assert code == 1 and "do not give the signed root" in " ".join(out.split()), out


def test_another_history_under_the_same_key_is_a_fork(static: tuple[Path, Path, str], tmp_path: Path) -> None:
    """The key holder keeps two histories from one base: the second's tiles verify under the key, but
    do not extend the tree the witness saw on the first."""
    root, site, url = static
    fork = tmp_path / "fork"
    shutil.copytree(root, fork)
    state = tmp_path / "seen.note"
    _grow(root, 2)
    _export(root, site)
    assert _visit(root / "signer.pub", url, state)[0] == 0
    for seed in (3, 4):
        _grow(fork, seed)
    _export(fork, site)
    code, out = _visit(root / "signer.pub", url, state)
    assert code == 1 and "fork" in out, out
