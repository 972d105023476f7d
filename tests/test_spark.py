"""The audit on Apache Spark over a Parquet export (issue 17): every named query and view translates
from its DuckDB source; an export that does not match its signed manifest is refused before Spark
starts; and `audit --engine spark` gives the same JSON as the DuckDB audit of the ledger, on the demo event and
on a simulated tournament of each game, clean and with every planted fault (`--inject`).

The Spark tests skip, saying why, where Spark cannot run (no pyspark, no Java); with
MATCHLEDGER_REQUIRE_SPARK=1 (CI) they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.query.db import QUERIES, VIEWS
from tests.ledger_support import cli

sqlglot = pytest.importorskip("sqlglot", reason="the spark extra is not installed (pip install 'matchledger[spark]')")

from audit.lake.export import ExportError  # noqa: E402
from audit.spark.sql import spark_query, spark_relations, spark_sql  # noqa: E402

PLAYERS = {"junqi": 8, "paohuzi": 6, "checkers": 4}  # two tables each: a fault of the seating or the deal needs them
SEED = 5
FAULTS = ["illegal-move", "false-result", "wrong-score", "wrong-seating", "tampered-deal", "bad-move-time"]
"""Every `--inject` fault but bad-byte: a ledger with a changed byte cannot be exported (export
refuses it), so there is no export for Spark to audit; a changed export is refused below."""


def _spark_missing() -> str | None:
    """Returns why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'matchledger[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and (Path(java_home) / "bin" / "java").exists()):
        return "no Java runtime (apt-get install default-jre-headless)"
    return None


@pytest.fixture(scope="module")
def spark_ready() -> None:
    reason = _spark_missing()
    if reason is not None:
        if os.environ.get("MATCHLEDGER_REQUIRE_SPARK") == "1":
            pytest.fail(f"MATCHLEDGER_REQUIRE_SPARK=1 but Spark cannot run: {reason}")
        pytest.skip(reason)


# -- translation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_named_query_translates_to_spark_sql(name: str) -> None:
    steps = spark_query(name, {p: None for p in QUERIES[name].params})
    macros = {v.name for v in VIEWS.values() if v.kind == "macro"}
    for _, select in [*steps.ctes, ("final", steps.select)]:
        tree = sqlglot.parse_one(select, read="spark")
        assert isinstance(tree, sqlglot.exp.Query)
        assert tree.find(sqlglot.exp.Placeholder) is None  # every parameter given as a literal
        assert not [t for t in tree.find_all(sqlglot.exp.Table) if t.name in macros]  # every macro call expanded


def test_every_view_and_table_translates_to_spark_sql() -> None:
    relations = spark_relations()
    assert [r.name for r in relations] == [v.name for v in VIEWS.values() if v.kind != "macro"]
    for relation in relations:
        assert isinstance(sqlglot.parse_one(relation.select, read="spark"), sqlglot.exp.Query), relation.name


REWRITES = [  # DuckDB, and the Spark SQL the translation must give: each rule SQLGlot's dialects lack
    ("SELECT list(x ORDER BY y) FROM t",
     "SELECT TRANSFORM(ARRAY_SORT(COLLECT_LIST(STRUCT(x AS v, y AS k0)), (a, b) -> CASE WHEN a.k0 IS NULL AND b.k0 IS NULL THEN 0 "
     "WHEN a.k0 IS NULL THEN 1 WHEN b.k0 IS NULL THEN -1 WHEN a.k0 < b.k0 THEN -1 WHEN a.k0 > b.k0 THEN 1 ELSE 0 END), s -> s.v) FROM t"),
    ("SELECT list(DISTINCT r ORDER BY r) FROM t", "SELECT ARRAY_SORT(COLLECT_SET(r)) FROM t"),
    ("SELECT avg(r ORDER BY s) FROM t", "SELECT AVG(r) FROM t"),
    ("SELECT 100.0 * mp / top FROM t", "SELECT CAST(100.0 * mp AS DOUBLE) / top FROM t"),
    ("SELECT any_value(x) FROM t", "SELECT ANY_VALUE(x, TRUE) FROM t"),
    ("SELECT format('{} of {}', a, b) FROM t",
     "SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE FORMAT_STRING('%s of %s', CAST(a AS STRING), CAST(b AS STRING)) END FROM t"),
    ("SELECT c.points[s.seat + 1], f[1] FROM t", "SELECT ELEMENT_AT(c.points, s.seat + 1), f[0] FROM t"),
    ("SELECT json_extract(body, ['$.a', '$.b']) AS f FROM t",
     "SELECT ARRAY(GET_JSON_OBJECT(body, '$.a'), GET_JSON_OBJECT(body, '$.b')) AS f FROM t"),
]


@pytest.mark.parametrize(("duckdb", "spark"), REWRITES)
def test_translation_rewrites_what_the_dialects_lack(duckdb: str, spark: str) -> None:
    assert spark_sql(duckdb) == spark


def test_a_table_macro_call_becomes_its_body_with_the_arguments() -> None:
    steps = spark_query("ranking_through", {"tournament": "cup-1", "through": 2})
    text = " ".join(select for _, select in steps.ctes)
    assert "tournament = 'cup-1'" in text and "round <= COALESCE(2, 1000000)" in text  # $through NULL: every round
    assert [name for name, _ in steps.ctes][:2] == ["ranking_through__standings__rules", "ranking_through__standings__r"]
    assert "FROM (SELECT" in steps.select and "standings(" not in steps.select


# -- the export checked before Spark starts ------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A ledger of a small Junqi tournament and its export."""
    base = tmp_path_factory.mktemp("export")
    root, out = base / "l", base / "pq"
    _simulate(root, "junqi")
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    return root, out


def _tamper_value(out: Path) -> str:
    """Changes one value of one exported Parquet file (a seat's player), keeping its schema."""
    path = next(p for p in sorted((out / "seats").rglob("*.parquet")) if pq.read_metadata(p).num_rows)
    table = pq.read_table(path)
    players = table["player"].to_pylist()
    players[0] = "someone-else"
    pq.write_table(table.set_column(table.schema.get_field_index("player"), table.schema.field("player"),
                                    pa.array(players, table.schema.field("player").type)), path)
    return "sha256 differs from the manifest"


def _add_unlisted(out: Path) -> str:
    source = next((out / "games").rglob("*.parquet"))
    shutil.copy(source, source.with_name("part-extra.parquet"))
    return "export files differ from the manifest: extra"


def _remove_listed(out: Path) -> str:
    next((out / "findings").rglob("*.parquet")).unlink()
    return "export files differ from the manifest: extra [], missing"


@pytest.mark.parametrize("damage", [_add_unlisted, _remove_listed])
def test_a_changed_export_is_refused_before_spark_starts(exported: tuple[Path, Path], tmp_path: Path, damage, monkeypatch) -> None:
    """A listing that is not the signed manifest's (a file added or removed) is refused by the driver
    before Spark starts; a changed file's bytes, by the executors' hashes (below)."""
    import audit.spark.db

    root, original = exported
    out = tmp_path / "pq"
    shutil.copytree(original, out)
    expected = damage(out)
    started = []
    monkeypatch.setattr(audit.spark.db, "spark_session", lambda master=None: started.append(master))
    from audit.spark.session import open_export
    from ledger import Verifier

    with pytest.raises(ExportError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        open_export(out, Verifier.load(root / "signer.pub"))
    assert started == []
    result = cli("audit", "--engine", "spark", "--parquet", str(out), "--key", str(root / "signer.pub"))
    assert result.exit_code == 1 and expected in result.stderr and started == []


@pytest.mark.slow
def test_entries_that_do_not_hash_to_the_signed_root_are_refused(exported: tuple[Path, Path], tmp_path: Path, spark_ready: None) -> None:
    """An export whose manifest is signed (here: re-signed with the ledger's own key after an event
    was changed) but whose entries are not those the checkpoint signs is refused before any query."""
    root, original = exported
    out = tmp_path / "pq"
    shutil.copytree(original, out)
    path = next(p for p in sorted((out / "events").rglob("*.parquet")) if pq.read_metadata(p).num_rows)
    table = pq.read_table(path)
    bodies = table["body"].to_pylist()
    bodies[-1] = bodies[-1].replace('"ts":', '"ts": ', 1)
    pq.write_table(table.set_column(table.schema.get_field_index("body"), table.schema.field("body"),
                                    pa.array(bodies, table.schema.field("body").type)), path)
    _resign(root, out)
    from audit.spark.session import open_export
    from ledger import Verifier

    with pytest.raises(ExportError, match="the export.s entries hash to [0-9a-f]{64}, not to the checkpoint.s root [0-9a-f]{64} at size"):
        open_export(out, Verifier.load(root / "signer.pub"))


def test_a_file_changed_after_the_drivers_check_is_refused_by_the_executors(exported: tuple[Path, Path], tmp_path: Path,
                                                                           spark_ready: None, monkeypatch) -> None:
    """The executors parse each file from the bytes whose SHA-256 they check: a file changed between
    the driver's check of the manifest and Spark's read (someone with write access racing the audit) is refused."""
    import audit.spark.session
    from audit.lake.export import verify_export
    from audit.spark.session import open_export
    from ledger import Verifier

    root, original = exported
    out = tmp_path / "pq"
    shutil.copytree(original, out)

    def checked_then_changed(out: Path, verifier: Verifier, files: bool = True):  # noqa: ANN202
        manifest = verify_export(out, verifier, files)
        path = next(p for p in sorted((out / "players").rglob("*.parquet")) if pq.read_metadata(p).num_rows)
        table = pq.read_table(path)  # a table Spark reads (seats, steps, games and findings it derives again)
        names = table["name"].to_pylist()
        names[0] = "someone-else"
        pq.write_table(table.set_column(table.schema.get_field_index("name"), table.schema.field("name"),
                                        pa.array(names, table.schema.field("name").type)), path)
        return manifest

    monkeypatch.setattr(audit.spark.session, "verify_export", checked_then_changed)
    with pytest.raises(ExportError, match=r"players/.*\.parquet: sha256 differs from the manifest"):
        open_export(out, Verifier.load(root / "signer.pub"))


@pytest.mark.slow
def test_a_changed_file_is_refused_by_the_executors_hashes(exported: tuple[Path, Path], tmp_path: Path, spark_ready: None) -> None:
    """Tamper-evidence of an export (DESIGN "Nothing unsigned counts"): the files' SHA-256 are checked
    on the executors now, not by the driver; a changed file of a table they derive again (`seats`,
    never parsed) is still refused, named, before any query, by the CLI too (exit 1)."""
    from audit.spark.session import open_export
    from ledger import Verifier

    root, original = exported
    out = tmp_path / "pq"
    shutil.copytree(original, out)
    expected = _tamper_value(out)
    with pytest.raises(ExportError, match=r"seats/.*\.parquet: sha256 differs from the manifest"):
        open_export(out, Verifier.load(root / "signer.pub"))
    result = cli("audit", "--engine", "spark", "--parquet", str(out), "--key", str(root / "signer.pub"))
    assert result.exit_code == 1 and expected in result.stderr


def test_the_executors_hashes_name_the_first_changed_file_in_manifest_order(exported: tuple[Path, Path], tmp_path: Path,
                                                                           spark_ready: None) -> None:
    """The executors' digests are combined on the driver in the manifest's order: of two changed
    files the first listed is named, whichever executor finished first; an unreadable file is named too."""
    from audit.lake.export import verify_export
    from audit.spark.db import check_files, spark_session
    from ledger import Verifier

    root, original = exported
    out = tmp_path / "pq"
    shutil.copytree(original, out)
    manifest = verify_export(out, Verifier.load(root / "signer.pub"))
    spark = spark_session()
    check_files(spark, out, manifest.files)  # unchanged: every digest is the manifest's
    listed = [f for f in manifest.files if f.rows]
    first, last = listed[0], listed[-1]
    for f in (last, first):
        with open(out / f.path, "ab") as changed:
            changed.write(b"\0")
    for _ in range(2):
        with pytest.raises(ExportError, match=f"^{first.path}: sha256 differs from the manifest$"):
            check_files(spark, out, manifest.files)
    (out / first.path).unlink()
    with pytest.raises(ExportError, match=f"^{first.path}: cannot be read"):
        check_files(spark, out, manifest.files)


def _resign(root: Path, out: Path) -> None:
    """Rewrites an export's manifest with its files' hashes as they are now, signed by the ledger's key."""
    import hashlib

    from audit.lake.export import MANIFEST, MANIFEST_FORMAT, MANIFEST_NOTE
    from ledger import Signer
    from ledger.layout import PRIVATE_KEY
    from ledger.notes import sign_note

    manifest = json.loads((out / MANIFEST).read_text())
    for f in manifest["files"]:
        f["sha256"] = hashlib.sha256((out / f["path"]).read_bytes()).hexdigest()
    data = json.dumps(manifest).encode()
    (out / MANIFEST).write_bytes(data)
    signer = Signer.load(root / PRIVATE_KEY)
    (out / MANIFEST_NOTE).write_text(sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))


# -- same answers ------------------------------------------------------------------------------


def _simulate(root: Path, game: str, *extra: str) -> None:
    result = cli("simulate", game, "--tournament", "--players", str(PLAYERS[game]), "--rounds", "2", "--games-per-round", "1",
                 "--seed", str(SEED), "--ledger", str(root), "--json", *extra)
    assert result.exit_code == 0, result.output


def pinned(root: Path) -> tuple[str, ...]:
    """The ledger side's options: the same key pinned as the export side's `--key` (the outputs say which key)."""
    return ("--ledger", str(root), "--key", str(root / "signer.pub"))


def _json(*args: str) -> tuple[int, dict]:
    result = cli(*args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


CASES = ["clean", *FAULTS]


@pytest.mark.slow
@pytest.mark.parametrize("fault", CASES)
def test_spark_audit_gives_the_duckdb_audits_json(tmp_path: Path, fault: str, spark_ready: None) -> None:
    """A tournament of each game in one ledger, the fault planted in every game it applies to. The
    standings are compared for every tournament when clean and, with a fault, for one tournament
    taken in turn (each game's standings under two faults): each Spark command opens the export
    again, and CI's time goes on that, not on what the comparison shows."""
    root, out = tmp_path / "l", tmp_path / "pq"
    for game in sorted(PLAYERS):
        planted = () if fault == "clean" or (fault == "tampered-deal" and game != "paohuzi") else ("--inject", fault)
        _simulate(root, game, *planted)
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    spark = ("--engine", "spark", "--parquet", str(out), "--key", str(root / "signer.pub"))
    local = _json("audit", *pinned(root))
    assert _json("audit", *spark) == local
    assert (local[0] == 0) == (fault == "clean"), local[1]["reason"]  # a Swiss round seated wrongly is an error, not a warning
    games = sorted(PLAYERS) if fault == "clean" else [sorted(PLAYERS)[CASES.index(fault) % len(PLAYERS)]]
    for game in games:
        tournament = f"{game}-cup-{SEED}"  # the simulator names a tournament after its game and seed
        assert _json("standings", "--tournament", tournament, *spark) == _json("standings", "--tournament", tournament, *pinned(root))


@pytest.mark.slow
def test_spark_audit_of_the_demo_event_gives_the_duckdb_audits_json(tmp_path: Path, spark_ready: None) -> None:
    root, out = tmp_path / "l", tmp_path / "pq"
    demo = cli("demo", "--ledger", str(root), "--json")
    assert demo.exit_code == 0, demo.output
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    spark = ("--engine", "spark", "--parquet", str(out), "--key", str(root / "signer.pub"))
    assert _json("audit", *spark) == _json("audit", *pinned(root))
    for tournament in json.loads(demo.stdout)["tournaments"]:
        assert _json("standings", "--tournament", tournament, *spark) == _json("standings", "--tournament", tournament, *pinned(root))


class _Collected:
    """Records every row Spark hands to the driver (collect, toArrow, toPandas, toLocalIterator)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from pyspark.sql.classic.dataframe import DataFrame  # pyspark 4: where the methods are (take and tail call collect)

        self.rows: list[tuple] = []
        for name in ("collect", "toArrow", "toPandas", "toLocalIterator"):
            monkeypatch.setattr(DataFrame, name, self._counted(getattr(DataFrame, name), name))

    def _counted(self, original, name: str):  # noqa: ANN001, ANN202
        def call(frame, *args, **kwargs):  # noqa: ANN001, ANN202
            got = original(frame, *args, **kwargs)
            if name == "toArrow":
                self.rows += [tuple(r.values()) for r in got.to_pylist()]
            elif name == "toPandas":
                self.rows += list(got.itertuples(index=False))
            elif name == "toLocalIterator":
                got = list(got)
                self.rows += [tuple(r) for r in got]
                return iter(got)
            else:
                self.rows += [tuple(r) for r in got]
            return got

        return call

    def naming(self, streams: set[str]) -> list[tuple]:
        return [row for row in self.rows if any(isinstance(v, str) and v in streams for v in row)]


@pytest.mark.slow
def test_no_row_per_game_reaches_the_driver(tmp_path: Path, spark_ready: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 goal 4 (Spark, the driver's share): the certification of an export brings no row
    per game to the driver, neither the games and seats tables nor the Paohuzi boards' deal events
    (第五条, checked board by board on the executors); only counts, tile roots, tournament rows and
    findings. Replays it on a Junqi and a Paohuzi tournament, clean."""
    from audit.certification.certify import certify, certify_session
    from audit.lake.export import load_parquet
    from audit.spark.session import open_export
    from ledger import Verifier

    root, out = tmp_path / "l", tmp_path / "pq"
    for game in ("junqi", "paohuzi"):
        _simulate(root, game)
    assert cli("export", "--ledger", str(root), "--parquet", str(out)).exit_code == 0
    verifier = Verifier.load(root / "signer.pub")
    games = set(load_parquet(out, verifier)["games"]["stream"].to_pylist())
    boards = load_parquet(out, verifier)["games"]["board"].to_pylist()
    assert len(games) >= 8 and any(boards)  # enough games to tell, and boards for the deal check
    collected = _Collected(monkeypatch)
    report, session = open_export(out, verifier)
    remote = certify_session(report, session)
    local = certify(root)
    assert (remote.ok, remote.games, remote.findings, remote.warnings) == (local.ok, local.games, local.findings, local.warnings)
    assert remote.ok and remote.games == len(games)
    faulted = {row["stream"] for row in remote.warnings}
    named = collected.naming(games)
    assert {v for row in named for v in row if v in games} <= faulted, named[:5]
    assert len(named) <= 3 * len(remote.warnings)  # a finding's own rows, not one per game
    assert len(collected.rows) < len(games) * 20  # tile roots, counts, tournament rows: far fewer than the events
    before = len(collected.naming(games))
    assert {g["stream"] for g in session.projection.games} == games  # asked for, the games do come (the count above can see them)
    assert len(collected.naming(games)) - before == len(games)


@pytest.mark.slow
def test_spark_query_runs_named_queries_and_refuses_writes(exported: tuple[Path, Path], spark_ready: None) -> None:
    root, out = exported
    spark = ("--engine", "spark", "--parquet", str(out), "--key", str(root / "signer.pub"))
    named = ("--name", "step_counts")
    assert _json("query", *named, *spark) == _json("query", *named, *pinned(root))
    sql = "SELECT stream, count(*) AS n FROM steps GROUP BY stream ORDER BY stream"
    assert _json("query", sql, *spark) == _json("query", sql, *pinned(root))
    for sql, refusal in [("DELETE FROM events", "only read-only queries are allowed"),
                         ("SELECT reflect('java.lang.System', 'getenv', 'HOME')", "calls into the JVM are not allowed"),
                         (f'SELECT * FROM parquet."{out}/events"', ""), (f"SELECT * FROM read_parquet('{out}/events/*/*/*.parquet')", "")]:
        refused = cli("query", sql, *spark)
        assert refused.exit_code == 2 and refusal in refused.stderr, sql
