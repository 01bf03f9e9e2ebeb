"""Label weights shared by every cluster in the partition's score (issue 49): the restricted
Gaussian integral against quadrature, the columns' evidence against the sampler's own
scores, the exact posterior against brute force, and the refit kept only when its tuning
predicts the held-out rows better."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, sparse
from scipy.special import gammaln

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.inference.exact import enumerate_partitions
from clusterednb.logistic import label_judgement
from clusterednb.logistic.clustering.joint_blocks import JointLogisticBlocks
from clusterednb.logistic.clustering.shared_slopes import (
    SHARED_EVIDENCE,
    differing_columns,
    differing_dims,
    differing_evidence,
)
from clusterednb.logistic.clustering.task_expansions import (
    TaskExpansions,
    label_offsets,
    one_hot_design,
)
from clusterednb.logistic.clustering.task_hessians import DenseHessians, RowFactorHessians
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.grid_walk import mean_log_loss
from clusterednb.logistic.inputs import training_rows
from clusterednb.logistic.label_judgement import _columns_read, _loud_columns, fit_judging
from clusterednb.logistic.partition import partition_posterior
from clusterednb.logistic.settings import FitSettings, task_tempering
from clusterednb.logistic.tuning import choose_settings


def _two_groups(
    seed: int,
    n_tasks: int = 8,
    n_rows: int = 20,
    n_noise_values: int = 3,
    slope: float = 2.5,
    common: float | None = None,
):
    """Tasks in two groups whose labels follow column ``a`` with opposite signs (``slope``);
    column ``b`` is noise; with ``common``, a third column ``c`` whose slope is that in every
    task. :class:`JointData` of them."""
    rng = np.random.default_rng(seed)
    a = rng.integers(2, size=(n_tasks, n_rows))
    b = rng.integers(n_noise_values, size=(n_tasks, n_rows))
    c = rng.integers(2, size=(n_tasks, n_rows))
    sign = np.where(np.arange(n_tasks) % 2, 1.0, -1.0)[:, None]
    logit = sign * slope * (2 * a - 1) + (0.0 if common is None else common * (2 * c - 1))
    y = (rng.random((n_tasks, n_rows)) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    columns = [a.ravel(), b.ravel()] + ([] if common is None else [c.ravel()])
    widths = [2, n_noise_values] + ([] if common is None else [2])
    task = np.repeat(np.arange(n_tasks), n_rows)
    offsets = np.concatenate([[0], np.cumsum(widths)])
    return JointData.from_codes(np.column_stack(columns), y.ravel(), task, n_tasks, offsets)


def test_a_restricted_integral_holds_the_other_weights_at_the_anchor():
    rng = np.random.default_rng(3)
    design = one_hot_design(rng.integers(3, size=(12, 1)), np.array([0, 3]))
    y = rng.integers(2, size=12).astype(np.float64)
    precision = 0.7
    expansions = TaskExpansions.at_pooled_map(design, y, np.array([0, 12]), precision)
    kept = np.array([1, 3])  # value 1 and the intercept; values 0 and 2 held at the anchor
    restricted = expansions.restricted(kept)
    anchor, gradient = expansions.anchor, expansions.gradient[0]
    hessian = expansions.hessian[0]

    def integrand(d1: float, d3: float) -> float:
        delta = np.zeros(4)
        delta[kept] = d1, d3
        weights = anchor[kept] + delta[kept]
        log_prior = 0.5 * 2 * np.log(precision / (2 * np.pi)) - 0.5 * precision * weights @ weights
        quadratic = expansions.value[0] + gradient @ delta - 0.5 * delta @ hessian @ delta
        return np.exp(quadratic + log_prior)

    width = 8.0
    area, _ = integrate.dblquad(integrand, -width, width, -width, width, epsabs=1e-13)
    assert restricted.log_marginal([0], precision) == pytest.approx(np.log(area), abs=1e-7)


def test_restricted_factor_rows_are_the_restricted_matrices():
    rows = sparse.random(30, 7, density=0.4, random_state=1, format="csr")
    hessians = RowFactorHessians(rows, np.array([0, 10, 18, 30]))
    dims = np.array([0, 3, 6])
    dense = hessians[:][:, dims][:, :, dims]
    np.testing.assert_allclose(hessians.restricted(dims)[:], dense)
    np.testing.assert_allclose(DenseHessians(hessians[:]).restricted(dims)[:], dense)


def _held_at_the_anchor(data, settings, differing):
    """Block scores whose label side integrates the ``differing`` features' weights and
    holds the others at the pooled MAP of every feature."""
    dims = differing_dims(label_offsets(data.offsets, None), differing)
    expansions = data.expansions(settings.precision).restricted(dims)
    weights = task_tempering(data.rows_per_task, float(settings.effective_rows))
    return JointLogisticBlocks(
        data.value_counts, data.offsets, expansions, settings.beta, settings.precision, weights
    )


def test_the_evidence_is_the_difference_of_the_restricted_scores():
    data = _two_groups(seed=0)
    settings = FitSettings(effective_rows=10.0)
    partition = np.array([0, 1, 0, 1, 0, 1, 2, 2])
    offsets = label_offsets(data.offsets, None)
    for others in (np.array([True, True]), np.array([False, False])):
        evidence = differing_evidence(data.blocks(settings), partition, offsets, others)
        for feature in range(2):
            with_it, without = others.copy(), others.copy()
            with_it[feature], without[feature] = True, False
            clusters = [frozenset(np.flatnonzero(partition == k).tolist()) for k in range(3)]
            scored = [_held_at_the_anchor(data, settings, m) for m in (with_it, without)]
            expected = sum(scored[0].log_labels(c) - scored[1].log_labels(c) for c in clusters)
            assert evidence[feature] == pytest.approx(expected, abs=1e-9)


def test_the_samplers_scores_read_the_differing_features_at_their_own_pooled_map():
    data = _two_groups(seed=0)
    settings = FitSettings(effective_rows=10.0)
    differing = np.array([True, False])
    alone = data.reading(differing)  # the label model of feature a alone
    for members in (frozenset({0, 2}), frozenset(range(8))):
        assert data.blocks(settings, differing=differing).log_labels(members) == pytest.approx(
            alone.blocks(settings).log_labels(members), abs=1e-12
        )


def test_opposite_slopes_differ_and_noise_is_shared():
    data = _two_groups(seed=1, n_noise_values=5)
    blocks = data.blocks(FitSettings(effective_rows=20.0))
    groups = np.arange(8) % 2
    offsets = label_offsets(data.offsets, None)
    evidence = differing_evidence(blocks, groups, offsets, np.ones(2, dtype=bool))
    assert evidence[0] > SHARED_EVIDENCE and evidence[1] < -SHARED_EVIDENCE, evidence
    assert differing_columns(blocks, groups, offsets).tolist() == [True, False]


def test_a_partition_that_tells_no_column_apart_shares_none():
    data = _two_groups(seed=2, n_rows=40, n_noise_values=5, slope=0.0)  # both columns noise
    blocks = data.blocks(FitSettings(effective_rows=40.0))
    groups, offsets = np.arange(8), label_offsets(data.offsets, None)  # every task alone
    evidence = differing_evidence(blocks, groups, offsets, np.ones(2, dtype=bool))
    assert (evidence < -SHARED_EVIDENCE).all(), evidence
    assert differing_columns(blocks, groups, offsets).all()  # none shared rather than all


def test_a_shared_column_leaves_the_regressions_only_without_a_common_slope():
    data = _two_groups(seed=3, n_noise_values=5, common=2.0)
    differing = np.array([True, False, False])  # b and c held shared in the score
    loud = _loud_columns(data, np.random.default_rng(0))
    assert loud.tolist() == [True, False, True]  # a within users, c over all rows; b never
    read = _columns_read(None, differing, loud)
    assert read.tolist() == [True, False, True]  # the noise leaves, the common slope stays
    assert _columns_read(np.array([True, True, False]), differing, loud).tolist() == [
        True,
        False,
        False,
    ]


def test_offsets_and_dims_of_columns_the_regressions_do_not_read():
    offsets = label_offsets(np.array([0, 2, 5, 6]), np.array([True, False, True]))
    assert offsets.tolist() == [0, 2, 2, 3]
    assert differing_dims(offsets, np.array([True, True, False])).tolist() == [0, 1, 3]


def test_the_exact_posterior_with_shared_columns_is_brute_force():
    data = _two_groups(seed=2, n_tasks=5, n_rows=6)
    gamma = 0.8
    settings = FitSettings(effective_rows=6.0, gamma=gamma, inference="exact")
    differing = np.array([True, False])
    clustering = partition_posterior(data, settings, np.random.default_rng(0), None, differing)
    np.testing.assert_array_equal(clustering.differing_columns, differing)
    blocks = data.blocks(settings, differing=differing)
    log_joints, together = [], []
    for partition in enumerate_partitions(5):
        labels, sizes = np.unique(partition, return_counts=True)
        log_prior = labels.size * np.log(gamma) + gammaln(sizes).sum()
        log_prior -= gammaln(gamma + 5) - gammaln(gamma)
        members = [frozenset(np.flatnonzero(partition == k).tolist()) for k in labels]
        log_joints.append(log_prior + sum(blocks.log_block(m) for m in members))
        together.append(partition[:, None] == partition[None, :])
    weights = np.exp(np.array(log_joints) - np.max(log_joints))
    weights /= weights.sum()
    expected = np.tensordot(weights, np.array(together, dtype=float), axes=1)
    np.testing.assert_allclose(clustering.coclustering, expected, atol=1e-9)


WEIGHTS = 1.5 * np.array([[2, -2, 1, 0], [-2, 2, 0, 1], [0, 1, -2, 2]])


def _six_rows(seed: int, n_noise: int = 5):
    """Issue 49's population with six labelled rows a task: 60 tasks in three groups whose
    labels follow x0..x3 differently; ``n_noise`` noise columns (numbers and colours)."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in range(60):
        x = rng.normal(size=(6, 4))
        logit = x @ WEIGHTS[task % 3]
        frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(4)])
        for j in range(n_noise):
            values = rng.normal(size=6)
            colours = np.array(list("rgbyk"))[np.digitize(values, [-1, -0.3, 0.3, 1])]
            frame[f"noise{j}"] = colours if j % 2 else values
        frame["task"] = task
        frame["y"] = (rng.random(6) < 1 / (1 + np.exp(-logit))).astype(int)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop(columns=["task", "y"]), frame.y.to_numpy(), frame.task.to_numpy()


@pytest.mark.parametrize(("seed", "taken"), [(0, False), (1, True), (2, True)])
def test_the_refit_is_kept_only_where_the_held_rows_are_no_worse_predicted(
    seed, taken, numbers_by_bins
):
    X, y, tasks = _six_rows(seed)
    rows = training_rows(X, y, tasks, "categorical", None, "auto", 5, "test").data
    settings = FitSettings(relevance=True, effective_rows="auto", floor="auto")
    rng = np.random.default_rng(seed)
    first = choose_settings(rows, settings, copy.deepcopy(rng))
    tuning, _, clusters = fit_judging(rows, settings, rng)
    np.testing.assert_array_equal(tuning.held_rows, first.held_rows)  # the same held rows
    held_y = rows.y[first.held_rows]
    assert (clusters.differing_columns is not None) == taken
    if clusters.differing_columns is None:
        assert tuning.held_log_loss == first.held_log_loss and tuning.differing is None
    else:
        assert not clusters.differing_columns.all()
        assert mean_log_loss(held_y, tuning.held_proba) <= mean_log_loss(held_y, first.held_proba)


def test_held_rows_that_cannot_tell_keep_the_first_settings(monkeypatch):
    X, y, tasks = _six_rows(1)
    rows = training_rows(X, y, tasks, "categorical", None, "auto", 5, "test").data
    settings = FitSettings(relevance=True, effective_rows="auto", floor="auto")
    first = choose_settings(rows, settings, np.random.default_rng(1))
    loss = mean_log_loss(rows.y[first.held_rows], first.held_proba)

    def alike(data, settings, rng, tuning, differing, columns):  # another floor, same loss
        other = replace(tuning.settings, floor=1.0 if tuning.settings.floor < 1 else 0.05)
        return tuning._replace(settings=other, held_log_loss=loss, differing=differing)

    monkeypatch.setattr(label_judgement, "floors_rewalked", alike)
    tuning, _, clusters = fit_judging(rows, settings, np.random.default_rng(1))
    assert tuning.settings == first.settings
    assert clusters.differing_columns is not None and not clusters.differing_columns.all()


def test_the_shared_weights_are_named_saved_and_kept_by_a_partial_fit(tmp_path, numbers_by_bins):
    X, y, tasks = _six_rows(seed=1)
    # the chain of 30 sweeps, on which this table shares weights (what is tested is the record)
    model = ClusteredLogisticRegression(relevance=True, n_sweeps=30, burn_in=10, random_state=1)
    model = model.fit(X, y, tasks)
    shared = list(model.label_weights_shared_)
    assert shared and all(name.startswith("noise") for name in shared), shared
    assert model.fit_summary()["label_weights_shared"] == shared
    model.save(tmp_path / "model.cnb")
    loaded = clusterednb.load(tmp_path / "model.cnb")
    assert list(loaded.label_weights_shared_) == shared
    np.testing.assert_allclose(
        loaded.predict_proba(X[:20], tasks[:20]), model.predict_proba(X[:20], tasks[:20])
    )
    one = model.partial_fit(X.iloc[:1], y[:1], tasks[:1])  # one answer: no new partition
    np.testing.assert_array_equal(one.clusters_.feature_relevance, loaded.feature_relevance_)
    assert list(weights_named(one)) == shared
    more = X.iloc[:6].assign()  # a new task's rows: the partition is sampled again
    model.partial_fit(more, y[:6], ["someone new"] * 6)
    assert list(weights_named(model)) == shared


def weights_named(model) -> list[str]:
    """The columns whose label weights the model's clusters hold shared (from the clusters
    themselves, not an attribute a later fit could have left behind)."""
    differing = model.clusters_.differing_columns
    return [] if differing is None else list(model.feature_names_in_[differing == 0])
