"""The benchmarks stay runnable: every bench/*.py module imports, and bench/spark.py prepares its
export of a small event (its setup calls the projection and the export as the CLI does), so a bench
broken by a change of a signature fails here rather than on the next measurement. Nothing is timed."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from tests.ledger_support import cli

BENCH = Path(__file__).resolve().parents[1] / "bench"
NEEDS_CHESS = {"hu_paohuzi", "replay_checkers", "replay_junqi", "replay_paohuzi"}
"""The benches whose peer is python-chess (the `bench` extra)."""


@pytest.mark.parametrize("name", sorted(path.stem for path in BENCH.glob("*.py") if path.stem != "__init__"))
def test_every_bench_module_imports(name: str) -> None:
    """A bench module that no longer imports (a moved or renamed name) fails here."""
    if name in NEEDS_CHESS:
        pytest.importorskip("chess", reason="the bench extra is not installed (pip install 'matchledger[bench]')")
    importlib.import_module(f"bench.{name}")


def test_spark_bench_prepares_the_export_of_a_small_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/spark.py's setup (copy of the event, projection, export) runs: it once unpacked three
    values from `projection_of`, which returns four, and crashed before Spark started."""
    spark = importlib.import_module("bench.spark")
    source = tmp_path / f"audit-{spark.GAMES}"  # the event bench/audit.py would build, small here
    result = cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "1", "--games-per-round", "1",
                 "--seed", "3", "--ledger", str(source), "--json")
    assert result.exit_code == 0, result.output
    monkeypatch.setattr(spark, "CACHE", tmp_path)
    ledger, out = spark.prepare()
    assert ledger == tmp_path / f"spark-{spark.GAMES}" / "ledger" and (ledger / "ledger.json").exists()
    assert json.loads((out / spark.MANIFEST).read_text())["format"] == spark.MANIFEST_FORMAT
