"""Where a new task's rows go: its weights over the fitted clusters' regressions, from its
features (the CRP predictive of the tempered feature model), and every predicted row's mixture.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from clusterednb.logistic.clusters import LogisticClusters
from clusterednb.logistic.documents import value_counts_of_rows
from clusterednb.logistic.settings import FitSettings, task_tempering
from clusterednb.stats.special import log_dirichlet_multinomial


def new_task_mixture(
    clusters: LogisticClusters, codes, offsets: np.ndarray, settings: FitSettings
) -> np.ndarray:
    """A new task's weights over the regressions, from its rows' features (codes of shape
    (n_rows, n_features), or documents' word counts, sparse (n_rows, n_words)).

    ``w_c ∝ |c| · P(τ n_X | N_c) `` for the MAP clusters and ``γ · P(τ n_X)`` for a new
    cluster (predicted by the pooled regression), with the task's counts ``n_X`` tempered
    like a training task's (``τ = min(1, R / rows)``) and ``N_c`` the clusters' tempered counts.

    Returns
    -------
    ndarray of shape (K + 1,)

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, clusters = toy.joint_data(), toy.fitted_clusters(floor=0.2)
    >>> settings = FitSettings(effective_rows=5.0, floor=0.2)  # the fit's settings
    >>> mixture = new_task_mixture(clusters, np.array([[0], [0]]), data.offsets, settings)
    >>> mixture.shape == (clusters.cluster_sizes.size + 1,), round(float(mixture.sum()), 12)
    (True, 1.0)
    """
    tau = float(task_tempering(np.array([codes.shape[0]]), float(settings.effective_rows))[0])
    counts = tau * value_counts_of_rows(codes, offsets)
    prior = np.full(counts.size, settings.beta)
    joined = log_dirichlet_multinomial(clusters.cluster_value_counts + counts, prior, offsets)
    alone = log_dirichlet_multinomial(clusters.cluster_value_counts, prior, offsets)
    log_weights = np.concatenate(
        [
            np.log(clusters.cluster_sizes) + joined - alone,
            [np.log(settings.gamma) + log_dirichlet_multinomial(counts, prior, offsets)],
        ]
    )
    return np.exp(log_weights - logsumexp(log_weights))


def rows_mixture(
    clusters: LogisticClusters,
    codes,
    task_values: np.ndarray,
    task_index: np.ndarray,
    offsets: np.ndarray,
    settings: FitSettings,
    new_tasks: str,
) -> np.ndarray:
    """Each row's weights over the regressions, shape (n_rows, K + 1): its task's membership,
    or for a new task (``task_index`` -1) the clusters its rows choose by
    :func:`new_task_mixture`: all the rows of one task value together (``new_tasks="pooled"``)
    or each row alone (``"each-row"``).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, clusters = toy.joint_data(), toy.fitted_clusters(floor=0.2)
    >>> settings = FitSettings(effective_rows=5.0, floor=0.2)
    >>> mixture = rows_mixture(clusters, np.array([[0], [0]]), np.array(["a", "new"]),
    ...                        np.array([0, -1]), data.offsets, settings, "pooled")
    >>> bool(np.array_equal(mixture[0], clusters.membership[0])), mixture.shape
    (True, (2, 2))
    """
    mixture = clusters.membership[np.maximum(task_index, 0)].copy()
    unseen = task_index < 0
    if unseen.any():
        groups = (
            np.arange(unseen.sum())
            if new_tasks == "each-row"
            else pd.Index(task_values[unseen]).factorize()[0]
        )
        new_rows = np.flatnonzero(unseen)
        for group in range(groups.max() + 1):
            rows = new_rows[groups == group]
            mixture[rows] = new_task_mixture(clusters, codes[rows], offsets, settings)
    return mixture
