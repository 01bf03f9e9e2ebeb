"""The README's layout and docs/architecture.md name every module of the package, and only
modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "clusterednb"


def _tree() -> set[str]:
    return {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def test_architecture_lists_every_module():
    table = _section((ROOT / "docs" / "architecture.md").read_text(), "## Every module")
    listed = re.findall(r"`([\w/]+\.py)`", table.split("| layer |")[1])
    assert len(listed) == len(set(listed)), "a module listed twice"
    assert set(listed) == _tree()


def test_architecture_names_only_modules_that_exist():
    text = (ROOT / "docs" / "architecture.md").read_text()
    tree = _tree()
    names = {Path(p).name for p in tree}
    for path in set(re.findall(r"`([\w/]+\.py)`", text)) - {"__init__.py"}:
        known = path in tree or (ROOT / path).exists() or ("/" not in path and path in names)
        assert known, path


def test_readme_layout_lists_every_module():
    layout = _section((ROOT / "README.md").read_text(), "## Layout")
    listed = []
    for item in re.split(r"\n- ", layout)[1:]:
        folder = re.match(r"`([\w/]+/)`", item).group(1)
        prefix = "" if folder == "src/clusterednb/" else folder
        listed += [prefix + name for name in re.findall(r"`(\w+\.py)`", item)]
    assert len(listed) == len(set(listed)), "a module listed twice"
    assert set(listed) == _tree()


def test_folders_stay_small():
    """At most 12 modules at the package root and 15 in any folder (issue 38)."""
    assert len(list(PACKAGE.glob("*.py"))) <= 12
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        assert len(list(folder.glob("*.py"))) <= 15, folder


def test_tests_mirror_the_package():
    """At least 80 % of the test files sit in a folder named after the package folder they
    test (``tests/service/`` for ``service/``); the rest test the package's root modules or
    the whole package (issue 48)."""
    tests = ROOT / "tests"
    files = list(tests.rglob("test_*.py"))
    mirrored = [
        path
        for path in files
        if path.parent != tests and (PACKAGE / path.relative_to(tests).parts[0]).is_dir()
    ]
    assert len(mirrored) >= 0.8 * len(files), sorted(
        str(p.relative_to(tests)) for p in set(files) - set(mirrored)
    )


def test_the_suite_has_one_conftest():
    """Tests import helpers with ``from conftest import ...``: a second ``conftest.py`` in a
    sub-folder would take that module name and break every such import."""
    tests = Path(__file__).resolve().parent
    assert sorted(tests.rglob("conftest.py")) == [tests / "conftest.py"]
