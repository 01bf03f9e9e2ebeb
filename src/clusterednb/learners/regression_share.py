"""The clusters' regressions and their learners together: a blend of the two in log-odds, its
share chosen on held-out rows of the training tasks.

:class:`~clusterednb.learners.estimator.ClusteredLearner` holds two predictors of every row:
the clustering's own cluster-weighted regressions (those of
:class:`~clusterednb.ClusteredLogisticRegression`) and the learners inside the clusters. Neither
wins everywhere (regressions on the simulated organisation and landmine, trees on MovieLens
and word counts; BENCHMARKS.md), so the model predicts

    logit P(y = 1 | x) = s · logit P_regressions + (1 − s) · logit P_learners

with the share ``s`` chosen from :data:`SHARES` by the log-loss of held-out rows: the
tuning's "like-fewest" rows (:func:`~clusterednb.logistic.tuning.like_fewest_rows`; a third of
the training tasks with at least four labels keep as many labelled rows as the task with the
fewest, the rest of their labels are hidden and predicted), predicted by a fit on the others
with the clustering's settings as the full fit chose them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from clusterednb.learners.tables import rows_of
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.grid_walk import mean_log_loss
from clusterednb.logistic.tuning import like_fewest_rows

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The shares of the regressions tried."""
DEFAULT_SHARE = 0.5
"""The share when no training task has rows to lend (fewer than four labels each)."""


def blended(p_regressions: np.ndarray, p_learners: np.ndarray, share: float) -> np.ndarray:
    """``P(y = 1)`` of the log-odds blend, shape (n_rows,).

    Examples
    --------
    >>> blended(np.array([0.9]), np.array([0.5]), 0.5).round(4).tolist()  # σ(½ logit 0.9)
    [0.75]
    >>> blended(np.array([0.9]), np.array([0.2]), 1.0).tolist()
    [0.9]
    """
    if share == 1.0:
        return np.asarray(p_regressions, dtype=np.float64)
    if share == 0.0:
        return np.asarray(p_learners, dtype=np.float64)
    odds = share * clipped_logit(p_regressions) + (1.0 - share) * clipped_logit(p_learners)
    return expit(odds)


def clipped_logit(p: np.ndarray) -> np.ndarray:
    """``log(p / (1 − p))``, kept finite (a probability of exactly 0 or 1 counts as 1e-12 from
    it).

    Examples
    --------
    >>> bool(np.isfinite(clipped_logit(np.array([0.0, 1.0]))).all())
    True
    """
    return logit(np.clip(p, 1e-12, 1.0 - 1e-12))


def chosen_share(p_regressions: np.ndarray, p_learners: np.ndarray, y: np.ndarray) -> float:
    """The share of :data:`SHARES` whose blend has the lowest mean log-loss on rows with labels
    ``y`` (0/1), the first of equals (the learners alone before any regression).

    Examples
    --------
    >>> y = np.array([1, 0, 1, 0])
    >>> chosen_share(np.array([0.9, 0.1, 0.8, 0.3]), np.array([0.5, 0.5, 0.5, 0.5]), y)
    1.0
    >>> chosen_share(np.array([0.5, 0.5, 0.5, 0.5]), np.array([0.9, 0.1, 0.8, 0.3]), y)
    0.0
    """
    losses = [mean_log_loss(y, blended(p_regressions, p_learners, s)) for s in SHARES]
    return float(SHARES[int(np.argmin(losses))])


def held_out_rows(
    labelled: np.ndarray, task_index: np.ndarray, n_tasks: int, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """The like-fewest validation rows of raw training rows (positions in their order), and
    whether their features stay in the validation fit (as unlabelled rows).

    Parameters
    ----------
    labelled : ndarray of shape (n_rows,) of bool
    task_index : ndarray of shape (n_rows,)
        Task positions.
    n_tasks : int
    rng : numpy.random.Generator

    Examples
    --------
    Tasks of 2, 6 and 6 labelled rows: one of the two larger ones keeps 2, the others are held.

    >>> task = np.repeat([0, 1, 2], [2, 6, 6])
    >>> held, keep = held_out_rows(np.ones(14, bool), task, 3, np.random.default_rng(0))
    >>> held.size, np.unique(task[held]).size, keep
    (4, 1, False)
    """
    y = np.where(labelled, 0, -1)
    codes = np.zeros((labelled.size, 0), dtype=np.int64)
    data = JointData.from_codes(codes, y, task_index, n_tasks, np.array([0]))
    held, keep_features = like_fewest_rows(data, rng)
    order = np.argsort(task_index, kind="stable")  # from_codes' order of the rows
    return np.sort(order[held]), keep_features


def held_out_share(
    inner: Any,
    X: Any,
    y: Any,
    tasks: Any,
    task_index: np.ndarray,
    clustering: Any,
    rng: np.random.Generator,
) -> float:
    """The share of :data:`SHARES` whose blend best predicts the like-fewest held-out rows,
    both predictors from ``inner`` (an unfitted ``ClusteredLearner`` with the share 0) fitted
    on the other rows; :data:`DEFAULT_SHARE` when no training task can lend rows.

    Parameters
    ----------
    inner : ClusteredLearner
    X, y, tasks
        The training rows (``tasks`` apart from ``X``).
    task_index : ndarray of shape (n_rows,)
        Each row's task position in ``clustering``.
    clustering : ClusteredLogisticRegression
        The full fit's clustering (its tasks and classes).
    rng : numpy.random.Generator
    """
    labels = pd.Series(np.asarray(y, dtype=object))
    labelled = labels.notna().to_numpy()
    held, keep_features = held_out_rows(labelled, task_index, clustering.task_ids_.size, rng)
    if held.size == 0:
        return DEFAULT_SHARE
    if keep_features:
        fit_labels = labels.copy()
        fit_labels.iloc[held] = None
        inner.fit(X, fit_labels.to_numpy(), tasks)
    else:
        kept = np.setdiff1d(np.arange(labels.size), held)
        inner.fit(rows_of(X, kept), labels.iloc[kept].to_numpy(), rows_of(tasks, kept))
    X_held, tasks_held = rows_of(X, held), rows_of(tasks, held)
    p_learners = inner.predict_proba(X_held, tasks_held)[:, 1]
    p_regressions = inner.clustering_.predict_proba(X_held, tasks_held)[:, 1]
    y_held = (labels.iloc[held] == clustering.classes_[1]).to_numpy(dtype=np.int64)
    return chosen_share(p_regressions, p_learners, y_held)
