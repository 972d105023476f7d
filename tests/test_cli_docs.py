"""Every command has help and is documented in README.md (after sqlite-utils' test_docs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from audit.cli import app
from audit.db import VIEWS
from audit.projection import SCHEMAS
from tests.ledger_support import cli

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


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
