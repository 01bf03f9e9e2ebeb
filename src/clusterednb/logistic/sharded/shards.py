"""Engine-agnostic shard functions of the clustered logistic regression: plain numpy and
scipy, no distributed-engine imports (Dask, Spark or a plain loop maps them).

A shard holds every row of its tasks (a task's rows are never split between shards). Its
functions compute what the fit needs of its tasks and return sums or per-task arrays; the
driver (:mod:`clusterednb.logistic.sharded.fit`) combines them:

- :func:`encode_shard` reads a DataFrame into an :class:`EncodedShard` under the global schema;
- :func:`shard_summary` its task ids, their labelled rows, and the counts of its distinct
  (one-hot row, label) patterns, from which the pooled anchor is fitted;
- :func:`shard_rows` the rows of chosen tasks (the tuning's and the sampled core's);
- :func:`placed` places its tasks in the core's clusters;
- ``regressions.shard_pass`` moves its tasks' own weights in every cluster regression and
  returns the regressions' sums over its rows (:mod:`clusterednb.logistic.sharded.regressions`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import softmax

from clusterednb.data.dataset import TaskDataset
from clusterednb.data.schema import FeatureSchema
from clusterednb.inference.blocks.core_and_place import CoreClusters, placement_batch
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.online import counts_of_tasks
from clusterednb.logistic.settings import FitSettings, task_tempering


@dataclass(frozen=True)
class EncodedShard:
    """One shard's rows, encoded.

    Attributes
    ----------
    task_ids : ndarray of shape (n_local,), dtype object
        The shard's task ids, sorted (its local task ``i`` is ``task_ids[i]``).
    data : JointData
        Its rows, tasks numbered locally.
    positions : ndarray of shape (n_local,)
        Each local task's position among all shards' tasks (-1 until known).
    weights : ndarray of shape (n_local, K), optional
        After placement: each task's weight in each cluster's regression (``q_u``).
    partition : ndarray of shape (n_local,), optional
        After placement: each task's most probable cluster.
    theta : ndarray of shape (n_local, K + 1), optional
        Each task's own weight (its intercept column) in each regression.
    patterns : tuple, optional
        The distinct one-hot rows of its labelled rows and each row's pattern (kept by the
        regressions' first pass).
    """

    task_ids: np.ndarray
    data: JointData
    positions: np.ndarray
    weights: np.ndarray | None = None
    partition: np.ndarray | None = None
    theta: np.ndarray | None = None
    patterns: tuple[np.ndarray, np.ndarray] | None = None


def encode_shard(frame: pd.DataFrame, task: str, label: str, schema: FeatureSchema) -> EncodedShard:
    """A shard's rows under the global ``schema`` (an unknown category is an error: the
    schema was read from every shard).

    Examples
    --------
    >>> schema = FeatureSchema(("f",), (("a", "b"),), (0, 1))
    >>> rows = pd.DataFrame({"user": ["v", "u", "v"], "label": [1, 0, None], "f": ["a", "b", "a"]})
    >>> shard = encode_shard(rows, "user", "label", schema)
    >>> shard.task_ids.tolist(), shard.data.task.tolist(), shard.data.y.tolist()
    (['u', 'v'], [0, 1, 1], [0, 1, -1])
    """
    dataset = TaskDataset.from_frame(
        frame, task=task, label=label, schema=schema, handle_unknown="error"
    )
    widest = max((len(values) for values in schema.categories), default=0)
    codes = dataset.X.astype(np.int8) if widest < 127 else dataset.X  # 8 times less to hold
    data = JointData.from_codes(
        codes, dataset.y.astype(np.int8), dataset.task_index, dataset.n_tasks, schema.offsets
    )
    positions = np.full(dataset.n_tasks, -1, dtype=np.int64)
    return EncodedShard(np.asarray(dataset.task_ids, dtype=object), data, positions)


@dataclass(frozen=True)
class ShardSummary:
    """What the driver learns of a shard before fitting.

    Attributes
    ----------
    task_ids : ndarray of shape (n_local,)
    labelled : ndarray of shape (n_local,)
        Labelled rows of each task.
    patterns : ndarray of shape (n_patterns, n_features + 1)
        Distinct rows of feature codes and label (labelled rows only).
    counts : ndarray of shape (n_patterns,)
        How often each pattern occurs.
    n_rows : int
    """

    task_ids: np.ndarray
    labelled: np.ndarray
    patterns: np.ndarray
    counts: np.ndarray
    n_rows: int


def shard_summary(shard: EncodedShard) -> ShardSummary:
    """The shard's tasks, their labelled rows and its distinct labelled patterns.

    Examples
    --------
    >>> schema = FeatureSchema(("f",), (("a", "b"),), (0, 1))
    >>> rows = pd.DataFrame({"user": ["u", "u", "v"], "label": [1, 1, 0], "f": ["a", "a", "b"]})
    >>> summary = shard_summary(encode_shard(rows, "user", "label", schema))
    >>> summary.patterns.tolist(), summary.counts.tolist(), summary.labelled.tolist()
    ([[0, 1], [1, 0]], [2, 1], [2, 1])
    """
    data = shard.data
    rows = data.labelled
    table = np.column_stack([data.codes[rows], data.y[rows]]).astype(np.int64)
    patterns, counts = np.unique(table, axis=0, return_counts=True)
    return ShardSummary(
        shard.task_ids, np.diff(data.task_starts), patterns, counts, int(data.y.size)
    )


def with_positions(shard: EncodedShard, all_task_ids: np.ndarray) -> EncodedShard:
    """The shard with each task's position among ``all_task_ids`` (sorted, every shard's).

    Examples
    --------
    >>> schema = FeatureSchema(("f",), (("a",),), (0, 1))
    >>> shard = encode_shard(pd.DataFrame({"user": ["v"], "label": [1], "f": ["a"]}),
    ...                      "user", "label", schema)
    >>> with_positions(shard, np.array(["u", "v"], dtype=object)).positions.tolist()
    [1]
    """
    index = pd.Index(all_task_ids)
    return replace(shard, positions=index.get_indexer(shard.task_ids).astype(np.int64))


def shard_rows(shard: EncodedShard, wanted: np.ndarray) -> tuple[np.ndarray, JointData] | None:
    """The rows of the shard's tasks whose positions are in ``wanted`` (sorted): their
    positions, and their rows with tasks numbered locally; None if it holds none of them.

    Examples
    --------
    >>> schema = FeatureSchema(("f",), (("a", "b"),), (0, 1))
    >>> rows = pd.DataFrame({"user": ["u", "v"], "label": [1, 0], "f": ["a", "b"]})
    >>> shard = with_positions(encode_shard(rows, "user", "label", schema),
    ...                        np.array(["u", "v"], dtype=object))
    >>> positions, data = shard_rows(shard, np.array([1]))
    >>> positions.tolist(), data.codes.tolist()
    ([1], [[1]])
    """
    local = np.flatnonzero(np.isin(shard.positions, wanted))
    if local.size == 0:
        return None
    return shard.positions[local], shard.data.of_tasks(local)


def placed(
    shard: EncodedShard,
    anchor: np.ndarray,
    settings: FitSettings,
    clusters: CoreClusters,
    core: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> EncodedShard:
    """The shard with its tasks placed in the core's clusters: weights ``q_u`` and most
    probable cluster. ``core`` is the sampled tasks' ``(positions (sorted), weights (n_core,
    K), partition (n_core,))``: those tasks keep what their chain gave them.

    Examples
    --------
    >>> from clusterednb.inference.blocks.core_and_place import sample_core
    >>> from clusterednb.examples import logistic as toy
    >>> shards, settings, anchor = toy.toy_shards()
    >>> blocks = shards[0].data.blocks(settings, anchor=anchor)
    >>> _, clusters = sample_core(blocks, 1.0, np.random.default_rng(0), 5, 1)
    >>> core = (shards[0].positions, np.full((3, 1), 1.0), np.zeros(3, dtype=int))
    >>> other = placed(shards[1], anchor, settings, clusters, core)
    >>> bool(np.allclose(other.weights.sum(axis=1), 1.0)), other.partition.shape
    (True, (3,))
    """
    blocks = shard.data.blocks(settings, anchor=anchor)
    n_local = shard.task_ids.size
    weights = np.zeros((n_local, clusters.open_slots.size))
    partition = np.zeros(n_local, dtype=np.int64)
    core_positions, core_weights, core_partition = core
    in_core = np.isin(shard.positions, core_positions)
    where = np.searchsorted(core_positions, shard.positions[in_core])
    weights[in_core] = core_weights[where]
    partition[in_core] = core_partition[where]
    others = np.flatnonzero(~in_core)
    at_once = placement_batch(anchor.size)
    for start in range(0, others.size, at_once):
        batch = others[start : start + at_once]
        log_weights = clusters.log_weights(blocks.subset(batch))
        weights[batch] = softmax(log_weights, axis=1)
        partition[batch] = np.argmax(log_weights, axis=1)
    return replace(shard, weights=weights, partition=partition)


def cluster_counts(shard: EncodedShard, settings: FitSettings, n_clusters: int) -> np.ndarray:
    """The tempered feature-value counts of the shard's tasks summed by their most probable
    cluster, shape (n_clusters, n_values_total).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, settings, _ = toy.toy_shards()
    >>> shard = replace(shards[1], partition=np.array([0, 1, 1]))
    >>> cluster_counts(shard, settings, 2).shape
    (2, 2)
    """
    tasks = np.arange(shard.task_ids.size)
    counts, n_rows = counts_of_tasks(shard.data, tasks)
    tempered = counts * task_tempering(n_rows, float(settings.effective_rows))[:, None]
    out = np.zeros((n_clusters, counts.shape[1]))
    np.add.at(out, shard.partition, tempered)
    return out
