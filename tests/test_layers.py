"""The package keeps its declared layer order and has no import circle (the check that
``make lint`` runs), and the check fails when either is broken."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "check_layers.py"
SRC = Path(__file__).resolve().parents[1] / "src"


def _tool():
    spec = importlib.util.spec_from_file_location("check_layers", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle():
    tool = _tool()
    assert tool.circles(tool.graph()) == []


def test_no_module_imports_a_higher_layer():
    tool = _tool()
    assert tool.upward(tool.graph()) == []
    assert tool.main([]) == 0


def test_every_module_is_in_a_layer():
    tool = _tool()
    for module in tool.graph():
        assert tool.layer_of(module) >= 0


def test_the_check_finds_a_circle():
    tool = _tool()
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert tool.circles(edges) == [["a", "b", "c"]]


def test_an_upward_import_fails_the_check_even_when_lazy(tmp_path, capsys):
    """A copy of the package in which the data layer imports the service, inside a function."""
    tool = _tool()
    shutil.copytree(
        SRC / "clusterednb", tmp_path / "clusterednb", ignore=shutil.ignore_patterns("__pycache__")
    )
    values = tmp_path / "clusterednb" / "data" / "values.py"
    values.write_text(
        values.read_text()
        + "\n\ndef _store():\n    from clusterednb.service.store import ServiceStore\n\n"
        + "    return ServiceStore\n"
    )
    assert tool.main(["--root", str(tmp_path)]) == 1
    assert "upward import: clusterednb.data.values -> clusterednb.service.store" in (
        capsys.readouterr().out
    )


def test_layer_order_is_by_longest_prefix():
    tool = _tool()
    layers = (("p.low",), ("p.high",), ("p",))
    assert tool.layer_of("p.low.x", layers) == 0
    assert tool.layer_of("p.other", layers) == 2
    assert tool.upward({"p.low.x": {"p.high.y"}, "p.high.y": {"p.low.x"}}, layers) == [
        ("p.low.x", "p.high.y")
    ]


def _broken_copy(tmp_path: Path, added: str) -> Path:
    """A copy of the package whose data layer's ``values.py`` ends with ``added``."""
    shutil.copytree(
        SRC / "clusterednb", tmp_path / "clusterednb", ignore=shutil.ignore_patterns("__pycache__")
    )
    values = tmp_path / "clusterednb" / "data" / "values.py"
    values.write_text(values.read_text() + added)
    return tmp_path


def test_a_self_import_of_the_package_below_its_face_fails_the_check(tmp_path, capsys):
    tool = _tool()
    root = _broken_copy(
        tmp_path,
        "\n\ndef _model():\n    from clusterednb import ClusteredNB\n\n    return ClusteredNB\n",
    )
    assert tool.main(["--root", str(root)]) == 1
    assert "upward import: clusterednb.data.values -> clusterednb" in capsys.readouterr().out


def test_a_relative_import_fails_the_check(tmp_path, capsys):
    tool = _tool()
    root = _broken_copy(tmp_path, "\nfrom .schema import Schema  # noqa\n")
    assert tool.main(["--root", str(root)]) == 1
    assert "relative import: clusterednb.data.values line" in capsys.readouterr().out
    assert tool.main([]) == 0  # the package itself has none
