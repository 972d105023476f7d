"""What every test module shares: the `slow` marker, the one switch that regenerates golden files,
and the fixtures several modules used to declare each for itself.

- `slow`: a test that takes more than about 20 s on a quiet 2-core machine (`--durations` shows
  them; `.ci/run` prints the 15 slowest). `pytest -m "not slow"` leaves them out while you work.
- `MATCHLEDGER_REGEN_GOLDEN=1` rewrites every golden file (the games' stored playthroughs) from
  the code instead of comparing, after a deliberate rule change: review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REGEN_GOLDEN = "MATCHLEDGER_REGEN_GOLDEN"
"""The environment variable that makes the golden tests rewrite their files."""
RETIRED_SWITCHES = ("MATCHLEDGER_REGEN",)
"""Former names of the switch: set, they stop the run rather than be ignored while nothing is rewritten."""


def pytest_configure(config: pytest.Config) -> None:
    for name in RETIRED_SWITCHES:
        if name in os.environ:
            raise pytest.UsageError(f"{name} 已不再使用：请设 {REGEN_GOLDEN}=1 重写金样文件 "
                                    f"({name} is no longer read: set {REGEN_GOLDEN}=1 to rewrite the golden files)")
    config.addinivalue_line("markers", "slow: takes more than about 20 s on a quiet 2-core machine (deselect with -m 'not slow')")


@pytest.fixture
def regen_golden() -> bool:
    """Tells a golden test to rewrite its stored files instead of comparing (MATCHLEDGER_REGEN_GOLDEN=1)."""
    return bool(os.environ.get(REGEN_GOLDEN))


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    """An empty ledger (origin `serve.test/log`) with a fresh signing key, for the service's tests."""
    from ledger import init

    root = tmp_path / "L"
    init(root, "serve.test/log")
    return root


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The arbitrated checkers tournament of tests/test_arbitration.py (appeals, decisions, rulings
    already recorded), built once per module that uses it."""
    from tests.test_arbitration import build_cup

    return build_cup(tmp_path_factory)

