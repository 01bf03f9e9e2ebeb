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


def test_the_examples_scratch_folders_are_removed_at_exit(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "from clusterednb.examples.models import scratch_file\n"
        "path = scratch_file('model.cnb')\n"
        "path.write_text('written by an example')\n"
        "print(path.parent)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    folder = Path(done.stdout.strip())
    assert folder.name.startswith("clusterednb-") and not folder.exists()
