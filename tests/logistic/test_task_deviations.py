"""Each task's deviation from the clusters' prediction: the optimum, the prior's limits, tuning
on training tasks only, files."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.optimize import brentq, minimize
from scipy.special import expit
from sklearn.metrics import roc_auc_score

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.data.synthetic import make_logistic_population
from clusterednb.logistic.inputs import prediction_design
from clusterednb.logistic.solvers import task_deviations
from clusterednb.logistic.solvers.task_deviations import (
    deviation_margin,
    fit_task_deviation,
    fit_task_deviations,
    log_odds,
)


def negative_log_posterior(coef, design, y, offset, variance):
    """Written out again, independently of the module: Bernoulli log-loss plus the prior."""
    margin = offset + design @ coef[:-1] + coef[-1]
    p = 1.0 / (1.0 + np.exp(-margin))
    return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + coef @ coef / (2 * variance)


def test_newton_reaches_the_optimum_found_by_brute_force():
    rng = np.random.default_rng(0)
    design = rng.normal(size=(30, 3))
    y = (rng.random(30) < 0.4).astype(float)
    offset = rng.normal(size=30)
    ours = fit_task_deviation(design, y, offset, variance=2.0)
    brute = minimize(
        negative_log_posterior,
        np.zeros(4),
        args=(design, y, offset, 2.0),
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 50_000, "maxfev": 50_000},
    )
    np.testing.assert_allclose(ours, brute.x, atol=1e-6)


def test_an_intercept_alone_solves_its_stationarity_equation():
    # Three 1s and one 0 at offset 0.4, prior variance 2: the intercept b solves
    # 3 σ(−(0.4 + b)) − σ(0.4 + b) = b / 2.
    by_hand = brentq(lambda b: 3 * expit(-(0.4 + b)) - expit(0.4 + b) - b / 2, -10, 10)
    ours = fit_task_deviation(np.zeros((4, 0)), np.array([1, 1, 1, 0]), np.full(4, 0.4), 2.0)
    assert ours.shape == (1,)
    assert ours[0] == pytest.approx(by_hand, abs=1e-10)


def test_a_vocabulary_wider_than_newton_is_solved_by_lbfgs_to_the_same_optimum(monkeypatch):
    rng = np.random.default_rng(1)
    words = sparse.random(40, 700, density=0.02, random_state=2, format="csr") * 3
    y = (rng.random(40) < 0.5).astype(float)
    offset = rng.normal(size=40)
    wide = fit_task_deviation(words, y, offset, variance=0.5)  # 701 columns: L-BFGS
    monkeypatch.setattr(task_deviations, "MAX_NEWTON_COLUMNS", 10_000)
    newton = fit_task_deviation(words, y, offset, variance=0.5)
    np.testing.assert_allclose(wide, newton, atol=1e-5)


def test_no_prior_variance_or_no_rows_means_no_deviation():
    design, y = np.ones((3, 2)), np.array([1, 0, 1])
    assert not fit_task_deviation(design, y, np.zeros(3), variance=0.0).any()
    assert not fit_task_deviation(np.ones((0, 2)), np.zeros(0), np.zeros(0), 1.0).any()
    deviations = fit_task_deviations(design, y, np.zeros(3, dtype=int), np.zeros(3), 1.0, 2)
    assert deviations[0].any() and not deviations[1].any()  # task 1 has no rows


def test_a_user_with_the_reversed_rule_learns_it_from_its_own_labels():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 1))
    shared_log_odds = 2.0 * x[:, 0]  # everyone else: y = 1 when x is large
    y = (rng.random(200) < expit(-2.0 * x[:, 0])).astype(float)  # this user: the reverse
    deviation = fit_task_deviation(x, y, shared_log_odds, variance=10.0)
    assert deviation[0] < -3.0  # about −4: the shared slope and its reverse
    p1 = expit(shared_log_odds + deviation_margin(x, np.zeros(200, dtype=int), deviation[None]))
    assert roc_auc_score(y, p1) > 0.8 > 0.2 > roc_auc_score(y, expit(shared_log_odds))


def test_log_odds_are_clipped_so_saturated_predictions_stay_finite():
    assert log_odds(np.array([0.0, 1.0, 0.5])).tolist() == [-30.0, 30.0, 0.0]
    assert log_odds(np.array([0.25]))[0] == pytest.approx(np.log(1 / 3))


def population_with_reversed_users(seed: int):
    """Twelve users who share one rule, three of them reversed, 60 rows each."""
    population = make_logistic_population(
        np.random.default_rng(seed), group_sizes=(12,), rows_per_task=60, n_features=4
    )
    frame = population.frame.copy()
    flip = frame["task"].isin(["u00", "u01", "u02"])
    frame.loc[flip, "label"] = 1 - frame.loc[flip, "label"]
    return frame, population.feature_names


def test_scale_zero_is_the_clusters_prediction_exactly():
    frame, features = population_with_reversed_users(4)
    X, y, tasks = frame[features], frame["label"], frame["task"]
    plain = ClusteredLogisticRegression(deviation_scale=0.0, random_state=0).fit(X, y, tasks)
    assert plain.clusters_.deviations is None and plain.deviation_scale_ == 0.0
    deviating = ClusteredLogisticRegression(deviation_scale=1.0, random_state=0).fit(X, y, tasks)
    np.testing.assert_array_equal(deviating.partition_, plain.partition_)
    assert deviating.clusters_.deviations.shape == (12, plain.clusters_.coef.shape[1] - 12 + 1)
    undone = replace(deviating.clusters_, deviations=None)
    position = pd.Index(plain.task_ids_).get_indexer(tasks)
    design = prediction_design(
        plain.schema_.encode_features(X), X, plain.schema_, position, 12, plain.numeric_
    )
    np.testing.assert_array_equal(
        undone.proba(design, undone.membership[position], position),
        plain.predict_proba(X, tasks)[:, 1],
    )


def test_auto_chooses_the_scale_on_held_training_rows_and_files_keep_the_deviations(tmp_path):
    frame, features = population_with_reversed_users(5)
    test = frame[frame["task"] == "u00"].iloc[40:]
    train = frame.drop(test.index)
    model = ClusteredLogisticRegression(deviation_scale="auto", random_state=0).fit(
        train[features], train["label"], train["task"]
    )
    tried = model.tuning_
    assert set(tried["deviation_scale"]) == {0.0, 0.1, 0.3, 1.0, 3.0}
    best = tried.loc[tried["log_loss"].idxmin()]
    assert model.deviation_scale_ == best["deviation_scale"]
    assert (model.effective_rows_, model.floor_) == (best["effective_rows"], best["floor"])
    p1 = model.predict_proba(test[features], test["task"])[:, 1]
    assert roc_auc_score(test["label"], p1) > 0.8
    path = tmp_path / "deviating.cnb"
    model.save(path)
    again = clusterednb.load(path)
    assert again.deviation_scale_ == model.deviation_scale_
    np.testing.assert_array_equal(
        again.predict_proba(frame[features], frame["task"]),
        model.predict_proba(frame[features], frame["task"]),
    )


def test_a_negative_or_unknown_scale_is_refused_by_name():
    frame, features = population_with_reversed_users(6)
    for scale in (-1.0, np.inf, "big", True):
        with pytest.raises(clusterednb.exceptions.CNBError, match="deviation_scale"):
            ClusteredLogisticRegression(deviation_scale=scale).fit(
                frame[features], frame["label"], frame["task"]
            )


def test_each_row_gets_its_own_tasks_deviation_in_any_row_order():
    rng = np.random.default_rng(7)
    shared = sparse.random(50, 6, density=0.5, random_state=8, format="csr")
    task = rng.integers(-1, 4, size=50)  # interleaved, with new tasks (-1)
    deviations = rng.normal(size=(4, 7))
    deviations[2] = 0.0  # a task without a deviation
    by_hand = [
        0.0 if u < 0 else shared[i].toarray().ravel() @ deviations[u, :-1] + deviations[u, -1]
        for i, u in enumerate(task)
    ]
    np.testing.assert_allclose(deviation_margin(shared, task, deviations), by_hand, atol=1e-12)
