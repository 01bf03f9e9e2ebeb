"""A command whose optional extra is not installed exits 1 with one line naming the extra.

Each command runs in a fresh interpreter in which the extra's module cannot be imported
(``sys.modules[name] = None`` makes every ``import name`` fail, as in an environment where
the package was never installed); nothing else of the environment changes.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

RUN = (
    "import sys\n"
    "for name in {blocked!r}: sys.modules[name] = None\n"
    "from clusterednb.cli import main\n"
    "sys.exit(main({argv!r}))\n"
)


def _run(blocked, argv):
    code = RUN.format(blocked=blocked, argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


CASES = {
    "service": (["uvicorn"], ["serve", "--store", "{tmp}/s.db"]),
    "caldav": (
        ["caldav"],
        [
            "meeting",
            "sync",
            "--caldav",
            "http://127.0.0.1:9/",
            "--username",
            "u",
            "--password",
            "p",
            "--user",
            "u@example.org",
            "--model",
            "{tmp}/m.cnb",
        ],
    ),
    "report": (["matplotlib"], ["demo", "-o", "{tmp}/demo"]),
    "parquet": (["pyarrow"], ["meeting", "simulate", "--format", "parquet", "-o", "{tmp}/org"]),
}


@pytest.mark.parametrize("extra", sorted(CASES))
def test_a_command_without_its_extra_names_the_extra(extra, tmp_path):
    blocked, argv = CASES[extra]
    argv = [a.format(tmp=tmp_path) for a in argv]
    done = _run(blocked, argv)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("cnb: warning")]
    assert len(lines) == 1, done.stderr
    assert f'pip install "clusterednb[{extra}]"' in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.db").exists()  # nothing written


def _library_error(blocked: str, call: str) -> str:
    """What ``call`` prints as a :class:`MissingExtraError` where ``blocked`` is absent."""
    code = (
        "import sys\n"
        f"sys.modules[{blocked!r}] = None\n"
        "import numpy as np, clusterednb as cnb\n"
        "from clusterednb.exceptions import MissingExtraError\n"
        "X = np.array([['a'], ['b']] * 4, dtype=object)\n"
        "y, t = [0, 1] * 4, ['u'] * 4 + ['v'] * 4\n"
        "try:\n"
        f"    {call}\n"
        "except MissingExtraError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.stdout + done.stderr


def test_the_dask_backend_without_dask_names_the_extra():
    call = "cnb.ClusteredNB(backend='dask', progress=False).fit(X, y, t)"
    assert 'pip install "clusterednb[dask]"' in _library_error("dask", call)


def test_a_spark_session_without_pyspark_names_the_extra():
    call = "__import__('clusterednb.distributed.spark').distributed.spark.local_session('x')"
    assert 'pip install "clusterednb[spark]"' in _library_error("pyspark", call)
