"""Many tasks: the partition sampled on a core of tasks, the others placed in its clusters
(:mod:`clusterednb.inference.blocks.core_and_place`), exercised with a small core."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import clusterednb as cnb
from clusterednb.data.synthetic import make_logistic_population
from clusterednb.inference.blocks import core_and_place
from clusterednb.inference.blocks.slot_chain import gibbs_joint_blocks
from clusterednb.logistic.fit import FitSettings, JointData


@pytest.fixture
def small_core(monkeypatch):
    monkeypatch.setattr(core_and_place, "MAX_SAMPLED_TASKS", 12)
    import clusterednb.logistic.partition as partition
    import clusterednb.logistic.tuning as tuning

    monkeypatch.setattr(partition, "MAX_SAMPLED_TASKS", 12)
    monkeypatch.setattr(tuning, "MAX_TUNING_TASKS", 12)


def _population(n_tasks=40, seed=0):
    planted = make_logistic_population(
        np.random.default_rng(seed),
        group_sizes=(n_tasks // 2, n_tasks // 2),
        rows_per_task=40,
        n_features=4,
        feature_concentration=0.3,
    )
    frame = planted.frame
    return (
        planted,
        frame[planted.feature_names],
        frame["label"].to_numpy(),
        frame["task"].to_numpy(),
    )


def test_placed_tasks_find_their_planted_groups(small_core):
    planted, X, y, tasks = _population()
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    truth = planted.labels_for(model.task_ids_.tolist())
    assert model.coclustering_ is None  # 40 tasks > the core of 12: not formed
    assert adjusted_rand_score(truth, model.partition_) > 0.9
    weights = model.clusters_.membership
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert model.n_clusters_probability_.shape == (41,)


def test_a_placed_task_weighs_clusters_as_the_sampler_moves_it():
    """A task placed against the core's clusters gets the weights a Gibbs move of it would
    draw from, conditioned on joining an existing cluster."""
    _, X, y, tasks = _population(n_tasks=10)
    codes = X.to_numpy().astype(np.int64)
    task = np.unique(tasks, return_inverse=True)[1]
    data = JointData.from_codes(codes, y, task, 10, np.arange(0, 13, 3))
    blocks = data.blocks(FitSettings(effective_rows=20.0, floor=0.2))
    core = np.arange(9)
    placed = core_and_place.core_and_place(blocks, 1.0, np.random.default_rng(0), 6, 2, core=core)
    partition = placed.partition[core]
    expected = []
    for k in range(partition.max() + 1):
        members = frozenset(np.flatnonzero(partition == k).tolist())
        joined = blocks.log_block(members | {9}) - blocks.log_block(members)
        expected.append(np.log(len(members)) + joined)
    expected = np.exp(np.array(expected) - np.max(expected))
    np.testing.assert_allclose(placed.membership[9], expected / expected.sum(), rtol=1e-8)
    assert placed.partition[9] == np.argmax(expected)


def test_with_every_task_in_the_core_the_sampler_is_unchanged():
    _, X, y, tasks = _population(n_tasks=10)
    codes = X.to_numpy().astype(np.int64)
    task = np.unique(tasks, return_inverse=True)[1]
    data = JointData.from_codes(codes, y, task, 10, np.arange(0, 13, 3))
    blocks = data.blocks(FitSettings(effective_rows=20.0, floor=0.2))
    every = core_and_place.core_and_place(
        blocks, 1.0, np.random.default_rng(3), 6, 2, core=np.arange(10)
    )
    plain = gibbs_joint_blocks(blocks, 1.0, np.random.default_rng(3), 6, 2)
    np.testing.assert_array_equal(every.partition, plain.partition)


def test_a_model_without_coclustering_saves_and_predicts_the_same(small_core, tmp_path):
    _, X, y, tasks = _population()
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    path = tmp_path / "many.cnb"
    model.save(path)
    again = cnb.load(path)
    assert again.coclustering_ is None
    np.testing.assert_allclose(
        again.predict_proba(X, tasks), model.predict_proba(X, tasks), rtol=1e-12
    )


def test_the_logistic_population_draws_task_by_task_from_one_stream():
    """Drawn for all tasks at once, the rows are those a task-by-task draw gives."""
    from scipy.special import expit

    population = make_logistic_population(
        np.random.default_rng(5), group_sizes=(3, 2), rows_per_task=6, n_features=4
    )
    rng = np.random.default_rng(5)
    theta = rng.dirichlet(np.ones(3), size=(2, 4))
    weights = rng.normal(0.0, 2.0, size=(2, 4, 3))
    bias = rng.normal(0.0, 1.0, size=2)
    for position, group in enumerate([0, 0, 0, 1, 1]):
        draws = rng.random((6, 4, 1))
        x = np.minimum((draws > theta[group].cumsum(axis=-1)).sum(axis=-1), 2)
        y = rng.random(6) < expit(bias[group] + weights[group, np.arange(4), x].sum(axis=1))
        rows = population.frame.iloc[6 * position : 6 * position + 6]
        np.testing.assert_array_equal(rows[population.feature_names].to_numpy(), x)
        np.testing.assert_array_equal(rows["label"].to_numpy(), y.astype(int))
        assert population.true_group[rows["task"].iloc[0]] == group
