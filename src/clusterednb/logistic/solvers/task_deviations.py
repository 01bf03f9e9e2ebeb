"""Each task's own deviation from a shared prediction, learnt from the task's labels alone.

The shared prediction (the cluster-weighted regressions) gives each row log-odds ``o(x)``; a
task ``u`` adds its own weights on the shared features and its own intercept,

    logit P(y = 1 | x, u) = o(x) + δ_u · [z(x), 1],    δ_u ~ N(0, v I),

fitted by MAP on the task's labelled rows with ``o`` held fixed (an offset). It is the second
half of partial pooling (``lr-hier`` fits shared weights and deviations together; here the
shared part comes from the clusters): a task with few labels stays near the shared prediction,
one with many learns its own rule, and ``v = 0`` gives back the shared prediction exactly.

Newton's method solves the ``d + 1`` weights of a task when there are at most
:data:`MAX_NEWTON_COLUMNS`; for a vocabulary of words, L-BFGS minimises the same objective.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit

from clusterednb.logistic.solvers.lbfgs import minimize_lbfgs

MAX_NEWTON_COLUMNS = 512
NEWTON_TOL = 1e-10
MAX_LOG_ODDS = 30.0
"""Offsets are clipped to ``±30`` (a probability within 1e-13 of 0 or 1): beyond it a
saturated shared prediction would make every deviation irrelevant, and rounding rules."""


def log_odds(p1: np.ndarray) -> np.ndarray:
    """``log(p / (1 − p))`` clipped to ``±MAX_LOG_ODDS``, shape as ``p1``.

    Examples
    --------
    >>> log_odds(np.array([0.5, 1.0, 0.0])).tolist()
    [0.0, 30.0, -30.0]
    """
    with np.errstate(divide="ignore"):
        odds = np.log(p1) - np.log1p(-p1)
    return np.clip(odds, -MAX_LOG_ODDS, MAX_LOG_ODDS)


def deviation_loss(
    with_bias, y: np.ndarray, offset: np.ndarray, variance: float, coef: np.ndarray
) -> tuple[float, np.ndarray]:
    """The negative log posterior of one task's deviation and its gradient.

    Parameters
    ----------
    with_bias : ndarray or sparse matrix of shape (n_rows, d + 1)
        The task's shared features and a column of ones.
    y : ndarray of shape (n_rows,)
        Labels in {0, 1}.
    offset : ndarray of shape (n_rows,)
        The shared prediction's log-odds.
    variance : float
        Prior variance ``v > 0`` of every deviation weight.
    coef : ndarray of shape (d + 1,)

    Returns
    -------
    loss : float
    gradient : ndarray of shape (d + 1,)

    Examples
    --------
    >>> loss, gradient = deviation_loss(np.ones((2, 1)), np.array([1, 0]), np.zeros(2), 1.0,
    ...                                 np.zeros(1))
    >>> round(loss, 4), gradient.tolist()  # two rows at P = 1/2: 2 log 2, balanced
    (1.3863, [0.0])
    """
    margin = offset + with_bias @ coef
    sign = np.where(y > 0, 1.0, -1.0)
    loss = -float(np.sum(log_expit(sign * margin))) + 0.5 * float(coef @ coef) / variance
    gradient = with_bias.T @ (expit(margin) - y) + coef / variance
    return loss, np.asarray(gradient).ravel()


def fit_task_deviation(shared, y: np.ndarray, offset: np.ndarray, variance: float) -> np.ndarray:
    """The MAP deviation ``δ_u`` of one task (see the module).

    Parameters
    ----------
    shared : ndarray or sparse matrix of shape (n_rows, d)
        The task's labelled rows' shared features.
    y : ndarray of shape (n_rows,)
    offset : ndarray of shape (n_rows,)
    variance : float
        ``v ≥ 0``; 0 (or no rows) gives zeros.

    Returns
    -------
    ndarray of shape (d + 1,)
        Weights on the shared features, then the intercept.

    Examples
    --------
    A task whose rows all say 1 where the shared prediction says 1/2 moves its intercept up,
    less with a tighter prior:

    >>> shared, y, offset = np.zeros((4, 1)), np.ones(4), np.zeros(4)
    >>> loose = fit_task_deviation(shared, y, offset, variance=10.0)
    >>> tight = fit_task_deviation(shared, y, offset, variance=0.1)
    >>> bool(loose[1] > tight[1] > 0), float(loose[0])
    (True, 0.0)
    """
    n_rows, d = shared.shape
    if variance <= 0 or n_rows == 0:
        return np.zeros(d + 1)
    ones = np.ones((n_rows, 1))
    if sparse.issparse(shared):
        with_bias = sparse.hstack([shared, ones], format="csr")
    else:
        with_bias = np.hstack([np.asarray(shared, dtype=np.float64), ones])
    y = np.asarray(y, dtype=np.float64)
    if d + 1 > MAX_NEWTON_COLUMNS:
        result = minimize_lbfgs(
            lambda coef: deviation_loss(with_bias, y, offset, variance, coef),
            np.zeros(d + 1),
            gtol=1e-9,
            ftol=1e-14,
        )
        return result.x
    dense = with_bias.toarray() if sparse.issparse(with_bias) else with_bias
    return _newton(dense, y, offset, variance)


def _newton(with_bias: np.ndarray, y: np.ndarray, offset: np.ndarray, variance: float):
    """Newton's method with a halving line search on the convex objective."""
    coef = np.zeros(with_bias.shape[1])
    loss, gradient = deviation_loss(with_bias, y, offset, variance, coef)
    for _ in range(100):
        probability = expit(offset + with_bias @ coef)
        curvature = probability * (1.0 - probability)
        hessian = with_bias.T @ (with_bias * curvature[:, None])
        hessian[np.diag_indices_from(hessian)] += 1.0 / variance
        step = cho_solve(cho_factor(hessian), gradient)
        size = 1.0
        while True:
            trial = coef - size * step
            trial_loss, trial_gradient = deviation_loss(with_bias, y, offset, variance, trial)
            if trial_loss <= loss or size < 1e-10:
                break
            size /= 2.0
        coef, loss, gradient = trial, trial_loss, trial_gradient
        if np.max(np.abs(size * step)) < NEWTON_TOL:
            break
    return coef


def fit_task_deviations(
    shared,
    y: np.ndarray,
    task: np.ndarray,
    offset: np.ndarray,
    variance: float,
    n_tasks: int,
    tasks: np.ndarray | None = None,
) -> np.ndarray:
    """Every task's deviation, each from its own labelled rows.

    Parameters
    ----------
    shared : ndarray or sparse matrix of shape (n_rows, d)
        Labelled rows' shared features.
    y : ndarray of shape (n_rows,)
    task : ndarray of shape (n_rows,)
        Each row's task position.
    offset : ndarray of shape (n_rows,)
        The shared prediction's log-odds of each row.
    variance : float
    n_tasks : int
    tasks : ndarray, optional
        Fit only these task positions (the others stay zero).

    Returns
    -------
    ndarray of shape (n_tasks, d + 1)

    Examples
    --------
    Two tasks that disagree about one feature, around a shared prediction of 1/2:

    >>> shared = np.array([[1.0], [0.0], [1.0], [0.0]])
    >>> deviations = fit_task_deviations(shared, np.array([1, 0, 0, 1]), np.array([0, 0, 1, 1]),
    ...                                  np.zeros(4), 1.0, n_tasks=2)
    >>> bool(deviations[0, 0] > 0 > deviations[1, 0])
    True
    """
    if sparse.issparse(shared):
        shared = shared.tocsr()
    deviations = np.zeros((n_tasks, shared.shape[1] + 1))
    order = np.argsort(task, kind="stable")
    starts = np.searchsorted(task[order], np.arange(n_tasks + 1))
    wanted = range(n_tasks) if tasks is None else np.unique(tasks)
    for u in wanted:
        rows = order[starts[u] : starts[u + 1]]
        deviations[u] = fit_task_deviation(shared[rows], y[rows], offset[rows], variance)
    return deviations


def deviation_margin(shared, task: np.ndarray, deviations: np.ndarray) -> np.ndarray:
    """``δ_u · [z(x), 1]`` of rows, 0 for a task without a deviation (position -1).

    Parameters
    ----------
    shared : ndarray or sparse matrix of shape (n_rows, d)
    task : ndarray of shape (n_rows,)
    deviations : ndarray of shape (n_tasks, d + 1)

    Returns
    -------
    ndarray of shape (n_rows,)

    Examples
    --------
    >>> deviation_margin(np.array([[2.0], [2.0]]), np.array([0, -1]),
    ...                  np.array([[1.0, 0.5]])).tolist()
    [2.5, 0.0]
    """
    if sparse.issparse(shared):
        shared = shared.tocsr()
    margin = np.zeros(task.size)
    order = np.argsort(task, kind="stable")
    present, starts = np.unique(task[order], return_index=True)
    ends = np.append(starts[1:], task.size)
    for u, start, end in zip(present, starts, ends, strict=True):
        if u < 0 or not deviations[u].any():
            continue
        rows = order[start:end]
        margin[rows] = np.asarray(shared[rows] @ deviations[u, :-1]).ravel() + deviations[u, -1]
    return margin
