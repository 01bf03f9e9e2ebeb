"""The compiled block Gibbs sampler of ClusteredLogisticRegression: its scores against the
Python block scores, its chain against the Python sampler's, its samples against enumeration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusterednb.data.synthetic import make_logistic_population
from clusterednb.exceptions import CNBError
from clusterednb.inference.blocks.engine import enumerate_blocks, gibbs_blocks
from clusterednb.inference.blocks.kernels import alone_scores, log_features, slot_score
from clusterednb.inference.blocks.slot_chain import gibbs_joint_blocks
from clusterednb.logistic.clustering.joint_blocks import JointLogisticBlocks, TaskExpansions
from clusterednb.logistic.fit import FitSettings, JointData


def blocks_of(n_tasks: int, seed: int = 3, effective_rows: float = np.inf, n_values: int = 2):
    population = make_logistic_population(
        np.random.default_rng(seed),
        group_sizes=(n_tasks - n_tasks // 2, n_tasks // 2),
        rows_per_task=12,
        n_features=3,
        n_values=n_values,
    )
    frame = population.frame
    codes = frame[population.feature_names].to_numpy()
    task = pd.factorize(frame["task"])[0]
    offsets = np.arange(0, n_values * 3 + 1, n_values)
    data = JointData.from_codes(codes, frame["label"].to_numpy(), task, n_tasks, offsets)
    return data.blocks(FitSettings(effective_rows=effective_rows))


def empty_slots(blocks: JointLogisticBlocks) -> tuple:
    features, expansions = blocks.packed()
    n_tasks, n_values = features[0].shape
    d = expansions[3].size
    return (
        np.zeros((n_tasks, n_values)),
        np.zeros(n_tasks),
        np.zeros((n_tasks, d)),
        np.zeros((n_tasks, d, d)),
    )


def test_compiled_scores_equal_the_block_scores():
    blocks = blocks_of(6, effective_rows=5.0)
    features, expansions = blocks.packed()
    slots = empty_slots(blocks)
    d = expansions[3].size
    work, whitened = np.empty((d, d)), np.empty(d)
    alone = alone_scores(slots, features, expansions, blocks.precision)
    for task in range(6):
        assert alone[task] == pytest.approx(blocks.log_block(frozenset({task})), abs=1e-9)
    sums = blocks.of_members([0, 2, 5])  # a cluster of three, then task 4 added
    slots[0][1], slots[1][1], slots[2][1], slots[3][1] = (
        sums.counts,
        sums.value,
        sums.gradient,
        sums.hessian,
    )
    as_it_is = slot_score(slots, 1, -1, features, expansions, blocks.precision, work, whitened)
    assert as_it_is == pytest.approx(blocks.log_block(frozenset({0, 2, 5})), abs=1e-9)
    added = slot_score(slots, 1, 4, features, expansions, blocks.precision, work, whitened)
    assert added == pytest.approx(blocks.log_block(frozenset({0, 2, 4, 5})), abs=1e-9)
    counts = np.array([3.0, 0.5, 2.0, 1.0, 0.0, 4.0])
    assert log_features(counts, np.zeros(0), blocks.beta, blocks.offsets, 0.0) - (
        blocks._log_norm_prior
    ) == pytest.approx(float(blocks.log_features(counts)), abs=1e-12)


@pytest.mark.parametrize(
    ("n_tasks", "effective_rows", "seed"), [(9, 2.0, 0), (12, np.inf, 1), (20, 5.0, 2)]
)
def test_compiled_chain_is_the_python_chain(n_tasks, effective_rows, seed):
    """Same seed, same draws, same partitions: the compiled sampler is the Python one."""
    blocks = blocks_of(n_tasks, seed=seed + 3, effective_rows=effective_rows)
    compiled = gibbs_joint_blocks(blocks, 1.0, np.random.default_rng(seed), 40, 5)
    python = gibbs_blocks(n_tasks, blocks, 1.0, np.random.default_rng(seed), 40, 5)
    np.testing.assert_array_equal(compiled.partition, python.partition)
    np.testing.assert_array_equal(compiled.coclustering, python.coclustering)
    np.testing.assert_array_equal(compiled.n_clusters_probability, python.n_clusters_probability)
    assert compiled.log_joint == pytest.approx(python.log_joint, abs=1e-9)
    assert ((compiled.coclustering > 0) & (compiled.coclustering < 1)).any()  # it moved


def test_compiled_sampler_approaches_the_enumerated_posterior():
    blocks = blocks_of(5, effective_rows=2.0)
    exact = enumerate_blocks(5, blocks.log_block, 0.7)
    assert 0.05 < exact.coclustering[0, 4] < 0.95  # a posterior with real uncertainty
    sampled = gibbs_joint_blocks(blocks, 0.7, np.random.default_rng(0), 4000, 100)
    np.testing.assert_allclose(sampled.coclustering, exact.coclustering, atol=0.04)
    np.testing.assert_allclose(
        sampled.n_clusters_probability, exact.n_clusters_probability, atol=0.04
    )
    assert sampled.log_joint == pytest.approx(exact.log_joint, abs=1e-9)  # the MAP is found


def test_same_seed_same_numbers():
    blocks = blocks_of(10, effective_rows=3.0)
    first = gibbs_joint_blocks(blocks, 1.0, np.random.default_rng(7), 20, 2)
    again = gibbs_joint_blocks(blocks, 1.0, np.random.default_rng(7), 20, 2)
    np.testing.assert_array_equal(first.coclustering, again.coclustering)


def test_a_precision_matrix_that_is_not_positive_definite_is_refused():
    d = 3
    expansions = TaskExpansions(
        np.zeros(d), np.zeros(2), np.zeros((2, d)), np.tile(-5.0 * np.eye(d), (2, 1, 1))
    )
    blocks = JointLogisticBlocks(np.ones((2, 2)), np.array([0, 2]), expansions)
    with pytest.raises(CNBError, match="not positive definite"):
        gibbs_joint_blocks(blocks, 1.0, np.random.default_rng(0))


def test_burn_in_must_leave_sweeps():
    with pytest.raises(CNBError, match="burn_in"):
        gibbs_joint_blocks(blocks_of(4), 1.0, np.random.default_rng(0), n_sweeps=5, burn_in=5)
