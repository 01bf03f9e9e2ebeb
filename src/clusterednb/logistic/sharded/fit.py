"""A :class:`~clusterednb.ClusteredLogisticRegression` fitted shard by shard: the in-memory
fit's steps, each as a map over shards of tasks and a small reduction.

1. Each shard's task ids, labelled rows and distinct (row, label) patterns
   (:func:`~clusterednb.logistic.sharded.shards.shard_summary`); the tasks are numbered as in
   memory (sorted ids), and the pooled anchor is fitted on the summed pattern counts.
2. The settings are tuned on at most 300 tasks and the partition is sampled on a core of 300,
   their rows gathered from the shards (the in-memory fit tunes and samples on as many, drawn
   by the same generator calls).
3. Every shard places its tasks in the core's clusters
   (:func:`~clusterednb.logistic.sharded.shards.placed`) and sums its tempered counts by
   cluster.
4. The regressions run Newton's method over the shards
   (:mod:`clusterednb.logistic.sharded.regressions`).

The result is the in-memory model's :class:`~clusterednb.logistic.clusters.LogisticClusters`
(prediction, saving and explanations are the same); what the shards never send is their
rows, so ``partial_fit`` is refused. :class:`LocalShards` maps in this process (tests, the
reference); :mod:`clusterednb.logistic.sharded.dask_fit` maps on Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clusterednb.data.dataset import factorize_tasks
from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference.blocks.core_and_place import MAX_SAMPLED_TASKS, core_tasks, sample_core
from clusterednb.inference.blocks.engine import membership
from clusterednb.logistic.clustering.task_expansions import one_hot_rows
from clusterednb.logistic.clusters import LogisticClusters, fit_clusters
from clusterednb.logistic.fit import FitSettings, JointData
from clusterednb.logistic.sharded.regressions import sharded_regressions
from clusterednb.logistic.sharded.shards import (
    EncodedShard,
    ShardSummary,
    cluster_counts,
    placed,
    shard_rows,
    shard_summary,
    with_positions,
)
from clusterednb.logistic.solvers.laplace import fit_laplace
from clusterednb.logistic.tuning import MAX_TUNING_TASKS, choose_settings, tuning_tasks


class LocalShards:
    """Shards held in this process: each map is a loop.

    Parameters
    ----------
    shards : sequence of EncodedShard

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, _, _ = toy.toy_shards()
    >>> LocalShards(shards).collect(lambda shard: shard.task_ids.size)
    [3, 3]
    """

    def __init__(self, shards: Sequence[EncodedShard]) -> None:
        self.shards = list(shards)

    def apply(self, function: Callable[..., EncodedShard], *args: Any) -> LocalShards:
        """Each shard replaced by ``function(shard, *args)``."""
        return LocalShards([function(shard, *args) for shard in self.shards])

    def collect(self, function: Callable[..., Any], *args: Any) -> list[Any]:
        """``function(shard, *args)`` of every shard."""
        return [function(shard, *args) for shard in self.shards]

    def apply_collect(
        self, function: Callable[..., tuple[EncodedShard, Any]], *args: Any
    ) -> tuple[LocalShards, list[Any]]:
        """New shards and a result each, from ``function(shard, *args) -> (shard, result)``
        (these shards are left as they were)."""
        pairs = [function(shard, *args) for shard in self.shards]
        return LocalShards([pair[0] for pair in pairs]), [pair[1] for pair in pairs]


@dataclass(frozen=True)
class _Counts:
    """What :func:`~clusterednb.logistic.tuning.tuning_tasks` reads of the data."""

    n_tasks: int
    task_starts: np.ndarray


def task_numbering(summaries: list[ShardSummary]) -> np.ndarray:
    """Every shard's task ids, numbered as the in-memory fit numbers them (sorted when
    comparable); a task found in two shards is refused by name.

    Examples
    --------
    >>> from clusterednb.logistic.sharded.shards import ShardSummary
    >>> parts = [ShardSummary(np.array([i], dtype=object), np.ones(1), np.zeros((0, 2)),
    ...                       np.zeros(0), 1) for i in ("v", "u")]
    >>> task_numbering(parts).tolist()
    ['u', 'v']
    """
    ids = np.concatenate([part.task_ids for part in summaries])
    index, task_ids = factorize_tasks(ids)
    if task_ids.size < ids.size:
        twice = task_ids[int(np.flatnonzero(np.bincount(index) > 1)[0])]
        raise CNBError(
            f"task {twice!r} has rows in two shards: a sharded fit needs each task's rows in "
            "one partition (write the Parquet files sorted or partitioned by task, or "
            "repartition by it, e.g. Dask's frame.shuffle(on=task))"
        )
    return task_ids


def pooled_anchor_of(summaries: list[ShardSummary], offsets: np.ndarray, precision: float):
    """The pooled MAP of every labelled row, from the shards' summed pattern counts.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, settings, anchor = toy.toy_shards()
    >>> summaries = [shard_summary(shard) for shard in shards]
    >>> bool(np.allclose(pooled_anchor_of(summaries, shards[0].data.offsets, 1.0), anchor))
    True
    """
    table = np.concatenate([part.patterns for part in summaries])
    counts = np.concatenate([part.counts for part in summaries])
    patterns, pattern = np.unique(table, axis=0, return_inverse=True)
    weights = np.bincount(pattern.ravel(), weights=counts, minlength=patterns.shape[0])
    design = one_hot_rows(patterns[:, :-1], offsets).toarray()
    return fit_laplace(design, patterns[:, -1].astype(np.float64), weights, precision).coef


def gathered_rows(shards: Any, wanted: np.ndarray, offsets: np.ndarray) -> JointData:
    """The rows of the tasks at positions ``wanted`` (sorted), gathered from the shards and
    numbered ``0 … len(wanted) − 1`` in position order (in-memory ``of_tasks``' order).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, _, _ = toy.toy_shards()
    >>> gathered_rows(LocalShards(shards), np.array([1, 4]), shards[0].data.offsets).n_tasks
    2
    """
    parts = [part for part in shards.collect(shard_rows, wanted) if part is not None]
    codes, y, task = [], [], []
    for positions, data in parts:
        codes.append(data.codes)
        y.append(data.y)
        task.append(np.searchsorted(wanted, positions[data.task]))
    return JointData.from_codes(
        np.concatenate(codes), np.concatenate(y), np.concatenate(task), wanted.size, offsets
    )


def fit_sharded(
    shards: Any,
    schema: FeatureSchema,
    settings: FitSettings,
    rng: np.random.Generator,
    progress: Callable[[str], None] | None = None,
) -> tuple[np.ndarray, LogisticClusters, FitSettings]:
    """Fit on shards of tasks; returns the task ids, the fitted clusters and the settings
    chosen (see the module).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> shards, _, _ = toy.toy_shards()
    >>> schema = toy.toy_shards_schema()
    >>> task_ids, clusters, chosen = fit_sharded(LocalShards(shards), schema, FitSettings(),
    ...                                          np.random.default_rng(0))
    >>> task_ids.size, clusters.coef.shape[1] == schema.n_values_total + task_ids.size
    (6, True)
    """
    say = progress or (lambda message: None)
    if settings.relevance is True or settings.deviation_scale != 0.0:
        raise CNBError("a sharded fit has no relevance and no task deviations; leave them off")
    settings = replace(settings, relevance=False)  # "auto": a sharded fit judges no column
    settings = settings.with_bins_resolved()  # categories only: no bins to walk
    summaries = shards.collect(shard_summary)
    task_ids = task_numbering(summaries)
    shards = shards.apply(with_positions, task_ids)
    n_tasks, offsets = task_ids.size, schema.offsets
    say(f"{n_tasks} tasks in {len(summaries)} shards")
    if n_tasks <= MAX_SAMPLED_TASKS:  # every task sampled: the in-memory fit on their rows
        data = gathered_rows(shards, np.arange(n_tasks), offsets)
        tuning = choose_settings(data, settings, rng)
        return (
            task_ids,
            fit_clusters(data, tuning.settings, rng, tuning.feature_relevance),
            tuning.settings,
        )
    labelled = np.zeros(n_tasks, dtype=np.int64)
    for part in summaries:
        labelled[np.searchsorted(task_ids, part.task_ids)] = part.labelled
    counts = _Counts(n_tasks, np.concatenate([[0], np.cumsum(labelled)]))
    anchor = pooled_anchor_of(summaries, offsets, settings.precision)
    chosen = settings
    if "auto" in (settings.effective_rows, settings.floor):
        tuned = tuning_tasks(counts, rng) if n_tasks > MAX_TUNING_TASKS else np.arange(n_tasks)
        chosen = choose_settings(gathered_rows(shards, tuned, offsets), settings, rng).settings
    say(f"settings: effective rows {chosen.effective_rows:g}, floor {chosen.floor:g}")
    core = core_tasks(n_tasks, rng)
    core_blocks = gathered_rows(shards, core, offsets).blocks(chosen, anchor=anchor)
    sampled, clusters = sample_core(core_blocks, chosen.gamma, rng, chosen.n_sweeps, chosen.burn_in)
    core_weights = membership(sampled.coclustering, sampled.partition)
    n_clusters = clusters.open_slots.size
    say(f"{n_clusters} clusters on a core of {core.size} tasks; placing the others")
    shards = shards.apply(placed, anchor, chosen, clusters, (core, core_weights, sampled.partition))
    placement = shards.collect(_placement_of)
    q = np.zeros((n_tasks, n_clusters))
    partition = np.zeros(n_tasks, dtype=np.int64)
    for positions, weights, local_partition in placement:
        q[positions], partition[positions] = weights, local_partition
    value_counts = sum(shards.collect(cluster_counts, chosen, n_clusters))
    say("fitting the cluster regressions")
    p = int(offsets[-1]) + 1
    shards, beta, passes = sharded_regressions(
        shards, float(chosen.floor), chosen.C, n_clusters + 1, p
    )
    say(f"regressions fitted in {passes} passes")
    theta = np.zeros((n_tasks, n_clusters + 1))
    for positions, local_theta in shards.collect(_theta_of):
        theta[positions] = local_theta
    n_clusters_probability = np.zeros(n_tasks + 1)
    n_clusters_probability[: core.size + 1] = sampled.n_clusters_probability
    clusters_fitted = LogisticClusters(
        partition=partition,
        coclustering=None,
        n_clusters_probability=n_clusters_probability,
        membership=np.column_stack([q / q.sum(axis=1, keepdims=True), np.zeros(n_tasks)]),
        cluster_value_counts=value_counts,
        cluster_sizes=np.bincount(partition, minlength=n_clusters),
        coef=np.column_stack([beta[:, :-1], theta.T]),
        intercept=beta[:, -1].copy(),
        log_joint=sampled.log_joint,
        cluster_weights=q,
        sampled_rows=int(sum(part.n_rows for part in summaries)),
        fitted_rows=int(labelled.sum()),
    )
    return task_ids, clusters_fitted, chosen


def _placement_of(shard: EncodedShard) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return shard.positions, shard.weights, shard.partition


def _theta_of(shard: EncodedShard) -> tuple[np.ndarray, np.ndarray]:
    return shard.positions, shard.theta


__all__ = ["LocalShards", "fit_sharded"]
