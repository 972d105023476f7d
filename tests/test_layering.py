"""The layers of DESIGN.md, held by the code's own imports: `schemas` ← `ledger` ← `replay` ← `audit`,
no arrow running back, each folder of audit/ importing only the folders FOLDERS allows it (so the
code map of README.md and docs/architecture.md stays true), and no import cycle between modules
(issue 29: the last known ones were cut on 2026-12-04; none may come back).

Read with `ast` from the source, imports inside functions included: an import hidden in a function
is still an arrow of the structure."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("schemas", "ledger", "replay", "audit")
"""Lowest first: a package may import only from its own layer and those before it."""

FOLDERS: dict[str, frozenset[str]] = {
    "schemas": frozenset(),
    "ledger": frozenset({"schemas"}),
    "replay": frozenset({"schemas"}),
    "audit": frozenset({"schemas", "ledger", "replay"}),
    "audit.query": frozenset(),
    "audit.certification": frozenset({"audit.query"}),
    "audit.presentation": frozenset({"audit.query", "audit.certification"}),
    "audit.live": frozenset({"audit.query", "audit.certification"}),
    "audit.service": frozenset({"audit.live", "audit.query"}),
    "audit.simulator": frozenset({"audit.query", "audit.certification"}),
    "audit.lake": frozenset({"audit.query", "audit.presentation"}),
    "audit.spark": frozenset({"audit.lake", "audit.query"}),
    "audit.cli": frozenset({"audit.query", "audit.certification", "audit.presentation", "audit.live", "audit.service",
                            "audit.simulator", "audit.lake", "audit.spark"}),
}
"""Each folder and the other folders it may import (issue 29 Build 7). A folder of audit/ may also
import what audit may (schemas, ledger, replay) and its own modules; nothing but audit.cli imports
audit.cli; replay knows nothing of storage (DESIGN.md "Data flow")."""

def _modules() -> dict[str, Path]:
    found = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules `module` imports. `from pkg import sub` is an arrow to `pkg.sub` when
    that is a module; a compiled extension (`from ledger import _fastscan`) is no arrow at all."""
    arrows: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            arrows.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
            extensions = [alias.name for alias in node.names if alias.name.startswith("_") and f"{base}.{alias.name}" not in modules]
            arrows.update(submodules or ([] if extensions else [base]))
    return {name for name in arrows if name in modules and name != module}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_layer_imports_a_layer_above_it() -> None:
    """DESIGN.md "Data flow": layers depend only downwards (`replay` knows nothing of storage)."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if rank[target.split(".")[0]] > rank[module.split(".")[0]]
    )
    assert upward == []


def test_no_import_cycle() -> None:
    """Issue 29 Build 7: a cycle hides which module owns a job. None is allowed: cut it by moving
    what both modules need into one below them, not by importing inside a function (still an arrow)."""
    assert sorted(sorted(cycle) for cycle in _cycles(_graph())) == [], "an import cycle"


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The finder itself, on a graph with one cycle and one tail."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def _folder(module: str) -> str:
    """The folder of FOLDERS a module lives in: the longest that is a prefix of its name."""
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        if ".".join(parts[:length]) in FOLDERS:
            return ".".join(parts[:length])
    raise AssertionError(f"{module} is in no folder of FOLDERS")


def _crossings(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The arrows between two folders that FOLDERS does not allow."""
    def allowed(source: str, target: str) -> bool:
        here, there = _folder(source), _folder(target)
        below = FOLDERS[here] | (FOLDERS["audit"] if here.startswith("audit.") else frozenset())
        return here == there or there in below or (there == "audit" and here.startswith("audit."))

    return {(source, target) for source, targets in graph.items() for target in targets if not allowed(source, target)}


def _packages() -> set[str]:
    """The tree's folders of FOLDERS' kind: the four top-level packages and audit's sub-packages."""
    subs = {f"audit.{p.parent.name}" for p in (ROOT / "audit").glob("*/__init__.py")}
    return set(LAYERS) | subs


def test_each_folder_imports_only_the_folders_it_may() -> None:
    """Issue 29 Build 7: audit/ in folders by concern, each importing only those below it (the
    presentation not the service, nothing but the CLI the CLI); no crossing is allowed."""
    assert sorted(_crossings(_graph())) == [], "an import against FOLDERS (an upward import)"


def test_folders_name_the_tree() -> None:
    """Issue 29 Build 7: every package of the tree has its rule in FOLDERS and audit's ground floor
    holds no module (a new module goes into the folder of its concern)."""
    assert _packages() == set(FOLDERS)
    ground = sorted(p.name for p in (ROOT / "audit").iterdir() if p.suffix in (".py", ".c") and p.name != "__init__.py")
    assert ground == []


@pytest.mark.parametrize("folder", sorted(name for name in FOLDERS if name.startswith("audit.")))
def test_each_folder_says_what_it_may_import(folder: str) -> None:
    """Issue 29 Build 7: each folder's docstring ends with "May import:", naming the folders of
    audit/ that FOLDERS allows it, no more and no fewer."""
    doc = ast.get_docstring(ast.parse((ROOT / folder.replace(".", "/") / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert "May import:" in doc, f"{folder}/__init__.py does not say what it may import"
    sentence = re.split(r"\.\s", doc.split("May import:")[1] + " ")[0]
    assert set(re.findall(r"audit(?:\.\w+)+", sentence)) == set(FOLDERS[folder])


def _code_map(text: str) -> dict[str, set[str]]:
    """The rows of a code map table: `folder/` | responsibility | `may`, `import` (folders as paths)."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[\w/]+/`", cells[0]):
            rows[cells[0].strip("`/").replace("/", ".")] = {name.strip("/").replace("/", ".") for name in re.findall(r"`([\w/]+/)`", cells[2])}
    return rows


@pytest.mark.parametrize("document", ["README.md", "docs/architecture.md"])
def test_the_code_map_is_the_tree(document: str) -> None:
    """Issue 29 Build 7 and the Show: the code map of README.md and of docs/architecture.md names
    every folder of the tree, and what each may import as FOLDERS holds it."""
    rows = _code_map((ROOT / document).read_text(encoding="utf-8"))
    assert set(rows) == set(FOLDERS)
    for folder, may in rows.items():
        allowed = FOLDERS[folder] | (FOLDERS["audit"] if folder.startswith("audit.") else frozenset())
        assert may == set(allowed), f"{document}: {folder}/ may import {sorted(allowed)}"


def test_the_crossing_finder_finds_an_upward_import() -> None:
    """The folder rule itself: the presentation importing the service is refused, the CLI importing
    anything is not, and a module of no folder is an error."""
    graph = {"audit.presentation.page": {"audit.service.serve", "audit.query.db"}, "audit.cli.base": {"audit.spark.db"},
             "audit.query.db": {"audit.cli.base"}}
    assert _crossings(graph) == {("audit.presentation.page", "audit.service.serve"), ("audit.query.db", "audit.cli.base")}
    with pytest.raises(AssertionError, match="in no folder"):
        _folder("elsewhere.module")


def test_the_help_loads_no_table_layout_and_no_engine() -> None:
    """Start-up (issue 29: the cycles were cut with start-up no slower): `matchledger --help` loads
    the printer (audit/presentation/output.py) but not the table layout (render.py, which loads the
    terms and the engines: about 0.2 s), which output imports only when it prints a table. Of replay/
    only `replay.values` (the words for terminations and event kinds, no engine) may load: the plain
    dictionary (terms.py) reads them; the engines' catalogues are in engine_words.py."""
    import subprocess
    import sys

    probe = ("import sys; sys.argv = ['matchledger', '--help']\nfrom audit.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith(('audit.presentation', 'replay.')))), file=sys.stderr)")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stderr.split()
    assert "audit.presentation.output" in loaded
    assert [m for m in loaded if m in ("audit.presentation.render", "audit.presentation.engine_words")
            or m.startswith("replay.") and m != "replay.values"] == []
