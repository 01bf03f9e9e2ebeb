"""The evaluation's measure on held-out rows: the AUC within each task, averaged over tasks.

Computed from ranks (the Mann–Whitney statistic, ties counted half) in one sort of all rows,
without a call per task: the tuning compares sets of columns by it, and
:class:`~clusterednb.ClusteredBoosting` its start, inside every fit.
"""

from __future__ import annotations

import numpy as np


def mean_task_auc(y: np.ndarray, p1: np.ndarray, task: np.ndarray) -> float:
    """Mean over the tasks whose rows hold both classes of the AUC of ``p1`` against ``y``;
    NaN when no task holds both (:func:`task_aucs`).

    Examples
    --------
    >>> y, task = np.array([0, 1, 0, 1, 1]), np.array([0, 0, 1, 1, 2])
    >>> mean_task_auc(y, np.array([0.2, 0.8, 0.9, 0.1, 0.5]), task)  # (1 + 0) / 2
    0.5
    >>> mean_task_auc(np.array([0, 1]), np.array([0.3, 0.3]), np.array([4, 4]))  # a tie: half
    0.5
    """
    aucs = task_aucs(y, p1, task)
    both = ~np.isnan(aucs)
    return float(np.mean(aucs[both])) if both.any() else float("nan")


def task_aucs(y: np.ndarray, p1: np.ndarray, task: np.ndarray) -> np.ndarray:
    """The AUC of ``p1`` against ``y`` within each task, in the order of ``np.unique(task)``;
    NaN for a task whose rows hold one class.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    p1 : ndarray of shape (n,)
        Scores (higher: class 1 more likely).
    task : ndarray of shape (n,)
        Each row's task (any order).

    Returns
    -------
    ndarray of shape (n_tasks,)

    Examples
    --------
    >>> task_aucs(np.array([0, 1, 1, 1]), np.array([0.1, 0.7, 0.2, 0.4]), np.array([3, 3, 5, 5]))
    array([ 1., nan])
    """
    y = np.asarray(y, dtype=np.float64)
    p1, task = np.asarray(p1, dtype=np.float64), np.asarray(task)
    n = y.size
    if n == 0:
        return np.zeros(0)
    order = np.lexsort((p1, task))
    task, p1, y = task[order], p1[order], y[order]
    new_task = np.r_[True, task[1:] != task[:-1]]
    new_tie = new_task | np.r_[True, p1[1:] != p1[:-1]]
    tie = np.cumsum(new_tie) - 1
    position = np.arange(1, n + 1, dtype=np.float64)
    rank = (np.bincount(tie, position) / np.bincount(tie))[tie]
    first = np.maximum.accumulate(np.where(new_task, np.arange(n), 0))
    within = rank - first  # ranks 1 … n_t within each task
    of_task = np.cumsum(new_task) - 1
    positives = np.bincount(of_task, y)
    negatives = np.bincount(of_task) - positives
    u = np.bincount(of_task, within * y) - positives * (positives + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((positives > 0) & (negatives > 0), u / (positives * negatives), np.nan)
