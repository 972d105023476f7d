"""The layers of DESIGN.md, held by the code's own imports: `schemas` ← `ledger` ← `replay` ← `audit`,
no arrow running back, and no import cycle between modules beyond the ones listed below as known
debt (issue 29: each is to be cut, and this list may only shrink).

Read with `ast` from the source, imports inside functions included: an import hidden in a function
is still an arrow of the structure."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("schemas", "ledger", "replay", "audit")
"""Lowest first: a package may import only from its own layer and those before it."""

KNOWN_CYCLES = {
    frozenset({"schemas", "schemas.codec"}),
    frozenset({"ledger.tiles", "ledger.tlog"}),
    frozenset({"audit.certification.certify", "audit.presentation.output", "audit.presentation.render"}),
    frozenset({"audit.service.front", "audit.service.serve"}),
}
"""Cycles found when this test was written (2026-12-03); none may be added."""


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


def test_no_new_import_cycle() -> None:
    """Issue 29 Build 7: a cycle hides which module owns a job. Known ones may only go away."""
    cycles = set(_cycles(_graph()))
    assert cycles - KNOWN_CYCLES == set(), "a new import cycle"
    assert KNOWN_CYCLES - cycles == set(), "a known cycle is gone: remove it from KNOWN_CYCLES"


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The finder itself, on a graph with one cycle and one tail."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
