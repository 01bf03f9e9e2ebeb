"""What produced a result: version, commit, data and its checksum, command, machine, time."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from clusterednb.version import __version__


def frame_checksum(frame: pd.DataFrame) -> str:
    """SHA-256 (first 16 hex digits) of a frame's values, index and column names.

    Examples
    --------
    >>> frame = pd.DataFrame({"task": ["a", "b"], "label": [0, 1]})
    >>> frame_checksum(frame) == frame_checksum(frame.copy()), len(frame_checksum(frame))
    (True, 16)
    >>> frame_checksum(frame) == frame_checksum(frame.assign(label=[1, 1]))  # any change shows
    False
    """
    digest = hashlib.sha256()
    digest.update(",".join(map(str, frame.columns)).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()[:16]


def git_commit() -> str:
    """The commit of the source checkout this package runs from, or "not a git checkout".

    Examples
    --------
    >>> commit = git_commit()
    >>> commit == "not a git checkout" or len(commit) >= 7
    True
    """
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return found.stdout.strip() if found.returncode == 0 else "not a git checkout"


def provenance(
    dataset: str, frame: pd.DataFrame, seed: int, started: float, argv: list[str] | None = None
) -> dict[str, object]:
    """The provenance record of a run started at ``started`` (``time.perf_counter()``).

    Examples
    --------
    >>> record = provenance("toy", pd.DataFrame({"x": [1]}), seed=0, started=time.perf_counter(),
    ...                     argv=["cnb", "evaluate"])
    >>> record["command line"], record["seed"], list(record)[:2]
    ('cnb evaluate', 0, ['package version', 'git commit'])
    """
    return {
        "package version": __version__,
        "git commit": git_commit(),
        "data set": dataset,
        "data checksum (sha256 of the rows)": frame_checksum(frame),
        "command line": " ".join(argv if argv is not None else sys.argv),
        "seed": seed,
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}",
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "run time": f"{time.perf_counter() - started:.1f} s",
    }
