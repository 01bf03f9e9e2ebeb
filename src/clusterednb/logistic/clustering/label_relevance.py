"""Which features tell the label apart inside the clusters of
:class:`~clusterednb.ClusteredLogisticRegression` (``relevance=True``).

The clusters' relevance (:mod:`~clusterednb.logistic.clustering.feature_relevance`) keeps
columns drawn alike in every task from moving the partition, but the regressions still read
them: with ten labelled rows a task, twenty such columns give the label expansions that score
the partition, and the regressions that predict, enough noise to lose most of what clustering
gained. Here a column's relevance to the label is judged on a partition's labelled rows as a
Bayes factor between two Dirichlet–categorical models of its values in each cluster: one
categorical per (cluster, class), against one per cluster shared by both classes. Dirichlet
pseudo-count ``beta`` on every value. A column is relevant a priori with probability
``1 / (n_features + 1)`` (as the clusters' relevance expects one relevant column: with
twenty noise columns, an even prior keeps one or two of them by chance). A column whose
label relevance is below one half is then left out of the regressions (its codes read as
missing), and the tuning keeps that only where the held-out rows are then clearly better predicted
(:mod:`~clusterednb.logistic.tuning`).

Within clusters, not pooled: a column whose slope changes sign between groups of tasks
(the population of issue 49) looks irrelevant pooled and is plainly relevant per cluster.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from clusterednb.stats.column_tests import (
    above_chance,
    class_split_evidence,
    cluster_slope_z,
    designed,
    task_correlations,
)
from clusterednb.stats.counts import Counts

LABEL_RELEVANT = 0.5
"""A column stays in the regressions when its label relevance is at least this."""
WITHIN_TASK_Z = 3.0
"""A column stays in the regressions, whatever the clusters say, when its dependence on the
label within tasks stands this many standard deviations above that of labels shuffled within
each task (:func:`within_task_dependence`)."""
POOLED_Z = 3.0
"""A column that depends on the label over all rows by this many standard deviations above
shuffled labels (:func:`pooled_dependence`) is not silent (:func:`silent_columns`)."""
N_SHUFFLES = 30
"""Label shuffles that give the null mean and spread of :func:`within_task_dependence`."""


def label_relevance(
    codes: np.ndarray,
    y: np.ndarray,
    cluster: np.ndarray,
    offsets: np.ndarray,
    beta: float = 1.0,
    prior: float | None = None,
    numbers: np.ndarray | None = None,
    numbered: np.ndarray | None = None,
    task: np.ndarray | None = None,
) -> np.ndarray:
    """``P(column f's values depend on the label within clusters | rows)`` of every column.

    A column with a number (``numbers``, the column of ``numbered``) reads at least
    ``Φ(z − WITHIN_TASK_Z)``, ``z`` its slope within the clusters
    (:func:`~clusterednb.stats.column_tests.cluster_slope_z`, its rows' ``task`` given): one
    half at :data:`WITHIN_TASK_Z` standard deviations, so that it is then kept. Five bins of a
    number split by class score a slope weakly where tasks have few rows: on issue 49's
    population with ten rows a user, a number whose slopes were 1.5, 0 and −3 in the three
    groups read 0.008 on three clusters near the groups, and 3.9 standard deviations by its
    slope; leaving it out cost 0.05 AUC on that seed.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes of labelled rows (-1: missing, not counted).
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    cluster : ndarray of shape (n_rows,)
        The cluster of each row's task.
    offsets : ndarray of shape (n_features + 1,)
    beta : float, default=1.0
        Dirichlet pseudo-count of each value.
    prior : float, optional
        ``P(relevant)`` a priori; default ``1 / (n_features + 1)``.
    numbers : ndarray of shape (n_rows, n_numbered), optional
    numbered : ndarray of shape (n_numbered,), optional
        The feature each column of ``numbers`` is the number of.
    task : ndarray of shape (n_rows,), optional
        Each row's task position (needed with ``numbers``).

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    Column 0 follows the label with opposite signs in two clusters (pooled it says nothing);
    column 1 is the same in every row:

    >>> codes = np.array([[0, 0], [1, 0]] * 10 + [[1, 0], [0, 0]] * 10)
    >>> y = np.array([1, 0] * 20)
    >>> cluster = np.repeat([0, 1], 20)
    >>> relevance = label_relevance(codes, y, cluster, np.array([0, 2, 4]))
    >>> bool(relevance[0] > 0.99), bool(relevance[1] < LABEL_RELEVANT)
    (True, True)
    >>> bool(label_relevance(codes, y, np.zeros(40, dtype=int), np.array([0, 2, 4]))[0] < 0.5)
    True
    """
    if prior is None:
        prior = 1.0 / len(offsets)  # 1 / (n_features + 1)
    prior_log_odds = np.log(prior) - np.log1p(-prior)
    relevance = expit(_log_bayes_factors(codes, y, cluster, offsets, beta) + prior_log_odds)
    if numbers is None or numbered is None or not len(numbered) or task is None:
        return relevance
    valid = codes[:, numbered] >= 0
    z = cluster_slope_z(numbers, valid, y, task, cluster)
    relevance[numbered] = np.maximum(relevance[numbered], norm.cdf(z - WITHIN_TASK_Z))
    return relevance


def _log_bayes_factors(
    codes: np.ndarray, y: np.ndarray, cluster: np.ndarray, offsets: np.ndarray, beta: float
) -> np.ndarray:
    """Each column's log Bayes factor, a categorical per (cluster, class) against one per
    cluster, summed over clusters, shape (n_features,)."""
    n_clusters = int(cluster.max()) + 1 if cluster.size else 1
    widths = np.diff(offsets)
    counts = Counts.from_codes(
        codes, y, cluster, n_tasks=n_clusters, n_classes=2, offsets=offsets
    ).value_counts.astype(np.float64)
    return class_split_evidence(counts, widths, beta)


def within_task_dependence(
    codes: np.ndarray,
    y: np.ndarray,
    task: np.ndarray,
    offsets: np.ndarray,
    rng: np.random.Generator,
    beta: float = 1.0,
    numbers: np.ndarray | None = None,
    numbered: np.ndarray | None = None,
) -> np.ndarray:
    """How far each column's dependence on the label within tasks stands above chance, in
    standard deviations, shape (n_features,).

    The statistic of a column without a number is :func:`label_relevance`'s log Bayes factor
    with every task its own cluster, summed over tasks. A column with a number (``numbers``,
    the column of ``numbered``) is scored on the number instead: the sum over tasks of
    ``n_u r_u²``, ``r_u`` the correlation of the number with the label in task ``u`` (each
    task's Mantel–Haenszel score statistic, squared before summing so that a slope whose sign
    changes between tasks adds up). With a few rows a task the Bayes factor of five bins
    sees a slope of 1.5 on one task in two; the correlation of the number sees it (measured
    on the population of issue 49 with 6 rows a task: 3.5–4.7 standard deviations against
    0.4–3.6). Neither is a statistic to trust by its own scale (a small Dirichlet count
    favours splitting by class whatever the column), so each is compared with its values
    under :data:`N_SHUFFLES` shuffles of the labels within each task. It needs no clusters:
    a column whose slope changes sign between groups of tasks shows here even when noise has
    merged every task into one cluster, where :func:`label_relevance` cannot see it.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes of labelled rows (-1: missing), grouped by task.
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    task : ndarray of shape (n_rows,)
        Task positions, in non-decreasing order.
    offsets : ndarray of shape (n_features + 1,)
    rng : numpy.random.Generator
    beta : float, default=1.0
    numbers : ndarray of shape (n_rows, n_numbered), optional
        The numbers of the columns ``numbered`` (a missing one, code -1, is not counted).
    numbered : ndarray of shape (n_numbered,), optional
        The feature each column of ``numbers`` is the number of.

    Examples
    --------
    Column 0 follows the label in every task, with a sign that alternates between tasks;
    column 1 is drawn at random:

    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(30), 8)
    >>> y = np.tile([0, 1], 120)
    >>> codes = np.column_stack([np.where(task % 2 == 0, y, 1 - y), rng.integers(0, 3, 240)])
    >>> z = within_task_dependence(codes, y, task, np.array([0, 2, 5]), rng)
    >>> bool(z[0] > WITHIN_TASK_Z), bool(z[1] < WITHIN_TASK_Z)
    (True, True)
    """

    def statistic(labels: np.ndarray) -> np.ndarray:
        values = _log_bayes_factors(codes, labels, task, offsets, beta)
        if numbers is not None and numbered is not None and len(numbered):
            valid = codes[:, numbered] >= 0
            values[numbered] = task_correlations(numbers, valid, labels, task)
        return values

    observed = statistic(y)
    shuffled = np.empty((N_SHUFFLES, observed.size))
    one_task = task.size == 0 or task[0] == task[-1]  # non-decreasing: all the same
    for draw in range(N_SHUFFLES):
        within = rng.permutation(y.size) if one_task else np.lexsort((rng.random(y.size), task))
        shuffled[draw] = statistic(y[within])
    return above_chance(observed, shuffled)


def pooled_dependence(
    codes: np.ndarray,
    y: np.ndarray,
    offsets: np.ndarray,
    rng: np.random.Generator,
    beta: float = 1.0,
    numbers: np.ndarray | None = None,
    numbered: np.ndarray | None = None,
) -> np.ndarray:
    """How far each column's dependence on the label over every row (the tasks pooled)
    stands above chance, in standard deviations, shape (n_features,):
    :func:`within_task_dependence` with all rows one task (the labels shuffled over all of
    them). A column that every user reads alike (a designed attribute of a survey, whose
    weight no single user's few ratings reveal) shows here.

    Examples
    --------
    Column 0 follows the label in every row; column 1 is drawn at random:

    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 60)
    >>> codes = np.column_stack([y, rng.integers(0, 3, 120)])
    >>> z = pooled_dependence(codes, y, np.array([0, 2, 5]), rng)
    >>> bool(z[0] > POOLED_Z), bool(z[1] < POOLED_Z)
    (True, True)
    """
    one_task = np.zeros(y.size, dtype=np.int64)
    return within_task_dependence(codes, y, one_task, offsets, rng, beta, numbers, numbered)


def silent_columns(
    relevance: np.ndarray, within_task: np.ndarray, pooled: np.ndarray, spread: np.ndarray
) -> np.ndarray:
    """The columns that tell the label nothing by every test, bool of shape (n_features,):
    judged irrelevant in the clusters (``relevance`` below :data:`LABEL_RELEVANT`), and
    depending on the label neither within tasks (``within_task``, standard deviations of
    :func:`within_task_dependence`, at most :data:`WITHIN_TASK_Z`) nor over all rows
    (``pooled``, of :func:`pooled_dependence`, at most :data:`POOLED_Z`).

    Only a column sampled, not designed: one whose values ``spread`` over the tasks no more
    than :data:`~clusterednb.stats.column_tests.DESIGNED_Z` standard deviations more evenly
    than random deals of them
    (:func:`~clusterednb.logistic.clustering.feature_relevance.task_heterogeneity`). In a
    designed survey every person rated the same balanced set of computers (computer-survey:
    8–11 standard deviations more even than deals; noise columns stand within ±3.2), whose
    attributes are arranged independent of each other, so ratings that follow a few of them
    are spread more evenly over the others than shuffled ratings are, and silence against
    the shuffles means nothing: there, columns silent by both label tests still told the
    test rows something (leaving them out lost 0.002–0.005 AUC at k = 8).

    Examples
    --------
    >>> relevance = np.array([0.1, 0.1, 0.1, 0.9])
    >>> sampled, designed = np.zeros(4), np.full(4, -9.0)
    >>> within, pooled = np.array([0.5, 4.0, 0.5, 0.5]), np.array([1.0, 1.0, 9.0, 1.0])
    >>> silent_columns(relevance, within, pooled, sampled).tolist()
    [True, False, False, False]
    >>> silent_columns(relevance, within, pooled, designed).tolist()
    [False, False, False, False]
    """
    quiet = (np.asarray(within_task) <= WITHIN_TASK_Z) & (np.asarray(pooled) <= POOLED_Z)
    return quiet & ~designed(spread) & ~kept_columns(relevance)


def kept_columns(relevance: np.ndarray) -> np.ndarray:
    """Which columns the regressions keep, bool of shape (n_features,).

    Examples
    --------
    >>> kept_columns(np.array([0.9, 0.1, 0.5])).tolist()
    [True, False, True]
    """
    return np.asarray(relevance) >= LABEL_RELEVANT
