"""A Griffe extension: Sphinx roles in docstrings become cross-references that render.

The code's docstrings use Sphinx roles (``:class:`~clusterednb.ClusteredNB```,
``:func:`.gibbs_kernels.sweep_assignments```). mkdocstrings renders Markdown, where such a
role would show as raw text. Once the package is loaded, every role is resolved against it
(absolute, relative to the object's module, class or package, and leading-dot paths); a
target that is a public object of the package becomes an autorefs link
``[name][full.path]``, anything else (private helpers, numpy, scikit-learn) inline code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`([^`]+)`")


def _lookup(package: griffe.Module, path: str) -> Any:
    """The object at dotted ``path`` inside ``package`` (aliases followed), or None."""
    parts = path.split(".")
    if parts[0] != package.name:
        return None
    current: Any = package
    for name in parts[1:]:
        try:
            members = current.members
            current = members[name]
            if isinstance(current, griffe.Alias):
                current = current.final_target
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
    return current


def _rendered(found: Any) -> bool:
    """Whether the API pages show ``found``: public classes and functions, modules (not
    packages: the pages list their modules), attributes that have a docstring."""
    if any(part.startswith("_") for part in found.path.split(".")):
        return False
    if found.is_module:
        return not (found.is_package or found.is_subpackage)
    if found.is_attribute:
        return found.docstring is not None
    return found.is_class or found.is_function


def _candidates(target: str, obj: griffe.Object) -> list[str]:
    module = obj.module.path
    scopes = [obj.path, module]
    parent = module
    while "." in parent:
        parent = parent.rsplit(".", 1)[0]
        scopes.append(parent)
    if target.startswith("."):
        return [scope + target for scope in scopes]
    return [target] + [f"{scope}.{target}" for scope in scopes]


def _render(match: re.Match, obj: griffe.Object, package: griffe.Module) -> str:
    target = match.group(1).strip()
    short = target.startswith("~")
    target = target.lstrip("~")
    display = target.lstrip(".").rsplit(".", 1)[-1] if short else target.lstrip(".")
    for candidate in _candidates(target, obj):
        found = _lookup(package, candidate)
        if found is None:
            continue
        if _rendered(found):
            return f"[`{display}`][{found.path}]"
        break
    return f"`{display}`"


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._walk(pkg, pkg)

    def _walk(self, obj: griffe.Object, package: griffe.Module) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(
                lambda match: _render(match, obj, package), obj.docstring.value
            )
        for member in obj.members.values():
            if not isinstance(member, griffe.Alias):
                self._walk(member, package)
