"""Picks, for each game package whose rule modules setup.py compiled in place with mypyc, the
compiled build or the `.py` sources.

An editable build records the hash of each source it compiled in the package's `compiled.sha256`.
When one of them has changed since, every compiled module of that package is imported from its
`.py` file instead, with a warning, so an edit is never silently ignored until the next
`pip install -e .`. Setting `MATCHLEDGER_NO_MYPYC=1` at run time imports the sources of every
package compiled in place, to test or compare them without reinstalling.

Never compiled itself; each compiled package imports it before any of its modules.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

MANIFEST = "compiled.sha256"
"""Written into a game package by an in-place build: `sha256  name.py` per compiled source (absent otherwise)."""
ROOT = Path(__file__).parent


def compiled_sources(package: Path) -> dict[str, str]:
    """Returns the modules of a package compiled in place, with the SHA-256 of the source each was compiled from."""
    try:
        lines = (package / MANIFEST).read_text(encoding="ascii").splitlines()
    except FileNotFoundError:
        return {}
    return {name.removesuffix(".py"): digest for digest, name in (line.split() for line in lines)}


def changed_sources(package: Path, compiled: dict[str, str]) -> list[str]:
    """Returns the compiled modules whose source no longer hashes as it did when compiled."""
    return [name for name, digest in compiled.items() if _sha256(package / f"{name}.py") != digest]


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class SourceFinder:
    """Finds the named modules in their `.py` files, ahead of their compiled build."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        return None if source is None else importlib.util.spec_from_file_location(fullname, source)


def sources_to_run(root: Path, prefix: str, everywhere: bool) -> tuple[dict[str, Path], list[str]]:
    """Returns the compiled modules of the packages under `root` (named `prefix.<package>.<module>`)
    to import from their sources, with the changed source files (relative to `root`) that made it so:
    every module of a package with a changed source, or of every package when `everywhere`."""
    sources: dict[str, Path] = {}
    changed: list[str] = []
    for package in sorted(path.parent for path in root.glob(f"*/{MANIFEST}")):
        compiled = compiled_sources(package)
        stale = changed_sources(package, compiled)
        changed += [f"{package.name}/{name}.py" for name in stale]
        if stale or everywhere:
            # All of them: compiled modules call each other directly, not through the imported module.
            sources.update({f"{prefix}.{package.name}.{name}": package / f"{name}.py" for name in compiled})
    return sources, changed


def use_sources_where_needed() -> None:
    """Makes the stale compiled packages (or all, under `MATCHLEDGER_NO_MYPYC`) import their sources."""
    sources, changed = sources_to_run(ROOT, __package__ or "replay", everywhere=bool(os.environ.get("MATCHLEDGER_NO_MYPYC")))
    if sources:
        sys.meta_path.insert(0, SourceFinder(sources))
    if changed:
        warnings.warn(f"{', '.join(f'replay/{path}' for path in changed)} changed since compiled: that game's rule "
                      "modules run from their sources; rebuild with `pip install -e .`", stacklevel=2)


use_sources_where_needed()
