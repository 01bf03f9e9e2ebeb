"""The screen's held columns checked against the clusters the other columns find.

The screen (:mod:`~clusterednb.inference.relevance_screen`) holds a column shared when its
values neither differ between tasks nor follow the label within them by more than chance
allows. With few rows a test of that kind cannot tell "alike" from "too few rows to tell": on
planted populations of 7–10 tasks with 5 training rows each it held one or two of four
signal columns, and the fits lost 0.015–0.028 AUC against the plain model
(``benchmarks/bench_planted_screen.py``). So once the
engine has clustered the tasks on the columns it kept, each held column is weighed by its own
evidence on those clusters: it is released (read as relevant, and the tasks clustered again
with it) when its log evidence with a class-conditional distribution per cluster of the
fit's partition exceeds its log evidence when shared by every task
(:func:`~clusterednb.inference.relevance.shared_evidence`, label-free or not). A noise
column pays the Occam factor of one distribution per cluster and stays held; a column that
separates the clusters earns it.
"""

from __future__ import annotations

import numpy as np

from clusterednb.inference.relevance import shared_evidence
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts


def released_columns(
    model: DirichletNB,
    counts: Counts | SparseCounts,
    held: np.ndarray,
    partition: np.ndarray,
) -> np.ndarray:
    """The held columns whose evidence on ``partition``'s clusters beats their shared one.

    Parameters
    ----------
    model : DirichletNB
        The model of every column.
    counts : Counts or SparseCounts
        Every task's counts, every column.
    held : ndarray of shape (n_features,)
        Bool: the columns the screen held.
    partition : ndarray of shape (n_tasks,)
        The clusters the engine found on the other columns (canonical labels).

    Returns
    -------
    ndarray of shape (n_features,)
        Bool, within ``held``.

    Examples
    --------
    Two tasks that give one colour opposite meanings: as two clusters the colour explains
    the labels better than shared, so it is released.

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.stats.counts import Counts
    >>> model = toy.colour_model()
    >>> codes = np.array([[0]] * 6 + [[1]] * 6 + [[1]] * 6 + [[0]] * 6)
    >>> y = np.array([0] * 6 + [1] * 6 + [0] * 6 + [1] * 6)
    >>> task = np.repeat([0, 1], 12)
    >>> counts = Counts.from_codes(codes, y, task, n_tasks=2, n_classes=2,
    ...                            offsets=model.offsets)
    >>> released_columns(model, counts, np.array([True]), np.array([0, 1])).tolist()
    [True]
    >>> released_columns(model, counts, np.array([True]), np.array([0, 0])).tolist()
    [False]
    """
    return held & (evidence_gap(model, counts, partition) > 0)


def evidence_gap(
    model: DirichletNB, counts: Counts | SparseCounts, partition: np.ndarray
) -> np.ndarray:
    """Each column's log evidence with one class-conditional distribution per cluster of
    ``partition`` (n_tasks,) minus its log evidence when shared by every task, shape
    (n_features,)."""
    n_clusters = int(partition.max()) + 1
    by_cluster = counts.group_by(partition, n_clusters).value_counts.astype(np.float64)
    relevant = model.log_marginal_each_feature(by_cluster).sum(axis=0)  # (F,)
    shared, _ = shared_evidence(model, by_cluster.sum(axis=0))
    return relevant - shared
