"""The library's contract with a caller: warnings point at the caller's line, row weights are
refused by name, the top-level namespace holds only public names, and a new task's rows can be
predicted together or one by one (issue 41)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterednb as cnb
from clusterednb.exceptions import CNBError, DataWarning, UnknownCategoryWarning


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(3)
    n = 120
    X = pd.DataFrame(
        {"room": rng.choice(["a", "b", "c"], n), "size": rng.choice(["s", "m", "l"], n)}
    )
    tasks = np.repeat([f"u{i}" for i in range(6)], n // 6)
    y = np.where((X["room"] == "a") ^ (np.arange(n) % 7 == 0), "yes", "no")
    return X, y, tasks


ESTIMATORS = {
    "ns": lambda: cnb.NoSharingNB(),
    "cs": lambda: cnb.CompleteSharingNB(),
    "cnb": lambda: cnb.ClusteredNB(inference="bhc", progress=False),
    "prototype": lambda: cnb.PrototypeNB(n_samples=20, burn_in=5, random_state=0),
    "logistic": lambda: cnb.ClusteredLogisticRegression(random_state=0),
    "learner": lambda: cnb.ClusteredLearner(learner_params={"max_iter": 10}, random_state=0),
}


def test_an_unknown_category_warning_points_at_the_callers_line(rows):
    X, y, tasks = rows
    model = cnb.NoSharingNB().fit(X, y, tasks)
    unseen = pd.DataFrame({"room": ["zz"], "size": ["s"]})
    with pytest.warns(UnknownCategoryWarning) as caught:
        model.predict_proba(unseen, ["u0"])
    assert caught[0].filename == __file__


def test_a_data_warning_points_at_the_callers_line():
    X = pd.DataFrame({"id": [f"row{i}" for i in range(60)]})
    y = np.tile(["yes", "no"], 30)
    with pytest.warns(DataWarning) as caught:
        cnb.NoSharingNB().fit(X, y, np.repeat(["a", "b"], 30))
    assert caught[0].filename == __file__


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sample_weight_is_refused_with_the_promised_message(rows, name):
    X, y, tasks = rows
    with pytest.raises(CNBError, match="sample_weight is not supported: the models count rows"):
        ESTIMATORS[name]().fit(X, y, tasks, sample_weight=np.ones(len(y)))


def test_partial_fit_and_averaging_refuse_sample_weight(rows):
    X, y, tasks = rows
    with pytest.raises(CNBError, match="sample_weight"):
        cnb.NoSharingNB().partial_fit(X, y, tasks, sample_weight=np.ones(len(y)))
    averaged = cnb.ModelAveragingNB({"ns": cnb.NoSharingNB(), "cs": cnb.CompleteSharingNB()})
    with pytest.raises(CNBError, match="sample_weight"):
        averaged.fit(X, y, tasks, sample_weight=np.ones(len(y)))


def test_the_top_level_namespace_holds_only_public_names():
    """Right after ``import clusterednb`` (in a fresh interpreter) every name without an
    underscore is public."""
    code = (
        "import json, clusterednb as c; "
        "print(json.dumps([sorted(n for n in vars(c) if not n.startswith('_')), c.__all__]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    present, public = json.loads(out.stdout)
    assert set(present) <= set(public)
    assert not {"Any", "importlib", "annotations", "TYPE_CHECKING", "version"} & set(dir(cnb))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_new_tasks_each_row_predicts_every_row_as_if_alone(rows, name):
    X, y, tasks = rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ESTIMATORS[name]().fit(X, y, tasks)
    new = X.iloc[:5].reset_index(drop=True)
    newcomer = ["new"] * 5
    each = model.predict_proba(new, newcomer, new_tasks="each-row")
    alone = np.vstack([model.predict_proba(new.iloc[[i]], ["new"]) for i in range(5)])
    np.testing.assert_allclose(each, alone, rtol=1e-10, atol=1e-12)
    pooled = model.predict_proba(new, newcomer)
    np.testing.assert_allclose(pooled, model.predict_proba(new, newcomer, new_tasks="pooled"))
    np.testing.assert_allclose(pooled.sum(axis=1), 1.0)
    known = model.predict_proba(X.iloc[:5], tasks[:5], new_tasks="each-row")
    np.testing.assert_allclose(known, model.predict_proba(X.iloc[:5], tasks[:5]))


def test_pooled_rows_of_a_new_task_choose_its_clusters_together(rows):
    """Under Clustered NB the pooled rows of a new task move each other's predictions."""
    X, y, tasks = rows
    model = cnb.ClusteredNB(inference="bhc", progress=False).fit(X, y, tasks)
    new = X.iloc[:6].reset_index(drop=True)
    pooled = model.predict_proba(new, ["new"] * 6)
    each = model.predict_proba(new, ["new"] * 6, new_tasks="each-row")
    assert not np.allclose(pooled, each)


def test_an_unknown_new_tasks_is_refused(rows):
    X, y, tasks = rows
    model = cnb.NoSharingNB().fit(X, y, tasks)
    with pytest.raises(CNBError, match="new_tasks must be one of"):
        model.predict_proba(X.iloc[:1], ["new"], new_tasks="alone")
    logistic = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    with pytest.raises(CNBError, match="new_tasks must be one of"):
        logistic.predict_proba(X.iloc[:1], ["new"], new_tasks="alone")
