"""Fail when the package's modules import each other in a circle.

Every ``import`` of a ``clusterednb`` module counts, at the top of a file, inside a function
(a lazy import hides a circle from Python, not from a reader) or under ``if TYPE_CHECKING:``;
a package's ``__init__`` re-exporting its own modules is not an edge. Run by ``make lint``;
prints each circle found and exits 1.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "clusterednb"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
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


def graph() -> dict[str, set[str]]:
    files = sorted((ROOT / PACKAGE).rglob("*.py"))
    modules = {module_name(f) for f in files}
    edges = {module_name(f): imports_of(f, modules) for f in files}
    for module, targets in edges.items():  # a package's __init__ is not a layer of its own
        targets.discard(module)
        targets -= {m for m in targets if module.startswith(m + ".") and m != PACKAGE}
        targets.discard(PACKAGE)
    return edges


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


def main() -> int:
    found = circles(graph())
    for component in found:
        print("import circle: " + " <-> ".join(component))
    if not found:
        print("no import circle")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
