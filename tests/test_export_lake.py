"""Issue 17 point 3, "Export fit for a lake": the Parquet export Hive-partitioned by tournament and
round with the partition columns inside each file, bounded files and row groups, typed timestamps,
a manifest any engine reads, and trino.sql (parsed by SQLGlot) registering every table in Trino's
Hive connector; a changed, missing, extra or old-format export is refused by load_parquet."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.lake.export import MANIFEST_FORMAT, ExportError, export_parquet, load_parquet, verify_export
from audit.lake.layout import NONE, PARTITIONS, TIMESTAMP, Limits, hive_escape, write_partitions
from audit.query.projection import SCHEMAS, project
from ledger import LogReader
from ledger.notes import Signer, Verifier, sign_note
from ledger.outputs import output_directory
from tests.ledger_support import cli

TOURNAMENT = "junqi-cup-4"
SMALL = Limits(file_rows=300, group_rows=64)
"""Limits small enough that the test event's partitions split in several files and row groups."""
PATH = re.compile(r"(?P<table>\w+)/tournament=(?P<tournament>[^/]+)/round=(?P<round>[^/]+)/part-\d{5}\.parquet")


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-round Junqi tournament and two checkers games outside any tournament."""
    root = tmp_path_factory.mktemp("season") / "l"
    assert cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "2", "--seed", "4", "--ledger", str(root)).exit_code == 0
    assert cli("simulate", "checkers", "--games", "2", "--ledger", str(root)).exit_code == 0
    return root


@pytest.fixture(scope="module")
def exported(season: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lake") / "out"
    export_parquet(season, project(LogReader(season).packed()), out, limits=SMALL)
    return out


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _files_by_partition(out: Path, table: str) -> dict[tuple[str, str], list[dict]]:
    parts: dict[tuple[str, str], list[dict]] = {}
    for f in _manifest(out)["files"]:
        found = PATH.fullmatch(f["path"])
        assert found, f["path"]
        if found["table"] == table:
            parts.setdefault((found["tournament"], found["round"]), []).append(f)
    return parts


def _copy(exported: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(exported, tmp_path / "copy"))


def _verifier(season: Path) -> Verifier:
    return Verifier.load(season / "signer.pub")


# -- layout -------------------------------------------------------------------------------------

def test_every_file_is_under_its_tables_tournament_and_round(exported: Path) -> None:
    manifest = _manifest(exported)
    assert manifest["format"] == MANIFEST_FORMAT == "matchledger-parquet/2" and manifest["partitioned_by"] == list(PARTITIONS)
    tables = {PATH.fullmatch(f["path"])["table"] for f in manifest["files"]}  # type: ignore[index]
    assert tables == set(manifest["tables"]) | set(manifest["derived"])


def test_games_are_partitioned_by_their_tournament_and_round(season: Path, exported: Path) -> None:
    """A game of a tournament sits in its round's partition; a game outside any sits under `none`."""
    games = project(LogReader(season).packed()).tables()["games"].to_pylist()
    expected = {(g["tournament"] or NONE, str(g["round"]) if g["round"] is not None else NONE) for g in games}
    assert expected == {(TOURNAMENT, "1"), (TOURNAMENT, "2"), (NONE, NONE)}
    assert set(_files_by_partition(exported, "games")) == expected


def test_an_event_sits_in_its_games_round_and_a_tournament_event_under_no_round(exported: Path) -> None:
    events = pq.read_table(exported / "events", partitioning=None).to_pylist()
    for event in events:
        stream = str(event["stream"])
        if stream == TOURNAMENT:
            assert (event["tournament"], event["round"]) == (TOURNAMENT, NONE)
        elif stream.startswith(f"{TOURNAMENT}/r"):
            assert (event["tournament"], event["round"]) == (TOURNAMENT, stream.split("/")[1][1:])
        else:
            assert (event["tournament"], event["round"]) == (NONE, NONE), stream


def test_partition_columns_are_the_last_text_columns_of_each_file_and_equal_its_path(exported: Path) -> None:
    """An engine reading a file without partition discovery sees the values and types of its path."""
    for f in _manifest(exported)["files"]:
        found = PATH.fullmatch(f["path"])
        assert found
        table = pq.read_table(exported / f["path"])
        assert table.column_names[-2:] == list(PARTITIONS) and all(table.schema.field(p).type == pa.string() for p in PARTITIONS)
        for column in PARTITIONS:
            assert set(table.column(column).to_pylist()) <= {found[column]}, f["path"]


def test_files_and_row_groups_are_bounded_and_a_large_partition_is_split_evenly(exported: Path) -> None:
    files = _manifest(exported)["files"]
    for f in files:
        meta = pq.read_metadata(exported / f["path"])
        assert meta.num_rows == f["rows"] <= SMALL.file_rows, f["path"]
        assert all(meta.row_group(g).num_rows <= SMALL.group_rows for g in range(meta.num_row_groups)), f["path"]
    split = {key: parts for key, parts in _files_by_partition(exported, "events").items() if len(parts) > 1}
    assert split  # the limits are small enough to show a split
    for parts in split.values():
        rows = [f["rows"] for f in parts]
        assert len(parts) == -(-sum(rows) // SMALL.file_rows) and max(rows) - min(rows) <= 1, rows


def test_a_partition_keeps_its_rows_in_entry_order_across_its_files(exported: Path) -> None:
    """Each file (and row group) then covers a narrow entry range: the manifest's and the statistics'."""
    for parts in _files_by_partition(exported, "steps").values():
        entries = [e for f in sorted(parts, key=lambda f: f["path"]) for e in pq.read_table(exported / f["path"]).column("entry").to_pylist()]
        assert entries == sorted(entries)


def test_a_partition_is_written_in_entry_order_whatever_the_tables_order(tmp_path: Path) -> None:
    """The replay's workers may give `steps` out of log order; each file still holds a run of entries
    (partitions t and u are copied in order, v is a run of the table: a slice)."""
    table = pa.table({"entry": [5, 1, 4, 0, 3, 2, 6, 7], "tournament": ["t", "u", "t", "u", "t", "u", "v", "v"], "round": ["1"] * 8})
    with output_directory(tmp_path / "out") as tree:
        paths = [w.path for w in write_partitions(table, tree, "steps", Limits(file_rows=2, group_rows=1))]
    files = [tmp_path / "out" / p for p in paths]
    written = {str(f.relative_to(tmp_path / "out" / "steps")): pq.read_table(f).column("entry").to_pylist() for f in files}
    assert written == {"tournament=t/round=1/part-00000.parquet": [3, 4], "tournament=t/round=1/part-00001.parquet": [5],
                       "tournament=u/round=1/part-00000.parquet": [0, 1], "tournament=u/round=1/part-00001.parquet": [2],
                       "tournament=v/round=1/part-00000.parquet": [6, 7]}
    assert all(pq.read_metadata(f).num_row_groups == pq.read_metadata(f).num_rows for f in files)


@pytest.mark.parametrize("columns", [("stream", "seq"), ("stream", "seat"), ("stream",)])
def test_a_table_without_entries_makes_the_same_files_in_whatever_order_its_rows_came(tmp_path: Path, columns: tuple[str, ...]) -> None:
    """DuckDB's threads build `claims`, `timings`, `results`, `seat_times` and `game_status` in any
    order: the lake orders them by stream and seq (or seat), so two exports of one log are the same bytes."""
    rows = [{"stream": f"g{i % 7}", "seq": i, "seat": i, "tournament": "t", "round": "1"} for i in range(40)]
    wanted = [*columns, "tournament", "round"]
    made = []
    for n, order in enumerate((rows, rows[::-1], rows[1::2] + rows[::2])):
        table = pa.table({c: [r[c] for r in order] for c in wanted})
        with output_directory(tmp_path / f"out{n}") as tree:
            paths = [w.path for w in write_partitions(table, tree, "claims", Limits(file_rows=8, group_rows=4))]
        made.append({p: (tmp_path / f"out{n}" / p).read_bytes() for p in paths})
    assert made[0] == made[1] == made[2]
    first = pq.read_table(tmp_path / "out0" / sorted(made[0])[0])
    assert first.select(list(columns)).to_pylist() == sorted(first.select(list(columns)).to_pylist(), key=lambda r: tuple(r.values()))


def test_an_empty_table_has_one_empty_file_under_none(exported: Path) -> None:
    empty = _files_by_partition(exported, "findings")
    assert list(empty) == [(NONE, NONE)] and [f["rows"] for f in empty[(NONE, NONE)]] == [0]
    assert pq.read_schema(exported / empty[(NONE, NONE)][0]["path"]).names[-2:] == list(PARTITIONS)


@pytest.mark.parametrize(("value", "path"), [("junqi-cup-4", "junqi-cup-4"), ("a/b=c", "a%2Fb%3Dc"), ("50% off?", "50%25 off%3F"),
                                             ("杯赛:一", "杯赛%3A一"), ("tab\there", "tab%09here")])
def test_a_partition_value_is_escaped_as_hive_escapes_it(value: str, path: str) -> None:
    """Hive's FileUtils.escapePathName: its special ASCII characters as %XX, the rest (non-ASCII too) as is."""
    assert hive_escape(value) == path


# -- types --------------------------------------------------------------------------------------

def test_every_integer_timestamp_has_a_typed_twin_and_every_timestamp_is_ms_utc(exported: Path) -> None:
    twins = 0
    for f in _manifest(exported)["files"]:
        table = pq.read_table(exported / f["path"])
        for field in table.schema:
            if pa.types.is_timestamp(field.type):
                assert field.type == TIMESTAMP, (f["path"], field)
            if (field.name == "ts" or field.name.endswith("_ts")) and pa.types.is_integer(field.type):
                at = table.column("at" if field.name == "ts" else field.name[:-2] + "at")
                assert at.type == TIMESTAMP and at.cast(pa.int64()).to_pylist() == table.column(field.name).to_pylist()
                twins += 1
    assert twins > 20


def test_load_parquet_gives_back_the_projection(season: Path, exported: Path) -> None:
    """Row for row and type for type, partition value `none` back to NULL and the added columns dropped."""
    base = project(LogReader(season).packed()).tables()
    loaded = load_parquet(exported, _verifier(season))
    assert set(loaded) == set(base)
    for name, table in loaded.items():
        assert table.schema == SCHEMAS[name], name
        assert table.sort_by("entry").to_pylist() == base[name].sort_by("entry").to_pylist(), name


# -- trino.sql ----------------------------------------------------------------------------------

def _statements(out: Path) -> list:
    import sqlglot

    return sqlglot.parse((out / "trino.sql").read_text(), read="trino", error_level=sqlglot.ErrorLevel.RAISE)


def test_trino_sql_parses_and_creates_every_table_with_its_files_columns(exported: Path) -> None:
    """Every CREATE TABLE round-trips through SQLGlot's Trino dialect with the table's name, the columns
    of its files in their order, PARQUET, the partition columns and its location under the export."""
    from sqlglot import exp

    manifest = _manifest(exported)
    created = {}
    for statement in _statements(exported):
        if isinstance(statement, exp.Create) and statement.kind == "TABLE":
            schema, properties = statement.this, statement.args["properties"]
            assert schema.this.db == "matchledger"
            location = next(p.args["value"].name for p in properties.expressions if type(p) is exp.Property and p.name == "external_location")
            created[schema.this.name] = ([c.name for c in schema.expressions], location, properties.find(exp.FileFormatProperty).name,
                                         [e.name for e in properties.find(exp.PartitionedByProperty).this.expressions])
    assert set(created) == set(manifest["tables"]) | set(manifest["derived"])
    for f in manifest["files"]:
        table = f["path"].split("/")[0]
        columns = pq.read_schema(exported / f["path"]).names
        assert created[table] == (columns, f"{exported.resolve().as_uri()}/{table}", "PARQUET", list(PARTITIONS)), table


def test_trino_sql_syncs_each_tables_partitions_after_creating_it(exported: Path) -> None:
    """The CALL statements (a Command to SQLGlot) name the schema and table just created."""
    import sqlglot
    from sqlglot import exp

    statements, last_table, synced = _statements(exported), None, []
    for statement in statements:
        if isinstance(statement, exp.Create) and statement.kind == "TABLE":
            last_table = statement.this.this.name
        elif isinstance(statement, exp.Command):
            assert statement.this == "CALL"
            call = sqlglot.parse_one(statement.expression.name, read="trino")
            assert isinstance(call, exp.Dot) and call.this.name == "system" and call.expression.name == "sync_partition_metadata"
            assert [a.name for a in call.expression.expressions] == ["matchledger", last_table, "FULL"]
            synced.append(last_table)
    assert synced and len(synced) == len(set(synced)) == sum(isinstance(s, exp.Create) and s.kind == "TABLE" for s in statements)


def test_trino_sql_and_schema_json_are_hashed_in_the_manifest(exported: Path) -> None:
    documents = _manifest(exported)["documents"]
    assert set(documents) == {"schema.json", "trino.sql"}
    for name, digest in documents.items():
        assert hashlib.sha256((exported / name).read_bytes()).hexdigest() == digest


def test_location_sets_the_tables_external_location(season: Path, tmp_path: Path) -> None:
    out = tmp_path / "pq"
    result = cli("export", "--ledger", str(season), "--parquet", str(out), "--location", "s3://lake/cups/")
    assert result.exit_code == 0, result.output
    locations = re.findall(r"external_location = '([^']*)'", (out / "trino.sql").read_text())
    assert locations and all(re.fullmatch(r"s3://lake/cups/\w+", loc) for loc in locations)
    assert cli("export", "--ledger", str(season), "--jsonl", str(tmp_path / "x.jsonl"), "--location", "s3://x").exit_code == 2
    not_uri = cli("export", "--ledger", str(season), "--parquet", str(tmp_path / "other"), "--location", "lake/cups")
    assert not_uri.exit_code == 1 and "--location 'lake/cups' is not a URI: give its scheme (s3://…, hdfs://…, file:///…)" in not_uri.stderr
    assert not (tmp_path / "other").exists()


# -- refusals -----------------------------------------------------------------------------------

def _change_one_value(path: Path) -> None:
    """Rewrites a Parquet file (still valid) with the first row's stream another game's."""
    table = pq.read_table(path)
    field = table.schema.field("stream")
    streams = table.column("stream").to_pylist()
    changed = pa.array([streams[0] + "9", *streams[1:]], pa.string()).cast(field.type)
    pq.write_table(table.set_column(table.schema.get_field_index("stream"), field, changed), path)


@pytest.mark.parametrize("table", ["events", "player_results"])  # a base table read back, a derived one not read back
def test_a_file_with_one_value_changed_is_refused(season: Path, exported: Path, tmp_path: Path, table: str) -> None:
    out = _copy(exported, tmp_path)
    victim = next(f["path"] for f in _manifest(out)["files"] if f["path"].startswith(f"{table}/") and f["rows"])
    _change_one_value(out / victim)
    with pytest.raises(ExportError, match=f"^{re.escape(victim)}: sha256 differs from the manifest$"):
        load_parquet(out, _verifier(season))


def test_a_file_missing_from_the_manifest_or_from_the_export_is_refused(season: Path, exported: Path, tmp_path: Path) -> None:
    out = _copy(exported, tmp_path)
    listed = next(f["path"] for f in _manifest(out)["files"] if f["path"].startswith("games/"))
    extra = Path(listed).with_name("part-09999.parquet")
    (out / extra).write_bytes((out / listed).read_bytes())
    with pytest.raises(ExportError, match=re.escape(f"export files differ from the manifest: extra ['{extra}'], missing []")):
        load_parquet(out, _verifier(season))
    (out / extra).unlink()
    (out / listed).unlink()
    with pytest.raises(ExportError, match=re.escape(f"export files differ from the manifest: extra [], missing ['{listed}']")):
        load_parquet(out, _verifier(season))


def test_a_changed_trino_sql_is_refused(season: Path, exported: Path, tmp_path: Path) -> None:
    out = _copy(exported, tmp_path)
    sql = out / "trino.sql"
    sql.write_text(sql.read_text().replace("file://", "s3://elsewhere"))
    with pytest.raises(ExportError, match="^trino.sql: sha256 differs from the manifest$"):
        load_parquet(out, _verifier(season))


def test_an_export_of_the_first_format_is_refused_by_name(season: Path, exported: Path, tmp_path: Path) -> None:
    """A signed matchledger-parquet/1 export (by game and tournament) gets an error naming its format."""
    out = _copy(exported, tmp_path)
    data = (out / "manifest.json").read_bytes().replace(MANIFEST_FORMAT.encode(), b"matchledger-parquet/1")
    (out / "manifest.json").write_bytes(data)
    signer = Signer.load(season / "signer.key")
    (out / "manifest.note").write_text(sign_note(f"{signer.name}\nmatchledger-parquet/1\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))
    with pytest.raises(ExportError, match=f"is a matchledger-parquet/1 export; this version reads {MANIFEST_FORMAT} only: export the ledger again"):
        load_parquet(out, _verifier(season))


def test_the_manifest_describes_each_file_from_its_footer_without_reading_it_back(season: Path, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32.1 (memory independent of the season): with reading a written file back made to fail,
    the manifest's SHA-256, rows and entry range (taken as each file is written, from its footer) are
    still those of the files on disk, and the export verifies."""
    from ledger.outputs import OutputDirectory

    def refused(*args: object) -> bytes:
        raise AssertionError("a written file was read back")

    monkeypatch.setattr(OutputDirectory, "read", refused)
    out = tmp_path / "out"
    export_parquet(season, project(LogReader(season).packed()), out, limits=SMALL)
    monkeypatch.undo()
    files = _manifest(out)["files"]
    assert any(f["entry_min"] is not None for f in files)
    for f in files:
        table = pq.read_table(out / f["path"])
        entries = table.column("entry").to_pylist() if "entry" in table.column_names else []
        assert (f["sha256"], f["rows"]) == (hashlib.sha256((out / f["path"]).read_bytes()).hexdigest(), table.num_rows), f["path"]
        assert (f["entry_min"], f["entry_max"]) == ((min(entries), max(entries)) if entries else (None, None)), f["path"]
    assert len(verify_export(out, _verifier(season)).files) == len(files)
