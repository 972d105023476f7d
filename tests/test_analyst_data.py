"""Issue 16, "Queries and the analyst's data": named queries with parameters, the data dictionary
and README's table, the per-player results and game lengths, the Parquet export read by pyarrow,
pandas and DuckDB, and the per-game text record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from audit.presentation.dictionary import describe_columns, readme_table
from audit.query.db import QUERIES
from tests.ledger_support import cli, flat

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
TOURNAMENT = "junqi-cup-4"


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Junqi tournament, and single games of checkers and Paohuzi outside any tournament."""
    root = tmp_path_factory.mktemp("season") / "l"
    assert cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "2", "--seed", "4", "--ledger", str(root)).exit_code == 0
    for game in ("checkers", "paohuzi"):
        assert cli("simulate", game, "--games", "2", "--ledger", str(root)).exit_code == 0
    return root


def _query(root: Path, *args: str) -> dict:
    result = cli("query", "--ledger", str(root), *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- named queries ----------------------------------------------------------------------------

def test_list_names_each_query_view_and_table_once() -> None:
    rows = json.loads(cli("query", "--list", "--json").stdout)["rows"]
    names = [r[0] for r in rows]
    assert len(names) == len(set(names)) and {"player_results", "game_lengths", "move_time"} <= set(names)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_named_query_runs_by_name_with_its_parameters(season: Path, name: str) -> None:
    """Datasette's canned queries: each `-- name:` file of audit/query/sql/ runs with --name and --param."""
    params = {"tournament": TOURNAMENT, "through": 2, "round": 1, "player": "P001", "game": f"{TOURNAMENT}/r1/t1/g1"}
    given = [f"--param={p}={params[p]}" for p in QUERIES[name].params]
    out = _query(season, "--name", name, *given)
    assert out["columns"], name


def test_move_time_by_name_equals_its_sql(season: Path) -> None:
    by_name = _query(season, "--name", "move_time", "--param", f"tournament={TOURNAMENT}")
    sql = QUERIES["move_time"].sql.replace("$tournament", f"'{TOURNAMENT}'")
    by_sql = json.loads(cli("query", "--ledger", str(season), "--json", "--", sql).stdout)
    assert by_name == by_sql and len(by_name["rows"]) == 8


@pytest.mark.parametrize(("args", "message"), [
    (["--name", "move_time", "--param", "season=1"], "has no parameter season; it takes tournament"),
    (["--name", "nope"], "no query named 'nope'"),
    (["--name", "move_time", "--param", "tournament"], "write NAME=VALUE"),
    (["SELECT 1", "--name", "move_time"], "not both"),
])
def test_named_query_usage_errors_exit_2(season: Path, args: list[str], message: str) -> None:
    result = cli("query", "--ledger", str(season), *args)
    assert result.exit_code == 2 and message in flat(result.output), result.output


# -- the data dictionary ----------------------------------------------------------------------

def test_every_column_of_every_table_and_view_has_a_meaning() -> None:
    """One source: a column added to the projection or a view without a meaning fails here."""
    missing = [(t, c) for t, c, _, meaning in describe_columns() if not meaning]
    assert missing == []


def test_describe_lists_a_tables_columns_with_types_and_meanings() -> None:
    out = json.loads(cli("query", "--describe", "games", "--json").stdout)
    assert out["columns"] == ["table", "column", "type", "meaning"]
    rows = {r[1]: r for r in out["rows"]}
    assert "game type" in rows["game"][3] and "id of the game" in rows["stream"][3]
    assert rows["started_ts"][2] == "BIGINT"
    assert cli("query", "--describe", "nowhere").exit_code == 2  # issue 30 point 14: what does not exist


def test_readme_table_of_the_projection_is_generated_from_the_dictionary() -> None:
    """README's table is `python -m audit.presentation.dictionary`'s output; regenerate it when this fails."""
    assert readme_table() in README


# -- per-player results and game length -------------------------------------------------------

def test_player_results_agree_with_the_tables_they_summarise(season: Path) -> None:
    rows = _query(season, "SELECT game, stream, player, seat, result, points, moves, own_ms, game_moves, game_minutes FROM player_results")["rows"]
    seats = _query(season, "SELECT count(*) FROM seats")["rows"][0][0]
    assert len(rows) == seats and {r[0] for r in rows} == {"junqi", "checkers", "paohuzi"}
    per_game: dict[str, int] = {}
    for _game, stream, _p, _s, result, _pts, moves, _ms, _game_moves, minutes in rows:
        per_game[stream] = per_game.get(stream, 0) + moves
        assert result in ("win", "loss", "draw") and minutes >= 0
    lengths = dict(_query(season, "SELECT stream, moves FROM game_lengths")["rows"])
    assert per_game == lengths and all(n > 0 for n in lengths.values())
    times = _query(season, "SELECT sum(own_ms) = (SELECT sum(ms) FROM seat_times) FROM player_results")["rows"][0][0]
    assert times is True


def test_junqi_alliances_win_together(season: Path) -> None:
    """junqi.md: seats 0 and 2 play against 1 and 3; a decided game has two winners of one alliance."""
    rows = _query(season, "SELECT stream, list(seat ORDER BY seat) FROM player_results "
                          "WHERE game = 'junqi' AND result = 'win' GROUP BY stream")["rows"]
    assert rows and all(seats in ([0, 2], [1, 3]) for _, seats in rows)


# -- Parquet ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exported(season: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pq") / "out"
    assert cli("export", "--ledger", str(season), "--parquet", str(out)).exit_code == 0
    return out


def test_every_manifest_table_has_a_file(exported: Path) -> None:
    manifest = json.loads((exported / "manifest.json").read_text())
    tables = manifest["tables"] + manifest["derived"]
    assert {"timings", "seat_times", "results", "player_results", "game_lengths", "board_mp", "moves"} <= set(manifest["derived"])
    for table in tables:
        assert any(f["path"].startswith(f"{table}/") for f in manifest["files"]), table
    empty = [f for f in manifest["files"] if f["rows"] == 0]
    assert empty  # the findings of a clean season: an empty file with the full schema


def test_manifest_rows_are_the_files_read_back_whole(exported: Path) -> None:
    """The manifest describes each file from its footer's statistics: the same hash, row count and
    entry range as reading the file back whole (what the export did before)."""
    import hashlib

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    manifest = json.loads((exported / "manifest.json").read_text())
    with_entries = 0
    for f in manifest["files"]:
        path = exported / f["path"]
        table = pq.read_table(path)
        entries = table.column("entry") if "entry" in table.column_names else None
        with_entries += entries is not None and table.num_rows > 0
        assert f == {"path": f["path"], "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": table.num_rows,
                     "entry_min": pc.min(entries).as_py() if entries is not None else None,
                     "entry_max": pc.max(entries).as_py() if entries is not None else None}, f["path"]
    assert with_entries > 10


def test_the_export_reads_with_pyarrow_pandas_and_duckdb(exported: Path) -> None:
    import duckdb
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as ds

    manifest = json.loads((exported / "manifest.json").read_text())
    con = duckdb.connect()
    rows: dict[str, int] = {}
    for f in manifest["files"]:
        rows[f["path"].split("/")[0]] = rows.get(f["path"].split("/")[0], 0) + f["rows"]
    for table, count in rows.items():  # the files hold their partition columns: no partition discovery needed
        arrow = ds.dataset(exported / table, format="parquet", partitioning=None).to_table()
        frame = pd.read_parquet(exported / table, partitioning=None)
        ((duck,),) = con.execute(f"SELECT count(*) FROM read_parquet('{exported / table}/**/*.parquet', hive_partitioning = true)").fetchall()
        assert arrow.num_rows == len(frame) == duck == count, table
    games = ds.dataset(exported / "games", format="parquet", partitioning=None).to_table()
    assert set(games["tournament"].to_pylist()) == {TOURNAMENT, "none"}  # a single game has a real partition value
    assert games.schema.field("started_at").type == pa.timestamp("ms", tz="UTC")
    assert games["started_at"][0].value == games["started_ts"][0].as_py()
    assert games.schema.field("stream").metadata[b"description"].startswith(b"id of the game")


def test_schema_json_describes_every_column(exported: Path) -> None:
    schema = json.loads((exported / "schema.json").read_text())
    assert {"events", "games", "player_results", "timings"} <= set(schema)
    undescribed = [(t, c["name"]) for t, entry in schema.items() for c in entry["columns"] if not c["description"]]
    assert undescribed == []


def test_query_over_the_export_still_equals_the_ledger(season: Path, exported: Path) -> None:
    sql = "SELECT stream, tournament, player, points FROM player_results ORDER BY stream, seat"
    from_export = cli("query", "--parquet", str(exported), "--key", str(season / "signer.pub"), sql, "--json")
    assert from_export.exit_code == 0, from_export.output
    assert json.loads(from_export.stdout) == _query(season, sql, "--key", str(season / "signer.pub"))  # the same key, pinned


def test_a_single_game_export_reads_back(tmp_path: Path) -> None:
    import pandas as pd

    root, out = tmp_path / "l", tmp_path / "pq"
    assert cli("simulate", "checkers", "--games", "1", "--ledger", str(root)).exit_code == 0
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    assert len(pd.read_parquet(out / "games", partitioning=None)) == 1 and len(pd.read_parquet(out / "tournaments", partitioning=None)) == 0


# -- the game record --------------------------------------------------------------------------

def test_a_game_record_has_its_tags_moves_and_clock(season: Path) -> None:
    stream = f"{TOURNAMENT}/r1/t1/g1"
    result = cli("export", "--ledger", str(season), "--game", stream, "--format", "record")
    assert result.exit_code == 0, result.output
    text = result.stdout
    tags = dict(re.findall(r'^\[(\w+) "(.*)"\]$', text, re.MULTILINE))
    assert tags["Event"] == "junqi cup 4" and tags["Round"] == "1" and tags["Table"] == "1" and tags["Stream"] == stream
    assert {"Seat0", "Seat1", "Seat2", "Seat3", "Profile", "Result", "Termination"} <= set(tags)
    moves = re.findall(r"^\d+\. S(\d) (\S+) ([A-Z0-9]+>[A-Z0-9]+)( \{\[%emt \d:\d\d:\d\d\.\d\]\})?$", text, re.MULTILINE)
    (length,) = _query(season, f"SELECT moves FROM game_lengths WHERE stream = '{stream}'")["rows"][0]
    assert len(moves) == length and all(clock for *_, clock in moves)
    assert text.rstrip().endswith(tags["Result"])


def test_a_tournaments_records_are_one_file_per_game(season: Path, tmp_path: Path) -> None:
    out = tmp_path / "records"
    result = cli("export", "--ledger", str(season), "--tournament", TOURNAMENT, "--format", "record", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    (games,) = _query(season, f"SELECT count(*) FROM games WHERE tournament = '{TOURNAMENT}'")["rows"][0]
    assert json.loads(result.stdout)["games"] == games == len(list(out.iterdir()))


@pytest.mark.parametrize("game", ["checkers", "paohuzi"])
def test_records_of_the_other_games(season: Path, game: str) -> None:
    result = cli("export", "--ledger", str(season), "--game", f"sim-{game}-1-g1", "--format", "record")
    assert result.exit_code == 0 and '[Tournament "?"]' in result.stdout and re.search(r"^1\. S\d ", result.stdout, re.MULTILINE)
