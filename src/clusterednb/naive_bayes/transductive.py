"""``ClusteredNB(transductive="select")``: a task's unlabelled training rows choose among the
clusters fitted on labelled rows, without refitting them (:mod:`clusterednb.inference.select`).

For each task with unlabelled rows, the clusters are those of the MAP partition with the task
taken out (their counts are the other tasks' labelled counts); the task's labelled counts and
its unlabelled rows weigh them (tempered by ``τ``), and every row of that task that is
predicted gets the selected mixture of the clusters' predictives. Tasks without unlabelled
rows keep the posterior predictive.

The same weights say which other tasks a task with unlabelled rows resembles:
:func:`selected_coclustering` puts ``Σ_k w_k [u in k]`` in that task's row of the
co-clustering matrix (what ``cnb-lr`` weighs rows by in a transductive evaluation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clusterednb.inference.select import select_log_proba, select_log_weights
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts

TRANSDUCTIVE_MODES = (None, "select")


class _OtherClusters:
    """The MAP clusters seen from one task: the other tasks' labelled counts per cluster."""

    def __init__(
        self,
        counts: Counts | SparseCounts,
        partition: np.ndarray,
        gamma: float,
        unlabelled_X: Any,
        unlabelled_task: np.ndarray,
    ) -> None:
        n_clusters = int(partition.max()) + 1
        self.counts = counts
        self.partition = partition
        self.gamma = gamma
        self.unlabelled_X = unlabelled_X
        self.unlabelled_task = unlabelled_task
        self.value_counts = counts.group_by(partition, n_clusters).value_counts  # once
        self.sizes = np.bincount(partition, minlength=n_clusters)

    def without(self, task: int) -> tuple[tuple[Any, ...], np.ndarray]:
        """The arguments of :func:`~clusterednb.inference.select.select_log_proba` after the
        model for ``task`` (the other clusters' value counts (K, C, V) and sizes (K,),
        ``gamma``, the task's own label and value counts, its unlabelled rows), and the
        clusters' labels in the partition (K,)."""
        own = self.counts.take([task])
        cluster_counts = self.value_counts.astype(np.float64)
        cluster_counts[self.partition[task]] -= own.value_counts[0]
        sizes = self.sizes.copy()
        sizes[self.partition[task]] -= 1
        kept = np.flatnonzero(sizes > 0)
        rows = self.unlabelled_X[np.flatnonzero(self.unlabelled_task == task)]
        arguments = (
            cluster_counts[kept],
            sizes[kept],
            self.gamma,
            own.label_counts[0],
            own.value_counts[0],
            rows,
        )
        return arguments, kept


def select_log_proba_for_rows(
    model: DirichletNB,
    counts: Counts | SparseCounts,
    partition: np.ndarray,
    gamma: float,
    unlabelled_X: Any,
    unlabelled_task: np.ndarray,
    X: Any,
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
    unlabelled_X : ndarray of shape (n_unlabelled, n_features), or a sparse matrix of documents
    unlabelled_task : ndarray of shape (n_unlabelled,)
    X : like ``unlabelled_X``, n_rows rows
        Codes (or documents) of the rows predicted.
    task_index : ndarray of shape (n_rows,)
        Their tasks (-1: a task not seen in training).
    log_proba : ndarray of shape (n_rows, n_classes)
        The posterior predictive, returned with the selected rows replaced.
    temperature : float
        ``τ`` in ``(0, 1]``.

    Examples
    --------
    Task 2 of :func:`clusterednb.examples.models.three_task_counts` has two unlabelled red rows:
    its row's
    predictive is replaced; task 0's (no unlabelled rows) is left as it was:

    >>> from clusterednb.examples import models as toy
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
    others = _OtherClusters(counts, partition, gamma, unlabelled_X, unlabelled_task)
    for task in np.intersect1d(np.unique(task_index[task_index >= 0]), unlabelled_task):
        arguments, _ = others.without(task)
        rows = np.flatnonzero(task_index == task)
        out[rows], _ = select_log_proba(model, *arguments, temperature, query=X[rows])
    return out


def selected_coclustering(
    model: DirichletNB,
    counts: Counts | SparseCounts,
    partition: np.ndarray,
    gamma: float,
    unlabelled_X: Any,
    unlabelled_task: np.ndarray,
    coclustering: np.ndarray,
    temperature: float,
) -> np.ndarray:
    """The co-clustering seen from each task with unlabelled rows: its row becomes the
    probability, under its selection weights, that each other task shares its cluster.

    Parameters
    ----------
    model, counts, partition, gamma, unlabelled_X, unlabelled_task, temperature
        As in :func:`select_log_proba_for_rows`.
    coclustering : ndarray of shape (n_tasks, n_tasks)
        The posterior co-clustering; rows of tasks without unlabelled rows are kept.

    Returns
    -------
    ndarray of shape (n_tasks, n_tasks)
        Row ``t``: ``P(u shares t's cluster)``; the diagonal is 1. Rows of tasks with
        unlabelled rows are their selection's, so the matrix need not be symmetric.

    Examples
    --------
    Task 2's two unlabelled red rows choose between the cluster of tasks 0 and 1 and a new
    cluster; tasks 0 and 1 always share it, so their entries in row 2 are equal:

    >>> from clusterednb.examples import models as toy
    >>> together = selected_coclustering(
    ...     toy.colour_model(), toy.three_task_counts(), np.array([0, 0, 1]), 1.0,
    ...     np.array([[0], [0]]), np.array([2, 2]), np.eye(3), 1.0)
    >>> row = together[2]
    >>> bool(np.isclose(row[0], row[1]) and 0 < row[0] < 1 and row[2] == 1.0)
    True
    >>> together[0].tolist()  # task 0 has no unlabelled rows: its row is kept
    [1.0, 0.0, 0.0]
    """
    out = np.array(coclustering, dtype=np.float64, copy=True)
    others = _OtherClusters(counts, partition, gamma, unlabelled_X, unlabelled_task)
    for task in np.unique(unlabelled_task):
        arguments, kept = others.without(task)
        log_weights = select_log_weights(model, *arguments, temperature)
        per_cluster = np.zeros(int(partition.max()) + 1)
        per_cluster[kept] = np.exp(log_weights[:-1])
        out[task] = per_cluster[partition]
        out[task, task] = 1.0
    return out


def transductive_coclustering(estimator: Any) -> np.ndarray:
    """The co-clustering of a fitted ``ClusteredNB(transductive="select")`` with each row of a
    task that has unlabelled training rows replaced by its selection
    (:func:`selected_coclustering`); any other fitted model's ``coclustering_`` as it is.

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> X = [*X["colour"], "red", "red", "red"]  # cy's three unlabelled rows are red
    >>> y, tasks = [*y, None, None, None], [*tasks, "cy", "cy", "cy"]
    >>> model = ClusteredNB(inference="exact", transductive="select")
    >>> model = model.fit([[x] for x in X], y, tasks)
    >>> together = transductive_coclustering(model)
    >>> bool(np.allclose(together[:2], model.coclustering_[:2]))  # ann and bob: no unlabelled rows
    True
    >>> bool(np.allclose(together[2], model.coclustering_[2]))  # cy's red rows chose
    False
    """
    together = estimator.coclustering_
    if getattr(estimator, "transductive", None) != "select" or not estimator.unlabelled_task_.size:
        return together
    return selected_coclustering(
        estimator.observation_,
        estimator.counts_,
        estimator.partition_,
        estimator.gamma,
        estimator.unlabelled_X_,
        estimator.unlabelled_task_,
        together,
        estimator.selection_temperature(),
    )
