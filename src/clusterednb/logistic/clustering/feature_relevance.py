"""Which features the joint clustering of :class:`~clusterednb.ClusteredLogisticRegression`
lets separate tasks.

The joint block score explains a cluster's feature values by one categorical per feature
(:mod:`~clusterednb.logistic.clustering.joint_blocks`). A column whose values are drawn alike
in every task (noise, or a signal whose distribution does not differ between groups) still
scores partitions, and with many such columns "the likelihood for x tends to dominate the
posterior of the latent partition" (Wade et al., 2014): every task ends in one cluster. Here
each feature's relevance to the clusters is sampled on the tempered feature counts alone, by
the same collapsed sampler as the naive Bayes model's
(:mod:`~clusterednb.inference.relevance`, one class): a feature either has its own
categorical in each cluster or one shared by every task. Features whose posterior relevance
is below one half are then left out of the joint score (a shared feature adds the same to
every partition), so the labels' regressions and the relevant features drive the partition.
This is a two-stage approximation: the switches are judged on the features, not jointly with
the labels.
"""

from __future__ import annotations

import numpy as np

from clusterednb.data.schema import FeatureSchema
from clusterednb.inference.relevance import RelevanceSettings, fit_relevance_gibbs
from clusterednb.models.observation import DirichletNB
from clusterednb.seeding import side_stream
from clusterednb.stats.column_tests import above_chance, group_split_evidence
from clusterednb.stats.counts import Counts

RELEVANT = 0.5
"""A feature stays in the joint score when its posterior relevance is at least this."""
MAX_JUDGED_TASKS = 2_000
"""The switches are sampled on at most this many tasks (drawn at random)."""
MAX_JUDGED_ROWS = 200_000
""":func:`task_heterogeneity` reads the rows of at most this many (whole tasks drawn at
random, at least two): each of its deals counts them all again."""
HETEROGENEOUS_Z = 3.0
"""A column can be relevant to the clusters only if its values differ between tasks by this
many standard deviations beyond chance (:func:`task_heterogeneity`)."""
N_DEALS = 30
"""Random deals of the rows to the tasks that give :func:`task_heterogeneity`'s null."""


def feature_relevance(
    value_counts: np.ndarray,
    offsets: np.ndarray,
    beta: float,
    gamma: float,
    rng: np.random.Generator,
    n_sweeps: int = 60,
) -> np.ndarray:
    """``P(feature f has its own categorical in each cluster | X)`` of every feature.

    Parameters
    ----------
    value_counts : ndarray of shape (n_tasks, n_values_total)
        Each task's (tempered) feature-value counts.
    offsets : ndarray of shape (n_features + 1,)
    beta, gamma : float
        The feature model's Dirichlet pseudo-count and the DP concentration.
    rng : numpy.random.Generator
    n_sweeps : int, default=60
        Sweeps of the sampler (a third of them burn-in).

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    Two groups of tasks that differ in feature 0's values; feature 1 alike everywhere:

    >>> counts = np.array([[5, 0, 3, 2], [4, 1, 3, 2], [0, 5, 3, 2], [1, 4, 3, 2]] * 3)
    >>> relevance = feature_relevance(counts, np.array([0, 2, 4]), 1.0, 1.0,
    ...                               np.random.default_rng(0))
    >>> bool(relevance[0] > 0.9), bool(relevance[1] < RELEVANT)
    (True, True)
    """
    n_tasks = value_counts.shape[0]
    if n_tasks > MAX_JUDGED_TASKS:
        value_counts = value_counts[rng.choice(n_tasks, MAX_JUDGED_TASKS, replace=False)]
    widths = np.diff(offsets)
    schema = FeatureSchema(
        tuple(f"f{f}" for f in range(widths.size)),
        tuple(tuple(range(int(w))) for w in widths),
        ("rows",),
    )
    counts = Counts(
        np.zeros((value_counts.shape[0], 1), dtype=np.int64),
        np.asarray(value_counts, dtype=np.float64)[:, None, :],
    )
    prior = (1.0, float(widths.size))  # sparse: one relevant feature expected a priori
    settings = RelevanceSettings(n_sweeps=n_sweeps, burn_in=n_sweeps // 3, prior=prior)
    result = fit_relevance_gibbs(DirichletNB(schema, beta=beta), counts, gamma, settings, rng)
    return result.extras["feature_relevance"]


def judged_relevance(
    value_counts: np.ndarray,
    codes: np.ndarray,
    task: np.ndarray,
    offsets: np.ndarray,
    beta: float,
    gamma: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Each feature's relevance to the clusters, shape (n_features,): the sampler's posterior
    (:func:`feature_relevance` of the tempered ``value_counts``, (n_tasks, n_values_total)),
    0 for a column whose values (``codes`` (n_rows, n_features) of tasks ``task`` (n_rows,))
    do not differ between tasks beyond chance (:func:`task_heterogeneity`, on the rows of at
    most :data:`MAX_JUDGED_TASKS` tasks and :data:`MAX_JUDGED_ROWS` rows, with a generator
    spawned from ``rng``: the sampler draws what it drew without the test).

    Examples
    --------
    >>> codes = np.array([[0], [1]] * 12)  # the same two values in every task
    >>> task = np.repeat(np.arange(6), 4)
    >>> counts = np.full((6, 2), 2.0)
    >>> judged_relevance(counts, codes, task, np.array([0, 2]), 1.0, 1.0,
    ...                  np.random.default_rng(0)).tolist()
    [0.0]
    """
    relevance = feature_relevance(value_counts, offsets, beta, gamma, rng)
    differ = bounded_heterogeneity(codes, task, value_counts.shape[0], offsets, side_stream(rng))
    return np.where(differ > HETEROGENEOUS_Z, relevance, 0.0)


def bounded_heterogeneity(
    codes: np.ndarray,
    task: np.ndarray,
    n_tasks: int,
    offsets: np.ndarray,
    rng: np.random.Generator,
    beta: float = 1.0,
) -> np.ndarray:
    """:func:`task_heterogeneity` of the rows of at most :data:`MAX_JUDGED_TASKS` tasks and
    :data:`MAX_JUDGED_ROWS` rows (whole tasks drawn at random, at least two; all of them when
    they fit), shape (n_features,).

    Examples
    --------
    Twenty tasks, each with the same eight values (two of each of four): more alike than
    random deals leave them:

    >>> codes, task = np.tile(np.arange(4), 40)[:, None], np.repeat(np.arange(20), 8)
    >>> z = bounded_heterogeneity(codes, task, 20, np.array([0, 4]), np.random.default_rng(0))
    >>> bool(z[0] < -5)
    True
    """
    if n_tasks > MAX_JUDGED_TASKS or task.size > MAX_JUDGED_ROWS:
        order = rng.permutation(n_tasks)[:MAX_JUDGED_TASKS]
        within = np.cumsum(np.bincount(task, minlength=n_tasks)[order]) <= MAX_JUDGED_ROWS
        within[:2] = True  # at least two tasks, whatever their size
        chosen = np.zeros(n_tasks, dtype=bool)
        chosen[order[within]] = True
        codes, task = codes[chosen[task]], task[chosen[task]]
    task = np.unique(task, return_inverse=True)[1]
    return task_heterogeneity(codes, task, offsets, rng, beta)


def task_heterogeneity(
    codes: np.ndarray,
    task: np.ndarray,
    offsets: np.ndarray,
    rng: np.random.Generator,
    beta: float = 1.0,
) -> np.ndarray:
    """How far each column's values differ between tasks beyond chance, in standard
    deviations, shape (n_features,).

    The statistic is each column's log Bayes factor of a Dirichlet–categorical per task
    against one shared by every task, compared with its values when the rows are dealt to
    the tasks at random (:data:`N_DEALS` times, the tasks' sizes kept). Each column is tested
    on its own, so columns that move together row by row (twenty noise columns that share
    one latent factor) do not add up to evidence of clusters: the sampler of
    :func:`feature_relevance` reads the columns as independent, and such columns, which
    shift together from task to task by chance, look to it like structure.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes (-1: missing, not counted).
    task : ndarray of shape (n_rows,)
        Task positions.
    offsets : ndarray of shape (n_features + 1,)
    rng : numpy.random.Generator
    beta : float, default=1.0

    Examples
    --------
    Column 0 is drawn from a different categorical in each half of the tasks, column 1
    alike in all of them:

    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(20), 15)
    >>> codes = np.column_stack([rng.integers(0, 2, 300) + 2 * (task % 2), rng.integers(0, 4, 300)])
    >>> z = task_heterogeneity(codes, task, np.array([0, 4, 8]), rng)
    >>> bool(z[0] > HETEROGENEOUS_Z), bool(z[1] < HETEROGENEOUS_Z)
    (True, True)
    """
    observed = _heterogeneity(codes, task, offsets, beta)
    dealt = np.array(
        [_heterogeneity(codes, rng.permutation(task), offsets, beta) for _ in range(N_DEALS)]
    )
    return above_chance(observed, dealt)


def _heterogeneity(
    codes: np.ndarray, task: np.ndarray, offsets: np.ndarray, beta: float
) -> np.ndarray:
    """Each column's log Bayes factor, a categorical per task against one shared, shape
    (n_features,)."""
    widths, one_class = np.diff(offsets), np.zeros(task.size, dtype=np.int64)
    counts = (
        Counts.from_codes(
            codes, one_class, task, n_tasks=int(task.max()) + 1, n_classes=1, offsets=offsets
        )
        .value_counts[:, 0, :]
        .astype(np.float64)
    )
    return group_split_evidence(counts, widths, beta)


def kept_values(relevance: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """1.0 for each value of a feature kept in the joint score, 0.0 for a shared one, shape
    (n_values_total,).

    Examples
    --------
    >>> kept_values(np.array([0.9, 0.2]), np.array([0, 2, 5])).tolist()
    [1.0, 1.0, 0.0, 0.0, 0.0]
    """
    return np.repeat((relevance >= RELEVANT).astype(np.float64), np.diff(offsets))
