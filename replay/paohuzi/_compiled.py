"""Keeps an editable install from running stale compiled modules: when a source compiled in place by
setup.py (mypyc) has changed since, every compiled module is imported from its `.py` file instead,
with a warning. Never compiled itself; imported by the package before any compiled module."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent
MANIFEST = HERE / "compiled.sha256"
"""Written by an in-place build: `sha256  name.py` for each source compiled (absent otherwise)."""


def compiled_sources() -> dict[str, str]:
    """Returns the modules compiled in place with the SHA-256 of the source each was compiled from."""
    try:
        lines = MANIFEST.read_text(encoding="ascii").splitlines()
    except FileNotFoundError:
        return {}
    return {name.removesuffix(".py"): digest for digest, name in (line.split() for line in lines)}


def changed_sources(compiled: dict[str, str]) -> list[str]:
    """Returns the compiled modules whose source no longer hashes as it did when compiled."""
    return [name for name, digest in compiled.items() if _sha256(HERE / f"{name}.py") != digest]


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class SourceFinder:
    """Finds the named modules of this package in their `.py` files, ahead of their compiled build."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != __package__ or name not in self.names:
            return None
        return importlib.util.spec_from_file_location(fullname, HERE / f"{name}.py")


def use_sources_if_changed() -> None:
    """Imports all compiled modules from their sources when any source changed since the build."""
    compiled = compiled_sources()
    changed = changed_sources(compiled)
    if changed:
        # All of them: compiled modules call each other directly, not through the imported module.
        sys.meta_path.insert(0, SourceFinder(list(compiled)))
        warnings.warn(f"replay/paohuzi/{', '.join(f'{name}.py' for name in changed)} changed since compiled: "
                      "running the sources; rebuild with `pip install -e .`", stacklevel=2)


use_sources_if_changed()
