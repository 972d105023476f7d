"""Every Spark call of matchledger but the replay's: the session, the export's tables read from its
manifest's file list, the views of `audit/query/sql/views/` and the named queries, in Spark SQL.

The tables are read from the files the manifest lists, not discovered under a directory layout
(each file holds its partition columns itself, matchledger-parquet/2), each on an executor that
parses it from the very bytes whose SHA-256 it checks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from audit.lake.export import ManifestFile
from audit.query.db import QUERIES, AuditError, check_call, word_tables
from audit.query.projection import SCHEMAS
from audit.spark.sql import TranslationError, spark_query, spark_relations, spark_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

LOCAL = "local[2]"
SETTINGS = {
    "spark.sql.shuffle.partitions": "4",  # a few partitions per core: the default 200 costs more in tasks than it gains
    "spark.driver.memory": "2g",
    "spark.sql.adaptive.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.ansi.enabled": "false",  # DuckDB's casts of JSON text that is not a number give NULL, not an error
    "spark.sql.legacy.sizeOfNull": "false",  # the size of a NULL list is NULL, as in DuckDB, not -1
    "spark.sql.runSQLOnFiles": "false",  # no SELECT … FROM parquet.`/any/path`: SQL reads the export's tables only
}
"""The session's settings: what local[2] on a small machine needs (a cluster's own override them
through --conf or spark-defaults.conf, which a master URL brings)."""


def spark_session(master: str | None = None) -> SparkSession:
    """Returns the Spark session, started on `master` (local[2] when none is given)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master or LOCAL).appName("matchledger")
    for key, value in SETTINGS.items():
        builder = builder.config(key, value)
    if (master or LOCAL).startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers replay with this interpreter's packages
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")
    return spark


def read_table(spark: SparkSession, out: Path, name: str, files: list[ManifestFile]) -> DataFrame:
    """Reads one table of an export with the projection's columns and types (a partition value
    `none` as NULL, without the columns the export adds), each file on an executor, parsed from the
    bytes whose SHA-256 it checks there against the manifest: the driver's check before (which
    refuses a changed export before Spark starts) cannot be outrun by a file changed after it.

    :raises ExportError: (in the job, as Spark's error) when a file differs or lacks a column.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = pa.schema([pa.field(f.name, plain_type(f.type)) for f in SCHEMAS[name]])
    listing = spark.createDataFrame([(f.path, f.sha256, f.rows) for f in files], "path string, sha256 string, rows long")
    spread = listing.repartition(max(1, min(len(files), spark.sparkContext.defaultParallelism)))
    return spread.mapInArrow(_file_reader(str(out), name, schema), from_arrow_schema(schema))


def _file_reader(out: str, name: str, schema: pa.Schema) -> Any:
    """Returns the executors' reader of a table's files: the verified file's rows, as Spark holds them."""
    from audit.lake.export import ManifestFile, read_verified_file

    def read(listings: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for listing in listings:
            for row in listing.to_pylist():
                f = ManifestFile(row["path"], row["sha256"], row["rows"], None, None)
                yield from read_verified_file(Path(out), name, f).cast(schema).to_batches(max_chunksize=1 << 16)

    return read


def check_files(spark: SparkSession, out: Path, files: list[ManifestFile]) -> None:
    """Checks files of an export against the manifest's SHA-256, each hashed on an executor as it
    streams from disk (a MiB at a time: neither the driver nor an executor holds a whole file); the
    driver gets a digest a file and compares them in the manifest's order, so the file it names
    is the first changed one, as a check in one process names it.

    :raises ExportError: naming the first file that differs or cannot be read.
    """
    from audit.lake.export import ExportError

    if not files:
        return
    listing = spark.createDataFrame([(f.path,) for f in files], "path string")
    spread = listing.repartition(max(1, min(len(files), spark.sparkContext.defaultParallelism)))
    digests = {row["path"]: (row["sha256"], row["error"])
               for row in spread.mapInArrow(_file_hasher(str(out)), "path string, sha256 string, error string").collect()}
    for f in files:
        digest, error = digests.get(f.path, (None, "not hashed"))
        if error is not None:
            raise ExportError(f"{f.path}: cannot be read ({error})")
        if digest != f.sha256:
            raise ExportError(f"{f.path}: sha256 differs from the manifest")


def _file_hasher(out: str) -> Any:
    """Returns the executors' hasher: a row (path, SHA-256 hex, error) for each listed file."""

    def hashed(listings: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        import hashlib

        for listing in listings:
            rows: list[tuple[str, str | None, str | None]] = []
            for path in listing.column("path").to_pylist():
                digest = hashlib.sha256()
                try:
                    with open(Path(out) / path, "rb") as f:
                        while chunk := f.read(1 << 20):
                            digest.update(chunk)
                    rows.append((path, digest.hexdigest(), None))
                except OSError as exc:
                    rows.append((path, None, exc.strerror or type(exc).__name__))
            yield pa.RecordBatch.from_pylist([dict(zip(("path", "sha256", "error"), row)) for row in rows],
                                             schema=pa.schema([("path", pa.string()), ("sha256", pa.string()), ("error", pa.string())]))

    return hashed


_PLAIN = {pa.large_string(): pa.string(), pa.dictionary(pa.int32(), pa.string()): pa.string()}


def plain_type(kind: pa.DataType) -> pa.DataType:
    """Returns an Arrow type as Spark holds it: a dictionary of strings or a large string as a string."""
    return _PLAIN.get(kind, kind)


def _group_check(check: Callable[[list[dict[str, Any]]], list[Any]], keys: tuple[str, ...]) -> Any:
    """Returns the executors' side of `per_group`: one group's rows to `check`, its results pickled."""

    def run(group: pa.Table) -> pa.Table:
        import pickle

        rows = group.to_pylist()
        found = check(rows)
        schema = pa.schema([*(group.schema.field(k) for k in keys), ("ordinal", pa.int64()), ("result", pa.binary())])
        key_values = {k: [rows[0][k] if rows else None] * len(found) for k in keys}
        return pa.table({**key_values, "ordinal": list(range(len(found))), "result": [pickle.dumps(f) for f in found]}, schema=schema)

    return run


class SparkDB:
    """The export's tables and what `audit/query/sql/views/` derives from them, as Spark temp views; runs
    the named queries and read-only SQL like `audit.query.db.AuditDB`."""

    def __init__(self, spark: SparkSession, tables: dict[str, DataFrame]) -> None:
        """Registers the tables (cached: every check reads them) and builds the views and tables."""
        self.spark = spark
        for name, frame in tables.items():
            frame.cache().createOrReplaceTempView(name)
        spark.sql("SELECT CAST(NULL AS BIGINT) AS ts WHERE false").createOrReplaceTempView("as_of")  # game_status: the default time
        for name, words in word_tables().items():  # the checks' messages name terminations in words
            spark.createDataFrame(words.to_pylist(), "name string, zh string, en string").createOrReplaceTempView(name)
        for relation in spark_relations():
            made = spark.sql(relation.select)
            if relation.kept:
                made = made.cache()
            made.createOrReplaceTempView(relation.name)

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Runs a named query with its parameters (those it does not take are ignored) and returns
        the rows as dicts.

        :raises AuditError: when the query is unknown, does not translate or fails.
        """
        columns, rows = self._named(name, params)
        return [dict(zip(columns, row)) for row in rows]

    def run_named(self, name: str, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a named query for a user with the parameters given (the others NULL).

        :raises AuditError: when the query is unknown, a parameter is not one of its own, or it fails.
        """
        check_call(name, params)
        return self._named(name, params)

    def per_group(self, name: str, keys: tuple[str, ...], check: Callable[[list[dict[str, Any]]], list[Any]], **params: Any) -> Iterator[Any]:
        """Runs a named query (with its parameters) and `check` on each group of its rows with the same
        `keys`, on the executors (a grouped map: the rows stay there); yields what each call returned,
        in the keys' order (NULL as ''), as `AuditDB.per_group` does.

        :raises AuditError: when the query does not translate or fails.
        """
        import pickle

        from pyspark.errors import PySparkException

        try:
            steps = spark_query(name, params)
        except TranslationError as exc:
            raise AuditError(f"query {name}: {exc}") from None
        try:
            for view, select in steps.ctes:
                self._step(name, view, select)
            frame = self.spark.sql(steps.select)
            ddl = ", ".join([*(f"{f.name} {f.dataType.simpleString()}" for f in (frame.schema[k] for k in keys)), "ordinal long", "result binary"])
            rows = frame.groupBy(*keys).applyInArrow(_group_check(check, keys), ddl).collect()
        except PySparkException as exc:
            raise AuditError(f"query {name}: {exc}") from None
        finally:
            for view, _ in steps.ctes:
                self.spark.catalog.dropTempView(view)
        for row in sorted(rows, key=lambda r: (tuple("" if r[k] is None else r[k] for k in keys), r["ordinal"])):
            yield pickle.loads(row["result"])  # noqa: S301 (written by this code on the executors)

    def query(self, sql: str, timeout: float = 60.0) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs a user's read-only SELECT, written in DuckDB's dialect like every query of the
        project, on Spark; stops it after `timeout` seconds.

        :raises AuditError: when it is not a single SELECT, does not translate, runs too long or fails.
        """
        try:
            translated = spark_sql(sql)
        except TranslationError as exc:
            raise AuditError(str(exc)) from None
        if not _is_select(translated):
            raise AuditError("only read-only queries are allowed: one SELECT or WITH … SELECT")
        called = _java_calls(translated)
        if called:
            raise AuditError(f"{', '.join(called)}: calls into the JVM are not allowed in a query")
        return self._collect("query", translated, timeout)

    def _named(self, name: str, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        if name not in QUERIES:
            check_call(name, params)  # raises, naming the known queries
        try:
            steps = spark_query(name, params)
        except TranslationError as exc:
            raise AuditError(f"query {name}: {exc}") from None
        try:
            for view, select in steps.ctes:
                self._step(name, view, select)
            return self._collect(name, steps.select)
        finally:
            for view, _ in steps.ctes:
                self.spark.catalog.dropTempView(view)

    def _step(self, name: str, view: str, select: str) -> None:
        """Builds one CTE of a query and keeps it as a temp view (computed now, its plan cut off)."""
        from pyspark.errors import PySparkException

        try:
            self.spark.sql(select).localCheckpoint(eager=True).createOrReplaceTempView(view)
        except PySparkException as exc:
            raise AuditError(f"query {name}: {exc}") from None

    def _collect(self, name: str, sql: str, timeout: float | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        from pyspark.errors import PySparkException

        group = f"matchledger-{name}"
        self.spark.sparkContext.setJobGroup(group, name, interruptOnCancel=True)
        timer = _Timer(timeout, lambda: self.spark.sparkContext.cancelJobGroup(group))
        try:
            frame = self.spark.sql(sql)
            rows = frame.collect()
        except PySparkException as exc:
            if timer.fired:
                raise AuditError(f"query stopped after {timeout:g} s (--timeout)") from None
            raise AuditError(f"query {name}: {exc}") from None
        finally:
            timer.cancel()
        return frame.columns, [tuple(_plain(v) for v in row) for row in rows]


class _Timer:
    """Calls `stop` after `seconds` (never when None) unless cancelled first."""

    def __init__(self, seconds: float | None, stop: Any) -> None:
        import threading

        self.fired = False
        self._timer = threading.Timer(seconds, self._fire, [stop]) if seconds is not None else None
        if self._timer is not None:
            self._timer.start()

    def _fire(self, stop: Any) -> None:
        self.fired = True
        stop()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _is_select(sql: str) -> bool:
    import sqlglot
    from sqlglot import exp

    statements = sqlglot.parse(sql, read="spark")
    return len(statements) == 1 and isinstance(statements[0], exp.Query)


_JAVA = frozenset({"reflect", "java_method", "try_reflect"})
"""Spark SQL functions that call any Java method: a query could run code or read files through them."""


def _java_calls(sql: str) -> list[str]:
    import sqlglot
    from sqlglot import exp

    return sorted({f.name.lower() for f in sqlglot.parse_one(sql, read="spark").find_all(exp.Anonymous) if f.name.lower() in _JAVA})


def _plain(value: Any) -> Any:
    """Returns a Spark value as DuckDB's Python API gives it: a struct as a dict, lists of them too."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
