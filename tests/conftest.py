"""What every test module shares: the `slow` marker, the one switch that regenerates golden files,
and the fixtures several modules used to declare each for itself.

- `slow`: a test that takes more than about 20 s on a quiet 2-core machine (`--durations` shows
  them; `.ci/run` prints the 15 slowest). `pytest -m "not slow"` leaves them out while you work.
- `MATCHLEDGER_REGEN_GOLDEN=1` rewrites every golden file (the games' stored playthroughs) from
  the code instead of comparing, after a deliberate rule change: review the diff before committing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
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
    from tests.serve_support import LOG_ORIGIN

    root = tmp_path / "L"
    init(root, LOG_ORIGIN)
    return root


@pytest.fixture(scope="session")
def simulated_season(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """Builds a ledger with `matchledger simulate ARGS… --ledger DIR` and keeps its public key as made
    beside it (`genuine.pub`: the key an operator pins, out of an insider's reach)."""
    from ledger.layout import PUBLIC_KEY
    from tests.ledger_support import cli

    def build(name: str, *simulate: str) -> Path:
        root = tmp_path_factory.mktemp(name) / "ledger"
        made = cli("simulate", *simulate, "--ledger", str(root), "--json")
        assert made.exit_code == 0, made.output
        shutil.copy(root / PUBLIC_KEY, root.parent / "genuine.pub")
        return root

    return build


@pytest.fixture(scope="session")
def cup_and_deals(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int, int], Path]:
    """Builds a small ledger in-process: a 4-player, 2-round checkers tournament (movement ranking)
    and `deals` Paohuzi games beside it, from `seed`: the kept-projection and memory tests' season."""
    from audit.query.session import movement_ranking
    from audit.simulator.simulate import simulate_games
    from audit.simulator.tournament import TournamentPlan, simulate_tournament
    from ledger import init

    def build(name: str, seed: int, deals: int) -> Path:
        root = tmp_path_factory.mktemp(name) / "ledger"
        init(root)
        simulate_tournament(root, TournamentPlan("checkers", players=4, rounds=2, games_per_round=1, seed=seed), movement_ranking)
        simulate_games(root, "paohuzi", deals, seed)
        return root

    return build


@pytest.fixture
def root(season: Path, tmp_path: Path) -> Path:
    """A fresh copy of the module's `season` ledger, without the files derived from it: a test may damage it."""
    copy = tmp_path / "ledger"
    shutil.copytree(season, copy)
    shutil.rmtree(copy / "derived", ignore_errors=True)
    return copy


@pytest.fixture
def genuine(season: Path) -> str:
    """The public key of the module's `season` as it was made (`simulated_season`)."""
    return str(season.parent / "genuine.pub")


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The arbitrated checkers tournament of tests/test_arbitration.py (appeals, decisions, rulings
    already recorded), built once per module that uses it."""
    from tests.test_arbitration import build_cup

    return build_cup(tmp_path_factory)

