"""Statistics that test one column at a time: the Dirichlet–categorical evidence of its
values, the correlation of its numbers with the label task by task, and how far a statistic
stands above its values under shuffles. The relevance judgements of both model families read
them (:mod:`~clusterednb.logistic.clustering.label_relevance`,
:mod:`~clusterednb.inference.relevance_screen`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import gammaln
from scipy.stats import chi2, norm

DESIGNED_Z = 5.0
"""A column whose values spread over the tasks this many standard deviations more evenly
than random deals of them (a heterogeneity test's z below ``-DESIGNED_Z``) is designed, not
sampled: every task holds the same balanced set of values, as in a survey where every person
rated the same products (computer-survey: 8–11; columns of noise stand within ±3.2). Tests
against shuffled labels do not describe such a column, and silence against them means
nothing."""


def designed(spread: np.ndarray) -> np.ndarray:
    """Which columns are designed (bool, same shape as ``spread``): their values spread over
    the tasks more evenly than random deals, ``spread`` (a heterogeneity test's z) below
    ``-DESIGNED_Z``.

    Examples
    --------
    >>> designed(np.array([-9.0, -3.2, 40.0])).tolist()
    [True, False, False]
    """
    return np.asarray(spread) < -DESIGNED_Z


def dirichlet_categorical_evidence(counts: np.ndarray, widths: np.ndarray, beta: float):
    """``log P(values)`` of each feature's count vectors under a symmetric Dirichlet(β)
    categorical, the features' values laid side by side.

    Parameters
    ----------
    counts : ndarray of shape (..., n_values_total)
        Counts of each value, the features' blocks of ``widths`` values one after another.
    widths : ndarray of shape (n_features,)
        Values of each feature (all at least 1).
    beta : float

    Returns
    -------
    ndarray of shape (..., n_features)

    Examples
    --------
    Values a, a, b of one feature of two values, β = 1: P = 1/2 · 2/3 · 1/4 = 1/12.

    >>> value = dirichlet_categorical_evidence(np.array([2.0, 1.0]), np.array([2]), 1.0)
    >>> round(float(np.exp(value[0])), 12) == round(1 / 12, 12)
    True
    """
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    per_value = gammaln(beta + counts) - gammaln(beta)
    totals = np.add.reduceat(counts, starts, axis=-1)
    return (
        np.add.reduceat(per_value, starts, axis=-1)
        + gammaln(widths * beta)
        - gammaln(widths * beta + totals)
    )


def group_split_evidence(counts: np.ndarray, widths: np.ndarray, beta: float) -> np.ndarray:
    """Each column's log Bayes factor of a Dirichlet–categorical per group against one shared
    by every group, shape (n_features,).

    Parameters
    ----------
    counts : ndarray of shape (n_groups, n_values_total)
    widths : ndarray of shape (n_features,)
    beta : float

    Examples
    --------
    Two groups that each saw one value of two, twice: apart, each sequence has probability
    1/2 · 2/3 = 1/3; together a, a, b, b has 1/2 · 2/3 · 1/4 · 2/5 = 1/30, so the factor is
    (1/9) / (1/30) = 10/3.

    >>> value = group_split_evidence(np.array([[2.0, 0.0], [0.0, 2.0]]), np.array([2]), 1.0)
    >>> round(float(np.exp(value[0])), 12) == round(10 / 3, 12)
    True
    """
    per_group = dirichlet_categorical_evidence(counts, widths, beta).sum(axis=0)
    return per_group - dirichlet_categorical_evidence(counts.sum(axis=0), widths, beta)


def class_split_evidence(counts: np.ndarray, widths: np.ndarray, beta: float) -> np.ndarray:
    """Each column's log Bayes factor of a Dirichlet–categorical per (group, class) against
    one per group shared by its classes, summed over groups, shape (n_features,).

    Parameters
    ----------
    counts : ndarray of shape (n_groups, n_classes, n_values_total)
    widths : ndarray of shape (n_features,)
    beta : float

    Examples
    --------
    One group whose two classes each saw one value twice: the same factor as two groups'.

    >>> counts = np.array([[[2.0, 0.0], [0.0, 2.0]]])
    >>> bool(np.isclose(class_split_evidence(counts, np.array([2]), 1.0)[0], np.log(10 / 3)))
    True
    """
    by_class = dirichlet_categorical_evidence(counts, widths, beta).sum(axis=(0, 1))
    shared = dirichlet_categorical_evidence(counts.sum(axis=1), widths, beta).sum(axis=0)
    return by_class - shared


def task_correlations(
    numbers: np.ndarray, valid: np.ndarray, y: np.ndarray, task: np.ndarray
) -> np.ndarray:
    """Each column's ``Σ_u n_u r_u²``: ``r_u`` the correlation of the column's numbers with
    the labels over task ``u``'s valid rows, ``n_u`` their count (0 where either is
    constant), shape (n_columns,).

    Parameters
    ----------
    numbers : ndarray of shape (n_rows, n_columns)
    valid : ndarray of shape (n_rows, n_columns)
        Bool: the rows counted in each column.
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    task : ndarray of shape (n_rows,)
        Task positions.

    Examples
    --------
    Two tasks of four rows, the number rising with the label in one and falling in the
    other: each correlates perfectly (r² = 1), and ``4 · 1 + 4 · 1 = 8``; a number that
    falls in one row in two of each class correlates not at all.

    >>> y = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    >>> x = np.array([[0.0], [0.0], [2.0], [2.0], [2.0], [2.0], [0.0], [0.0]])
    >>> task = np.repeat([0, 1], 4)
    >>> task_correlations(x, np.ones((8, 1), dtype=bool), y, task).round(6).tolist()
    [8.0]
    >>> flat = np.array([[0.0], [1.0], [0.0], [1.0]] * 2)
    >>> task_correlations(flat, np.ones((8, 1), dtype=bool), y, task).round(6).tolist()
    [0.0]
    """
    return summed_squared_correlations(*task_sums(numbers, valid, y, task))


def task_sums(
    numbers: np.ndarray, valid: np.ndarray, y: np.ndarray, task: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Each task's ``n``, ``Σ x``, ``Σ y``, ``Σ x²`` and ``Σ x y`` over each column's valid
    rows (labels 0/1), each of shape (n_tasks, n_columns).

    Examples
    --------
    >>> sums = task_sums(np.array([[1.0], [3.0], [5.0]]), np.array([[True], [True], [False]]),
    ...                  np.array([1, 0, 1]), np.array([0, 0, 1]))
    >>> [column.ravel().tolist() for column in sums]
    [[2.0, 0.0], [4.0, 0.0], [1.0, 0.0], [10.0, 0.0], [1.0, 0.0]]
    """
    by_task = _indicator(task, int(task.max()) + 1 if task.size else 0)
    weight = valid.astype(np.float64)
    x = np.where(valid, numbers, 0.0)
    labels = weight * np.asarray(y, dtype=np.float64)[:, None]
    return tuple(by_task @ column for column in (weight, x, labels, x * x, x * labels))


def _indicator(group: np.ndarray, n_groups: int) -> sparse.csr_matrix:
    """The (n_groups, n_items) matrix with a 1 at each item's group: sums by group."""
    return sparse.csr_matrix(
        (np.ones(group.size), (group, np.arange(group.size))), shape=(n_groups, group.size)
    )


MIN_CLUSTER_ROWS = 10
"""Counted rows a cluster needs before its slope counts in :func:`cluster_slope_z`."""


def cluster_slope_z(
    numbers: np.ndarray,
    valid: np.ndarray,
    y: np.ndarray,
    task: np.ndarray,
    cluster: np.ndarray,
) -> np.ndarray:
    """How far each number's slope on the label within clusters stands above chance, as a
    standard normal deviate, shape (n_columns,).

    In each cluster the numbers and the labels are centred on their task's means and
    correlated over the cluster's counted rows (so each task's own base rate and level say
    nothing); where the number tells nothing of the label, ``(n_c − U_c) r_c²`` (``n_c``
    counted rows, ``U_c`` tasks) is about chi-square with one degree of freedom. Summed over
    the clusters of at least :data:`MIN_CLUSTER_ROWS` counted rows, its upper tail under
    chi-square(K) is returned as the normal deviate with that tail (0 where no cluster
    counts). A slope whose sign changes between clusters adds up; pooled, or task by task
    with six rows, it hides.

    Parameters
    ----------
    numbers : ndarray of shape (n_rows, n_columns)
    valid : ndarray of shape (n_rows, n_columns)
        Bool: the rows counted in each column.
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    task, cluster : ndarray of shape (n_rows,)
        Each row's task position and its task's cluster.

    Examples
    --------
    Two clusters of 20 tasks, the number rising with the label in one and falling in the
    other; a second number drawn at random:

    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(40), 6)
    >>> cluster = (task >= 20).astype(int)
    >>> x = rng.normal(size=(task.size, 2))
    >>> y = (rng.random(task.size) < 1 / (1 + np.exp(-np.where(cluster, 2, -2) * x[:, 0])))
    >>> z = cluster_slope_z(x, np.ones_like(x, dtype=bool), y.astype(float), task, cluster)
    >>> bool(z[0] > 3), bool(z[1] < 3)
    (True, True)
    """
    n, sx, sy, sxx, sxy = task_sums(numbers, valid, y, task)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_x, mean_y = np.where(n > 0, sx / n, 0.0), np.where(n > 0, sy / n, 0.0)
    centred = [  # each task's sums of (x − x̄)², (y − ȳ)² and their product (y² = y)
        sxx - n * mean_x**2,
        sy - n * mean_y**2,
        sxy - n * mean_x * mean_y,
    ]
    task_cluster = np.zeros(n.shape[0], dtype=np.int64)
    task_cluster[task] = cluster
    by_cluster = _indicator(task_cluster, int(task_cluster.max()) + 1 if task_cluster.size else 0)
    rows, tasks = by_cluster @ n, by_cluster @ (n > 0).astype(np.float64)
    xx, yy, xy = (by_cluster @ sums for sums in centred)
    counted = (rows >= MIN_CLUSTER_ROWS) & (xx > 1e-12 * rows) & (yy > 1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        squared = np.where(counted, xy**2 / (xx * yy), 0.0)
    statistic = ((rows - tasks) * squared).sum(axis=0)
    freedom = counted.sum(axis=0)
    tail = chi2.sf(statistic, np.maximum(freedom, 1))
    return np.where(freedom > 0, np.clip(norm.isf(tail), -40.0, 40.0), 0.0)


def summed_squared_correlations(
    count: np.ndarray,
    sum_x: np.ndarray,
    sum_y: np.ndarray,
    sum_xx: np.ndarray,
    sum_xy: np.ndarray,
) -> np.ndarray:
    """Each column's ``Σ_g n_g r_g²`` from each group's sums over its counted rows, labels
    0/1 (so ``Σ y² = Σ y``); a group where the numbers or the labels are constant adds 0.

    Parameters
    ----------
    count, sum_x, sum_y, sum_xx, sum_xy : ndarray of shape (n_groups, n_columns)
        ``n``, ``Σ x``, ``Σ y``, ``Σ x²`` and ``Σ x y`` of each group and column.

    Returns
    -------
    ndarray of shape (n_columns,)

    Examples
    --------
    One group of four rows whose numbers follow the labels exactly: ``4 · 1``.

    >>> sums = [np.array([[value]]) for value in (4.0, 2.0, 2.0, 2.0, 2.0)]
    >>> summed_squared_correlations(*sums).tolist()
    [4.0]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        covariance = sum_xy - sum_x * sum_y / count
        spread_x = sum_xx - sum_x**2 / count
        spread_y = sum_y - sum_y**2 / count
        squared = covariance**2 / (spread_x * spread_y)
    usable = (count > 1) & (spread_x > 1e-12 * np.maximum(count, 1)) & (spread_y > 1e-12)
    return (count * np.where(usable, squared, 0.0)).sum(axis=0)


def ordinal_correlations(counts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each column's ``Σ_u n_u r_u²`` from two classes' counts (U, 2, V): ``r_u`` the
    correlation of the value's position within its column with the label over group ``u``'s
    counted values (0 where either is constant), (F,) (:func:`summed_squared_correlations`).

    Examples
    --------
    One group whose two classes sit at opposite ends of a column of three bins: ``r² = 1``
    over its 4 values.

    >>> counts = np.array([[[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]]])
    >>> ordinal_correlations(counts, np.array([0, 3])).round(12).tolist()
    [4.0]
    """
    starts = offsets[:-1]
    position = np.arange(offsets[-1]) - np.repeat(starts, np.diff(offsets))
    counts = counts.astype(np.float64)
    both = counts.sum(axis=1)  # (U, V)

    def per_column(weights: np.ndarray) -> np.ndarray:
        return np.add.reduceat(weights, starts, axis=-1)  # (U, F)

    return summed_squared_correlations(
        per_column(both),
        per_column(both * position),
        per_column(counts[:, 1]),
        per_column(both * position**2),
        per_column(counts[:, 1] * position),
    )


ROUNDING = 1e-9
"""Draws of a statistic closer than this, relative to its size, are one value: shuffles that
give the same table up to an order of the tasks give the same statistic summed in another
order, apart in the last bits."""


def rounding_level(null: np.ndarray) -> np.ndarray:
    """The gap below which draws of each column of ``null`` (n_draws, n_features) are one
    value, shape (n_features,): :data:`ROUNDING` times their largest size (at least 1)."""
    return ROUNDING * np.maximum(np.abs(null).max(axis=0), 1.0)


def above_chance(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """How many standard deviations of ``null`` (n_draws, n_features), the statistic under
    shuffles, each ``observed`` (n_features,) stands above its mean (a spread at the rounding
    level, :func:`rounding_level`, counts as none: 0).

    Examples
    --------
    >>> above_chance(np.array([3.0, 1.0]), np.array([[0.0, 1.0], [2.0, 1.0]])).tolist()
    [2.0, 0.0]
    >>> above_chance(np.array([5.0]), np.array([[1.0], [1.0 + 1e-15]])).tolist()  # one value
    [0.0]
    """
    spread = null.std(axis=0)
    sampled = spread > rounding_level(null)
    return (observed - null.mean(axis=0)) / np.where(sampled, spread, np.inf)


def all_distinct(null: np.ndarray) -> np.ndarray:
    """Whether no two draws of each column of ``null`` (n_draws, n_features) are one value
    (closer than :func:`rounding_level`), shape (n_features,): a spread read from few draws
    of a statistic that takes few values (a table of a few rows) can be near zero by chance,
    and draws that repeat a value are the sign of it.

    Examples
    --------
    >>> all_distinct(np.array([[0.0, 1.0], [2.0, 1.0 + 1e-14], [1.0, 3.0]])).tolist()
    [True, False]
    """
    gaps = np.diff(np.sort(null, axis=0), axis=0)
    return np.all(gaps > rounding_level(null), axis=0)
