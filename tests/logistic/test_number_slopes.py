"""The partition's label score reads a numeric column by its slope (``label_rows``): its
design against one built by hand, the columns each feature's weights take, the expansions'
integral against brute force, and the groups of issue 49's population it tells apart."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit, log_expit
from sklearn.metrics import adjusted_rand_score

from clusterednb import ClusteredLogisticRegression
from clusterednb.logistic.clustering.task_expansions import (
    TaskExpansions,
    label_offsets,
    label_rows,
)
from clusterednb.logistic.fit import JointData
from model_helpers import mean_task_auc_of, same_rows_population


def _hand_design(codes, offsets, read, numbers, numbered):
    """The label design built column by column, in feature order."""
    columns = []
    for feature in range(codes.shape[1]):
        if not read[feature]:
            continue
        if feature in numbered:
            columns.append(numbers[:, list(numbered).index(feature)])
            continue
        for value in range(offsets[feature + 1] - offsets[feature]):
            columns.append((codes[:, feature] == value).astype(float))
    columns.append(np.ones(codes.shape[0]))
    return np.column_stack(columns)


@pytest.mark.parametrize("seed", range(4))
def test_label_rows_match_a_design_built_by_hand(seed):
    rng = np.random.default_rng(seed)
    offsets = np.array([0, 3, 5, 9, 11])
    widths = np.diff(offsets)
    codes = np.column_stack([rng.integers(-1, w, 30) for w in widths])
    numbered = np.array([2, 0])  # numeric columns in their own order
    numbers = rng.normal(size=(30, 2))
    read = rng.random(4) < 0.7
    design = label_rows(codes, offsets, read, numbers, numbered).toarray()
    np.testing.assert_array_equal(design, _hand_design(codes, offsets, read, numbers, numbered))
    starts = label_offsets(offsets, read, numbered)
    for feature in range(4):
        width = starts[feature + 1] - starts[feature]
        expected = 0 if not read[feature] else 1 if feature in numbered else widths[feature]
        assert width == expected
    assert starts[-1] == design.shape[1] - 1  # then the intercept


def test_a_number_in_the_label_score_is_integrated_as_brute_force_does():
    """One task, a slope and an intercept: the expansions' Gaussian integral at the anchor
    equals the integral of their quadratic times the prior, done numerically."""
    rng = np.random.default_rng(0)
    numbers = rng.normal(size=(12, 1))
    y = (rng.random(12) < expit(1.5 * numbers[:, 0])).astype(np.float64)
    data = JointData.from_codes(
        np.zeros((12, 1), dtype=np.int64), y.astype(np.int64), np.zeros(12, dtype=np.int64), 1,
        np.array([0, 3]), numbers, np.array([0]),
    )  # fmt: skip
    design = data.label_design().toarray()
    assert design.shape == (12, 2)  # the number, then the intercept
    expansions = TaskExpansions.at_pooled_map(design, y, np.array([0, 12]), precision=1.0)
    anchor = expansions.anchor
    value, gradient = expansions.value[0], expansions.gradient[0]
    hessian = expansions.hessian[0]

    def integrand(slope, intercept):
        delta = np.array([slope, intercept]) - anchor
        quadratic = value + gradient @ delta - 0.5 * delta @ hessian @ delta
        prior = -0.5 * (slope**2 + intercept**2) - np.log(2 * np.pi)
        return np.exp(quadratic + prior)

    brute, _ = integrate.dblquad(integrand, -8, 8, -8, 8, epsabs=1e-13)
    assert expansions.log_marginal([0], 1.0) == pytest.approx(np.log(brute), abs=1e-7)
    # and the expansion is the log-likelihood's at the anchor
    margin = design @ anchor
    exact = float(np.sum(np.where(y > 0, log_expit(margin), log_expit(-margin))))
    assert value == pytest.approx(exact, abs=1e-10)


def _groups_found(seed: int) -> tuple[float, float, int]:
    frame = same_rows_population(seed=seed, n_noise=0, n_rows=40, n_train=10)
    features = ["x0", "x1", "x2", "x3"]
    train, test = frame[frame.train], frame[~frame.train]
    model = ClusteredLogisticRegression(random_state=seed).fit(train[features], train.y, train.task)
    truth = model.task_ids_.astype(int) % 3
    ari = adjusted_rand_score(truth, model.partition_)
    return ari, mean_task_auc_of(model, test, features), int(model.partition_.max()) + 1


def test_issue_49s_groups_are_told_apart_by_their_slopes():
    """Seed 0 of issue 49's population, ten rows a task: read by their slopes the numbers
    separate the three groups (0.937 AUC; 0.949 with the true partition given); read by their
    bins the evidence merged the two groups whose slopes differ on x0 and x2 (0.901)."""
    ari, auc, n_clusters = _groups_found(0)
    assert n_clusters == 3 and ari > 0.8, (ari, n_clusters)
    assert auc > 0.93, auc


def test_under_the_bins_score_two_groups_merge(numbers_by_bins):
    """The same table under the score of before (the bins' one-hot): two clusters."""
    ari, auc, n_clusters = _groups_found(0)
    assert n_clusters == 2 and ari < 0.6, (ari, n_clusters)
    assert auc < 0.91, auc
