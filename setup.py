"""Builds the optional accelerators; without them the pure-Python modules run, with the same results.

- `ledger._fastscan`: C, for verification (needs a C compiler).
- The paohuzi rule modules of `COMPILED`, compiled with mypyc (a build requirement in pyproject.toml):
  a replay runs about twice as fast (bench/replay_paohuzi.py). They are skipped, with a warning, when mypyc is missing, when it
  rejects the code or when the C compiler fails; set MATCHLEDGER_NO_MYPYC=1 to skip them on purpose
  (`MATCHLEDGER_NO_MYPYC=1 pip install -e .`), which also removes an earlier build from the tree.

Rebuild after editing a module of `COMPILED` (or a type in schemas/ that they read): `pip install -e .`
again. Until then the edit is not ignored: an editable build records the hash of each source it
compiled (replay/paohuzi/compiled.sha256), and replay/paohuzi/_compiled.py imports all of them from
their .py files, with a warning, once any of those sources changed.
"""

import hashlib
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PAOHUZI = Path("replay/paohuzi")
COMPILED = ("cards", "checks", "deals", "events", "fold", "hu", "melds", "options", "rules", "state")
"""The modules a paohuzi replay spends its time in, compiled as one group (they call each other natively)."""
GROUP = "matchledger_paohuzi"
NATIVE = f"{GROUP}__mypyc"
"""The shared library holding the group's code, each module of `COMPILED` being a small shim onto it.
Top-level, where mypyc expects it (it derives the modules' `__file__` from its place)."""
MANIFEST = PAOHUZI / "compiled.sha256"


def manifest() -> str:
    """Returns the hash of each source of `COMPILED` as mypyc reads it now, as `sha256sum` lines."""
    return "".join(f"{hashlib.sha256((PAOHUZI / f'{name}.py').read_bytes()).hexdigest()}  {name}.py\n" for name in COMPILED)


COMPILED_FROM = manifest()
"""The hashes of the sources, taken before mypyc reads them."""


def mypyc_extensions() -> list[Extension]:
    """Returns the mypyc extensions of `COMPILED`, or none when mypyc is disabled, missing or fails."""
    if os.environ.get("MATCHLEDGER_NO_MYPYC"):
        return []
    try:
        from mypyc.build import mypycify

        extensions = mypycify([str(PAOHUZI / f"{name}.py") for name in COMPILED], group_name=GROUP)
    except (Exception, SystemExit) as exc:  # mypyc reports type errors through sys.exit
        print(f"warning: paohuzi modules not compiled, the pure-Python ones will run: {exc!r}", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True
    return extensions


class BuildExt(build_ext):
    """Installs the compiled paohuzi modules all together or not at all, replacing an earlier build;
    in place (editable) it also records the sources they were compiled from."""

    def run(self) -> None:
        self._remove_compiled()
        super().run()
        if not all(path.exists() for path in self._compiled_files()):
            if any(ext.name == NATIVE for ext in self.extensions):
                print("warning: paohuzi modules not compiled (C build failed), the pure-Python ones will run", file=sys.stderr)
            self._remove_compiled()
        elif self.inplace:
            MANIFEST.write_text(COMPILED_FROM, encoding="ascii")

    def _compiled_files(self) -> list[Path]:
        """Returns the files of a compiled build: in the build directory and, in place, in the tree."""
        files = [self.get_ext_filename(name) for name in (NATIVE, *(f"replay.paohuzi.{m}" for m in COMPILED))]
        roots = [Path(self.build_lib), Path(".")] if self.inplace else [Path(self.build_lib)]
        return [root / file for root in roots for file in files]

    def _remove_compiled(self) -> None:
        for path in self._compiled_files() + ([MANIFEST] if self.inplace else []):
            path.unlink(missing_ok=True)


setup(
    ext_modules=[
        Extension("ledger._fastscan", ["ledger/_fastscan.c"], libraries=["crypto", "z"], optional=True),
        *mypyc_extensions(),
    ],
    cmdclass={"build_ext": BuildExt},
)
