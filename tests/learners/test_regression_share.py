"""ClusteredLearner's blend of the clusters' regressions and their learners, its share chosen
on held-out rows of the training tasks (issue 49: the best of both)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import clusterednb
from clusterednb import ClusteredLearner
from clusterednb.exceptions import CNBError
from clusterednb.learners.regression_share import SHARES, chosen_share, held_out_rows
from clusterednb.logistic.grid_walk import mean_log_loss
from conftest import spam_word_counts

SMALL_TREES = {"max_iter": 15}


@pytest.fixture(scope="module")
def alone(learner_population):
    """The learners alone (share 0)."""
    return _fit(learner_population, 0.0)


def _fit(learner_population, share, **params):
    model = ClusteredLearner(
        learner_params=SMALL_TREES, regression_share=share, random_state=0, **params
    )
    return model.fit(*learner_population)


@pytest.mark.parametrize("share", [0.3, 1.0])
def test_the_blend_is_the_share_weighted_log_odds_of_regressions_and_learners(
    learner_population, alone, share
):
    X, _, tasks = learner_population
    blend = _fit(learner_population, share)
    p_learners = alone.predict_proba(X, tasks)[:, 1]
    p_regressions = alone.clustering_.predict_proba(X, tasks)[:, 1]
    odds = share * logit(p_regressions) + (1 - share) * logit(p_learners)
    np.testing.assert_allclose(blend.predict_proba(X, tasks)[:, 1], expit(odds), atol=1e-12)
    assert blend.regression_share_ == share
    if share == 1.0:  # the regressions alone: the clustered logistic regression
        np.testing.assert_array_equal(
            blend.predict_proba(X, tasks), blend.clustering_.predict_proba(X, tasks)
        )


def test_the_blends_explanation_is_the_share_weighted_sum(learner_population, alone):
    import copy

    X, _, tasks = learner_population
    blend = copy.deepcopy(alone)
    blend.regression_share_ = 0.5
    rows, row_tasks = X.iloc[:5], tasks[:5]
    expected = 0.5 * alone.clustering_.log_odds_by_feature(rows, row_tasks)[X.columns] + (
        0.5 * alone.log_odds_by_feature(rows, row_tasks)
    )
    pd.testing.assert_frame_equal(blend.log_odds_by_feature(rows, row_tasks), expected)


def test_held_out_rows_are_like_fewest_pseudo_tasks_of_the_raw_rows():
    rng = np.random.default_rng(0)
    sizes = [3, 9, 9, 12, 12, 10]
    task = rng.permutation(np.repeat(np.arange(6), sizes))  # rows in any order
    labelled = np.ones(task.size, dtype=bool)
    held, keep = held_out_rows(labelled, task, 6, np.random.default_rng(1))
    assert not keep  # the fewest task has no unlabelled rows to keep
    held_tasks = np.unique(task[held])
    assert held_tasks.size == 5 // 3  # a third of the tasks with at least four labels
    for t in held_tasks:  # each keeps as many labels as the fewest task (3)
        assert np.sum(task == t) - np.sum(task[held] == t) == 3
    assert 0 not in held_tasks


def test_auto_chooses_the_share_with_the_lowest_held_out_log_loss(learner_population, monkeypatch):
    """The share chosen is the one whose blend of a fit on the other rows predicts the held
    rows best; recomputed here from the same held rows and validation fit."""
    import clusterednb.learners.regression_share as regression_share

    seen = {}

    def spy(p_regressions, p_learners, y):
        seen["losses"] = [
            mean_log_loss(y, expit(s * logit(p_regressions) + (1 - s) * logit(p_learners)))
            for s in SHARES
        ]
        return chosen_share(p_regressions, p_learners, y)

    monkeypatch.setattr(regression_share, "chosen_share", spy)
    model = _fit(learner_population, "auto")
    assert model.regression_share_ in SHARES
    assert model.regression_share_ == SHARES[int(np.argmin(seen["losses"]))]
    again = _fit(learner_population, "auto")  # same seed, same numbers
    X, _, tasks = learner_population
    np.testing.assert_array_equal(model.predict_proba(X, tasks), again.predict_proba(X, tasks))
    assert model.fit_summary()["regression_share"] == model.regression_share_


def test_auto_prefers_regressions_where_the_label_is_linear_and_trees_where_it_is_not():
    rng = np.random.default_rng(3)
    n_tasks, rows = 12, 40
    X = pd.DataFrame({f"f{j}": rng.integers(0, 3, n_tasks * rows) for j in range(4)})
    tasks = np.repeat([f"u{i}" for i in range(n_tasks)], rows)
    linear = X.sum(axis=1).to_numpy() - 4.0  # additive in the features
    y_linear = (rng.random(linear.size) < expit(1.5 * linear)).astype(int)
    xor = ((X["f0"] > 0) ^ (X["f1"] > 0)).to_numpy()  # an interaction no one-hot sum holds
    y_xor = np.where(rng.random(xor.size) < 0.95, xor, ~xor).astype(int)
    params = {"learner_params": {"max_iter": 60}, "regression_share": "auto", "random_state": 0}
    on_linear = ClusteredLearner(**params).fit(X, y_linear, tasks)
    on_xor = ClusteredLearner(**params).fit(X, y_xor, tasks)
    assert on_linear.regression_share_ > on_xor.regression_share_
    assert on_xor.regression_share_ <= 0.25


def test_the_share_survives_the_model_file(learner_population, tmp_path):
    pytest.importorskip("lightgbm")
    model = ClusteredLearner(
        "lightgbm", learner_params={"n_estimators": 10}, regression_share=0.25, random_state=0
    ).fit(*learner_population)
    path = tmp_path / "blend.cnb"
    model.save(path)
    loaded = clusterednb.load(path)
    X, _, tasks = learner_population
    assert loaded.regression_share_ == 0.25
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


@pytest.mark.parametrize("share", [-0.1, 1.5, "best", True])
def test_a_share_outside_zero_to_one_is_refused(learner_population, share):
    with pytest.raises(CNBError, match="regression_share"):
        _fit(learner_population, share)


def test_the_blend_takes_documents():
    """Word counts: the held-out fit and both predictors read the sparse counts."""
    pytest.importorskip("lightgbm")

    n = 400
    X, spam, tasks = spam_word_counts(n)
    model = ClusteredLearner(
        "lightgbm",
        {"n_estimators": 20},
        clustering_params={"observation": "multinomial"},
        regression_share="auto",
        random_state=0,
    ).fit(X, spam, tasks)
    assert model.regression_share_ in SHARES
    p1 = model.predict_proba(X[:20], tasks[:20])[:, 1]
    p_regressions = model.clustering_.predict_proba(X[:20], tasks[:20])[:, 1]
    alone = ClusteredLearner(
        "lightgbm",
        {"n_estimators": 20},
        clustering_params={"observation": "multinomial"},
        random_state=0,
    ).fit(X, spam, tasks)
    p_learners = alone.predict_proba(X[:20], tasks[:20])[:, 1]
    share = model.regression_share_
    expected = expit(share * logit(p_regressions) + (1 - share) * logit(p_learners))
    np.testing.assert_allclose(p1, expected, atol=1e-12)
