"""Cluster-weighted pooled logistic regression (``cnb-lr``): Clustered NB's clustering decides
how much a pooled regression trusts each other task's rows.

For a target task ``v`` every row of task ``u`` weighs ``floor + (1 − floor) · P(u and v share
a cluster | D)``, the target's own rows 1; a task never seen in training gets the unweighted
pooled model. The categorical version lives in :mod:`clusterednb.evaluation.models.registry`; this
module holds the weights and the version for documents (word counts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.evaluation.models.baselines import sparse_logistic, with_task_one_hot

CLUSTER_WEIGHT_FLOOR = 0.2


def cluster_row_weights(
    together: np.ndarray, row_task: np.ndarray, target: int, floor: float = CLUSTER_WEIGHT_FLOOR
) -> np.ndarray:
    """Each training row's weight for the regression of task ``target``.

    Parameters
    ----------
    together : ndarray of shape (n_tasks, n_tasks)
        Posterior co-clustering probabilities.
    row_task : ndarray of shape (n_rows,)
        Each training row's task position.
    target : int
        The target's position (-1: a task not seen in training, every weight 1).
    floor : float

    Returns
    -------
    ndarray of shape (n_rows,)

    Examples
    --------
    >>> together = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> cluster_row_weights(together, np.array([0, 1, 2, 2]), target=0).round(12).tolist()
    [1.0, 0.6, 0.2, 0.2]
    """
    if target < 0:
        return np.ones(row_task.size)
    weights = floor + (1.0 - floor) * together[target, row_task]
    weights[row_task == target] = 1.0
    return weights


def cluster_weighted_documents(
    X_train: sparse.csr_matrix,
    y_train: np.ndarray,
    train_tasks: np.ndarray,
    X_test: sparse.csr_matrix,
    test_tasks: np.ndarray,
    task_ids: np.ndarray,
    together: np.ndarray,
    floor: float = CLUSTER_WEIGHT_FLOOR,
) -> np.ndarray:
    """``cnb-lr`` on documents: the pooled regression of ``lr-pooled`` (word counts and a
    one-hot of the task), its rows weighted by a clustering of the tasks ``task_ids``
    (e.g. a :class:`~clusterednb.ClusteredNB`'s ``task_ids_`` and ``coclustering_``, fitted
    on these training documents and tasks).

    Parameters
    ----------
    X_train : sparse matrix of shape (n_train, n_words)
    y_train : ndarray of shape (n_train,)
    train_tasks : ndarray of shape (n_train,)
    X_test : sparse matrix of shape (n_test, n_words)
    test_tasks : ndarray of shape (n_test,)
    task_ids : ndarray of shape (n_tasks,)
        The tasks of the clustering, in the order of ``together``'s rows.
    together : ndarray of shape (n_tasks, n_tasks)
        Row ``v``: the probability that each task shares ``v``'s cluster.
    floor : float

    Returns
    -------
    ndarray of shape (n_test,)
        ``P(y = 1)`` of each test document.

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> X = sparse.csr_matrix([[3, 0], [0, 2], [2, 0], [0, 3]])
    >>> y, tasks = np.array([1, 0, 1, 0]), np.array(["a", "a", "b", "b"])
    >>> clustered = ClusteredNB(inference="exact", observation="multinomial").fit(X, y, tasks)
    >>> p = cluster_weighted_documents(X, y, tasks, sparse.csr_matrix([[1, 0], [0, 1]]),
    ...                                np.array(["a", "a"]), clustered.task_ids_,
    ...                                clustered.coclustering_)
    >>> bool(p[0] > 0.5 > p[1])
    True
    """
    task_ids = pd.Index(task_ids)
    row_task = task_ids.get_indexer(train_tasks)
    test_task = task_ids.get_indexer(test_tasks)
    design = with_task_one_hot(X_train, row_task, task_ids.size)
    test_design = with_task_one_hot(X_test, test_task, task_ids.size)
    out = np.empty(X_test.shape[0])
    for target in np.unique(test_task):
        rows = np.flatnonzero(test_task == target)
        weights = cluster_row_weights(together, row_task, int(target), floor)
        out[rows] = sparse_logistic(design, y_train, test_design[rows], sample_weight=weights)
    return out
