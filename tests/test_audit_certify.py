"""Certification of simulated tournaments: each game's tournament audits clean, and each planted
fault (`--inject`) is caught by exactly the check meant to catch it (tournament.md, DESIGN.md audit/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ledger_support import cli

PLAYERS = {"junqi": 8, "paohuzi": 6, "checkers": 6}
CAUGHT_BY = {
    "illegal-move": "rules", "false-result": "claims", "wrong-score": "claims", "wrong-seating": "seating",
    "tampered-deal": "deals", "bad-move-time": "timing", "bad-byte": "log",
}


def _simulate(root: Path, game: str, *extra: str, seed: int = 11, rounds: int = 3) -> None:
    result = cli("simulate", game, "--tournament", "--players", str(PLAYERS[game]), "--rounds", str(rounds),
                 "--seed", str(seed), "--ledger", str(root), "--json", *extra)
    assert result.exit_code == 0, result.output


def _audit(root: Path) -> tuple[int, dict]:
    result = cli("audit", "--ledger", str(root), "--json")
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("game", sorted(PLAYERS))
def test_simulated_tournament_audits_clean(tmp_path: Path, game: str) -> None:
    _simulate(tmp_path / "l", game)
    code, report = _audit(tmp_path / "l")
    failed = {c["check"]: c["examples"] for c in report["checks"] if c["failed"]}
    assert (code, failed) == (0, {})
    assert report["ok"] and report["games"] > 0


CASES = [(game, kind) for kind in CAUGHT_BY for game in sorted(PLAYERS)
         if kind != "tampered-deal" or game == "paohuzi"]


@pytest.mark.parametrize(("game", "kind"), CASES, ids=[f"{g}-{k}" for g, k in CASES])
def test_each_fault_is_caught_by_its_check_only(tmp_path: Path, game: str, kind: str) -> None:
    _simulate(tmp_path / "l", game, "--inject", kind)
    code, report = _audit(tmp_path / "l")
    failed = sorted(c["check"] for c in report["checks"] if c["failed"])
    assert (code, failed) == (1, [CAUGHT_BY[kind]])
    assert all(f["check"] == CAUGHT_BY[kind] and f["code"] for f in report["findings"])


def test_query_is_read_only_and_export_manifest_verifies(tmp_path: Path) -> None:
    root, out = tmp_path / "l", tmp_path / "pq"
    _simulate(root, "junqi", rounds=2)
    for sql in ("DELETE FROM events", "CREATE TABLE x AS SELECT 1", "COPY events TO 'x.csv'", "ATTACH 'x.db'"):
        result = cli("query", "--ledger", str(root), sql)
        assert result.exit_code == 2 and "only read-only queries are allowed" in result.stderr, sql
    result = cli("query", "--ledger", str(root), "SELECT * FROM read_csv('/etc/passwd')")
    assert result.exit_code == 2 and "disabled by configuration" in result.stderr
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    verified = json.loads(cli("verify", "--ledger", str(root), "--json").stdout)
    assert (manifest["checkpoint"]["size"], manifest["checkpoint"]["root"]) == (verified["size"], verified["root"])
    sql = "SELECT count(*) FROM events"
    from_ledger = json.loads(cli("query", "--ledger", str(root), sql, "--json").stdout)
    key = str(root / "signer.pub")
    from_export = json.loads(cli("query", "--parquet", str(out), "--key", key, sql, "--json").stdout)
    assert from_ledger["rows"] == from_export["rows"] and from_ledger["rows"][0][0] == verified["size"]
    assert from_ledger["trust"]["verified_size"] == from_export["trust"]["verified_size"] == verified["size"]
    assert sum(f["rows"] for f in manifest["files"] if f["path"].startswith("events/")) == verified["size"]
    victim = out / manifest["files"][0]["path"]
    victim.write_bytes(victim.read_bytes() + b"\0")
    tampered = cli("query", "--parquet", str(out), "--key", key, sql)
    assert tampered.exit_code == 1 and "sha256 differs from the manifest" in tampered.stderr


def test_standings_and_explain(tmp_path: Path) -> None:
    root = tmp_path / "l"
    _simulate(root, "paohuzi")
    table = json.loads(cli("standings", "--ledger", str(root), "--tournament", "paohuzi-cup-11", "--json").stdout)
    assert [r["rank"] for r in table["rows"]] == sorted(r["rank"] for r in table["rows"])
    player = table["rows"][0]["player"]
    chain = json.loads(cli("standings", "--ledger", str(root), "--tournament", "paohuzi-cup-11", "--explain", player, "--json").stdout)
    assert chain["rank"]["player"] == player and len(chain["games"]) == 6 and len(chain["boards"]) == 6
    assert all(g["claim_agrees"] for g in chain["games"]) and len(chain["seating"]) == 3
    unknown = cli("standings", "--ledger", str(root), "--tournament", "nope")
    assert unknown.exit_code == 2 and "no tournament 'nope'" in unknown.stderr


def test_duplicate_boards_outside_a_tournament_are_compared(tmp_path: Path) -> None:
    """paohuzi.md §2 (第五条): every table of a board must get the board's deck, in or out of a tournament."""
    root = tmp_path / "l"
    assert cli("simulate", "paohuzi", "--boards", "2", "--tables", "3", "--seed", "4", "--ledger", str(root)).exit_code == 0
    code, report = _audit(root)
    deals = next(c for c in report["checks"] if c["check"] == "deals")
    assert (code, deals["passed"], deals["failed"]) == (0, 6, 0)
