"""Issue 32.1, memory that does not follow the season: a kept projection's tables are scanned by
DuckDB from their files (audit/query/projection_cache.py `OnDisk`), never read whole into memory
to be queried, and its open files live as long as the database that reads them."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from audit.query import kept_read, projection
from audit.query.projection import SCHEMAS, project_ledger
from audit.query.session import open_session
from audit.query.standings import standings

SEED = 20261204


@pytest.fixture(scope="module")
def season(cup_and_deals: Callable[[str, int, int], Path]) -> Path:
    return cup_and_deals("kept-memory", SEED, 4)


def test_the_kept_steps_are_scanned_from_their_file_not_read_whole(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32.1: `standings` from a kept projection held the season's `steps` (0.64 GB of the
    3.1 M-entry event) and `events` whole in Arrow memory (1.26 GB peak). Now no kept file is read
    whole (reading `steps` or `events` whole is refused here), and what the Arrow pool holds after
    the answer is less than half of `steps` alone (`audit/query/kept_read.py` is how any is read)."""
    fresh = project_ledger(root).tables()
    tournament = fresh["tournaments"]["tournament"][0].as_py()
    built = open_session(root)
    expected, appeals = standings(built, tournament).rows, built.db.run("appeal_list")
    assert open_session(root, kept=True, body=False).origin.startswith("built")
    gc.collect()

    whole_read = kept_read.read
    large = {name: set(SCHEMAS[name].names) - {"body"} for name in ("steps", "events")}

    def refused(table: Any, columns: list[str] | None = None) -> pa.Table:
        if columns is None and set(table.schema.names) in large.values():
            raise AssertionError("a kept table was read whole into memory (issue 32.1)")
        return whole_read(table, columns)  # the small ones (tournaments, games) are read whole, as asked

    monkeypatch.setattr(kept_read, "read", refused)
    monkeypatch.setattr(projection, "read", refused)
    before = pa.total_allocated_bytes()
    session = open_session(root, kept=True, body=False)
    assert session.origin == "reused"
    assert standings(session, tournament).rows == expected
    assert session.db.run("appeal_list") == appeals
    held = pa.total_allocated_bytes() - before
    assert held < fresh["steps"].nbytes / 2, (held, fresh["steps"].nbytes)


def test_a_database_outlives_the_session_it_came_from(root: Path) -> None:
    """Issue 32.1: the kept tables' files are open as long as their database. `appeals` asks
    `open_session(…).db.run(…)`: the session is gone before the query runs, and with it the files
    its datasets read ("Failed to open local file '/proc/self/fd/16'" on the 3.1 M-entry event)."""
    open_session(root, kept=True, body=False)
    db = open_session(root, kept=True, body=False).db
    gc.collect()
    assert db.run("appeal_list") == open_session(root).db.run("appeal_list")
    assert db.query("SELECT count(*) FROM steps")[1] == [(project_ledger(root).tables()["steps"].num_rows,)]


def _tables(out: Path) -> dict[str, pa.Table]:
    import json

    import pyarrow.parquet as pq

    files = json.loads((out / "manifest.json").read_text())["files"]
    return {f["path"]: pq.read_table(out / f["path"]) for f in files}


def test_an_export_of_a_kept_projection_reads_the_log_as_it_writes(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32.1: `export --parquet` read the whole log into memory (and the kept tables whole)
    before writing a file (3.0 GB on the 3.1 M-entry event). From a kept projection it now reads
    `events.body` from the log batch by batch, hashed on the way (reading it whole is refused here),
    and writes the same rows, files and manifest as an export of a projection built from the log."""
    from audit.lake.export import export_parquet
    from ledger import LogReader
    from tests.ledger_support import cli

    built = tmp_path / "built"
    export_parquet(root, project_ledger(root), built)
    tournament = project_ledger(root).tournaments[0]["tournament"]
    assert cli("standings", "--ledger", str(root), "--tournament", tournament, "--json").exit_code == 0  # keeps the projection

    def refused(*args: object) -> None:
        raise AssertionError("the whole log was read into memory (issue 32.1)")

    monkeypatch.setattr(LogReader, "packed", refused)
    out = tmp_path / "kept"
    result = cli("export", "--ledger", str(root), "--parquet", str(out))
    assert result.exit_code == 0, result.output
    monkeypatch.undo()
    kept, fresh = _tables(out), _tables(built)
    assert kept.keys() == fresh.keys()
    for path, table in kept.items():  # a view's rows come in no set order (kept or not, as before): compared as a set
        assert table.schema == fresh[path].schema, path
        assert sorted(map(repr, table.to_pylist())) == sorted(map(repr, fresh[path].to_pylist())), path


def test_an_export_refuses_an_entry_changed_after_the_projection_was_kept(root: Path, tmp_path: Path) -> None:
    """Issue 32.1, "Nothing unsigned counts": the kept projection is used without reading the log, so
    the export checks the stored bytes it reads for `events.body` against the signed root; one
    signed entry edited after keeping (a valid frame and CRC) and nothing is exported."""
    from tests.ledger_support import cli, flat
    from tests.test_trust_anchor import _edit_ts

    tournament = project_ledger(root).tournaments[0]["tournament"]
    assert cli("standings", "--ledger", str(root), "--tournament", tournament, "--json").exit_code == 0
    _edit_ts(root, tournament, 1)
    out = tmp_path / "out"
    result = cli("export", "--ledger", str(root), "--parquet", str(out))
    assert result.exit_code == 1 and "the signed range was changed" in flat(result.output), result.output
    assert not (out / "manifest.json").exists()


def test_a_kept_built_table_is_loaded_in_its_kept_order(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32.1: a table the database built (`claims`, `timings`: no `entry` to order them by) is
    loaded from its kept file as one stream, so a query or an export of it gives its rows in the
    order they were kept, however many batches the file holds (a dataset's scan promises no order;
    on data this small DuckDB happens to keep it either way). DuckDB's own progress bar is off: on
    stdout it broke the JSON of `standings --format json` and `audit` on the 3.1 M-entry event."""
    import msgspec

    import audit.query.projection_cache as cache
    from ledger.derived import DerivedFiles

    monkeypatch.setattr(cache, "BATCH_ROWS", 3)  # many batches a file
    open_session(root, kept=True, body=False)
    files = DerivedFiles(root, cache.NAME)
    state = msgspec.json.decode(files.read(cache.STATE).partition(b"\n")[0], type=cache.Kept)
    _, built, _ = cache.load(files, state)
    kept = open_session(root, kept=True, body=False).db
    for name in ("claims", "timings"):
        assert kept_read.count_rows(cache.sources(built)[name]) > 3, name  # more than one batch
        expected = [(r["stream"], r["seq"]) for r in built[name].select(["stream", "seq"]).to_pylist()]
        assert kept.query(f"SELECT stream, seq FROM {name}")[1] == expected, name
    assert kept.query("SELECT current_setting('enable_progress_bar')")[1] == [(False,)]
