"""Engine-agnostic shard functions: plain numpy/Numba, no distributed-engine imports.

A *shard* is any subset of the event table (a Parquet file, a partition, a Spark group).
:func:`shard_counts` turns one into the sparse counts of its own tasks (:class:`ShardCounts`);
:func:`combine_shards` adds any number of those (associative and commutative, so an engine
may tree-reduce them in any order). A task whose events are spread over several shards gets
the sum of its partial counts: the statistics are exactly those of one pass over all events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.data.dataset import TaskDataset, factorize_tasks
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.values import ordered_unique
from clusterednb.exceptions import DataError
from clusterednb.stats.counts import Counts, sparse_value_counts


@dataclass(frozen=True)
class ShardCounts:
    """Counts of some tasks, sparse: nothing dense per task but the label counts.

    Attributes
    ----------
    task_ids : ndarray of shape (n_tasks,), dtype object
    label_counts : int ndarray of shape (n_tasks, n_classes)
    cells : scipy.sparse.csr_matrix of shape (n_tasks, n_classes * n_values_total), int64
        Value counts, row ``u`` = ``counts.value_counts[u].ravel()``
        (:func:`clusterednb.stats.counts.sparse_value_counts`).
    n_events : int
        Rows seen (labelled or not).

    Examples
    --------
    >>> from scipy import sparse
    >>> shard = ShardCounts(np.array(["ann"], dtype=object), np.array([[2, 0]]),
    ...                     sparse.csr_matrix([[2, 0, 0, 0]]), n_events=3)
    >>> shard.counts.value_counts.tolist()  # one unlabelled event was seen, not counted
    [[[2, 0], [0, 0]]]
    """

    task_ids: np.ndarray
    label_counts: np.ndarray
    cells: sparse.csr_matrix
    n_events: int

    @property
    def counts(self) -> Counts:
        """The same counts as a dense :class:`~clusterednb.stats.counts.Counts` (n_tasks × C × V).

        Examples
        --------
        >>> from scipy import sparse
        >>> shard = ShardCounts(np.array(["ann", "bob"], dtype=object), np.array([[1, 0], [0, 1]]),
        ...                     sparse.csr_matrix([[1, 0, 0, 0], [0, 0, 0, 1]]), n_events=2)
        >>> shard.counts.value_counts.shape  # (tasks, classes, values)
        (2, 2, 2)
        """
        n_tasks, n_classes = self.label_counts.shape
        shape = (n_tasks, n_classes, self.cells.shape[1] // max(n_classes, 1))
        return Counts(self.label_counts, self.cells.toarray().reshape(shape))


def schema_from_distinct(
    features: Sequence[str], label_values: Any, feature_values: Sequence[Any]
) -> FeatureSchema:
    """The schema :meth:`FeatureSchema.infer` would give, from each column's distinct values.

    Parameters
    ----------
    features : sequence of str
    label_values : array-like
        Distinct labels (missing ones are ignored).
    feature_values : sequence of array-like
        Distinct values of each feature, in ``features`` order.

    Examples
    --------
    >>> schema = schema_from_distinct(["colour"], [1, 0, None], [["red", "blue"]])
    >>> schema.classes, schema.categories
    ((0, 1), (('blue', 'red'),))
    """
    classes = ordered_unique(np.asarray(label_values, dtype=object))
    categories = [ordered_unique(np.asarray(v, dtype=object)) for v in feature_values]
    for name, cats in zip(features, categories, strict=True):
        if not cats:
            raise DataError(f"feature column {name!r} has no non-missing value")
    if not classes:
        raise DataError("every label is missing: there is nothing to learn from")
    return FeatureSchema(tuple(features), tuple(categories), classes)


def shard_counts(frame: pd.DataFrame, task: str, label: str, schema: FeatureSchema) -> ShardCounts:
    """Counts of one shard's labelled events under a global ``schema``.

    An unknown category raises (``handle_unknown="error"``): the schema must have been
    computed over all shards, so one would be a bug, not a new value.

    Examples
    --------
    >>> schema = schema_from_distinct(["f"], [0, 1], [["a", "b"]])
    >>> events = pd.DataFrame({"user": [1, 2], "label": [0, 1], "f": ["a", "b"]})
    >>> part = shard_counts(events, "user", "label", schema)
    >>> part.cells.toarray().tolist()  # per user: (class 0: a, b), (class 1: a, b)
    [[1, 0, 0, 0], [0, 0, 0, 1]]
    """
    n_classes, n_values = schema.n_classes, schema.n_values_total
    if len(frame) == 0:
        empty = np.zeros(0, dtype=object)
        no_cells = sparse.csr_matrix((0, n_classes * n_values), dtype=np.int64)
        return ShardCounts(empty, np.zeros((0, n_classes), dtype=np.int64), no_cells, 0)
    data = TaskDataset.from_frame(
        frame, task=task, label=label, schema=schema, handle_unknown="error"
    )
    labelled = data.y >= 0
    cells = sparse_value_counts(
        data.X[labelled], data.y[labelled], data.task_index[labelled], data.n_tasks, schema
    )
    label_counts = np.zeros((data.n_tasks, n_classes), dtype=np.int64)
    np.add.at(label_counts, (data.task_index[labelled], data.y[labelled]), 1)
    return ShardCounts(data.task_ids, label_counts, cells, len(frame))


def combine_shards(parts: list[ShardCounts]) -> ShardCounts:
    """Add shards' counts task by task; task ids come out sorted (when comparable).

    Examples
    --------
    >>> schema = schema_from_distinct(["f"], [0, 1], [["a", "b"]])
    >>> first = pd.DataFrame({"user": [1, 2], "label": [0, 1], "f": ["a", "b"]})
    >>> second = pd.DataFrame({"user": [1], "label": [1], "f": ["b"]})  # user 1 again
    >>> total = combine_shards([shard_counts(first, "user", "label", schema),
    ...                         shard_counts(second, "user", "label", schema)])
    >>> total.task_ids.tolist(), total.cells.toarray().tolist(), total.n_events
    ([1, 2], [[1, 0, 0, 1], [0, 0, 0, 1]], 3)
    """
    parts = [p for p in parts if p.task_ids.size] or parts[:1]
    ids = np.concatenate([p.task_ids for p in parts])
    index, task_ids = factorize_tasks(ids) if ids.size else (np.zeros(0, np.int64), ids)
    member = sparse.csr_matrix(
        (np.ones(index.size, dtype=np.int64), (index, np.arange(index.size))),
        shape=(task_ids.size, index.size),
    )
    label_counts = np.zeros((task_ids.size, parts[0].label_counts.shape[1]), dtype=np.int64)
    np.add.at(label_counts, index, np.concatenate([p.label_counts for p in parts]))
    cells = sparse.csr_matrix(member @ sparse.vstack([p.cells for p in parts], format="csr"))
    return ShardCounts(task_ids, label_counts, cells, sum(p.n_events for p in parts))
