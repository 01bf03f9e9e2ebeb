"""Numbers are numbers in every estimator: float columns (and integer columns with many
distinct values) are read as numbers by default, never one category per distinct value, and
a table too large for memory is refused before it is allocated (issue 39)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import clusterednb as cnb
from clusterednb.exceptions import DataError, DataWarning

LANDMINE = Path(__file__).resolve().parents[3] / "shared" / "data" / "landmine" / "landmine.csv.gz"

ESTIMATORS = {
    "ns": lambda: cnb.NoSharingNB(),
    "cs": lambda: cnb.CompleteSharingNB(),
    "cnb-bhc": lambda: cnb.ClusteredNB(inference="bhc", progress=False),
    "prototype": lambda: cnb.PrototypeNB(n_samples=30, burn_in=10, random_state=0),
    "logistic": lambda: cnb.ClusteredLogisticRegression(random_state=0),
}


def _raw_population(seed: int = 0, n_tasks: int = 16, n_rows: int = 60) -> tuple:
    """Tasks in two groups whose labels follow float features in opposite directions, plus
    an integer column of 60 distinct values and a categorical one."""
    rng = np.random.default_rng(seed)
    n = n_tasks * n_rows
    tasks = np.repeat([f"t{i}" for i in range(n_tasks)], n_rows)
    sign = np.where(np.repeat(np.arange(n_tasks) % 2, n_rows) == 0, 1.0, -1.0)
    X = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "weight": rng.gamma(2.0, size=n),
            "count": rng.integers(0, 60, size=n),
            "room": rng.choice(["a", "b", "c"], size=n),
        }
    )
    logit = 2.0 * sign * X["size"] + 1.5 * (X["weight"] - 2.0) + 0.3 * (X["room"] == "a")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y, tasks


def _within_task_auc(make, X, y, tasks, folds: int = 3) -> float:
    proba = np.zeros(len(y))
    splitter = cnb.WithinTaskKFold(folds, shuffle=True, random_state=0)
    for train, test in splitter.split(X, y, tasks):
        model = make().fit(X.iloc[train], y[train], tasks[train])
        proba[test] = model.predict_proba(X.iloc[test], tasks[test])[:, 1]
    return float(roc_auc_score(y, proba))


@pytest.mark.parametrize(
    "name",
    [  # the prototype model's sampler takes 15 s of it: make test-all
        pytest.param(name, marks=pytest.mark.slow) if name == "prototype" else name
        for name in sorted(ESTIMATORS)
    ],
)
def test_float_columns_are_numbers_by_default(name):
    X, y, tasks = _raw_population()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # no "each value its own category"
        model = ESTIMATORS[name]().fit(X, y, tasks)
    assert set(model.schema_.bin_edges) == {"size", "weight", "count"}
    assert len(model.schema_.categories[0]) <= model.n_bins
    assert _within_task_auc(ESTIMATORS[name], X, y, tasks) >= 0.70


def test_numeric_none_keeps_every_column_categorical():
    X, y, tasks = _raw_population()
    with pytest.warns(DataWarning, match="distinct decimal values"):
        model = cnb.NoSharingNB(numeric=None).fit(X, y, tasks)
    assert model.schema_.bin_edges == {}
    named = cnb.NoSharingNB(numeric=["size"], n_bins=4).fit(X.drop(columns="weight"), y, tasks)
    assert set(named.schema_.bin_edges) == {"size"} and len(named.schema_.categories[0]) == 4


def test_a_numeric_array_is_binned_and_predicts_through_its_edges():
    X, y, tasks = _raw_population()
    values = X[["size", "weight"]].to_numpy()
    model = cnb.ClusteredNB(inference="bhc", progress=False).fit(values, y, tasks)
    assert set(model.schema_.bin_edges) == {"x0", "x1"}
    proba = model.predict_proba(values[:5], tasks[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_the_bins_are_saved_with_the_model(tmp_path):
    X, y, tasks = _raw_population()
    model = cnb.ClusteredNB(inference="bhc", progress=False).fit(X, y, tasks)
    model.save(tmp_path / "m.cnb")
    loaded = cnb.load(tmp_path / "m.cnb")
    assert loaded.schema_.bin_edges == model.schema_.bin_edges
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_a_column_of_200000_distinct_strings_is_refused_or_warned_never_allocated():
    n = 200_000
    X = pd.DataFrame({"id": [f"row{i}" for i in range(n)], "room": np.tile(["a", "b"], n // 2)})
    y = np.tile([0, 1, 1, 0], n // 4)
    tasks = np.repeat([f"t{i}" for i in range(4)], n // 4)
    with pytest.raises(DataError, match="column 'id' has 200000 distinct values"):
        cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    with pytest.warns(DataWarning, match="'id'"):
        cnb.CompleteSharingNB().fit(X, y, tasks)


@pytest.mark.slow
@pytest.mark.skipif(not LANDMINE.exists(), reason=f"needs {LANDMINE}")
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_landmines_raw_frame_fits_with_every_estimator(name):
    frame = pd.read_csv(LANDMINE)
    X = frame[[f"f{i}" for i in range(1, 10)]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = _within_task_auc(
            ESTIMATORS[name], X, frame["label"].to_numpy(), frame["task"].to_numpy()
        )
    assert auc >= 0.70
