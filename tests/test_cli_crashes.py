"""Issue 16, "Crashes and silent wrong answers": each one, tried as a new user would, is now a
refusal with exit 2 (a usage error) or a right answer; nothing is written by a refused command."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from replay.registry import SEATS
from tests.ledger_support import cli, flat, snapshot

GAMES = {"checkers": "sim-checkers-1-g1", "junqi": "sim-junqi-1-g1", "paohuzi": "sim-paohuzi-1-g1"}


@pytest.fixture(scope="module")
def one_of_each(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger with one simulated game of each kind."""
    root = tmp_path_factory.mktemp("games") / "l"
    for game in GAMES:
        assert cli("simulate", game, "--games", "1", "--ledger", str(root)).exit_code == 0
    return root


# -- show --seat ------------------------------------------------------------------------------

@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("seat", [-1, 7, 5])
def test_show_refuses_a_seat_the_game_does_not_have(one_of_each: Path, game: str, seat: int) -> None:
    """tournament.md §1a: seats are 0 … n−1; -1 (once E's view), 7 (once an IndexError) and 5 (once ignored) are refused."""
    result = cli("show", "--ledger", str(one_of_each), "--game", GAMES[game], "--seat", str(seat))
    assert result.exit_code == 2, result.output
    assert f"its seats are 0–{SEATS[game] - 1}, not {seat}" in flat(result.output)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_show_accepts_every_seat_of_the_game(one_of_each: Path, game: str) -> None:
    for seat in range(SEATS[game]):
        assert cli("show", "--ledger", str(one_of_each), "--game", GAMES[game], "--seat", str(seat)).exit_code == 0


# -- perft ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["paohuzi", "--depth", "1"], "'paohuzi' is not one of"),
    (["junqi", "--depth", "1", "--moves", "3>14"], "use --position FILE"),
    (["checkers", "--depth", "1", "--position", "x.txt"], "use --moves"),
])
def test_perft_refuses_what_it_cannot_count(args: list[str], message: str) -> None:
    """Paohuzi has hidden hands and a chance deal (no perft); each game reads its own setup option."""
    result = cli("perft", *args)
    assert result.exit_code == 2 and message in flat(result.output), result.output


@pytest.mark.parametrize(("game", "depth", "setup"), [("checkers", 2, []), ("checkers", 3, ["--moves", "3>14"]), ("junqi", 2, [])])
def test_perft_divide_splits_the_count_by_first_move(game: str, depth: int, setup: list[str]) -> None:
    """perft --divide: one count per first move, summing to perft's count (checkers.md §14.1, junqi.md §6)."""
    result = cli("perft", game, "--depth", str(depth), "--divide", "--json", *setup)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["divide"] and sum(out["divide"].values()) == out["count"]
    first = cli("perft", game, "--depth", "1", "--json", *setup)
    assert len(out["divide"]) == json.loads(first.stdout)["count"]  # one entry per legal first move


# -- simulate ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "hint"), [
    (["junqi", "--boards", "2", "--tables", "2"], "--boards"),
    (["checkers", "--tables", "2"], "--tables"),
    (["paohuzi", "--inject", "illegal-move"], "--inject"),
    (["junqi", "--tournament", "--players", "8", "--rounds", "2", "--inject", "tampered-deal"], "tampered-deal needs a Paohuzi"),
    (["junqi", "--tournament", "--inject", "no-such-fault"], "unknown fault 'no-such-fault'"),
    (["junqi", "--tournament", "--profile", "nowhere"], "unknown junqi profile 'nowhere'"),
    (["go", "--games", "1"], "unknown game 'go'"),
])
def test_simulate_checks_its_options_before_touching_the_disk(tmp_path: Path, args: list[str], hint: str) -> None:
    root = tmp_path / "l"
    result = cli("simulate", *args, "--ledger", str(root))
    assert result.exit_code == 2 and hint in flat(result.output), result.output
    assert not root.exists()


def test_simulate_boards_records_and_names_paohuzi(tmp_path: Path) -> None:
    result = cli("simulate", "paohuzi", "--boards", "2", "--tables", "2", "--ledger", str(tmp_path / "l"))
    assert result.exit_code == 0 and "recorded 4 paohuzi games" in result.stdout


def test_the_same_tournament_twice_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "l"
    args = ["simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "3", "--ledger", str(root)]
    assert cli(*args).exit_code == 0
    before = snapshot(root)
    again = cli(*args)
    assert again.exit_code == 2
    assert "already holds tournament checkers-cup-3" in flat(again.output) and "another --seed" in flat(again.output)
    assert snapshot(root) == before


@pytest.mark.parametrize(("game", "kind"), [("junqi", "illegal-move"), ("checkers", "false-result"),
                                            ("paohuzi", "tampered-deal"), ("paohuzi", "wrong-seating"), ("checkers", "bad-byte")])
def test_simulate_says_where_it_planted_the_fault_and_the_audit_finds_it_there(tmp_path: Path, game: str, kind: str) -> None:
    """The drill is checkable: the audit's finding for the fault lies where the simulator says it planted it."""
    root = tmp_path / "l"
    players = "6" if game == "paohuzi" else "8" if game == "junqi" else "4"
    result = cli("simulate", game, "--tournament", "--players", players, "--rounds", "2", "--inject", kind, "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    planted = json.loads(result.stdout)["planted"]
    assert planted["kind"] == kind
    audited = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    findings = audited["findings"] + audited["warnings"]
    if kind == "bad-byte":
        assert planted["entry"] is not None and [f["entry"] for f in findings] == [planted["entry"]]  # an entry, never a seq
    elif kind == "tampered-deal":  # the deals check compares the tables of a board: it names the board's other table
        board = re.sub(r"/t\d+/", "/", planted["stream"])
        assert [(re.sub(r"/t\d+/", "/", f["stream"]), f["seq"]) for f in findings] == [(board, planted["seq"])]
    else:
        assert (planted["stream"], planted["seq"]) in {(f["stream"], f["seq"]) for f in findings}, findings
    text = cli("simulate", game, "--tournament", "--players", players, "--rounds", "2", "--seed", "2", "--inject", kind,
               "--ledger", str(tmp_path / "m"))
    assert f"planted {kind} in " in text.stdout


# -- audit ------------------------------------------------------------------------------------

def test_audit_refuses_to_certify_an_empty_ledger(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    result = cli("audit", "--ledger", str(root))
    assert result.exit_code == 1
    assert "NOT CERTIFIED: the ledger holds no games: there is nothing to certify" in result.stdout
    assert json.loads(cli("audit", "--ledger", str(root), "--json").stdout)["ok"] is False


def test_audit_refuses_to_certify_a_tournament_without_games(tmp_path: Path) -> None:
    from schemas import encode
    from schemas.common import TournamentOpened, TournamentRules
    from schemas.junqi import JunqiProfile

    root = tmp_path / "l"
    opened = TournamentOpened(stream="empty-cup", seq=0, ts=1_790_000_000_000, game="junqi", name="empty cup",
                              profile=JunqiProfile(), format="duplicate", rounds=1, rules=TournamentRules())
    (tmp_path / "e.jsonl").write_bytes(encode(opened) + b"\n")
    assert cli("init", "--ledger", str(root)).exit_code == 0
    assert cli("record", "--ledger", str(root), str(tmp_path / "e.jsonl")).exit_code == 0
    result = cli("audit", "--ledger", str(root), "--tournament", "empty-cup")
    assert result.exit_code == 1 and "NOT CERTIFIED: tournament empty-cup has no games" in result.stdout


def test_checks_that_do_not_apply_say_so(tmp_path: Path) -> None:
    """A checkers-only ledger has no Junqi step counter to check: n/a, not `0 0`."""
    root = tmp_path / "l"
    assert cli("simulate", "checkers", "--games", "2", "--ledger", str(root)).exit_code == 0
    checks = {c["check"]: c for c in json.loads(cli("audit", "--ledger", str(root), "--json").stdout)["checks"]}
    assert checks["steps"]["applies"] is False and checks["quiet"]["applies"] is False and checks["deals"]["applies"] is False
    assert checks["rules"]["applies"] is True and checks["leave-camp"]["applies"] is True
    result = cli("audit", "--ledger", str(root))
    assert result.exit_code == 0 and "n/a" in result.stdout and "CERTIFIED: no findings" in result.stdout


def test_not_certified_names_the_verified_size_and_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--inject", "bad-byte",
               "--ledger", str(root)).exit_code == 0
    result = cli("audit", "--ledger", str(root))
    assert result.exit_code == 1
    verdict = result.stdout.strip().splitlines()[-1]
    assert verdict.startswith("未通过认证 NOT CERTIFIED: the log does not verify at entry ")
    assert "entries verified before it" in verdict and "log verified to size" in verdict


# -- init -------------------------------------------------------------------------------------

def test_init_refuses_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--ledger", "")
    assert result.exit_code != 0 and "not the working directory" in flat(result.output)
    assert os.listdir(tmp_path) == []


def test_init_refuses_a_directory_that_holds_something_else(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = cli("init", "--ledger", str(tmp_path))
    assert result.exit_code != 0 and "with files in it and not a ledger" in flat(result.output)
    assert os.listdir(tmp_path) == ["notes.txt"]


# -- check-proof ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundle(one_of_each: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("proof") / "b.json"
    assert cli("prove", "--ledger", str(one_of_each), "--stream", GAMES["junqi"], "--out", str(out)).exit_code == 0
    return out


def test_check_proof_never_echoes_a_private_key(one_of_each: Path, bundle: Path, tmp_path: Path) -> None:
    secret = (one_of_each / "signer.key").read_text().strip()
    pem = tmp_path / "id.pem"
    pem.write_text("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHc+ZkL0Qh9vXo1s3Fz5pQw7+Yt3b2nHqzV8sXo0aBcD\n-----END PRIVATE KEY-----\n")
    for key, shown in ((one_of_each / "signer.key", "private signing key"), (pem, "malformed verifier key")):
        result = cli("check-proof", str(bundle), "--key", str(key))
        assert result.exit_code == 1 and shown in flat(result.output), result.output
        # the key's material, past the name and key hash (PRIVATE+KEY+name+hash+base64); a piece from
        # inside it, since its base64 may itself hold a "+" and the first bytes name only the algorithm
        for part in (secret.split("+", 4)[4][8:24], "MC4CAQAw", "Qh9vXo1s"):
            assert part not in flat(result.output)


def test_check_proof_names_a_missing_file_and_what_it_should_be(one_of_each: Path, bundle: Path, tmp_path: Path) -> None:
    missing = cli("check-proof", str(tmp_path / "nope.json"), "--key", str(one_of_each / "signer.pub"))
    assert missing.exit_code == 2 and "nope.json" in flat(missing.output) and "evidence bundle" in flat(missing.output)
    assert "Errno" not in flat(missing.output)
    no_key = cli("check-proof", str(bundle), "--key", str(tmp_path / "nope.pub"))
    assert no_key.exit_code == 2 and "verifier key" in flat(no_key.output) and "nope.pub" in flat(no_key.output)  # a wrong path
