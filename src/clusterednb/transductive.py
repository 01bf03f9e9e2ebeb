"""``ClusteredNB(transductive="select")``: a task's unlabelled training rows choose among the
clusters fitted on labelled rows, without refitting them (:mod:`clusterednb.inference.select`).

For each task with unlabelled rows, the clusters are those of the MAP partition with the task
taken out (their counts are the other tasks' labelled counts); the task's labelled counts and
its unlabelled rows weigh them (tempered by ``τ``), and every row of that task that is
predicted gets the selected mixture of the clusters' predictives. Tasks without unlabelled
rows keep the posterior predictive.
"""

from __future__ import annotations

import numpy as np

from clusterednb.inference.select import select_log_proba
from clusterednb.observation import DirichletNB
from clusterednb.sparse_counts import SparseCounts
from clusterednb.stats import Counts

TRANSDUCTIVE_MODES = (None, "select")


def select_log_proba_for_rows(
    model: DirichletNB,
    counts: Counts | SparseCounts,
    partition: np.ndarray,
    gamma: float,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
    X: np.ndarray,
    task_index: np.ndarray,
    log_proba: np.ndarray,
    temperature: float,
) -> np.ndarray:
    """Replace the predictive of the rows of tasks that have unlabelled training rows.

    Parameters
    ----------
    model : DirichletNB
    counts : Counts or SparseCounts
        The labelled counts per task, ``n_tasks`` groups.
    partition : ndarray of shape (n_tasks,)
        The MAP partition.
    gamma : float
    unlabelled_X : ndarray of shape (n_unlabelled, n_features)
    unlabelled_task : ndarray of shape (n_unlabelled,)
    X : ndarray of shape (n_rows, n_features)
        Codes of the rows predicted.
    task_index : ndarray of shape (n_rows,)
        Their tasks (-1: a task not seen in training).
    log_proba : ndarray of shape (n_rows, n_classes)
        The posterior predictive, returned with the selected rows replaced.
    temperature : float
        ``τ`` in ``(0, 1]``.

    Examples
    --------
    Task 2 of :func:`clusterednb.toy.three_task_counts` has two unlabelled red rows: its row's
    predictive is replaced; task 0's (no unlabelled rows) is left as it was:

    >>> from clusterednb import toy
    >>> before = np.log(np.full((2, 2), 0.5))
    >>> after = select_log_proba_for_rows(
    ...     toy.colour_model(), toy.three_task_counts(), np.array([0, 0, 1]), 1.0,
    ...     np.array([[0], [0]]), np.array([2, 2]), np.array([[0], [0]]), np.array([0, 2]),
    ...     before.copy(), 1.0)
    >>> np.exp(after[0]).tolist(), bool(np.isclose(np.exp(after[1]).sum(), 1.0))
    ([0.5, 0.5], True)
    >>> bool(after[1, 0] != before[1, 0])
    True
    """
    out = log_proba.copy()
    n_clusters = int(partition.max()) + 1
    clusters = counts.group_by(partition, n_clusters)  # every cluster's counts, once
    all_sizes = np.bincount(partition, minlength=n_clusters)
    for task in np.intersect1d(np.unique(task_index[task_index >= 0]), unlabelled_task):
        own = counts.take([task])
        cluster_counts = clusters.value_counts.astype(np.float64)
        cluster_counts[partition[task]] -= own.value_counts[0]  # the others' counts only
        sizes = all_sizes.copy()
        sizes[partition[task]] -= 1
        kept = sizes > 0
        rows = task_index == task
        out[rows], _ = select_log_proba(
            model,
            cluster_counts[kept],
            sizes[kept],
            gamma,
            own.label_counts[0],
            own.value_counts[0],
            unlabelled_X[unlabelled_task == task],
            temperature,
            query=X[rows],
        )
    return out
