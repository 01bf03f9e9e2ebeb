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
from clusterednb.stats.counts import Counts

RELEVANT = 0.5
"""A feature stays in the joint score when its posterior relevance is at least this."""
MAX_JUDGED_TASKS = 2_000
"""The switches are sampled on at most this many tasks (drawn at random)."""


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


def kept_values(relevance: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """1.0 for each value of a feature kept in the joint score, 0.0 for a shared one, shape
    (n_values_total,).

    Examples
    --------
    >>> kept_values(np.array([0.9, 0.2]), np.array([0, 2, 5])).tolist()
    [1.0, 1.0, 0.0, 0.0, 0.0]
    """
    return np.repeat((relevance >= RELEVANT).astype(np.float64), np.diff(offsets))
