"""Builds the optional accelerators; without them the pure-Python modules run, with the same results.

- `ledger._fastscan`: C, for the writer's framing and hashing and for verification (needs a C compiler).
- `audit._jsonsplit`: C, the projection's JSON splitter.
- The rule modules of `COMPILED`, compiled with mypyc (a build requirement in pyproject.toml), one
  group per game: a Junqi replay runs about twice as fast, a Paohuzi one about three times
  (bench/replay_junqi.py, bench/replay_paohuzi.py).
  A group is skipped, with a warning, when mypyc is missing, when it rejects the code or when the C
  compiler fails; set MATCHLEDGER_NO_MYPYC=1 to skip them all on purpose
  (`MATCHLEDGER_NO_MYPYC=1 pip install -e .`), which also removes an earlier build from the tree.

Rebuild after editing a module of `COMPILED` (or a type in schemas/ that they read): `pip install -e .`
again. Until then the edit is not ignored: an editable build records the hash of each source it
compiled (replay/<game>/compiled.sha256), and replay/_compiled.py imports all of that game's
compiled modules from their .py files, with a warning, once any of those sources changed. Running
with MATCHLEDGER_NO_MYPYC=1 set imports the sources of an editable build too, without rebuilding.
"""

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = {
    "paohuzi": ("cards", "checks", "deals", "events", "fold", "hu", "melds", "options", "rules", "state"),
    "junqi": ("board", "fold", "layout", "moves", "pieces", "rules", "state"),
}
"""Per game package of replay/, the modules its replay spends its time in."""
MANIFEST = "compiled.sha256"
"""The record of an in-place build, read by replay/_compiled.py."""
REJECTED = "compiled.rejected"
"""Left in a game package when mypyc rejected its code (a type error, not a missing tool):
tests/test_compiled.py fails on it instead of skipping."""


@dataclass(frozen=True)
class Group:
    """One game's modules, compiled as one group (they call each other natively) and installed
    all together or not at all."""

    game: str
    modules: tuple[str, ...]

    @property
    def package(self) -> Path:
        return Path("replay") / self.game

    @property
    def name(self) -> str:
        return f"matchledger_{self.game}"

    @property
    def native(self) -> str:
        """The shared library holding the group's code, each module being a small shim onto it.
        Top-level, where mypyc expects it (it derives the modules' `__file__` from its place)."""
        return f"{self.name}__mypyc"

    @property
    def manifest(self) -> Path:
        return self.package / MANIFEST

    def sources(self) -> list[Path]:
        return [self.package / f"{module}.py" for module in self.modules]

    def hashes(self) -> str:
        """Returns the hash of each source as mypyc reads it now, as `sha256sum` lines."""
        return "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n" for path in self.sources())

    def extensions(self) -> list[Extension]:
        """Returns the group's mypyc extensions, or none (with a warning) when mypyc is missing or fails."""
        (self.package / REJECTED).unlink(missing_ok=True)
        try:
            from mypyc.build import mypycify
        except ImportError as exc:
            print(f"warning: {self.game} modules not compiled (no mypyc), the pure-Python ones will run: {exc!r}", file=sys.stderr)
            return []
        try:
            extensions = mypycify([str(path) for path in self.sources()], group_name=self.name)
        except (Exception, SystemExit) as exc:  # mypyc reports type errors through sys.exit
            why = f"mypyc rejected replay/{self.game} ({exc!r}); `mypy replay` shows why"
            print(f"warning: {self.game} modules not compiled, the pure-Python ones will run: {why}", file=sys.stderr)
            (self.package / REJECTED).write_text(why + "\n", encoding="utf-8")
            return []
        for extension in extensions:
            extension.optional = True
        return extensions


GROUPS = [Group(game, modules) for game, modules in COMPILED.items()]
COMPILED_FROM = {group.game: group.hashes() for group in GROUPS}
"""The hashes of the sources, taken before mypyc reads them."""


def mypyc_extensions() -> list[Extension]:
    """Returns the mypyc extensions of every group, or none when MATCHLEDGER_NO_MYPYC is set."""
    if os.environ.get("MATCHLEDGER_NO_MYPYC"):
        return []
    return [extension for group in GROUPS for extension in group.extensions()]


class BuildExt(build_ext):
    """Installs each game's compiled modules all together or not at all, replacing an earlier build;
    in place (editable) it also records the sources they were compiled from."""

    def run(self) -> None:
        for group in GROUPS:
            self._remove_compiled(group)
        super().run()
        for group in GROUPS:
            if not all(path.exists() for path in self._compiled_files(group)):
                if any(ext.name == group.native for ext in self.extensions):
                    print(f"warning: {group.game} modules not compiled (C build failed), the pure-Python ones will run", file=sys.stderr)
                self._remove_compiled(group)
            elif self.inplace:
                group.manifest.write_text(COMPILED_FROM[group.game], encoding="ascii")

    def _compiled_files(self, group: Group) -> list[Path]:
        """Returns the files of a group's compiled build: in the build directory and, in place, in the tree."""
        files = [self.get_ext_filename(name) for name in (group.native, *(f"replay.{group.game}.{m}" for m in group.modules))]
        roots = [Path(self.build_lib), Path(".")] if self.inplace else [Path(self.build_lib)]
        return [root / file for root in roots for file in files]

    def _remove_compiled(self, group: Group) -> None:
        for path in self._compiled_files(group) + ([group.manifest] if self.inplace else []):
            path.unlink(missing_ok=True)


setup(
    ext_modules=[
        Extension("ledger._fastscan", ["ledger/_fastscan.c"], libraries=["crypto", "z"], optional=True),
        Extension("audit._jsonsplit", ["audit/_jsonsplit.c"], optional=True),
        *mypyc_extensions(),
    ],
    cmdclass={"build_ext": BuildExt},
)
