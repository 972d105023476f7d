"""Picks, for each game package whose rule modules setup.py compiled in place with mypyc, the
compiled build or the `.py` sources.

An editable build records the hash of each source it compiled in the package's `compiled.sha256`.
When one of them has changed since, every compiled module of that package is imported from its
`.py` file instead, with a warning, so an edit is never silently ignored until the next
`pip install -e .`. Setting `MATCHLEDGER_NO_MYPYC=1` at run time imports the sources of every
package compiled in place, to test or compare them without reinstalling.

It also tells how each game's rules run in this process (`group_states`, shown by `matchledger
--version` and `demo`), from what the build recorded in `compiled.json` (setup.py): a group that
the build was asked to compile but that is not here (skipped, or its files gone) gets a warning,
once per process, since pip hides the build's own warning under `-q`.

Never compiled itself; each compiled package imports it before any of its modules.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

MANIFEST = "compiled.sha256"
"""Written into a game package by an in-place build: `sha256  name.py` per compiled source (absent otherwise)."""
RECORD = "compiled.json"
"""Written into replay/ by every build (setup.py's `RECORD`): whether mypyc was asked for, and per game
its state (`compiled`, `skipped` with why, `off`) and modules."""
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


@dataclass(frozen=True)
class GroupState:
    """How one game's rule modules run in this process, and why not compiled when they are not."""

    game: str
    compiled: bool
    why: str = ""
    missing: bool = False
    """The build was asked to compile the group (MATCHLEDGER_NO_MYPYC unset), yet it is not here."""


def build_record(root: Path) -> dict[str, Any] | None:
    """Returns what the build recorded in `root/compiled.json`, or None without a readable record."""
    try:
        record = json.loads((root / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("groups"), dict) else None


def is_built(package: Path, modules: Sequence[str]) -> bool:
    """Tells whether every module has a compiled build beside its source."""
    return bool(modules) and all(any((package / f"{m}{suffix}").exists() for suffix in EXTENSION_SUFFIXES) for m in modules)


def partly_built(root: Path, prefix: str) -> dict[str, Path]:
    """Returns the modules of each recorded group of which some, not all, have a compiled build
    (a file lost since the build), to import from their sources: a game's modules never mix builds."""
    groups: dict[str, dict[str, Any]] = (build_record(root) or {}).get("groups", {})
    sources: dict[str, Path] = {}
    for game, group in groups.items():
        modules = list(group.get("modules", []))
        if not is_built(root / game, modules) and any(is_built(root / game, [m]) for m in modules):
            sources.update({f"{prefix}.{game}.{m}": root / game / f"{m}.py" for m in modules})
    return sources


def group_states(root: Path, prefix: str, sources: dict[str, Path], changed: list[str], everywhere: bool) -> list[GroupState]:
    """Returns, per game the build knows, whether its compiled modules run and, if not, why."""
    record = build_record(root)
    if record is None:
        games = {path.parent.name: list(compiled_sources(path.parent)) for path in root.glob(f"*/{MANIFEST}")}
        return [_state(root, prefix, game, modules, {}, True, sources, changed, everywhere) for game, modules in sorted(games.items())]
    groups: dict[str, dict[str, Any]] = record["groups"]
    return [_state(root, prefix, game, list(group.get("modules", [])), group, bool(record.get("mypyc")), sources, changed, everywhere)
            for game, group in sorted(groups.items())]


def _state(root: Path, prefix: str, game: str, modules: list[str], built: dict[str, Any], asked: bool,
           sources: dict[str, Path], changed: list[str], everywhere: bool) -> GroupState:
    if is_built(root / game, modules):
        if not any(name.startswith(f"{prefix}.{game}.") for name in sources):
            return GroupState(game, True)
        if everywhere:
            return GroupState(game, False, "运行时设置了 MATCHLEDGER_NO_MYPYC / MATCHLEDGER_NO_MYPYC set at run time")
        stale = ", ".join(f"replay/{path}" for path in changed if path.startswith(f"{game}/"))
        return GroupState(game, False, f"编译后源码已改 sources changed since compiled ({stale}): rebuild with `pip install -e .`")
    if not asked:
        return GroupState(game, False, "构建时设置了 MATCHLEDGER_NO_MYPYC / MATCHLEDGER_NO_MYPYC was set at build time")
    if built.get("state") == "skipped":
        return GroupState(game, False, f"构建时跳过 skipped by the build: {built.get('why')}", missing=True)
    return GroupState(game, False, "编译文件缺失 compiled by the build, but its files are missing: rebuild with `pip install -e .`", missing=True)


def use_sources_where_needed() -> list[GroupState]:
    """Makes the stale compiled packages (or all, under `MATCHLEDGER_NO_MYPYC`) import their sources,
    and warns about them and about a group the build should have compiled but did not."""
    prefix, everywhere = __package__ or "replay", bool(os.environ.get("MATCHLEDGER_NO_MYPYC"))
    sources, changed = sources_to_run(ROOT, prefix, everywhere)
    sources |= partly_built(ROOT, prefix)
    if sources:
        sys.meta_path.insert(0, SourceFinder(sources))
    if changed:
        warnings.warn(f"{', '.join(f'replay/{path}' for path in changed)} changed since compiled: that game's rule "
                      "modules run from their sources; rebuild with `pip install -e .`", stacklevel=2)
    states = group_states(ROOT, prefix, sources, changed, everywhere)
    for state in states:
        if state.missing:
            warnings.warn(f"{state.game} 规则以纯 Python 运行，约慢 2–3 倍 rules run as pure Python, about 2–3 times slower: "
                          f"{state.why} (`matchledger --version` shows every accelerator)", stacklevel=2)
    return states


STATES = use_sources_where_needed()
"""How each game's rule modules run in this process."""
