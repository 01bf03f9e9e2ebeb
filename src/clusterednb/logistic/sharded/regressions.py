"""The cluster-weighted regressions of a sharded fit, by Newton's method over the shards.

Each of the ``R = K + 1`` regressions (one per cluster, and the pooled one) has shared
weights ``β`` over the one-hot values and the intercept (``p`` columns) and one weight ``θ_u``
per task (its intercept column); its objective is the one
:class:`~clusterednb.logistic.solvers.weighted_newton.WeightedLogistic` minimises,

    Σ_i m_i loss_i + ½ (1/C) (|β without the intercept|² + Σ_u θ_u²),

with row weights ``m = floor + (1 − floor) q_u(c)`` (1 in the pooled one). Its Hessian is
``[[S, B], [Bᵀ, D]]`` with ``D`` diagonal over the tasks, so a Newton step solves the Schur
complement ``(S − B D⁻¹ Bᵀ) δ_β = g_β − B D⁻¹ g_θ`` and then ``δ_θu = (g_θu − b_uᵀ δ_β) / D_u``
(:mod:`clusterednb.logistic.solvers.task_block`, in memory). Both sums over tasks split over
shards: :func:`shard_pass` returns a shard's part of the Schur complement and of the reduced
gradient, at its tasks' current weights, and the driver (:func:`sharded_regressions`) solves
the small ``p × p`` systems. The next pass first moves the shard's own ``θ`` by the step the
driver chose (from the same sums at the same point), then sums again at the new point. Only
``p × p`` matrices travel; each task's ``θ`` stays in its shard.

Steps are halved while the objective rises; a regression stops after the step whose Newton
decrement ``½ gᵀ H⁻¹ g`` is below the in-memory fit's tolerance (1e-8).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clusterednb.logistic.sharded.kernels import (
    one_hot_columns,
    pattern_design,
    point_sums,
    row_patterns,
    step_sums,
)
from clusterednb.logistic.sharded.shards import EncodedShard

TOLERANCE = 1e-8
"""The Newton decrement after whose step a regression stops (as in memory)."""
MAX_STEPS = 100


@dataclass(frozen=True)
class PassSums:
    """A shard's sums at its tasks' weights after a pass, for every regression.

    Attributes
    ----------
    objective : ndarray of shape (R,)
        ``Σ m_i loss_i + ½ Σ_u θ_u² / C`` over the shard (the shared weights' penalty is the
        driver's).
    schur : ndarray of shape (R, p, p)
        ``S − B D⁻¹ Bᵀ`` over the shard's rows and tasks (without the penalty).
    gradient : ndarray of shape (R, p)
        ``g_β − B D⁻¹ g_θ`` (without the penalty's gradient).
    task_decrement : ndarray of shape (R,)
        ``Σ_u g_θu² / D_u``.
    """

    objective: np.ndarray
    schur: np.ndarray
    gradient: np.ndarray
    task_decrement: np.ndarray

    @staticmethod
    def total(parts: list[PassSums]) -> PassSums:
        """The sums over all shards.

        Examples
        --------
        >>> one = PassSums(np.ones(1), np.ones((1, 2, 2)), np.ones((1, 2)), np.ones(1))
        >>> PassSums.total([one, one]).schur.tolist()
        [[[2.0, 2.0], [2.0, 2.0]]]
        """
        return PassSums(
            sum(p.objective for p in parts),
            sum(p.schur for p in parts),
            sum(p.gradient for p in parts),
            sum(p.task_decrement for p in parts),
        )


def row_weights(shard: EncodedShard, floor: float) -> np.ndarray:
    """Each task's row weight in every regression, shape (n_local, K + 1).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, _, _ = toy.toy_shards()
    >>> shard = replace(shards[0], weights=np.array([[1.0, 0.0]] * 3))
    >>> row_weights(shard, 0.2)[0].tolist()
    [1.0, 0.2, 1.0]
    """
    return np.column_stack([floor + (1.0 - floor) * shard.weights, np.ones(shard.task_ids.size)])


def shard_pass(
    shard: EncodedShard,
    beta_before: np.ndarray,
    delta: np.ndarray,
    sizes: np.ndarray,
    floor: float,
    C: float,
) -> tuple[EncodedShard, PassSums]:
    """One pass over a shard: move its tasks' ``θ`` by the step sizes ``sizes`` (R,) along the
    Newton direction whose shared part is ``delta`` (R, p) at ``(beta_before, θ)``, then return
    the shard and its :class:`PassSums` at ``(beta_before − sizes · delta, θ_new)``.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, _, _ = toy.toy_shards()
    >>> shard = replace(shards[0], weights=np.full((3, 1), 1.0))
    >>> beta = np.zeros((2, 3))
    >>> shard, sums = shard_pass(shard, beta, np.zeros((2, 3)), np.zeros(2), 0.2, 1.0)
    >>> sums.schur.shape, shard.theta.shape
    ((2, 3, 3), (3, 2))
    """
    data = shard.data
    rows = data.labelled
    columns = one_hot_columns(data.codes[rows], data.offsets)
    task_rows = data.task[rows].astype(np.int64)
    y = data.y[rows].astype(np.float64)
    n_local = shard.task_ids.size
    weights = row_weights(shard, floor)
    theta = np.zeros((n_local, beta_before.shape[0])) if shard.theta is None else shard.theta
    if np.any(sizes > 0):
        curvature, residual, along = step_sums(
            columns, task_rows, y, weights, beta_before, theta, delta
        )
        theta = theta - sizes * (residual + theta / C - along) / (curvature + 1.0 / C)
    beta = beta_before - sizes[:, None] * delta
    patterns, pattern = shard.patterns if shard.patterns is not None else row_patterns(columns)
    loss, pattern_curvature, pattern_residual, curvature, residual, cross = point_sums(
        columns, pattern, patterns.shape[0], task_rows, y, weights, beta, theta
    )
    design = pattern_design(patterns, beta.shape[1])
    D = curvature + 1.0 / C
    g_theta = residual + theta / C
    n_regressions = beta.shape[0]
    schur = np.empty((n_regressions, beta.shape[1], beta.shape[1]))
    gradient = pattern_residual.T @ design  # (R, p)
    for r in range(n_regressions):
        b = np.ascontiguousarray(cross[:, r, :])
        schur[r] = design.T @ (design * pattern_curvature[:, [r]]) - (b.T / D[:, r]) @ b
        gradient[r] -= b.T @ (g_theta[:, r] / D[:, r])
    sums = PassSums(
        loss + 0.5 * (theta * theta).sum(axis=0) / C,
        schur,
        gradient,
        (g_theta * g_theta / D).sum(axis=0),
    )
    return replace(shard, theta=theta, patterns=(patterns, pattern)), sums


def sharded_regressions(
    shards: Any, floor: float, C: float, n_regressions: int, p: int, tol: float = TOLERANCE
) -> tuple[Any, np.ndarray, int]:
    """Newton's method over the shards for every regression at once.

    Parameters
    ----------
    shards : LocalShards or DaskShards
        Placed shards (:class:`~clusterednb.logistic.sharded.fit.LocalShards`,
        :class:`~clusterednb.logistic.sharded.dask_fit.DaskShards`: ``apply_collect`` returns
        new shards and a result each, leaving these as they were, so a refused step is
        tried again from them).
    floor, C : float
    n_regressions, p : int
        ``K + 1`` and the shared columns (one-hot values and the intercept).
    tol : float

    Returns
    -------
    (shards, beta, passes)
        The shards holding their tasks' ``θ`` (n_local, R); the shared weights, shape (R, p);
        the passes over the rows.
    """
    beta = np.zeros((n_regressions, p))
    none = np.zeros(n_regressions)
    shards, parts = shards.apply_collect(shard_pass, beta, beta, none, floor, C)
    delta, decrement, objective = newton_direction(PassSums.total(parts), beta, C)
    done = np.zeros(n_regressions, dtype=bool)
    passes = 1
    while not done.all() and passes < MAX_STEPS:
        sizes = np.where(done, 0.0, 1.0)
        while True:
            trial, parts = shards.apply_collect(shard_pass, beta, delta, sizes, floor, C)
            passes += 1
            moved = beta - sizes[:, None] * delta
            found = newton_direction(PassSums.total(parts), moved, C)
            rose = found[2] > objective + 1e-10 * np.abs(objective) + 1e-12
            worse = rose & (sizes > 1e-8)
            if not worse.any():
                break
            sizes = np.where(worse, 0.5 * sizes, sizes)
        done |= decrement < tol
        shards, beta = trial, moved
        delta, decrement, objective = found
    return shards, beta, passes


def penalty(p: int, C: float) -> np.ndarray:
    """``1/C`` on every shared weight but the intercept (the last), shape (p,).

    Examples
    --------
    >>> penalty(3, 2.0).tolist()
    [0.5, 0.5, 0.0]
    """
    out = np.full(p, 1.0 / C)
    out[-1] = 0.0
    return out


def newton_direction(
    sums: PassSums, beta: np.ndarray, C: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The shared weights' Newton direction of every regression, its decrement and the
    objective, from the shards' summed :class:`PassSums` at ``beta`` (R, p).

    Examples
    --------
    >>> sums = PassSums(np.zeros(1), np.eye(2)[None], np.array([[1.0, 2.0]]), np.zeros(1))
    >>> delta, decrement, objective = newton_direction(sums, np.zeros((1, 2)), 1.0)
    >>> delta.tolist(), decrement.tolist()  # (I + diag(1, 0)) δ = g
    ([[0.5, 2.0]], [2.25])
    """
    n_regressions, p = beta.shape
    pen = penalty(p, C)
    delta = np.empty_like(beta)
    decrement = np.empty(n_regressions)
    for r in range(n_regressions):
        gradient = sums.gradient[r] + pen * beta[r]
        delta[r] = np.linalg.solve(sums.schur[r] + np.diag(pen), gradient)
        decrement[r] = 0.5 * (sums.task_decrement[r] + gradient @ delta[r])
    objective = sums.objective + 0.5 * (pen * beta * beta).sum(axis=1)
    return delta, decrement, objective
