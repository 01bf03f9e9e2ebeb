"""Each cluster's learner, fitted on every labelled row under the cluster's task weights.

For cluster ``c`` of the MAP partition, a row of task ``u`` weighs
``floor + (1 − floor) · q_u(c)`` (``q_u(c)``: how likely ``u`` shares ``c``'s cluster, the
weights of :mod:`clusterednb.logistic.solvers.cluster_weighted`); the last learner is pooled
(every row weighs 1), for tasks placed in a new cluster. A learner whose weighted rows hold one
class only predicts that class's weighted frequency, 0 or 1, as a constant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.exceptions import CNBError

TINY_MIXTURE = 1e-9
"""Mixture weights below this are not predicted (their learner's share is below rounding)."""


@dataclass(frozen=True)
class ClusterLearners:
    """The fitted learners: one per cluster, then the pooled one.

    Attributes
    ----------
    models : list
        ``K + 1`` entries: a fitted classifier (``predict_proba``), a LightGBM ``Booster``
        (``predict``), or a float, ``P(y = 1)`` of a learner that saw one class only.

    Examples
    --------
    >>> learners = ClusterLearners([1.0, 0.0])
    >>> learners.proba(pd.DataFrame({"x": [0.0, 1.0]}), np.array([[1.0, 0.0], [0.25, 0.75]]))
    array([1.  , 0.25])
    """

    models: list[Any]

    def proba(self, table: pd.DataFrame, mixture: np.ndarray) -> np.ndarray:
        """``P(y = 1)`` of rows under their mixtures over the learners.

        Parameters
        ----------
        table : DataFrame of shape (n_rows, n_columns)
            :func:`~clusterednb.learners.tables.learner_frame` of the rows.
        mixture : ndarray of shape (n_rows, K + 1)

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        out = np.zeros(len(table))
        for position, model in enumerate(self.models):
            rows = np.flatnonzero(mixture[:, position] > TINY_MIXTURE)
            if rows.size:
                out[rows] += mixture[rows, position] * positive_proba(model, table.iloc[rows])
        return np.clip(out, 0.0, 1.0)


def positive_proba(model: Any, table: pd.DataFrame) -> np.ndarray:
    """``P(y = 1)`` of each row from one learner, shape (len(table),).

    Examples
    --------
    >>> positive_proba(0.25, pd.DataFrame({"x": [1.0, 2.0]})).tolist()
    [0.25, 0.25]
    """
    if isinstance(model, float):
        return np.full(len(table), model)
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(table), dtype=float)[:, 1]
    return np.asarray(model.predict(table), dtype=float)  # a LightGBM Booster: P(y = 1)


def fit_cluster_learners(
    make: Any,
    table: pd.DataFrame,
    y: np.ndarray,
    row_task: np.ndarray,
    cluster_weights: np.ndarray,
    floor: float,
) -> ClusterLearners:
    """Fit each cluster's learner under its task weights, and the pooled one.

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

    Returns
    -------
    ClusterLearners

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> table = pd.DataFrame({"x": [0.0, 1.0, 0.0, 1.0]})
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> learners = fit_cluster_learners(LogisticRegression, table, np.array([0, 1, 1, 1]),
    ...                                 np.array([0, 0, 1, 1]), q, floor=0.0)
    >>> learners.models[1]  # the second cluster saw only "yes"
    1.0
    >>> len(learners.models)  # two clusters and the pooled learner
    3
    """
    models = []
    for cluster in range(cluster_weights.shape[1]):
        task_weights = floor + (1.0 - floor) * cluster_weights[:, cluster]
        models.append(_fit_one(make, table, y, task_weights[row_task]))
    models.append(_fit_one(make, table, y, np.ones(y.size)))
    return ClusterLearners(models)


def _fit_one(make: Any, table: pd.DataFrame, y: np.ndarray, weights: np.ndarray) -> Any:
    """One learner on the rows of positive weight (a constant when they hold one class)."""
    kept = np.flatnonzero(weights > 0)
    if kept.size == 0:
        raise CNBError("a cluster's learner has no row of positive weight")
    labels = y[kept]
    if labels.min() == labels.max():
        return float(labels[0])
    model = make()
    model.fit(table.iloc[kept], labels, sample_weight=weights[kept])
    booster = getattr(model, "booster_", None)  # LightGBM: keep the model it saves and loads
    return booster if booster is not None else model
