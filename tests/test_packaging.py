"""A non-editable install carries every data file the code reads: each `.sql` file (the views
included), the report's script and each JSON schema match a package-data pattern of pyproject.toml.
README's test command and `.ci/run` run what they should and say how it went: the OpenSpiel oracle
installed from the `[oracle]` extra, pytest's summary line, one switch for the golden files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CI = (ROOT / ".ci" / "run").read_text()
README = (ROOT / "README.md").read_text()


def test_every_data_file_is_package_data() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]
    for package, suffix in (("audit", ".sql"), ("audit", ".js"), ("schemas", ".json")):
        files = [p.relative_to(ROOT / package) for p in (ROOT / package).rglob(f"*{suffix}")]
        assert files, package
        for path in files:
            assert any(path.match(pattern) and len(path.parts) == len(Path(pattern).parts) for pattern in patterns[package]), path


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_readmes_test_command_ends_with_pytests_summary_line() -> None:
    """Issue 32 goal 6: README's `pytest -q` on top of a `-q` in addopts printed only dots, no
    "N passed"; run as README says, pytest's last line is its summary."""
    command = README.split("```sh\n")[2].split("```")[0].strip()
    assert command.endswith("python -m pytest -q")
    test = "tests/test_packaging.py::test_every_data_file_is_package_data"
    run = _pytest("-q", test)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.fullmatch(r"1 passed in [0-9.]+s", run.stdout.strip().splitlines()[-1]), run.stdout


def test_ci_and_readme_install_and_require_the_openspiel_oracle() -> None:
    """Issue 29 Build 9: pyspiel comes from the `[oracle]` extra, which README's test command and
    .ci/run install, and CI fails rather than skips tests/test_checkers_oracle.py without it."""
    assert any(requirement.startswith("open_spiel") for requirement in PYPROJECT["project"]["optional-dependencies"]["oracle"])
    assert "oracle" in README.split("```sh\n")[2].split("```")[0]
    assert re.search(r"pip install -q -e '\.\[[a-z,]*oracle[a-z,]*\]'", CI)
    assert "MATCHLEDGER_REQUIRE_ORACLE=1" in CI and "MATCHLEDGER_REQUIRE_COMPILED=1" in CI
    assert "--durations=15" in CI


def test_one_switch_regenerates_the_golden_files() -> None:
    """Issue 29 Build 9: the golden tests had two switches (MATCHLEDGER_REGEN and
    MATCHLEDGER_REGEN_GOLDEN); only conftest.py reads one now, and the tests take its fixture."""
    readers = {path.name for path in (ROOT / "tests").glob("*.py") if re.search(r"\"MATCHLEDGER_REGEN\w*\"", path.read_text(encoding="utf-8"))}
    assert readers == {"conftest.py"}
    assert "MATCHLEDGER_REGEN_GOLDEN=1" in README


def test_the_former_switch_name_stops_the_run() -> None:
    """Issue 29 Build 9: one regeneration switch. MATCHLEDGER_REGEN, its former name, is a usage
    error (exit 4) naming the one to set, not silently ignored while the goldens stay as they were."""
    from tests.conftest import REGEN_GOLDEN, RETIRED_SWITCHES

    env = {name: value for name, value in os.environ.items() if name != REGEN_GOLDEN} | {RETIRED_SWITCHES[0]: "1"}
    test = "tests/test_layering.py::test_the_cycle_finder_finds_a_cycle"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", test], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{RETIRED_SWITCHES[0]} is no longer read: set {REGEN_GOLDEN}=1" in run.stderr


def test_the_slow_marker_is_registered() -> None:
    run = _pytest("--markers")
    assert "@pytest.mark.slow: takes more than about 20 s" in run.stdout
