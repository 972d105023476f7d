"""A non-editable install carries every data file the code reads: each `.sql` file (the views
included), the report's script and each JSON schema match a package-data pattern of pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_data_file_is_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package, suffix in (("audit", ".sql"), ("audit", ".js"), ("schemas", ".json")):
        files = [p.relative_to(ROOT / package) for p in (ROOT / package).rglob(f"*{suffix}")]
        assert files, package
        for path in files:
            assert any(path.match(pattern) and len(path.parts) == len(Path(pattern).parts) for pattern in patterns[package]), path
