"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from browser_helpers import CHROMIUM, DRIVER
from calendar_servers import (  # noqa: F401  (fixtures)
    dovecot,
    radicale,
    setting,
    smtp,
    xandikos_scheduling,
)
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.synthetic import make_logistic_population

# schemathesis' hooks run inside the contract environment (.venv-contract), not here
collect_ignore = ["service/contract_hooks.py"]


def random_frame(
    rng: np.random.Generator,
    n_rows: int = 30,
    n_tasks: int = 3,
    n_features: int = 3,
    n_values: int = 3,
    n_classes: int = 2,
    missing: float = 0.0,
) -> pd.DataFrame:
    """A small random long-format frame with every category and class present."""
    X = rng.integers(0, n_values, size=(n_rows, n_features)).astype(object)
    X[:n_values, :] = np.arange(n_values)[:, None]
    if missing:
        X[n_values:][rng.random((n_rows - n_values, n_features)) < missing] = None
    y = rng.integers(0, n_classes, size=n_rows)
    y[:n_classes] = np.arange(n_classes)
    tasks = rng.integers(0, n_tasks, size=n_rows)
    tasks[:n_tasks] = np.arange(n_tasks)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])
    frame.insert(0, "label", y)
    frame.insert(0, "task", [f"t{t}" for t in tasks])
    return frame


def schema_for(n_features: int, n_values: int, n_classes: int) -> FeatureSchema:
    """A schema with integer categories ``0 .. n_values - 1`` and classes ``0 .. C - 1``."""
    return FeatureSchema(
        tuple(f"f{j}" for j in range(n_features)),
        tuple(tuple(range(n_values)) for _ in range(n_features)),
        tuple(range(n_classes)),
    )


def spam_word_counts(n_rows: int, filler: bool = False):
    """Documents of six users in two groups that call opposite words spam: ``(X, spam,
    tasks)``, X a sparse (n_rows, 5) matrix of word counts (words 0 "cheap" and 1 "meeting",
    then three more the groups use a little differently; ``filler`` adds one at random)."""
    from scipy import sparse

    rng = np.random.default_rng(6)
    user = rng.integers(0, 6, n_rows)
    word = rng.integers(0, 2, n_rows)
    counts = np.zeros((n_rows, 5))
    counts[np.arange(n_rows), word] = rng.integers(1, 4, n_rows)
    if filler:
        counts[np.arange(n_rows), 2 + rng.integers(0, 3, n_rows)] += 1
    counts[np.arange(n_rows), 2 + (user < 3)] += 2
    spam = ((word == 0) == (user < 3)).astype(int)
    return sparse.csr_matrix(counts), spam, np.array([f"u{u}" for u in user])


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``cnb demo`` run once for the whole session (it takes a minute): its completed process
    and its output folder, read by the command-line test and the report's browser test. Under
    pytest-xdist the workers share one run: the first to take the lock runs it, the others
    read what it left."""
    import json
    import os
    import subprocess
    import sys

    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:  # each worker's folder sits in the run's own
        shared = shared.parent
    out, record = shared / "demo-run" / "demo", shared / "demo-run.json"
    with FileLock(str(shared / "demo-run.lock")):
        if not record.exists():
            command = [sys.executable, "-m", "clusterednb.cli", "demo", "--seed", "1"]
            result = subprocess.run(
                [*command, "-o", str(out), "--jobs", "2"], capture_output=True, text=True
            )
            fields = {"returncode": result.returncode, "stdout": result.stdout}
            record.write_text(json.dumps(fields | {"stderr": result.stderr, "args": command}))
        fields = json.loads(record.read_text())
    return subprocess.CompletedProcess(**fields), out


@pytest.fixture
def numbers_by_bins(monkeypatch):
    """The partition's label score reading numeric columns by their bins, as before
    2026-11-28 (``clusterednb.logistic.fit.NUMBERS_BY_SLOPE``): for the tests whose scenario
    (a column the label rounds left out, weights judged shared) was found under that score."""
    import clusterednb.logistic.fit

    monkeypatch.setattr(clusterednb.logistic.fit, "NUMBERS_BY_SLOPE", False)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def browser():
    """A headless Debian chromium driven by Selenium, with its console log recorded."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1100,1000",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def learner_population():
    """Eight tasks of 30 rows in two planted groups: ``(X, y, tasks)``.

    Shared by the ``ClusteredLearner`` tests.
    """
    planted = make_logistic_population(
        np.random.default_rng(4), group_sizes=(4, 4), rows_per_task=30, n_features=3
    )
    frame = planted.frame
    return frame[planted.feature_names], frame["label"].to_numpy(), frame["task"].to_numpy()
