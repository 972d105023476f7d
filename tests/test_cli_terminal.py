"""What a referee reads in a terminal (issue 31.13, 31.14 and the terminal side of 31.1–3): captures
at 80 and 200 columns kept as goldens (`MATCHLEDGER_REGEN_GOLDEN=1` rewrites them), standings that
stay a table at 80 columns, appeals with their clock times and signatures, and a scan of the text of
every command run on the demo event for internal representations a person should never read; and
how the command line classifies errors, by type (issue 29.6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit.cli import app
from audit.presentation.render import fitted_table, wrap_header
from audit.presentation.terms import TERMINATIONS
from audit.query.db import catalogue
from tests.ledger_support import cli

GOLDEN = Path(__file__).resolve().parent / "data" / "terminal"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEX = re.compile(r"\b[0-9a-f]{64}\b")
TRUST = re.compile(r"日志公钥.*?\(root\s+<root>\)\n", re.S)
WIDTHS = (80, 200)


def run(*args: str, columns: int | None) -> tuple[int, str]:
    """Runs the command line as on a terminal `columns` wide (None: into a pipe); returns the exit code
    and stdout without colours."""
    env = {"COLUMNS": str(columns), "TTY_COMPATIBLE": "1"} if columns else {"TTY_COMPATIBLE": "0"}
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, ANSI.sub("", result.stdout)


def capture(*args: str, columns: int | None, root: Path) -> str:
    """Returns what a command prints, the ledger's path and the log's roots named, trailing spaces cut."""
    code, text = run(*args, "--ledger", str(root), columns=columns)
    assert code in (0, 1), text
    text = TRUST.sub("<trust: the log key and the verified size>\n", HEX.sub("<root>", text))  # wrapped as the path's length falls
    return "\n".join(line.rstrip() for line in text.replace(str(root), "LEDGER").splitlines()) + "\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo event (a tournament of each game, seeded: the same log every time) and what `demo` printed."""
    root = tmp_path_factory.mktemp("demo") / "l"
    code, text = run("demo", "--ledger", str(root), "--quiet", columns=80)
    assert code == 0, text
    return root, text


def _planted(tmp_path_factory: pytest.TempPathFactory, game: str, inject: str) -> Path:
    """A one-round tournament of `game` for four players with one fault of `inject` planted."""
    root = tmp_path_factory.mktemp(inject) / "l"
    result = cli("simulate", game, "--tournament", "--players", "4", "--rounds", "1", "--games-per-round", "1",
                 "--seed", "7", "--inject", inject, "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkers tournament with one illegal move planted: the commands have a finding to print."""
    return _planted(tmp_path_factory, "checkers", "illegal-move")


@pytest.fixture(scope="module")
def mistimed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Junqi tournament with one claimed move time planted false: the audit has an SQL finding (audit.T01) to print."""
    return _planted(tmp_path_factory, "junqi", "bad-move-time")


CAPTURES = {
    "standings-junqi": ("standings", "--tournament", "junqi-cup-2026", "--quiet"),
    "standings-checkers": ("standings", "--tournament", "checkers-cup-2026", "--quiet"),
    "standings-columns": ("standings", "--tournament", "paohuzi-cup-2026", "--columns", "rank,player,r_shown,move_ms", "--quiet"),
    "show-paohuzi": ("show", "--game", "paohuzi-cup-2026/r1/t1/g1"),
    "show-junqi": ("show", "--game", "junqi-cup-2026/r1/t1/g1"),
    "query-names": ("query", "--list", "--names"),
}
"""The demo event's terminal captures kept as goldens, at each of `WIDTHS`."""


def check_golden(name: str, text: str, regen: bool) -> None:
    path = GOLDEN / f"{name}.txt"
    if regen:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{path.name} differs (MATCHLEDGER_REGEN_GOLDEN=1 rewrites it; review the diff)"


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_terminal_captures_match_their_goldens(demo: tuple[Path, str], name: str, columns: int, regen_golden: bool) -> None:
    """Issue 31 Show: terminal captures at 80 and 200 columns as goldens; every line fits its width."""
    text = capture(*CAPTURES[name], columns=columns, root=demo[0])
    from rich.cells import cell_len

    assert [line for line in text.splitlines() if cell_len(line) > columns] == []
    check_golden(f"{name}-{columns}", text, regen_golden)


@pytest.mark.parametrize("columns", WIDTHS)
def test_appeals_capture_matches_its_golden(cup: object, columns: int, regen_golden: bool) -> None:
    """Issue 31.13: the terminal `appeals` at 80 and 200 columns, kept as goldens."""
    text = capture("appeals", "--quiet", columns=columns, root=cup.root)  # type: ignore[attr-defined]
    check_golden(f"appeals-{columns}", text, regen_golden)


@pytest.mark.parametrize("tournament", ["junqi-cup-2026", "paohuzi-cup-2026", "checkers-cup-2026"])
def test_standings_stay_a_table_at_80_columns(demo: tuple[Path, str], tournament: str) -> None:
    """Issue 31.14: at 80 columns the standings are one line per player under short labels, with the
    legend of the labels underneath, not a 13-line block per player; durations to the millisecond."""
    text = capture("standings", "--tournament", tournament, "--quiet", columns=80, root=demo[0])
    assert not re.search(r"^player +P\d{3}", text, re.M), "pivoted: one block per player"
    lines = text.splitlines()
    header = next(n for n, line in enumerate(lines) if line.startswith("# "))
    players = [line.split()[:2] for line in lines[header + 2:] if re.match(r"\d+ +P\d{3} ", line)]
    assert [rank for rank, _ in players] == [str(n) for n in range(1, len(players) + 1)] and len(players) >= 6
    assert "legend: # = rank 名次" in text and "status = 成绩状态" in text
    assert not re.search(r"\d:\d\d\.\d{4}", text), "a duration shows more than milliseconds"


def test_column_names_never_break_mid_word() -> None:
    """Issue 31.14: a header breaks between its words (after `_`), never inside one (`tourn/ament`)."""
    assert wrap_header("tournament", 5) == "tournament"
    assert wrap_header("direct_encounter", 8) == "direct_\nencounter"
    assert wrap_header("时限截止 window end", 12) == "时限截止\nwindow end"
    from rich.console import Console

    from audit.presentation.output import Rows

    out = Console(width=24, record=True, color_system=None)
    out.print(fitted_table(Rows(["tournament", "direct_encounter", "n"], [["t1", "–", 1]]), 24))
    assert {"tournament", "direct_", "encounter"} <= set(out.export_text().split())


def test_standings_columns_chooses_a_subset_and_refuses_an_unknown_one(demo: tuple[Path, str]) -> None:
    """Issue 31.14 `--columns`: the chosen columns in their order (the JSON rows too); an unknown one is misuse (exit 2)."""
    root = demo[0]
    result = cli("standings", "--ledger", str(root), "--tournament", "junqi-cup-2026", "--columns", "player,rank", "--json")
    import json

    assert [list(r) for r in json.loads(result.stdout)["rows"]] == [["player", "rank"]] * 8
    result = cli("standings", "--ledger", str(root), "--tournament", "junqi-cup-2026", "--columns", "rank,tourn")
    assert result.exit_code == 2 and "no such column: tourn" in result.stderr and "known: rank, player" in result.stderr


def test_query_list_names_prints_the_names_only(demo: tuple[Path, str]) -> None:
    """Issue 31.14: `query --list --names` gives one name a line; `--names` alone is misuse."""
    code, text = run("query", "--list", "--names", columns=None)
    assert code == 0 and text.split() == ["name", *(q[0] for q in catalogue())]
    assert run("query", "--names", columns=None)[0] == 2


def test_appeals_show_grounds_times_arbiter_and_signature(cup: object) -> None:
    """Issue 31.13 (README promises it): grounds, filed, window end, deadline and decided as clock
    times, never ms since the start; the verdict and the arbiter and whether its signature verified."""
    root = cup.root  # type: ignore[attr-defined]
    text = capture("appeals", "--quiet", columns=None, root=root)
    import json

    listed = json.loads(cli("appeals", "--ledger", str(root), "--json").stdout)["appeals"]
    for a in listed:
        assert a["grounds"] in text and a["arbiter"] in text
        from audit.presentation.render import clock

        for ts in ("filed_ts", "window_end_ts", "deadline_ts", "decided_ts"):
            assert clock(a[ts]) in text and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", clock(a[ts]))
            assert not re.search(rf"\b{a[ts]}\b", text), f"{ts} printed as ms"
    assert text.count("签名有效 signature verified") == len(listed)
    assert "逾期 late" in text and "按时提出 filed in time" in text and "改判结果 result overridden" in text


# --- no internal representation reaches a person (issue 31.2) -------------------------------------

LEAKS = {
    "a Python tuple": re.compile(r"\('[^']*', "),
    "True/False/None": re.compile(r"\b(True|False|None)\b"),
    "an enum name": re.compile(r"\b(?!MATCHLEDGER_)[A-Z]+(?:_[A-Z]+)+\b|\b(" + "|".join(TERMINATIONS) + r")\b"),
    "a card code": re.compile(r"(?<![\w/+=])[xd](?:10|[1-9])(?![\w/+=])"),  # not inside a base64 key or signature
    "a JSON list": re.compile(r"\[\s*[\"{\d]"),
}
"""What a person never reads in a terminal: the enum names include the rules files' code names (`E_OCCUPIED`)."""

GAMES = {"junqi": "junqi-cup-2026/r1/t1/g1", "paohuzi": "paohuzi-cup-2026/r1/t1/g1", "checkers": "checkers-cup-2026/r1/t1/g1"}
COMMANDS = [
    ("audit", "--quiet"), ("replay", "--quiet"), ("appeals", "--quiet"), ("verify",), ("query", "--list", "--names"),
    *(("standings", "--tournament", f"{g}-cup-2026", *extra, "--quiet") for g in GAMES
      for extra in ((), ("--crosstable",), ("--explain", "P001"), ("--legend",))),
    *(("show", "--game", game, *at) for game in GAMES.values() for at in ((), ("--at", "40"))),
]
"""Every command that reads the demo event and prints text for people (`query --list` without
`--names` documents the SQL, whose comparisons name the terminations as the projection stores them)."""


def leaks(text: str) -> list[str]:
    return [f"{what}: {line.strip()}" for line in text.splitlines() for what, pattern in LEAKS.items() if pattern.search(line)]


@pytest.mark.parametrize("columns", [80, None])
def test_no_internal_representation_in_any_command_text(demo: tuple[Path, str], faulty: Path, mistimed: Path,
                                                        columns: int | None) -> None:
    """Issue 31.2: the text of every command of the demo event (and of a log with an engine finding,
    and one with an SQL check's finding), on a terminal and into a pipe, holds no Python tuple,
    True/False/None, enum name, card code or JSON list."""
    root, printed = demo
    found = leaks(printed) if columns else []
    for args in COMMANDS:
        found += [f"{' '.join(args)}: {leak}" for leak in leaks(capture(*args, columns=columns, root=root))]
    for args in (("audit", "--quiet"), ("replay", "--quiet")):
        text = capture(*args, columns=columns, root=faulty)
        assert "违规 error checkers." in text, text
        found += [f"{' '.join(args)} (faulty): {leak}" for leak in leaks(text)]
    text = capture("audit", "--quiet", columns=columns, root=mistimed)
    assert "违规 error audit.T01" in text and "号事件那一手用时" in text, text
    found += [f"audit --quiet (mistimed): {leak}" for leak in leaks(text)]
    assert found == []


def test_the_leak_scan_sees_what_it_refuses() -> None:
    """The scan itself: each representation issue 31.2 names is caught."""
    caught = leaks("('E11', '营长')\nclaim_agrees True\nover: FLAG_CAPTURED\nUNVERIFIED\nhand x8 d9\nplayers [\"P001\"]\nE_OCCUPIED")
    assert len(caught) == 7, caught
    assert leaks("日志公钥 pin it with MATCHLEDGER_LOG_KEY; 军旗被夺 flag captured; 胡牌 hu") == []


def test_errors_are_classified_by_type_not_by_name() -> None:
    """Issue 29.6: the exit code of an error comes from its type (audit.cli.base._exit_codes, one
    place): a class that only shares the client's refusal's name is a bug that keeps its traceback,
    and the client's own refusal is data refused (exit 1)."""
    from audit.cli.base import EXIT_FINDINGS, EXIT_USAGE, exit_code_of
    from audit.simulator import client
    from ledger import LedgerNotFound

    impostor = type("SendError", (Exception,), {})
    assert exit_code_of(impostor("no")) is None
    assert exit_code_of(client.SendError(0, "unreachable", "no answer")) == EXIT_FINDINGS
    assert exit_code_of(ValueError("no such stream")) == EXIT_USAGE and exit_code_of(LedgerNotFound("x")) == EXIT_USAGE


def test_crosstable_json_is_one_object(demo: tuple[Path, str]) -> None:
    """README "Commands": a command given `--json` prints one JSON object; `standings --crosstable
    --json` printed the crosstable and then the standings, two objects."""
    import json

    result = cli("standings", "--ledger", str(demo[0]), "--tournament", "checkers-cup-2026", "--crosstable", "--json")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1
    assert set(json.loads(result.stdout)) == {"tournament", "format", "rounds", "rows", "trust"}


def test_lines_for_people_wrap_between_words_and_keep_long_tokens_whole() -> None:
    """Issue 31.14 (`show` fits the width): a line wider than the terminal breaks between words under
    its label; a signature or root wider than a line stays whole on its own line, to be copied."""
    from rich.cells import cell_len

    from audit.presentation.output import fit_line

    text = "legend: 一…十 small cards (小字), 壹…拾 big cards (大字); 庄 the dealer, 闲 the others; ▢ a face-down card"
    lines = fit_line(text, 40)
    assert len(lines) > 1 and all(cell_len(line) <= 40 for line in lines)
    assert " ".join(" ".join(line.split()) for line in lines) == " ".join(text.split())
    assert all(line.startswith(" " * len("legend: ")) for line in lines[1:])
    signature = "SxY7hJmZB0k9SV6MAiOl+BXSK/yiWJu1LOsIv5UR05rIAVQlEQb5S0supEKvvFcTOByOnBIM99/OY0GobHPo3Dj0+QI="
    assert fit_line(f"  — origin {signature}", 40) == ["  — origin", f"    {signature}"]
