"""Compiled row loops of the sharded regressions (:mod:`clusterednb.logistic.sharded.regressions`).

A row's design is one-hot: its columns are the value of each present feature and the
intercept, so its contributions to every sum are a few dozen additions, not a dense ``p``- or
``p²``-vector; one loop over the rows serves every regression at once.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


def one_hot_columns(codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each row's one-hot columns: the value of each feature (-1 when missing), then the
    intercept's (the last column), shape (n_rows, n_features + 1).

    Examples
    --------
    >>> one_hot_columns(np.array([[0, 1], [-1, 0]]), np.array([0, 2, 4])).tolist()
    [[0, 3, 4], [-1, 2, 4]]
    """
    codes = np.asarray(codes, dtype=np.int64)
    columns = np.empty((codes.shape[0], codes.shape[1] + 1), dtype=np.int64)
    columns[:, :-1] = np.where(codes >= 0, codes + offsets[:-1], -1)
    columns[:, -1] = int(offsets[-1])
    return columns


@njit(cache=True, nogil=True)
def _row_margin(columns, i, beta, r):  # pragma: no cover
    total = 0.0
    for a in range(columns.shape[1]):
        column = columns[i, a]
        if column >= 0:
            total += beta[r, column]
    return total


def row_patterns(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of :func:`one_hot_columns` and each row's pattern, shapes
    (n_patterns, width) and (n_rows,): sums of ``z zᵀ`` and ``z`` over the rows are sums over
    the patterns of the rows' summed weights (eight features of three values have at most
    6 561 patterns, however many rows).

    Examples
    --------
    >>> patterns, of_row = row_patterns(np.array([[0, 2], [1, 2], [0, 2]]))
    >>> patterns.tolist(), of_row.tolist()
    ([[0, 2], [1, 2]], [0, 1, 0])
    """
    base = int(columns.max(initial=0)) + 2  # a column, or -1 for a missing value, is a digit
    if columns.shape[1] * np.log2(base) < 62:
        key = ((columns + 1) * base ** np.arange(columns.shape[1], dtype=np.int64)).sum(axis=1)
        _, first, of_row = np.unique(key, return_index=True, return_inverse=True)
        return columns[first], of_row.ravel().astype(np.int64)
    patterns, of_row = np.unique(columns, axis=0, return_inverse=True)
    return patterns, of_row.ravel().astype(np.int64)


@njit(cache=True, nogil=True)
def point_sums(columns, pattern, n_patterns, task, y, weights, beta, theta):  # pragma: no cover
    """Sums at ``(β, θ)`` over the rows, for every regression ``r``.

    Parameters
    ----------
    columns : int64 ndarray of shape (n_rows, n_features + 1)
        :func:`one_hot_columns`.
    pattern : int64 ndarray of shape (n_rows,)
        Each row's pattern (:func:`row_patterns`).
    n_patterns : int
    task : int64 ndarray of shape (n_rows,)
        Each row's local task.
    y : float64 ndarray of shape (n_rows,)
    weights : float64 ndarray of shape (n_local, R)
        Each task's row weight in each regression.
    beta : float64 ndarray of shape (R, p)
    theta : float64 ndarray of shape (n_local, R)

    Returns
    -------
    loss : ndarray of shape (R,)
        ``Σ m loss``.
    pattern_curvature : ndarray of shape (n_patterns, R)
        ``Σ m c`` over each pattern's rows (``c = p(1 − p)``; the Gram matrix is
        ``Σ_pattern that · z zᵀ``).
    pattern_residual : ndarray of shape (n_patterns, R)
        ``Σ m (p − y)`` over each pattern's rows.
    curvature : ndarray of shape (n_local, R)
        ``Σ_{i ∈ u} m c``.
    residual : ndarray of shape (n_local, R)
        ``Σ_{i ∈ u} m (p − y)``.
    cross : ndarray of shape (n_local, R, p)
        ``b_u = Σ_{i ∈ u} m c z``.

    Examples
    --------
    One row, one regression, at zero: ``p = ½``.

    >>> out = point_sums(np.array([[0, 1]]), np.array([0]), 1, np.array([0]), np.array([1.0]),
    ...                  np.ones((1, 1)), np.zeros((1, 2)), np.zeros((1, 1)))
    >>> out[1].tolist(), out[2].tolist(), out[5].tolist()
    ([[0.25]], [[-0.5]], [[[0.25, 0.25]]])
    """
    n_rows, width = columns.shape
    n_regressions, p = beta.shape
    n_local = theta.shape[0]
    loss = np.zeros(n_regressions)
    pattern_curvature = np.zeros((n_patterns, n_regressions))
    pattern_residual = np.zeros((n_patterns, n_regressions))
    curvature = np.zeros((n_local, n_regressions))
    residual = np.zeros((n_local, n_regressions))
    cross = np.zeros((n_local, n_regressions, p))
    for i in range(n_rows):
        t = task[i]
        k = pattern[i]
        for r in range(n_regressions):
            margin = _row_margin(columns, i, beta, r) + theta[t, r]
            probability = 1.0 / (1.0 + math.exp(-margin))
            m = weights[t, r]
            signed = margin if y[i] > 0 else -margin
            if signed > 0:
                loss[r] += m * math.log1p(math.exp(-signed))
            else:
                loss[r] += m * (math.log1p(math.exp(signed)) - signed)
            c = m * probability * (1.0 - probability)
            g = m * (probability - y[i])
            pattern_curvature[k, r] += c
            pattern_residual[k, r] += g
            curvature[t, r] += c
            residual[t, r] += g
            for a in range(width):
                column = columns[i, a]
                if column >= 0:
                    cross[t, r, column] += c
    return loss, pattern_curvature, pattern_residual, curvature, residual, cross


def pattern_design(patterns: np.ndarray, p: int) -> np.ndarray:
    """The dense one-hot rows of :func:`row_patterns`' patterns, shape (n_patterns, p).

    Examples
    --------
    >>> pattern_design(np.array([[0, 2], [-1, 2]]), 3).tolist()
    [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """
    design = np.zeros((patterns.shape[0], p))
    rows = np.repeat(np.arange(patterns.shape[0]), patterns.shape[1])
    flat = patterns.ravel()
    present = flat >= 0
    design[rows[present], flat[present]] = 1.0
    return design


@njit(cache=True, nogil=True)
def step_sums(columns, task, y, weights, beta, theta, delta):  # pragma: no cover
    """At ``(β, θ)``: each task's ``Σ m c``, ``Σ m (p − y)`` and ``b_uᵀ δ_r = Σ m c (z · δ_r)``,
    each of shape (n_local, R) — what a task's Newton step needs of the shared step ``δ``
    (R, p).

    Examples
    --------
    >>> out = step_sums(np.array([[0, 1]]), np.array([0]), np.array([1.0]), np.ones((1, 1)),
    ...                 np.zeros((1, 2)), np.zeros((1, 1)), np.ones((1, 2)))
    >>> [part.tolist() for part in out]  # c = ¼, p − y = −½, z · δ = 2
    [[[0.25]], [[-0.5]], [[0.5]]]
    """
    n_rows = columns.shape[0]
    n_regressions = beta.shape[0]
    n_local = theta.shape[0]
    curvature = np.zeros((n_local, n_regressions))
    residual = np.zeros((n_local, n_regressions))
    along = np.zeros((n_local, n_regressions))
    for i in range(n_rows):
        t = task[i]
        for r in range(n_regressions):
            margin = _row_margin(columns, i, beta, r) + theta[t, r]
            probability = 1.0 / (1.0 + math.exp(-margin))
            m = weights[t, r]
            c = m * probability * (1.0 - probability)
            curvature[t, r] += c
            residual[t, r] += m * (probability - y[i])
            along[t, r] += c * _row_margin(columns, i, delta, r)
    return curvature, residual, along
