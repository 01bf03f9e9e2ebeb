"""Compiled kernels are cached somewhere writable, even for a read-only install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clusterednb.jit import cache_directory

PROBE = """
import numpy as np, numba
from clusterednb.inference.gibbs.kernels import sample_index
sample_index(np.zeros(3), 3, 0.5)
print(numba.config.CACHE_DIR)
print(sum(sample_index.stats.cache_hits.values()))
"""


def test_the_cache_directory_is_writable():
    folder = cache_directory()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run as an unprivileged user",
)
def test_a_user_who_can_write_neither_the_install_nor_a_home_still_gets_a_cache():
    """As ``nobody`` (who cannot write the package's folders) with no home directory, the
    kernels are cached in a per-user temporary folder and a second process loads them."""
    source = Path(__file__).resolve().parents[1] / "src"
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "PYTHONPATH": str(source),
    }
    command = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        sys.executable,
        "-c",
        PROBE,
    ]
    runs = [
        subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
    folder, hits = runs[1].stdout.split()
    assert Path(folder).parent == Path(tempfile.gettempdir())
    assert Path(folder).name.startswith("clusterednb-numba-")
    assert int(hits) >= 1
