"""MkDocs hooks: API pages listing every module, and MathJax served with the site.

- A line ``<!-- modules: clusterednb.inference -->`` in a page becomes one mkdocstrings
  ``::: module`` block per public module of that package (sub-packages excluded; they have
  their own marker), so a new module appears in the reference without editing the docs.
- MathJax 3 (from the ``django-static-mathjax`` wheel, no Django needed) is copied into the
  built site, so the mathematics renders without reaching a CDN.
"""

from __future__ import annotations

import re
import shutil
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


def on_post_build(config: Any, **kwargs: Any) -> None:
    """Copy MathJax's TeX bundle and its fonts to ``javascripts/mathjax`` in the built site."""
    import mathjax

    bundle = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    target = Path(config["site_dir"]) / "javascripts" / "mathjax"
    fonts = Path("output") / "chtml" / "fonts" / "woff-v2"
    shutil.copytree(bundle / fonts, target / fonts, dirs_exist_ok=True)
    shutil.copy2(bundle / "tex-mml-chtml.js", target / "tex-mml-chtml.js")
