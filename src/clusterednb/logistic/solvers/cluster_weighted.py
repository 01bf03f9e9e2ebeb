"""Cluster-weighted pooled logistic regressions: one pooled model per cluster of tasks.

Naive Bayes' predictions rank worse than a logistic regression's (correlated features are
counted twice), but a clustering of the tasks says whose rows to trust. For a cluster ``c`` of
the MAP partition, every row of task ``u`` gets the weight

    m_u(c) = floor + (1 − floor) · q_u(c),   q_u(c) = mean_{v ∈ c} P(u and v share a cluster | D),

and one L2-penalised logistic regression on the one-hot features and a one-hot of the task
(each task's own intercept) is fitted with those weights. Task ``v`` is predicted by the
mixture ``Σ_c π_v(c) σ(w_c · z(x))`` with ``π_v ∝ q_v``. With one cluster every weight is 1
and the model is exactly the pooled regression; ``floor > 0`` keeps every task's rows in
every cluster's fit, so a cluster of few tasks still has the population's rows to lean on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit

from clusterednb.jit import njit
from clusterednb.logistic.solvers.weighted_newton import WeightedLogistic


def sparse_design(
    codes: np.ndarray,
    offsets: np.ndarray,
    task: np.ndarray,
    n_tasks: int,
    numeric: np.ndarray | None = None,
):
    """One-hot features, a one-hot of the task and any numeric columns, as CSR.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes (-1: missing or unknown, no column set).
    offsets : ndarray of shape (n_features + 1,)
    task : ndarray of shape (n_rows,)
        Task positions (-1: a task not seen in training, no column set).
    n_tasks : int
    numeric : ndarray of shape (n_rows, n_numeric), optional
        Numbers appended as they are (standardised by the caller).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, offsets[-1] + n_tasks + n_numeric)

    Examples
    --------
    >>> codes = np.array([[0, 1], [1, -1]])
    >>> design = sparse_design(codes, np.array([0, 2, 4]), np.array([0, -1]), n_tasks=2)
    >>> design.toarray().tolist()
    [[1.0, 0.0, 0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]]
    """
    n_rows, n_one_hot = codes.shape[0], int(offsets[-1]) + n_tasks
    numeric = np.zeros((n_rows, 0)) if numeric is None else np.asarray(numeric, np.float64)
    data, indices, indptr = design_arrays(
        np.asarray(codes, dtype=np.int64),
        np.asarray(offsets, dtype=np.int64),
        np.asarray(task, dtype=np.int64),
        np.ascontiguousarray(numeric),
        n_one_hot,
    )
    return sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_one_hot + numeric.shape[1]))


@njit(cache=True, nogil=True)
def design_arrays(codes, offsets, task, numeric, n_one_hot):  # pragma: no cover
    """The CSR arrays ``(data, indices, indptr)`` of :func:`sparse_design`: row by row, each
    row's columns in increasing order (its values' one-hot, its task's column, its nonzero
    numbers), as CSR keeps them.

    Examples
    --------
    >>> arrays = design_arrays(np.array([[0, 1], [1, -1]]), np.array([0, 2, 4]),
    ...     np.array([0, -1]), np.zeros((2, 0)), 6)
    >>> [a.tolist() for a in arrays]
    [[1.0, 1.0, 1.0, 1.0], [0, 3, 4, 1], [0, 3, 4]]
    """
    n_rows, n_features = codes.shape
    n_numeric = numeric.shape[1]
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    for row in range(n_rows):
        stored = 1 if task[row] >= 0 else 0
        for f in range(n_features):
            if codes[row, f] >= 0:
                stored += 1
        for j in range(n_numeric):
            if numeric[row, j] != 0.0:
                stored += 1
        indptr[row + 1] = indptr[row] + stored
    data = np.ones(indptr[n_rows])
    indices = np.empty(indptr[n_rows], dtype=np.int64)
    for row in range(n_rows):
        at = indptr[row]
        for f in range(n_features):
            if codes[row, f] >= 0:
                indices[at] = offsets[f] + codes[row, f]
                at += 1
        if task[row] >= 0:
            indices[at] = offsets[n_features] + task[row]
            at += 1
        for j in range(n_numeric):
            if numeric[row, j] != 0.0:
                indices[at] = n_one_hot + j
                data[at] = numeric[row, j]
                at += 1
    return data, indices, indptr


def one_hot_tasks(task: np.ndarray, n_tasks: int) -> sparse.csr_matrix:
    """Indicator rows of task positions (a -1 row stays empty), shape (len(task), n_tasks).

    Examples
    --------
    >>> one_hot_tasks(np.array([1, -1, 0]), 2).toarray().tolist()
    [[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    """
    known = task >= 0
    return sparse.csr_matrix(
        (np.ones(int(known.sum())), (np.flatnonzero(known), task[known])),
        shape=(task.size, n_tasks),
    )


@dataclass(frozen=True)
class WeightedRegressions:
    """The fitted regressions: one per cluster and a pooled one for new clusters.

    Attributes
    ----------
    coef : ndarray of shape (K + 1, n_columns)
        Rows ``0..K-1`` the clusters' weights; row ``K`` the unweighted pooled regression.
    intercept : ndarray of shape (K + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> regressions = WeightedRegressions(np.array([[2.0], [0.0]]), np.array([0.0, 0.0]))
    >>> design = sparse.csr_matrix([[1.0]])
    >>> regressions.proba(design, np.array([[0.5, 0.5]])).round(4).tolist()  # (σ(2) + σ(0)) / 2
    [0.6904]
    """

    coef: np.ndarray
    intercept: np.ndarray

    def proba(self, design, mixture: np.ndarray) -> np.ndarray:
        """``P(y = 1)`` of rows under their mixtures over the regressions.

        Parameters
        ----------
        design : sparse matrix of shape (n_rows, n_columns)
        mixture : ndarray of shape (n_rows, K + 1)
            Each row's weights over the regressions (rows sum to 1).

        Returns
        -------
        ndarray of shape (n_rows,)
            In ``[0, 1]``.

        Examples
        --------
        >>> import numpy as np
        >>> from scipy import sparse
        >>> regressions = WeightedRegressions(np.array([[1.0], [-1.0]]), np.array([0.0, 0.0]))
        >>> regressions.proba(sparse.csr_matrix([[1.0], [1.0]]), np.eye(2)).round(4).tolist()
        [0.7311, 0.2689]
        """
        per_model = expit(design @ self.coef.T + self.intercept)
        # A mixture's weights sum to 1 only to rounding: saturated regressions (σ = 1.0
        # exactly, as on spam) would give 1 + 2e-16, which is no probability.
        return np.clip(np.einsum("rk,rk->r", per_model, mixture), 0.0, 1.0)


def fit_weighted_regressions(
    problem: WeightedLogistic,
    row_task: np.ndarray,
    cluster_membership: np.ndarray,
    floor: float,
    starts: np.ndarray | None = None,
    needed: np.ndarray | None = None,
) -> WeightedRegressions:
    """Fit each cluster's weighted pooled regression and the unweighted one.

    Parameters
    ----------
    problem : WeightedLogistic
        The labelled rows' :func:`sparse_design`, labels and penalty ``C`` (inverse L2
        penalty as in scikit-learn's :class:`~sklearn.linear_model.LogisticRegression`, the
        intercept unpenalised), with the design's one-hot of the task solved by its diagonal
        block. Each regression starts Newton's method from the pooled one.
    row_task : ndarray of shape (n_labelled,)
        Each row's task position.
    cluster_membership : ndarray of shape (n_tasks, K)
        :func:`membership`.
    floor : float
        In ``[0, 1]``.
    starts : ndarray of shape (K, n_columns + 1), optional
        Each cluster's weights then intercept to start Newton's method from (the pooled
        regression by default): the same clusters' fits at a nearby floor start closer.
    needed : ndarray of shape (K,) of bool, optional
        The clusters whose regressions are wanted (all by default); the others get the
        pooled one in their place, unfitted (tuning scores held-out rows whose tasks lean on
        a few clusters only).

    Examples
    --------
    With ``floor = 1`` every row weighs 1 in every cluster: each cluster's regression is the
    pooled one (the last row).

    >>> import numpy as np
    >>> codes = np.array([[0], [1], [0], [1], [0], [1]])
    >>> task = np.array([0, 0, 1, 1, 2, 2])
    >>> design = sparse_design(codes, np.array([0, 2]), task, 3)
    >>> problem = WeightedLogistic(design, np.array([1, 0, 1, 1, 0, 0]), C=1.0)
    >>> from clusterednb.inference.blocks.engine import membership
    >>> q = membership(np.eye(3), np.array([0, 1, 2]))
    >>> fitted = fit_weighted_regressions(problem, task, q, floor=1.0)
    >>> fitted.coef.shape, bool(np.allclose(fitted.coef[0], fitted.coef[-1]))
    ((4, 5), True)
    """
    n_clusters = cluster_membership.shape[1]
    coefs, intercepts = [], []
    pooled = problem.pooled
    for cluster in range(n_clusters):
        task_weights = floor + (1.0 - floor) * cluster_membership[:, cluster]
        if np.allclose(task_weights[row_task], 1.0) or (needed is not None and not needed[cluster]):
            coef, intercept = pooled
        elif starts is None:
            coef, intercept = problem.fit_from_pooled(task_weights, row_task)
        else:
            coef, intercept = problem.fit(task_weights[row_task], starts[cluster])
        coefs.append(coef)
        intercepts.append(intercept)
    coefs.append(pooled[0])
    intercepts.append(pooled[1])
    return WeightedRegressions(np.array(coefs), np.array(intercepts))
