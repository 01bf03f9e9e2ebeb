"""Each cluster's learner, fitted on every labelled row under the cluster's task weights.

For cluster ``c`` of the MAP partition, a row of task ``u`` weighs
``w = floor + (1 − floor) · q_u(c)`` (``q_u(c)``: how likely ``u`` shares ``c``'s cluster, the
weights of :mod:`clusterednb.logistic.solvers.cluster_weighted`). Rows of small weight are
*thinned* on request: a row with ``w`` below ``thin_below`` is kept with probability
``w / thin_below`` and then weighs ``thin_below``, so every row's expected weight is ``w`` while
a cluster's learner reads its own tasks' rows and a fraction of the others' (a tree's cost
grows with its rows; with a floor of 0.05 and ``thin_below=0.25`` a cluster's learner reads a
fifth of the other clusters' rows instead of all of them). A task placed in a new cluster is
predicted by the clusters' learners mixed by the clusters' sizes (the population as the
clusters describe it) rather than by one more learner on every row, which would cost as much as
all the others. A learner whose rows hold one class only predicts that class, 0 or 1, as a constant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.exceptions import CNBError
from clusterednb.learners.tables import take_rows

TINY_MIXTURE = 1e-9
"""Mixture weights below this are not predicted (their learner's share is below rounding)."""
THIN_BELOW = 0.0
"""Rows weighing less than this are thinned (see the module's text); 0, the default: none
(``ClusteredLearner(thin_below=0.25)`` cut ``cnb-lgbm``'s fit on landmine from 2.0 to 1.2 s
and cost 0.003–0.004 AUC, ``cnb-hgb`` 0.004–0.017: BENCHMARKS.md)."""


@dataclass(frozen=True)
class ClusterLearners:
    """The fitted learners: one per cluster, and how a new cluster mixes them.

    Attributes
    ----------
    models : list
        ``K`` entries: a fitted classifier (``predict_proba``), a LightGBM ``Booster``
        (``predict``), or a float, ``P(y = 1)`` of a learner that saw one class only.
    new_cluster : ndarray of shape (K,)
        The mixture over the learners that stands for a new cluster (the clusters' shares of
        the tasks).

    Examples
    --------
    >>> learners = ClusterLearners([1.0, 0.0], np.array([0.5, 0.5]))
    >>> mixture = np.array([[1.0, 0.0, 0.0], [0.25, 0.25, 0.5]])  # the last: a new cluster
    >>> learners.proba(pd.DataFrame({"x": [0.0, 1.0]}), mixture)
    array([1. , 0.5])
    """

    models: list[Any]
    new_cluster: np.ndarray

    def proba(self, table: pd.DataFrame, mixture: np.ndarray) -> np.ndarray:
        """``P(y = 1)`` of rows under their mixtures over the learners.

        Parameters
        ----------
        table : DataFrame of shape (n_rows, n_columns)
            :func:`~clusterednb.learners.tables.learner_frame` of the rows.
        mixture : ndarray of shape (n_rows, K + 1)
            Each row's weights over the clusters and, last, a new cluster.

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        mixture = mixture[:, :-1] + mixture[:, -1:] * self.new_cluster
        out = np.zeros(table.shape[0])
        for position, model in enumerate(self.models):
            rows = np.flatnonzero(mixture[:, position] > TINY_MIXTURE)
            if rows.size:
                out[rows] += mixture[rows, position] * positive_proba(model, take_rows(table, rows))
        return np.clip(out, 0.0, 1.0)


def positive_proba(model: Any, table: pd.DataFrame) -> np.ndarray:
    """``P(y = 1)`` of each row from one learner, shape (len(table),).

    Examples
    --------
    >>> positive_proba(0.25, pd.DataFrame({"x": [1.0, 2.0]})).tolist()
    [0.25, 0.25]
    """
    if isinstance(model, float):
        return np.full(table.shape[0], model)
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(table), dtype=float)[:, 1]
    return np.asarray(model.predict(table), dtype=float)  # a LightGBM Booster: P(y = 1)


def thinned_weights(
    weights: np.ndarray, rng: np.random.Generator, thin_below: float = THIN_BELOW
) -> np.ndarray:
    """Rows below ``thin_below`` kept with probability ``weight / thin_below`` at weight
    ``thin_below``, the others dropped (weight 0); each row's expected weight is unchanged.

    Parameters
    ----------
    weights : ndarray of shape (n_rows,)
        In ``[0, 1]``.
    rng : numpy.random.Generator
    thin_below : float
        0: no thinning.

    Returns
    -------
    ndarray of shape (n_rows,)

    Examples
    --------
    >>> thinned = thinned_weights(np.array([1.0, 0.05, 0.05]), np.random.default_rng(0), 0.25)
    >>> thinned[0], set(thinned[1:].tolist()) <= {0.0, 0.25}
    (np.float64(1.0), True)
    """
    if thin_below <= 0:
        return weights
    light = weights < thin_below
    kept = rng.random(weights.size) < weights / thin_below
    return np.where(light, np.where(kept, thin_below, 0.0), weights)


def fit_cluster_learners(
    make: Any,
    table: pd.DataFrame,
    y: np.ndarray,
    row_task: np.ndarray,
    cluster_weights: np.ndarray,
    floor: float,
    rng: np.random.Generator,
    thin_below: float = THIN_BELOW,
) -> ClusterLearners:
    """Fit each cluster's learner under its task weights (thinned).

    Parameters
    ----------
    make : callable
        ``make()`` returns a fresh classifier whose ``fit`` takes ``sample_weight``.
    table : DataFrame of shape (n_labelled, n_columns)
    y : ndarray of shape (n_labelled,)
        0/1.
    row_task : ndarray of shape (n_labelled,)
        Each row's task position.
    cluster_weights : ndarray of shape (n_tasks, K)
        ``q_u(c)``.
    floor : float
        In ``[0, 1]``.
    rng : numpy.random.Generator
        For the thinning.
    thin_below : float
        :func:`thinned_weights`' threshold (0: every row at its weight).

    Returns
    -------
    ClusterLearners

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> table = pd.DataFrame({"x": [0.0, 1.0, 0.0, 1.0]})
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> learners = fit_cluster_learners(LogisticRegression, table, np.array([0, 1, 1, 1]),
    ...     np.array([0, 0, 1, 1]), q, floor=0.0, rng=np.random.default_rng(0))
    >>> learners.models[1]  # the second cluster saw only "yes"
    1.0
    >>> learners.new_cluster.tolist()
    [0.5, 0.5]
    """
    models: list[Any] = []
    fitted: dict[bytes, Any] = {}
    for cluster in range(cluster_weights.shape[1]):
        task_weights = floor + (1.0 - floor) * cluster_weights[:, cluster]
        weights = thinned_weights(task_weights[row_task], rng, thin_below)
        key = weights.tobytes()
        if key not in fitted:  # equal weights (a floor of 1): one fit serves them all
            fitted[key] = _fit_one(make, table, y, weights)
        models.append(fitted[key])
    shares = cluster_weights.sum(axis=0)
    return ClusterLearners(models, shares / shares.sum())


def _fit_one(make: Any, table: pd.DataFrame, y: np.ndarray, weights: np.ndarray) -> Any:
    """One learner on the rows of positive weight (a constant when they hold one class)."""
    kept = np.flatnonzero(weights > 0)
    if kept.size == 0:
        raise CNBError("a cluster's learner has no row of positive weight")
    labels = y[kept]
    if labels.min() == labels.max():
        return float(labels[0])
    model = make()
    model.fit(take_rows(table, kept), labels, sample_weight=weights[kept])
    booster = getattr(model, "booster_", None)  # LightGBM: keep the model it saves and loads
    return booster if booster is not None else model
