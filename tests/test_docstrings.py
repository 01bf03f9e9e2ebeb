"""Every public name has a docstring with an example that the doctests run."""

from __future__ import annotations

import inspect

import pytest

import clusterednb

PUBLIC = [name for name in clusterednb.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_doctested_example(name):
    doc = inspect.getdoc(getattr(clusterednb, name)) or ""
    assert "Examples" in doc and ">>>" in doc, f"{name} has no example in its docstring"
