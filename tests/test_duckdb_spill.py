"""The audit's DuckDB connections (`scratch_connection`) hold at most `MEMORY_LIMIT` of sorts,
windows and hash tables and spill the rest to a temp directory of their own, which goes with the
connection (issue 32, goal 1: a season's windows held 600–900 MB in memory). What a query gives
must not depend on whether it spilled."""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import duckdb
import pytest

from audit.query.db import MEMORY_LIMIT, scratch_connection

# The 50-step check's shape (`junqi_quiet`): a count since the last contact, over a window per game.
QUIET = """
WITH m AS (SELECT i // 300 AS game, i AS seq, hash(i) % 10 = 0 AS contact,
                  row_number() OVER (PARTITION BY i // 300 ORDER BY i) AS n FROM range(3000000) t(i))
SELECT sum(quiet), max(quiet), count(*) FROM (
  SELECT CASE WHEN contact THEN 0 ELSE n - coalesce(last_value(CASE WHEN contact THEN n END IGNORE NULLS)
         OVER (PARTITION BY game ORDER BY seq ROWS UNBOUNDED PRECEDING), 0) END AS quiet FROM m)
"""


def _spill_dirs() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("matchledger-duckdb-")}


def test_a_window_larger_than_the_limit_spills_and_gives_the_same_rows() -> None:
    expected = scratch_connection("4GB").execute(QUIET).fetchall()
    assert expected[0][2] == 3_000_000 and expected[0][1] > 0
    assert scratch_connection("64MB").execute(QUIET).fetchall() == expected
    with pytest.raises(duckdb.OutOfMemoryException):  # at that limit, only the spill lets it finish
        duckdb.connect(":memory:", config={"memory_limit": "64MB", "temp_directory": ""}).execute(QUIET).fetchall()


def test_the_audit_database_spills_at_the_limit() -> None:
    con = scratch_connection()
    assert MEMORY_LIMIT == "256MB"
    (spill,) = con.execute("SELECT current_setting('temp_directory')").fetchall()[0]
    assert spill.startswith(str(Path(tempfile.gettempdir()) / "matchledger-duckdb-"))


def test_the_spill_directory_goes_with_the_connection() -> None:
    before = _spill_dirs()
    con = scratch_connection()
    made = _spill_dirs() - before
    assert len(made) == 1
    con.execute("SELECT 1").fetchall()
    con.close()
    del con
    gc.collect()
    assert not made & _spill_dirs()
