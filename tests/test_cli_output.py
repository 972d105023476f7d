"""Output that never hides a value (issue 16): tables fitted to 80 and 200 columns without cutting a
number, an id or an example; every `--format` parseable and equal to the JSON; booleans yes/no;
durations m:ss (milliseconds only in JSON); column legends in English and Chinese; one finding line
for every game; text boards with coordinates and a legend; README's generated tables up to date."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit.cli import app
from audit.presentation.codes import CODES, markdown_table
from audit.presentation.engine_words import rule
from audit.presentation.output import Rows
from audit.presentation.render import COLUMNS, display_cell, duration, fit_widths, fitted_table, legend_markdown, machine_cell
from audit.query.standings import DUPLICATE_COLUMNS, SWISS_COLUMNS
from replay.checkers.codes import public
from tests.ledger_support import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TOURNAMENTS = {"junqi": ("8", "2"), "checkers": ("4", "3")}


def terminal(*args: str, columns: int, env: dict[str, str] | None = None) -> str:
    """Runs the command line as on a terminal `columns` wide; returns stdout without colours."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns), "TTY_COMPATIBLE": "1", **(env or {})})
    assert result.exit_code in (0, 1), result.output
    return ANSI.sub("", result.stdout)


def width(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(line)


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """A duplicate (Junqi) and a Swiss (checkers) tournament, one ledger each."""
    out = {}
    for game, (players, rounds) in TOURNAMENTS.items():
        root = tmp_path_factory.mktemp(game) / "l"
        result = cli("simulate", game, "--tournament", "--players", players, "--rounds", rounds, "--games-per-round", "1",
                     "--seed", "5", "--ledger", str(root), "--json")
        assert result.exit_code == 0, result.output
        out[game] = (root, json.loads(result.stdout)["tournament"])
    return out


def standings_json(root: Path, tournament: str) -> dict:
    return json.loads(cli("standings", "--ledger", str(root), "--tournament", tournament, "--json").stdout)


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("game", sorted(TOURNAMENTS))
def test_standings_fit_the_terminal_and_cut_no_value(ledgers: dict, game: str, columns: int) -> None:
    """Issue 16: at 80 and 200 columns every line fits and every player id, number and duration is whole."""
    root, tournament = ledgers[game]
    text = terminal("standings", "--ledger", str(root), "--tournament", tournament, columns=columns)
    assert "…" not in text
    assert all(width(line) <= columns for line in text.splitlines()), text
    for row in standings_json(root, tournament)["rows"]:
        for column in ("player", "move_ms", "bh", "r_shown", "unresolved"):
            if column in row and row[column] is not None:
                assert display_cell(row[column], column) in text, (column, row[column], text)


def test_a_row_too_wide_is_pivoted_not_cut() -> None:
    """Rows that cannot fit even wrapped are shown as one column–value list per row."""
    rows = Rows(["stream", "message"], [["r12-t34-g5678901234567890", "x" * 30]])
    assert fit_widths(rows.columns, [list(rows.rows[0])], 20) is None
    from rich.console import Console

    out = Console(width=20, record=True, color_system=None)
    out.print(fitted_table(rows, 20))
    text = out.export_text()
    assert "r12-t34-g5678901234567890"[:12] in text and "…" not in text
    assert "".join(text.split()).count("x") == 30  # wrapped, every character kept


@pytest.mark.parametrize("game", sorted(TOURNAMENTS))
def test_every_format_parses_and_equals_the_json(ledgers: dict, game: str) -> None:
    """--format csv, tsv, json, ndjson (and --json) of the same standings carry the same rows."""
    root, tournament = ledgers[game]
    args = ("standings", "--ledger", str(root), "--tournament", tournament)
    document = standings_json(root, tournament)
    assert json.loads(cli(*args, "--format", "json").stdout) == document
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        columns, *parsed = list(csv.reader(io.StringIO(cli(*args, "--format", fmt).stdout), delimiter=delimiter))
        assert columns == (DUPLICATE_COLUMNS if game == "junqi" else SWISS_COLUMNS)
        assert parsed == [[machine_cell(r[c], c) for c in columns] for r in document["rows"]]
    ndjson = [json.loads(line) for line in cli(*args, "--format", "ndjson").stdout.splitlines()]
    assert [{k: r[k] for k in r} for r in ndjson] == [{k: r[k] for k in ndjson[0]} for r in document["rows"]]


def test_query_formats_and_plain_output_off_a_terminal(ledgers: dict) -> None:
    """`query` prints plain aligned text when stdout is not a terminal, and CSV/NDJSON on request."""
    root, _ = ledgers["checkers"]
    sql = "SELECT stream, seat, player, points, points > 0.5 AS won FROM seats ORDER BY stream, seat"
    plain = cli("query", "--ledger", str(root), sql).stdout
    assert "─" not in plain and "│" not in plain
    header, *lines = plain.splitlines()
    assert header.split() == ["stream", "seat", "player", "points", "won"]
    rows = json.loads(cli("query", "--ledger", str(root), sql, "--json").stdout)["rows"]
    assert len(lines) == len(rows) and all(line.split()[0] == r[0] for line, r in zip(lines, rows))
    assert {line.split()[-1] for line in lines} <= {"yes", "no"}
    ndjson = [json.loads(x) for x in cli("query", "--ledger", str(root), sql, "--format", "ndjson").stdout.splitlines()]
    assert [list(r.values()) for r in ndjson] == rows


def test_booleans_read_yes_no_never_blank(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: a false value printed as a blank cell (`claim_agrees`): yes/no, 是/否, true/false in CSV."""
    assert (display_cell(False), display_cell(True)) == ("no", "yes")
    assert (machine_cell(False), machine_cell(True)) == ("false", "true")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert (display_cell(False), display_cell(True)) == ("否", "是")


@pytest.mark.parametrize(("ms", "text"), [(0, "0:00"), (1000, "0:01"), (61_500, "1:01.500"), (614_010, "10:14.010"),
                                          (160_598.5, "2:40.599"), (236_527.25, "3:56.527"), (3_723_000, "1:02:03"), (-1500, "-0:01.500")])
def test_durations_are_minutes_and_seconds(ms: float, text: str) -> None:
    """Durations read m:ss (h:mm:ss from an hour) rounded to the millisecond (issue 31.14)."""
    assert duration(ms) == text
    assert display_cell(ms, "move_ms") == text and machine_cell(ms, "trimmed_ms") == text


def test_durations_are_milliseconds_only_in_json(ledgers: dict) -> None:
    root, tournament = ledgers["junqi"]
    document = standings_json(root, tournament)
    assert all(isinstance(r["move_ms"], (int, float)) for r in document["rows"])
    text = cli("standings", "--ledger", str(root), "--tournament", tournament).stdout
    assert all(duration(r["move_ms"]) in text for r in document["rows"])


@pytest.mark.parametrize("game", sorted(TOURNAMENTS))
def test_legend_names_every_column_in_english_and_chinese(ledgers: dict, game: str) -> None:
    """`standings --legend` and the footer: big = 大分, bh = 小分, ps = 累进分, r = 得分率 …"""
    root, tournament = ledgers[game]
    columns = list(standings_json(root, tournament)["rows"][0])
    legend = json.loads(cli("standings", "--ledger", str(root), "--tournament", tournament, "--legend", "--json").stdout)
    shown = [r for r in (DUPLICATE_COLUMNS if game == "junqi" else SWISS_COLUMNS) if r in columns]
    assert [r["column"] for r in legend["legend"]] == shown and all(r["zh"] and r["meaning"] for r in legend["legend"])
    footer = cli("standings", "--ledger", str(root), "--tournament", tournament).stdout.splitlines()[-1]
    assert all(f"{c} = {COLUMNS[c].zh}" in footer for c in shown)


def test_every_standings_column_has_a_legend_and_readme_lists_them() -> None:
    assert set(DUPLICATE_COLUMNS + SWISS_COLUMNS) <= set(COLUMNS)
    assert (COLUMNS["big"].zh, COLUMNS["bh"].zh, COLUMNS["ps"].zh, COLUMNS["r_shown"].zh) == ("大分", "小分", "累进分", "得分率")
    assert README.split("<!-- columns: generated -->\n")[1].split("<!-- end columns -->")[0] == legend_markdown(), \
        "README's standings columns are stale: regenerate from audit.presentation.render.legend_markdown()"


def test_readme_code_table_is_generated_from_the_registry() -> None:
    """Every finding code in README, with its rule, article and meaning (python -m audit.presentation.codes)."""
    assert README.split("<!-- codes: generated -->\n")[1].split("<!-- end codes -->")[0] == markdown_table(), \
        "README's table of finding codes is stale: run python -m audit.presentation.codes"


def _emitted_codes() -> set[str]:
    """Every code literal the engines and checks can emit, read from their source."""
    root = Path(__file__).resolve().parents[1]
    found: set[str] = set()
    for path in [*root.glob("replay/**/*.py"), *root.glob("audit/**/*.py"), *root.glob("audit/query/sql/**/*.sql")]:
        if path.name == "codes.py" and path.parent.name == "audit":
            continue
        text = path.read_text()
        found |= set(re.findall(r"['\"]((?:junqi|paohuzi|audit|ledger)\.[A-Z]\d\d)['\"]", text))
        if path.parent.name == "junqi":
            found |= {f"junqi.{c}" for c in re.findall(r"['\"]([LMTE]\d\d)['\"]", text)}
    from replay.checkers.codes import CODES as CHECKERS

    return found | {public(name) for name in CHECKERS}


def test_every_emitted_code_is_registered_and_no_registered_code_is_stale() -> None:
    emitted = _emitted_codes()
    assert sorted(emitted - set(CODES)) == [], "codes emitted but missing from audit/presentation/codes.py"
    assert sorted(set(CODES) - emitted) == [], "codes in audit/presentation/codes.py that nothing emits"


def test_registered_articles_are_the_engines() -> None:
    """The registry cites the article each engine's own table gives (one source per rule)."""
    from replay.checkers.codes import ARTICLES as CHECKERS
    from replay.junqi.layout import ARTICLES as LAYOUT
    from replay.junqi.moves import ARTICLES as MOVES

    for name, article in CHECKERS.items():
        assert CODES[public(name)].article == article, name
    for code, article in {**LAYOUT, **MOVES}.items():
        assert CODES[f"junqi.{code}"].article == article, code


def test_every_code_follows_one_scheme() -> None:
    """Issue 16: codes follow one scheme, `<namespace>.<area letter><NN>`, the severity a field of its
    own; checkers codes keep their checkers.md name (§4.7) as `name`, shown in the finding line."""
    from replay.checkers.codes import CODES as CHECKERS
    from replay.protocol import Finding

    assert [c for c in CODES if not re.fullmatch(r"(junqi|paohuzi|checkers|audit|ledger)\.[A-Z]\d\d", c)] == []
    assert {c.name for c in CODES.values() if c.code.startswith("checkers.")} == set(CHECKERS)
    assert all(c.severity == ("warning" if c.name.startswith("W_") else "error") for c in CODES.values() if c.name)
    assert (public("E_OCCUPIED"), CODES["checkers.M03"].name) == ("checkers.M03", "E_OCCUPIED")
    assert "| `checkers.M03` | `E_OCCUPIED` | error | 第一条 |" in markdown_table()
    line = Finding(stream="g", seq=4, code="checkers.M03", article="第一条", message="hole 5 is occupied").line()
    assert line.startswith("error checkers.M03 (E_OCCUPIED) (第一条, 传统1v1跳棋竞赛规则(2017)): g seq 4: "), line


def test_w04_is_an_error() -> None:
    """Issue 30 point 4 (附录三): a table seated otherwise than the movement gives is an error in every game."""
    from audit.query.tournament_checks import Expected, _compare

    (finding,) = _compare("t", 5, 2, Expected([["a", "b", "c", "d"], ["e", "f", "g", "h"]]),
                          [["a", "b", "c", "d"], ["h", "f", "g", "e"]], "duplicate")
    assert (finding.code, finding.severity) == ("audit.W04", "error") and CODES["audit.W04"].severity == "error"


def test_replay_json_carries_the_findings_in_one_format(tmp_path: Path) -> None:
    """`replay --json` gives the findings themselves, each with its seat and player; the text prints
    `severity code rule (article, rule book): stream seq N seat S/player: message`, the severity and the
    rule in Chinese first (issue 31.1)."""
    root = tmp_path / "l"
    assert cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "1", "--games-per-round", "1",
               "--seed", "3", "--inject", "illegal-move", "--ledger", str(root), "--json").exit_code == 0
    result = cli("replay", "--ledger", str(root), "--json")
    (finding,) = json.loads(result.stdout)["findings"]
    assert result.exit_code == 1 and finding["code"].startswith("junqi.") and finding["article"]
    assert finding["rule_book"] == "竞技四国军棋竞赛规则" and finding["seat"] in range(4) and finding["player"]
    text = cli("replay", "--ledger", str(root)).stdout.splitlines()[1]
    letter = "SWNE"[finding["seat"]]
    assert text == (f"违规 error {finding['code']} {rule(finding['code'])} ({finding['article']}, 竞技四国军棋竞赛规则): {finding['stream']} seq "
                    f"{finding['seq']} seat {finding['seat']} {letter}/{finding['player']}: {finding['message']}")
    rows = list(csv.DictReader(io.StringIO(cli("replay", "--ledger", str(root), "--format", "csv").stdout)))
    assert [r["code"] for r in rows] == [finding["code"]] and rows[0]["check"] == "rules"
    audit = cli("audit", "--ledger", str(root))
    assert text in audit.stdout, "audit prints the same line"
    out = tmp_path / "report.html"
    assert cli("report", "--ledger", str(root), "--game", finding["stream"], "--out", str(out)).exit_code == 0
    assert f"seat {finding['seat']} {letter}/{finding['player']}" in out.read_text(), "report names seats the same way"


def test_show_names_seats_and_frames_the_board(ledgers: dict) -> None:
    """`show` gives each seat's number, compass letter and player, the board's coordinates and a legend."""
    root, _ = ledgers["junqi"]
    game = json.loads(cli("query", "--ledger", str(root), "SELECT stream FROM games LIMIT 1", "--json").stdout)["rows"][0][0]
    players = json.loads(cli("query", "--ledger", str(root), f"SELECT player FROM seats WHERE stream = '{game}' ORDER BY seat",
                             "--json").stdout)["rows"]
    text = cli("show", "--ledger", str(root), "--game", game, "--at", "10").stdout
    assert f"seats: 0 S/{players[0][0]}, 1 W/{players[1][0]}, 2 N/{players[2][0]}, 3 E/{players[3][0]}" in text
    assert " c5 c4 c3 c2 c1 " in text and "N r6" in text and "S r6" in text and "W c1  E c5" in text
    assert "F 军旗, M 地雷, B 炸弹" in text and "1–9 工兵" in text


def test_checkers_board_lines_carry_row_and_hole_ids(ledgers: dict) -> None:
    root, _ = ledgers["checkers"]
    game = json.loads(cli("query", "--ledger", str(root), "SELECT stream FROM games LIMIT 1", "--json").stdout)["rows"][0][0]
    lines = cli("show", "--ledger", str(root), "--game", game, "--at", "0").stdout.splitlines()
    assert lines[1].startswith("座位 seats: 0 N/") and ", 1 S/" in lines[1]
    assert lines[3].split()[:2] == ["1", "0–0"] and lines[11].split()[:2] == ["9", "56–64"]
    assert any(line.startswith("legend: N seat 0's pieces") for line in lines)
