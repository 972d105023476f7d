"""Every command has help and is documented in README.md (after sqlite-utils' test_docs)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
import typer.main

from audit.cli import app
from audit.cli.results import RESULTS, Planted
from audit.query.db import VIEWS
from audit.query.projection import SCHEMAS
from tests.ledger_support import cli

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
TRUST_KEYS = {"key", "name", "key_id", "pinned", "from", "verified_size", "verified_root"}
"""The keys of `trust` (audit.cli.base.trust_document), which README names once, above the table."""


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help_and_is_documented(name: str) -> None:
    result = cli(name, "--help")
    assert result.exit_code == 0 and "Usage:" in result.output
    assert f"matchledger {name}" in README, f"README.md does not document `matchledger {name}`"


def test_readme_opens_with_the_two_setup_commands() -> None:
    blocks = [b.split("```")[0].strip() for b in README.split("```sh\n")[1:3]]
    assert blocks[0].endswith("matchledger demo")
    assert "pytest" in blocks[1]


@pytest.mark.parametrize("name", sorted([*SCHEMAS, *VIEWS]))
def test_projection_table_or_view_is_documented(name: str) -> None:
    """README lists every table and view `query` can read (issue 6: "README lists the tables and views")."""
    section = README.split("## The projection")[1].split("\n## ")[0]
    assert f"`{name}`" in section or f"`{name}(" in section, f"README.md does not list `{name}`"


def _keys_cell(command: str) -> str:
    """Returns the `--json` keys column of every README row of a command, joined."""
    lines = README.splitlines()
    cells = [[*line.rstrip(" |").rsplit(" | ", 1), ""][1] for line in lines]
    rows = [n for n, line in enumerate(lines) if line.startswith(f"| `matchledger {command} ")]
    assert rows, f"README has no row for `matchledger {command}`"
    return " ".join(_resolved(cells, n) for n in rows)


def _resolved(cells: list[str], n: int) -> str:
    """Returns a keys cell with the rows above it that its `same` refers to."""
    return cells[n] + (" " + _resolved(cells, n - 1) if cells[n].startswith("same") else "")


@pytest.mark.parametrize("command", sorted(RESULTS))
def test_readme_json_keys_are_the_result_types_fields(command: str) -> None:
    """Issue 29.6: a command's `--json` keys are declared once, as the fields of its result type
    (audit/cli/results.py, `planted`'s own among them); README's keys column names each of them, and
    each key it names outside parentheses is one of them or of `trust` (`same` refers to the row above)."""
    cell = _keys_cell(command)
    documented = set(re.findall(r"`([a-z_]+)`", cell))
    fields = {f.name for t in RESULTS[command] for f in msgspec.structs.fields(t)}
    fields |= {f.name for t in (Planted,) for f in msgspec.structs.fields(t)} if "planted" in fields else set()
    assert fields - documented == set(), f"README omits {sorted(fields - documented)} of `{command} --json`"
    nested = {f.name for t in RESULTS[command] for f in msgspec.structs.fields(t) if f.name == "trust"} and TRUST_KEYS
    top = set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^()]*\)", "", cell)))  # a list's own keys are named in parentheses
    assert top - fields - nested == set(), f"README names keys `{command} --json` does not print: {sorted(top - fields - nested)}"
