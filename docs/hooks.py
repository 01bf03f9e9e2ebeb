"""MkDocs hooks: API pages list every module of a package, found on disk at build time.

A line ``<!-- modules: clusterednb.inference -->`` in a page becomes one mkdocstrings
``::: module`` block per public module of that package (sub-packages excluded; they have
their own marker), so a new module appears in the reference without editing the docs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parents[1] / "src"
MARKER = re.compile(r"<!-- modules: ([\w.]+) -->")


def _modules(package: str) -> list[str]:
    folder = SOURCE.joinpath(*package.split("."))
    names = sorted(
        path.stem
        for path in folder.glob("*.py")
        if not path.stem.startswith("_") and path.stem != "__main__"
    )
    return [f"{package}.{name}" for name in names]


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Expand the module markers of a page."""
    return MARKER.sub(
        lambda match: "\n\n".join(f"::: {module}" for module in _modules(match.group(1))),
        markdown,
    )
