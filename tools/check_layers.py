"""Fail when a module of the package imports a higher layer, or modules import in a circle.

:data:`LAYERS` is the one place the layer order is declared, lowest first. A module belongs to
the layer of the longest prefix that names it; it may import its own layer and the layers
below, never one above. Every ``import`` of a ``clusterednb`` module counts, at the top of a
file, inside a function (a lazy import hides an upward edge or a circle from Python, not from
a reader) or under ``if TYPE_CHECKING:``; a package's ``__init__`` re-exporting its own
modules is not an edge. ``from clusterednb import X`` below the package's face is an edge to
the face (the top layer), so it fails; a relative import fails on its own (the package spells
every import in full, so that a reader can grep it). Run by ``make lint`` and the test suite;
prints each upward import, relative import and circle found, and exits 1.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "clusterednb"

LAYERS: tuple[tuple[str, ...], ...] = (
    # foundation: errors, version, compilation, randomness, progress, loss matrices
    (
        "clusterednb.exceptions",
        "clusterednb.version",
        "clusterednb.jit",
        "clusterednb.seeding",
        "clusterednb.progress",
        "clusterednb.decision",
    ),
    ("clusterednb.data",),
    ("clusterednb.stats",),
    ("clusterednb.models",),
    ("clusterednb.inference",),
    ("clusterednb.inference.gibbs",),
    ("clusterednb.inference.bhc", "clusterednb.inference.variational"),
    ("clusterednb.persistence",),
    ("clusterednb.distributed",),
    # the estimators' family-neutral base: reading a table, decisions, checks
    ("clusterednb.estimation",),
    ("clusterednb.naive_bayes",),
    ("clusterednb.logistic.solvers",),
    ("clusterednb.logistic.clustering",),
    ("clusterednb.logistic",),
    ("clusterednb.learners",),
    # the estimators' face: evidence of any model, loading any file, cross-validation
    (
        "clusterednb.evidence",
        "clusterednb.loading",
        "clusterednb.model_selection",
        "clusterednb.warmup",
    ),
    ("clusterednb.averaging",),
    ("clusterednb.evaluation",),
    ("clusterednb.meeting",),
    ("clusterednb.service", "clusterednb.service.passes.mail"),
    ("clusterednb.cli",),
    # the docstrings' fixtures: they may build on anything, nothing imports them
    ("clusterednb.examples",),
    ("clusterednb",),
)
"""The layers, lowest first: a module may import only its own layer and those below."""


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports (a name imported from a package counts
    as its submodule when there is one)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name in modules:
                found.add(name)
                break
    return found


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Every module of the package under ``root`` and the package's modules it imports."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    modules = {module_name(f, root) for f in files}
    edges = {module_name(f, root): imports_of(f, modules) for f in files}
    for module, targets in edges.items():  # a package's __init__ is not a layer of its own
        targets.discard(module)
        targets -= {m for m in targets if module.startswith(m + ".") and m != PACKAGE}
    return edges


def relative_imports(root: Path = ROOT) -> list[tuple[str, int]]:
    """Every relative import (``from . import x``, ``from ..y import z``), as (module, line)."""
    found = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                found.append((module_name(path, root), node.lineno))
    return found


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    """The index in ``layers`` of the longest prefix naming ``module``."""
    best, best_length = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            named = module == prefix or module.startswith(prefix + ".")
            if named and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best < 0:
        raise SystemExit(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


def upward(
    edges: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS
) -> list[tuple[str, str]]:
    """Every import of a higher layer, as (importer, imported)."""
    return sorted(
        (module, target)
        for module, targets in edges.items()
        for target in targets
        if layer_of(target, layers) > layer_of(module, layers)
    )


def main(argv: list[str] | None = None) -> int:
    """Check the tree under ``--root`` (default: this checkout's ``src``)."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[args.index("--root") + 1]) if "--root" in args else ROOT
    edges = graph(root)
    found = circles(edges)
    for component in found:
        print("import circle: " + " <-> ".join(component))
    climbs = upward(edges)
    for module, target in climbs:
        print(f"upward import: {module} -> {target}")
    relative = relative_imports(root)
    for module, line in relative:
        print(f"relative import: {module} line {line} (spell it from {PACKAGE})")
    if not found and not climbs and not relative:
        print(f"no import circle; every import keeps to the {len(LAYERS)} layers' order")
    return 1 if found or climbs or relative else 0


if __name__ == "__main__":
    sys.exit(main())
