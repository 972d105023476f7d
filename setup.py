"""Builds the optional accelerators; without them the pure-Python modules run, with the same results.

- `ledger._fastscan`: C, for the writer's framing and hashing and for verification (needs a C compiler).
- `audit.query._jsonsplit`: C, the projection's JSON splitter.
- The rule modules of `COMPILED`, compiled with mypyc (a build requirement in pyproject.toml), one
  group per game: a Junqi replay runs about twice as fast, a Paohuzi one about three times
  (bench/replay_junqi.py, bench/replay_paohuzi.py).
  A group is skipped, with a warning, when mypyc is missing, when it rejects the code or when the C
  compiler fails; set MATCHLEDGER_NO_MYPYC=1 to skip them all on purpose
  (`MATCHLEDGER_NO_MYPYC=1 pip install -e .`), which also removes an earlier build from the tree.

mypyc runs only when extensions are built (not while pip reads the metadata), and the two games' C
files compile side by side (`build_ext -j`). An editable rebuild keeps a game's compiled modules
when nothing they were compiled from changed (its sources, schemas/, mypy, Python), so the test
command after the first one does not compile them again.

Every build writes `replay/compiled.json` (`RECORD`): whether mypyc was asked for and what became
of each group and C extension. pip hides a build's output under `-q`, so replay/_compiled.py reads
the record: `matchledger --version` shows it, and a run warns when a group the build was asked to
compile is missing. Progress and warnings also go to the terminal itself, which pip does not hide.

Rebuild after editing a module of `COMPILED` (or a type in schemas/ that they read): `pip install -e .`
again. Until then the edit is not ignored: an editable build records the hash of each source it
compiled (replay/<game>/compiled.sha256), and replay/_compiled.py imports all of that game's
compiled modules from their .py files, with a warning, once any of those sources changed. Running
with MATCHLEDGER_NO_MYPYC=1 set imports the sources of an editable build too, without rebuilding.
"""

import functools
import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
RECORD = Path("replay") / "compiled.json"
"""What the build was asked for and what it did, read by replay/_compiled.py."""
METADATA_ONLY = {"egg_info", "dist_info", "sdist"}
"""The commands pip runs to read the metadata, which finalize build_ext without building."""
C_EXTENSIONS = [
    Extension("ledger._fastscan", ["ledger/_fastscan.c"], libraries=["crypto", "z"], optional=True),
    Extension("audit.query._jsonsplit", ["audit/query/_jsonsplit.c"], optional=True),
]


_TOLD: set[str] = set()


def tell(message: str) -> None:
    """Shows a build message to the person installing, once: on stderr (which pip shows only with -v
    or on failure) and on the terminal itself, which pip does not capture."""
    if message in _TOLD:  # setuptools finalizes build_ext more than once
        return
    _TOLD.add(message)
    print(f"matchledger build: {message}", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        return
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(f"matchledger build: {message}\n")
    except OSError:
        pass  # no terminal (CI, a pipe): the record and `matchledger --version` still say it


def _digest(paths: list[Path], *extra: str) -> str:
    digest = hashlib.sha256("\0".join(extra).encode())
    for path in paths:
        digest.update(f"\0{path}\0".encode() + path.read_bytes())
    return digest.hexdigest()


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

    def inputs(self) -> str:
        """Returns a digest of all a compiled build depends on: the sources, the schemas they read,
        mypy's version and Python's."""
        try:
            from mypy.version import __version__ as mypy_version
        except ImportError:
            mypy_version = "none"
        schemas = sorted(Path("schemas").rglob("*.py"))
        return _digest(self.sources() + schemas, mypy_version, sys.version, self.name)

    @functools.cache  # noqa: B019 - one mypyc run per group, though setuptools finalizes build_ext more than once
    def extensions(self) -> tuple[list[Extension], str]:
        """Returns the group's mypyc extensions, or none and why (with a warning) when mypyc is missing or fails."""
        (self.package / REJECTED).unlink(missing_ok=True)
        try:
            from mypyc.build import mypycify
        except ImportError as exc:
            return [], self._skip(f"no mypyc ({exc!r})")
        tell(f"正在用 mypyc 翻译 translating replay/{self.game} to C with mypyc")
        try:
            extensions = mypycify([str(path) for path in self.sources()], group_name=self.name)
        except (Exception, SystemExit) as exc:  # mypyc reports type errors through sys.exit
            why = f"mypyc rejected replay/{self.game} ({exc!r}); `mypy replay` shows why"
            (self.package / REJECTED).write_text(why + "\n", encoding="utf-8")
            return [], self._skip(why)
        for extension in extensions:
            extension.optional = True
        return extensions, ""

    def _skip(self, why: str) -> str:
        tell(f"警告 warning: {self.game} 规则未编译 modules not compiled, the pure-Python ones will run: {why}")
        return why


GROUPS = [Group(game, modules) for game, modules in COMPILED.items()]
COMPILED_FROM = {group.game: group.hashes() for group in GROUPS}
"""The hashes of the sources, taken before mypyc reads them."""


def read_record() -> dict[str, Any]:
    try:
        return dict(json.loads(RECORD.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


class BuildExt(build_ext):
    """Compiles the mypyc groups (only now, not while pip reads the metadata) beside the C
    extensions, two at a time; installs each game's compiled modules all together or not at all,
    replacing an earlier build; in place (editable) it keeps a group nothing of which changed and
    records the sources it was compiled from; and it writes `RECORD`."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.parallel = os.cpu_count() or 1  # the games' two large C files compile side by side

    def finalize_options(self) -> None:
        # editable_wheel finalizes build_ext once before it sets editable_mode: it builds in place all the same
        inplace = bool(self.inplace or getattr(self, "editable_mode", False) or "editable_wheel" in self.distribution.commands)
        self.mypyc_asked = not os.environ.get("MATCHLEDGER_NO_MYPYC")
        self.groups: dict[str, dict[str, Any]] = {}
        self.started = time.monotonic()
        extensions = list(C_EXTENSIONS)
        if set(self.distribution.commands) <= METADATA_ONLY:  # pip reading the metadata: nothing to compile
            super().finalize_options()
            return
        kept = read_record().get("groups", {}) if inplace else {}
        for group in GROUPS:
            if not self.mypyc_asked:
                self.groups[group.game] = {"state": "off", "why": "MATCHLEDGER_NO_MYPYC was set at build time"}
            elif inplace and self._unchanged(group, kept.get(group.game, {})):
                tell(f"{group.game}: 已编译且未改动 compiled and unchanged since the last build, kept")
                self.groups[group.game] = {"state": "kept"}
            else:
                built, why = group.extensions()
                extensions += built
                self.groups[group.game] = {"state": "building"} if built else {"state": "skipped", "why": why}
        self.distribution.ext_modules = extensions
        super().finalize_options()
        # A kept group is not built again, but an editable install still maps its top-level native module.
        self.distribution.ext_modules = extensions + [Extension(group.native, []) for group in GROUPS if self.groups[group.game]["state"] == "kept"]

    def _unchanged(self, group: Group, before: dict[str, Any]) -> bool:
        """Tells whether an in-place build of the group is complete and was made from its inputs as they are now."""
        files = [Path(self.get_ext_filename(name)) for name in self._names(group)]
        return before.get("state") == "compiled" and before.get("inputs") == group.inputs() and all(f.exists() for f in files)

    def run(self) -> None:
        for group in GROUPS:
            if self.groups[group.game]["state"] != "kept":
                self._remove_compiled(group)
        self.compiling: set[str] = set()
        done = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(done,), daemon=True)
        ticker.start()
        try:
            super().run()
        finally:
            done.set()
        for group in GROUPS:
            self._settle(group)
        self._write_record()

    def build_extension(self, ext: Extension) -> None:
        big = not ext.name.startswith("replay.")  # not the small shims of a group's modules
        if big:
            tell(f"正在编译 compiling {ext.name} ({time.monotonic() - self.started:.0f} s)")
            self.compiling.add(ext.name)
        try:
            super().build_extension(ext)
        finally:
            self.compiling.discard(ext.name)
        if big:
            tell(f"已完成 done {ext.name} ({time.monotonic() - self.started:.0f} s)")

    def _tick(self, done: threading.Event) -> None:
        """Says every 20 s what is still compiling: one game's C file takes a minute or two."""
        while not done.wait(20):
            if self.compiling:
                tell(f"仍在编译 still compiling {', '.join(sorted(self.compiling))} ({time.monotonic() - self.started:.0f} s)")

    def _settle(self, group: Group) -> None:
        """Checks that a group being built is whole (or removes all of it) and records its sources."""
        state = self.groups[group.game]
        if state["state"] != "building":
            return
        if not all(path.exists() for path in self._compiled_files(group)):
            state.update(state="skipped", why="C build failed")
            self._remove_compiled(group)
            tell(f"警告 warning: {group.game} 规则未编译 modules not compiled (C build failed), the pure-Python ones will run")
            return
        state.update(state="compiled", inputs=group.inputs())
        if self.inplace:
            group.manifest.write_text(COMPILED_FROM[group.game], encoding="ascii")

    def _write_record(self) -> None:
        """Writes what was asked and done where the installed package will read it."""
        groups = {game: {**state, "state": "compiled" if state["state"] == "kept" else state["state"]} for game, state in self.groups.items()}
        if self.inplace:  # a kept group keeps the inputs it was compiled from
            before = read_record().get("groups", {})
            for game, state in self.groups.items():
                if state["state"] == "kept":
                    groups[game]["inputs"] = before[game]["inputs"]
        for game, state in groups.items():
            state["modules"] = list(COMPILED[game])
        c = {ext.name: "built" if Path(self.build_lib, self.get_ext_filename(ext.name)).exists() or Path(self.get_ext_filename(ext.name)).exists()
             else "failed" for ext in C_EXTENSIONS}
        text = json.dumps({"mypyc": self.mypyc_asked, "groups": groups, "c": c}, indent=1, sort_keys=True) + "\n"
        for root in [Path(".")] if self.inplace else [Path(self.build_lib)]:
            (root / RECORD).parent.mkdir(parents=True, exist_ok=True)
            (root / RECORD).write_text(text, encoding="utf-8")
        tell(f"完成 built in {time.monotonic() - self.started:.0f} s: "
             + ", ".join(f"{game} {state['state']}" for game, state in groups.items()))

    def _names(self, group: Group) -> list[str]:
        return [group.native, *(f"replay.{group.game}.{m}" for m in group.modules)]

    def _compiled_files(self, group: Group) -> list[Path]:
        """Returns the files of a group's compiled build: in the build directory and, in place, in the tree."""
        files = [self.get_ext_filename(name) for name in self._names(group)]
        roots = [Path(self.build_lib), Path(".")] if self.inplace else [Path(self.build_lib)]
        return [root / file for root in roots for file in files]

    def _remove_compiled(self, group: Group) -> None:
        for path in self._compiled_files(group) + ([group.manifest] if self.inplace else []):
            path.unlink(missing_ok=True)


setup(ext_modules=list(C_EXTENSIONS), cmdclass={"build_ext": BuildExt})
