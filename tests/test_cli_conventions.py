"""CLI conventions (issue 16): --version, -h, examples in every command's help, no `<bool>`
placeholders, shell completion; exit codes 0/1/2/3 the same for every command, whoever finds the
usage error (the parser or the command), and README's table equal to them; progress bars on
stderr only on a terminal and never with --quiet; `demo` says what it did and where to look next."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from audit.cli import app
from audit.cli.base import EXIT_CODES
from audit.cli.examples import EXAMPLES
from tests.ledger_support import cli, flat

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_version() -> None:
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.startswith(f"matchledger {version('matchledger')}\n加速模块 accelerators:\n")


def test_completion_is_installable() -> None:
    assert "--install-completion" in cli("--help").stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_short_option_examples_and_no_bool_placeholder(name: str) -> None:
    """`-h` works everywhere; the help ends with examples that run this command; flags take no `<bool>`."""
    result = cli(name, "-h")
    assert result.exit_code == 0 and "Usage:" in result.stdout
    assert "<bool>" not in result.stdout and "BOOLEAN" not in result.stdout
    examples = result.stdout.split("Examples:\n")[1].split("\n")
    assert EXAMPLES[name] and all(f"matchledger {name}" in line for line in examples if line.strip())
    for example in EXAMPLES[name]:
        assert example in result.stdout


def test_readme_exit_code_table_is_the_code() -> None:
    section = README.split("Exit codes, the same for every command:")[1].split("\n\n")[1]
    rows = [line.split(" | ") for line in section.splitlines()[2:]]
    assert {int(code.strip("| ")): meaning.strip("| ") for code, meaning in rows} == EXIT_CODES


@pytest.mark.parametrize("name", [c for c in COMMANDS if c != "demo"])
def test_an_unknown_option_is_a_usage_error(name: str) -> None:
    result = cli(name, "--no-such-option")
    assert result.exit_code == 2, result.output


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conv") / "l"
    assert cli("simulate", "checkers", "--games", "1", "--seed", "2", "--ledger", str(root)).exit_code == 0
    return root


USAGE_AFTER_PARSING = {
    "standings: no such tournament": ["standings", "--tournament", "nope"],
    "audit: no such tournament": ["audit", "--tournament", "nope"],
    "replay: no such game": ["replay", "--game", "nope"],
    "show: no such game": ["show", "--game", "nope"],
    "report: no such game": ["report", "--game", "nope", "--out", "{tmp}/r.html"],
    "query: no SQL": ["query"],
    "query: --parquet without --key": ["query", "--parquet", "{tmp}", "SELECT 1"],
    "export: no target": ["export"],
    "perft: unknown game": ["perft", "chess", "--depth", "1"],
    "perft: bad move list": ["perft", "checkers", "--depth", "1", "--moves", "0>999"],
    "hu: neither hand nor game": ["hu"],
    "check-proof: missing bundle": ["check-proof", "{tmp}/missing.json", "--key", "{tmp}/missing.pub"],
    "keygen: a .pub for the private key": ["keygen", "--name", "a", "--out", "{tmp}/k.pub"],
    "prove: output inside the ledger": ["prove", "--stream", "x", "--out", "{ledger}/x.json"],
    "show: --at out of range": ["show", "--game", "sim-checkers-2-g1", "--at", "100000"],
    "show: --at negative": ["show", "--game", "sim-checkers-2-g1", "--at", "-1"],
}
NOT_A_LEDGER = ["verify", "replay", "audit", "standings --tournament t", "query SELECT", "show --game g", "report --game g --out {tmp}/r.html",
                "export --jsonl {tmp}/x.jsonl", "prove --stream s --out {tmp}/p.json", "consistency --old 1", "cosign --key {tmp}/k.key",
                "witness --state {tmp}/w.state", "appeals", "record {tmp}/k.pub", "hu --game g", "serve"]
"""Every command that reads a ledger (not `init`, `simulate` and `demo`, which make one)."""


@pytest.mark.parametrize("case", sorted(USAGE_AFTER_PARSING))
def test_usage_errors_found_after_parsing_exit_2(ledger: Path, tmp_path: Path, case: str) -> None:
    """Issue 16: exit 2 for a usage error whoever finds it, with one `error:` line and no traceback."""
    args = [a.format(tmp=tmp_path, ledger=ledger) for a in USAGE_AFTER_PARSING[case]]
    needs_ledger = args[0] not in ("perft", "hu", "check-proof", "keygen") or args == ["hu"]
    result = cli(*args, *(["--ledger", str(ledger)] if needs_ledger else []))
    assert result.exit_code == 2, (case, result.output)
    assert "Traceback" not in result.output and result.stderr.strip()


@pytest.mark.parametrize("command", NOT_A_LEDGER)
def test_a_ledger_path_that_is_not_a_ledger_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """Issue 16: a wrong path is a usage error (exit 2) for every command: `verify --ledger DIR` on a
    directory that holds no ledger, or on none at all, says so in one line."""
    assert cli("keygen", "--name", "arbiter", "--out", str(tmp_path / "k.key")).exit_code == 0
    (tmp_path / "empty").mkdir()
    for where in (tmp_path / "empty", tmp_path / "missing"):
        args = [a.format(tmp=tmp_path) for a in command.split()]
        result = cli(*args, "--ledger", str(where))
        assert result.exit_code == 2, (command, result.output)
        assert f"{where} is not a ledger" in result.stderr and "Traceback" not in result.output, result.output


MISSING_KEY = ["check-proof {tmp}/b.json --key {key}", "check-proof {tmp}/b.json --key {tmp}/k.pub --witness-key {key}",
               "verify --witness-key {key}", "cosign --key {key}", "check-consistency {tmp}/a {tmp}/b {tmp}/c --key {key}",
               "witness --state {tmp}/w --ledger {tmp}/l --key {key}", "source add --name a --key {key}",
               "send {tmp}/b.json --url http://127.0.0.1:9 --key {key}", "appeal register --pub {key} --role referee --name a",
               "query SELECT --parquet {tmp} --key {key}"]


@pytest.mark.parametrize("command", MISSING_KEY)
def test_a_key_file_that_does_not_exist_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """A wrong path is a usage error for every command: a key file that is not there (or a directory
    given for one) is refused by the parser, naming the option and the file."""
    assert cli("keygen", "--name", "a", "--out", str(tmp_path / "k.key")).exit_code == 0
    (tmp_path / "b.json").write_text("{}")
    for key in (tmp_path / "missing.pub", tmp_path):
        result = cli(*command.format(tmp=tmp_path, key=key).split())
        assert result.exit_code == 2, (command, result.output)
        assert str(key) in flat(result.stderr) and "Traceback" not in result.output, result.output


def test_a_service_refusal_is_mapped_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`send`, `source add --url` and `simulate --url` leave a live service's refusal (audit.simulator.client.SendError)
    to the one mapping of every command: `error: refused: …` and exit 1 (data refused)."""
    from audit.cli.base import EXIT_FINDINGS, exit_code_of
    from audit.simulator import client as client_mod
    from audit.simulator import live as live_sim
    from audit.simulator import sending

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise client_mod.SendError(403, "forbidden", "source venue-1 may not write stream x")

    async def refuse_async(*_args: object, **_kwargs: object) -> None:
        refuse()

    assert exit_code_of(client_mod.SendError(0, "unreachable", "no answer")) == EXIT_FINDINGS
    monkeypatch.setattr(sending, "send_file", refuse)
    monkeypatch.setattr(client_mod, "change_source", refuse_async)
    monkeypatch.setattr(live_sim, "simulate_live", refuse)
    key, events = tmp_path / "k.key", tmp_path / "e.jsonl"
    assert cli("keygen", "--name", "venue-1", "--out", str(key)).exit_code == 0
    events.write_text("")
    url = "http://127.0.0.1:9"
    for args in (["send", str(events), "--url", url, "--key", str(key)],
                 ["source", "add", "--name", "venue-1", "--key", str(tmp_path / "k.pub"), "--url", url, "--admin-key", str(key)],
                 ["simulate", "checkers", "--url", url, "--admin-key", str(key)]):
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.strip() == "error: refused: 403 forbidden: source venue-1 may not write stream x", result.output


def test_findings_exit_1_and_a_hand_that_does_not_win_exits_3(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("simulate", "checkers", "--games", "1", "--seed", "2", "--inject", "illegal-move", "--ledger", str(root),
               "--tournament", "--players", "2", "--rounds", "1").exit_code == 0
    assert cli("replay", "--ledger", str(root)).exit_code == 1
    assert cli("audit", "--ledger", str(root)).exit_code == 1
    low = cli("hu", "--hand", "一,二,三", "--json")
    assert low.exit_code == 3 and json.loads(low.stdout)["hu"] is False


def test_progress_only_on_a_terminal_and_never_with_quiet(ledger: Path) -> None:
    """Progress bars go to stderr on a terminal; a pipe, a file or --quiet gets none."""
    args = ["replay", "--ledger", str(ledger)]
    assert CliRunner().invoke(app, args).stderr == ""
    on_terminal = CliRunner().invoke(app, args, env={"TTY_COMPATIBLE": "1", "COLUMNS": "100"})
    assert "replaying games" in on_terminal.stderr and "replaying games" not in on_terminal.stdout
    quiet = CliRunner().invoke(app, [*args, "--quiet"], env={"TTY_COMPATIBLE": "1", "COLUMNS": "100"})
    assert quiet.stderr == ""


def test_demo_explains_itself_labels_the_checkpoint_and_fits_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`demo` (on smaller tournaments) says what it did and where to look next, labels the checkpoint
    block, and its standings fit 80 columns."""
    from audit.simulator import demo
    from audit.simulator.tournament import TournamentPlan

    monkeypatch.setattr(demo, "PLANS", (TournamentPlan("junqi", players=8, rounds=2, games_per_round=1, seed=2026),
                                        TournamentPlan("paohuzi", players=6, rounds=2, games_per_round=1, seed=2026),
                                        TournamentPlan("checkers", players=4, rounds=2, games_per_round=1, seed=2026)))
    result = CliRunner().invoke(app, ["demo", "--ledger", str(tmp_path / "d")], env={"COLUMNS": "80", "TTY_COMPATIBLE": "1"})
    assert result.exit_code == 0, result.output
    text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert text.startswith("matchledger demo: simulated a tournament of each game (junqi, paohuzi, checkers)")
    assert "the signed checkpoint they are proved against" in text and "\n  matchledger.demo/local\n" in text
    assert "\nnext:\n" in text and "--explain" in text and "CERTIFIED: every check passed" in text
    standings = text.split("log: ")[1].split("\n", 1)[1].split("certification")[0]
    from rich.cells import cell_len

    assert all(cell_len(line) <= 80 for line in standings.splitlines()), standings


def test_record_of_a_large_file_shows_its_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`record` draws a bar over the file's bytes (above 1 MiB; lowered here to keep the test small)."""
    from audit.cli import log
    from audit.presentation import output
    from tests.ledger_support import game_lines

    monkeypatch.setattr(log, "PROGRESS_BYTES", 1000)
    monkeypatch.setattr(output, "PROGRESS_BYTES", 1000)
    events = tmp_path / "events.jsonl"
    events.write_bytes(b"\n".join(game_lines(4, 30)) + b"\n")
    root = str(tmp_path / "l")
    assert cli("init", "--ledger", root).exit_code == 0
    result = CliRunner().invoke(app, ["record", "--ledger", root, str(events)], env={"TTY_COMPATIBLE": "1", "COLUMNS": "100"})
    assert result.exit_code == 0 and f"recording {events}" in result.stderr
    assert "appended 120 events" in result.stdout
