"""The sharded regressions' compiled row sums against their dense formulas, and one Newton
step of the sharded solver against the plain step on the full Hessian (issue 50)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, log_expit

from clusterednb.logistic.clustering.task_expansions import one_hot_design
from clusterednb.logistic.sharded.kernels import (
    one_hot_columns,
    pattern_design,
    point_sums,
    row_patterns,
    step_sums,
)


def _problem(seed=0, n_rows=60, n_local=7, n_regressions=3):
    rng = np.random.default_rng(seed)
    offsets = np.array([0, 3, 5, 9])
    codes = np.column_stack([rng.integers(-1, 3, n_rows), rng.integers(0, 2, n_rows),
                             rng.integers(-1, 4, n_rows)])  # fmt: skip
    task = np.sort(rng.integers(0, n_local, n_rows))
    y = rng.integers(0, 2, n_rows).astype(np.float64)
    weights = rng.uniform(0.1, 1.0, (n_local, n_regressions))
    p = int(offsets[-1]) + 1
    beta = rng.normal(size=(n_regressions, p))
    theta = rng.normal(size=(n_local, n_regressions))
    return codes, offsets, task, y, weights, beta, theta


@pytest.mark.parametrize("seed", [0, 1])
def test_point_sums_equal_the_dense_formulas(seed):
    codes, offsets, task, y, weights, beta, theta = _problem(seed)
    columns = one_hot_columns(codes, offsets)
    patterns, pattern = row_patterns(columns)
    design = one_hot_design(codes, offsets)  # (n_rows, p), the intercept last
    np.testing.assert_array_equal(pattern_design(patterns, beta.shape[1])[pattern], design)
    loss, pattern_c, pattern_r, curvature, residual, cross = point_sums(
        columns, pattern, patterns.shape[0], task, y, weights, beta, theta
    )
    patterned = pattern_design(patterns, beta.shape[1])
    for r in range(beta.shape[0]):
        margin = design @ beta[r] + theta[task, r]
        prob = expit(margin)
        m = weights[task, r]
        c, g = m * prob * (1 - prob), m * (prob - y)
        expected_loss = -(m * np.where(y > 0, log_expit(margin), log_expit(-margin))).sum()
        assert loss[r] == pytest.approx(expected_loss, rel=1e-12)
        gram = patterned.T @ (patterned * pattern_c[:, [r]])
        np.testing.assert_allclose(gram, design.T @ (design * c[:, None]), atol=1e-12)
        np.testing.assert_allclose(pattern_r[:, r] @ patterned, design.T @ g, atol=1e-12)
        for u in range(theta.shape[0]):
            own = task == u
            assert curvature[u, r] == pytest.approx(c[own].sum(), abs=1e-12)
            assert residual[u, r] == pytest.approx(g[own].sum(), abs=1e-12)
            np.testing.assert_allclose(cross[u, r], design[own].T @ c[own], atol=1e-12)


def test_step_sums_give_each_tasks_part_of_the_newton_direction():
    codes, offsets, task, y, weights, beta, theta = _problem(2)
    delta = np.random.default_rng(5).normal(size=beta.shape)
    columns = one_hot_columns(codes, offsets)
    curvature, residual, along = step_sums(columns, task, y, weights, beta, theta, delta)
    design = one_hot_design(codes, offsets)
    for r in range(beta.shape[0]):
        prob = expit(design @ beta[r] + theta[task, r])
        c = weights[task, r] * prob * (1 - prob)
        for u in range(theta.shape[0]):
            own = task == u
            assert along[u, r] == pytest.approx((c[own] * (design[own] @ delta[r])).sum())
            assert curvature[u, r] == pytest.approx(c[own].sum())
            expected = (weights[task, r] * (prob - y))[own].sum()
            assert residual[u, r] == pytest.approx(expected, abs=1e-12)


def test_one_sharded_newton_step_is_the_plain_newton_step_on_the_full_hessian():
    """Two shards of one regression: the shared step solved from the shards' Schur sums and
    each task's step from its own sums equal ``H⁻¹ g`` of the full system (shared columns and
    a column per task)."""
    from clusterednb.logistic.fit import JointData
    from clusterednb.logistic.sharded.regressions import PassSums, newton_direction, shard_pass
    from clusterednb.logistic.sharded.shards import EncodedShard

    codes, offsets, task, y, _, _, _ = _problem(3, n_rows=80, n_local=8, n_regressions=1)
    C, floor = 0.7, 0.3
    q = np.random.default_rng(1).uniform(0.0, 1.0, (8, 1))
    shards, rows_of = [], []
    for part in (task < 4, task >= 4):
        local = task[part] - task[part].min()
        data = JointData.from_codes(codes[part], y[part].astype(np.int64), local, 4, offsets)
        shards.append(EncodedShard(np.arange(4).astype(object), data, np.arange(4),
                                   weights=q[task[part].min():][:4]))  # fmt: skip
        rows_of.append(part)
    p = int(offsets[-1]) + 1
    beta = np.random.default_rng(2).normal(size=(2, p)) * 0.3  # regression 0 and the pooled one
    theta_all = np.random.default_rng(4).normal(size=(8, 2)) * 0.3
    parts, moved = [], []
    for number, shard in enumerate(shards):
        shard = EncodedShard(shard.task_ids, shard.data, shard.positions, shard.weights,
                             theta=theta_all[4 * number : 4 * number + 4])  # fmt: skip
        zero = np.zeros(2)
        shard, sums = shard_pass(shard, beta, np.zeros_like(beta), zero, floor, C)
        parts.append(sums)
        moved.append(shard)
    delta, _, _ = newton_direction(PassSums.total(parts), beta, C)
    # the full system of regression 0: columns [shared p | 8 tasks]
    design = one_hot_design(codes, offsets)
    full = np.hstack([design, np.eye(8)[task]])
    weight = floor + (1 - floor) * q[task, 0]
    coef = np.concatenate([beta[0], theta_all[:, 0]])
    prob = expit(full @ coef)
    penalty = np.concatenate([np.full(p - 1, 1 / C), [0.0], np.full(8, 1 / C)])
    gradient = full.T @ (weight * (prob - y)) + penalty * coef
    hessian = full.T @ (full * (weight * prob * (1 - prob))[:, None]) + np.diag(penalty)
    step = np.linalg.solve(hessian, gradient)
    np.testing.assert_allclose(delta[0], step[:p], atol=1e-10)
    sizes = np.array([1.0, 0.0])
    task_steps = []
    for shard in moved:
        after, _ = shard_pass(shard, beta, delta, sizes, floor, C)
        task_steps.append(shard.theta[:, 0] - after.theta[:, 0])
    np.testing.assert_allclose(np.concatenate(task_steps), step[p:], atol=1e-10)


@pytest.mark.parametrize(
    "C", [0.1, 100.0]
)  # a strong prior, and a weak one on nearly separable rows
def test_sharded_newton_reaches_the_in_memory_minimum(C):
    """Every regression (a cluster's, weighted, and the pooled one) over two shards reaches the
    minimum :class:`WeightedLogistic` finds on all rows at once (steps halved where the
    objective would rise)."""
    from clusterednb.logistic.fit import JointData
    from clusterednb.logistic.sharded.fit import LocalShards
    from clusterednb.logistic.sharded.regressions import sharded_regressions
    from clusterednb.logistic.sharded.shards import EncodedShard
    from clusterednb.logistic.solvers.cluster_weighted import sparse_design
    from clusterednb.logistic.solvers.weighted_newton import WeightedLogistic

    rng = np.random.default_rng(7)
    offsets = np.array([0, 3, 5])
    n_tasks, rows = 10, 12
    task = np.repeat(np.arange(n_tasks), rows)
    codes = np.column_stack([rng.integers(0, 3, task.size), rng.integers(0, 2, task.size)])
    y = ((codes[:, 0] == 0) ^ (rng.random(task.size) < 0.03)).astype(np.int64)  # nearly separable
    q = rng.dirichlet(np.ones(1), n_tasks)  # one cluster
    floor = 0.2
    shards = []
    for part in (task < 5, task >= 5):
        local = task[part] - task[part].min()
        data = JointData.from_codes(codes[part], y[part], local, 5, offsets)
        first = int(task[part].min())
        shards.append(
            EncodedShard(
                np.arange(5).astype(object),
                data,
                np.arange(first, first + 5),
                weights=q[first : first + 5],
            )
        )
    p = int(offsets[-1]) + 1
    done, beta, passes = sharded_regressions(LocalShards(shards), floor, C, 2, p)
    theta = np.concatenate([shard.theta for shard in done.shards])
    problem = WeightedLogistic(
        sparse_design(codes, offsets, task, n_tasks), y, C,
        task_columns=slice(int(offsets[-1]), int(offsets[-1]) + n_tasks),
    )  # fmt: skip
    weights = floor + (1 - floor) * q[task, 0]
    for r, row_weights in enumerate((weights, np.ones(task.size))):
        coef, intercept = problem.fit(row_weights)
        np.testing.assert_allclose(beta[r, :-1], coef[: int(offsets[-1])], atol=1e-4)
        np.testing.assert_allclose(theta[:, r], coef[int(offsets[-1]) :], atol=1e-4)
        assert beta[r, -1] == pytest.approx(intercept, abs=1e-4)
    assert passes < 40
