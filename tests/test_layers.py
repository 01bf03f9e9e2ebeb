"""The package's modules import each other without a circle (the check ``make lint`` runs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "check_layers.py"


def _tool():
    spec = importlib.util.spec_from_file_location("check_layers", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle():
    tool = _tool()
    assert tool.circles(tool.graph()) == []


def test_the_check_finds_a_circle():
    tool = _tool()
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert tool.circles(edges) == [["a", "b", "c"]]
