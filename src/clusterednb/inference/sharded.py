"""A sharded collapsed Gibbs sampler over task assignments (for distributed engines).

Each sweep, the tasks are split into shards; every shard sweeps its own tasks (Neal's
algorithm 3, as the single-machine engine) against a copy of the cluster statistics taken
at the start of the sweep, updated only by its own moves. The shards' changes are then added
up. **Approximation**: within a sweep a shard does not see the other shards' moves (its
statistics are stale), so the chain is not exactly the collapsed Gibbs sampler; clusters
opened in the same sweep by different shards stay distinct until later sweeps move their
members together. With one shard it is the exact sampler. The effect is measured against
the sequential sampler in ``BENCHMARKS.md`` and tested on a planted partition.

:func:`shard_sweep` is engine-agnostic (numpy and Numba only); :func:`fit_sharded_gibbs`
takes a ``map_shards`` callable, so Dask, Spark or a plain ``map`` can run the shards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from clusterednb.inference.gibbs import _Recorder, _summarise, partition_log_joint
from clusterednb.inference.gibbs_kernels import (
    move_task,
    new_cluster_scores,
    sample_index,
    task_log_score,
)
from clusterednb.inference.gibbs_state import LogGammaTables, SparseTaskCounts
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.observation import DirichletNB
from clusterednb.priors import canonical_partition
from clusterednb.special import segment_sum
from clusterednb.stats import Counts


@njit(cache=True, nogil=True)
def _sweep_shard(
    assignment,
    sizes,
    n_clusters,
    new_cluster_score,
    log_gamma,
    uniforms,
    tasks,
    cluster_cells,
    cluster_totals,
    tables,
):  # pragma: no cover
    """Sweep the shard's tasks; clusters keep their ids, new ones are appended."""
    scores = np.empty(sizes.shape[0] + 1)
    ids = np.empty(sizes.shape[0] + 1, dtype=np.int64)
    for task in range(assignment.shape[0]):
        old = assignment[task]
        if old >= 0:
            move_task(task, old, -1, tasks, cluster_cells, cluster_totals)
            sizes[old] -= 1
        n = 0
        for k in range(n_clusters[0]):
            if sizes[k] > 0:
                scores[n] = np.log(sizes[k]) + task_log_score(
                    task, k, tasks, cluster_cells, cluster_totals, tables
                )
                ids[n] = k
                n += 1
        scores[n] = log_gamma + new_cluster_score[task]
        chosen = sample_index(scores, n + 1, uniforms[task])
        if chosen == n:
            k = n_clusters[0]
            n_clusters[0] += 1
        else:
            k = ids[chosen]
        move_task(task, k, 1, tasks, cluster_cells, cluster_totals)
        sizes[k] += 1
        assignment[task] = k


@dataclass(frozen=True)
class ShardSweep:
    """What one shard sends back.

    Attributes
    ----------
    assignment : ndarray of shape (n_shard_tasks,)
        New cluster of each task: ids below ``n_clusters`` are the broadcast clusters, ids
        ``n_clusters + j`` the shard's ``j``-th new cluster.
    delta_cells, delta_totals : ndarray of shape (n_clusters + n_new, C·V) and (…, C·F)
    delta_sizes : ndarray of shape (n_clusters + n_new,)
    """

    assignment: np.ndarray
    delta_cells: np.ndarray
    delta_totals: np.ndarray
    delta_sizes: np.ndarray


def _priors(model: DirichletNB) -> tuple[np.ndarray, np.ndarray]:
    return model.beta.ravel(), segment_sum(model.beta, model.offsets).ravel()


def shard_sweep(
    model: DirichletNB,
    shard: Counts,
    assignment: np.ndarray,
    cluster_cells: np.ndarray,
    cluster_totals: np.ndarray,
    sizes: np.ndarray,
    gamma: float,
    seed: int,
    max_count: int,
) -> ShardSweep:
    """One sweep of a shard's tasks against broadcast cluster statistics.

    Parameters
    ----------
    model : DirichletNB
    shard : Counts with the shard's n_s tasks
    assignment : ndarray of shape (n_s,)
        Current cluster of each task (-1: not placed yet).
    cluster_cells, cluster_totals : ndarray of shape (K, C·V), (K, C·F)
        Statistics of the K clusters over ALL tasks (the shard's included).
    sizes : ndarray of shape (K,)
    gamma : float
    seed : int
        Seeds this shard's generator (so a sweep is reproducible whatever runs it).
    max_count : int
        Largest count any cluster can hold (sizes the log-gamma tables).
    """
    rng = np.random.default_rng(seed)
    n_tasks, n_clusters = shard.n_groups, cluster_cells.shape[0]
    capacity = n_clusters + n_tasks
    cells = np.zeros((capacity, cluster_cells.shape[1]), dtype=np.int64)
    totals = np.zeros((capacity, cluster_totals.shape[1]), dtype=np.int64)
    local_sizes = np.zeros(capacity, dtype=np.int64)
    cells[:n_clusters], totals[:n_clusters], local_sizes[:n_clusters] = (
        cluster_cells,
        cluster_totals,
        sizes,
    )
    before = (cells.copy(), totals.copy(), local_sizes.copy())
    tasks = SparseTaskCounts.from_dense(shard.value_counts, model.offsets)
    tables = LogGammaTables.build(*_priors(model), max_count)
    new = np.array(assignment, dtype=np.int64)
    counter = np.array([n_clusters], dtype=np.int64)
    _sweep_shard(
        new,
        local_sizes,
        counter,
        new_cluster_scores(tasks.packed(), tables.packed()),
        np.log(gamma),
        rng.random(n_tasks),
        tasks.packed(),
        cells,
        totals,
        tables.packed(),
    )
    used = int(counter[0])
    return ShardSweep(
        assignment=new,
        delta_cells=(cells - before[0])[:used],
        delta_totals=(totals - before[1])[:used],
        delta_sizes=(local_sizes - before[2])[:used],
    )


def _shard_call(args: tuple) -> ShardSweep:
    return shard_sweep(*args)


def fit_sharded_gibbs(
    model: DirichletNB,
    counts: Counts,
    gamma: float,
    n_sweeps: int,
    burn_in: int,
    n_shards: int,
    rng: np.random.Generator,
    map_shards: Callable[[Callable, Sequence[Any]], Sequence[ShardSweep]] | None = None,
) -> ClusteringResult:
    """Sharded Gibbs sampling; the result summarises the post-burn-in partitions.

    ``map_shards(function, arguments)`` runs ``function(a)`` for each ``a`` (default: the
    built-in ``map`` in this process). Tasks are dealt to shards by a seeded permutation.
    """
    require_conjugate(model, "gibbs (sharded)")
    n_tasks = counts.n_groups
    n_shards = max(1, min(n_shards, n_tasks))
    order = rng.permutation(n_tasks)
    shards = np.array_split(order, n_shards)
    shard_counts = [counts.take(s) for s in shards]
    schema = model.schema
    cell_width = schema.n_classes * schema.n_values_total
    total_width = schema.n_classes * schema.n_features
    cells = np.zeros((0, cell_width), dtype=np.int64)
    totals = np.zeros((0, total_width), dtype=np.int64)
    sizes = np.zeros(0, dtype=np.int64)
    assignment = np.full(n_tasks, -1, dtype=np.int64)
    max_count = int(counts.label_counts.sum())
    runner = map_shards or (lambda f, args: list(map(f, args)))
    recorder = _Recorder()
    for sweep in range(n_sweeps):
        seeds = rng.integers(0, 2**63 - 1, size=n_shards)
        arguments = [
            (
                model,
                shard_counts[s],
                assignment[shards[s]],
                cells,
                totals,
                sizes,
                gamma,
                int(seeds[s]),
                max_count,
            )
            for s in range(n_shards)
        ]
        results = runner(_shard_call, arguments)
        n_old = sizes.size
        n_new = [r.delta_sizes.size - n_old for r in results]
        start = n_old + np.concatenate([[0], np.cumsum(n_new)[:-1]]).astype(np.int64)
        grown = n_old + int(sum(n_new))
        new_cells = np.zeros((grown, cell_width), dtype=np.int64)
        new_totals = np.zeros((grown, total_width), dtype=np.int64)
        new_sizes = np.zeros(grown, dtype=np.int64)
        new_cells[:n_old], new_totals[:n_old], new_sizes[:n_old] = cells, totals, sizes
        for s, result in enumerate(results):
            target = np.concatenate([np.arange(n_old), start[s] + np.arange(n_new[s])])
            new_cells[target] += result.delta_cells
            new_totals[target] += result.delta_totals
            new_sizes[target] += result.delta_sizes
            local = result.assignment
            assignment[shards[s]] = np.where(local < n_old, local, start[s] + local - n_old)
        keep = np.flatnonzero(new_sizes > 0)
        relabel = np.full(grown, -1, dtype=np.int64)
        relabel[keep] = np.arange(keep.size)
        assignment = relabel[assignment]
        cells, totals, sizes = new_cells[keep], new_totals[keep], new_sizes[keep]
        if sweep >= burn_in:
            _record(recorder, model, counts, assignment, cells, sizes, gamma)
    return _summarise(model, counts, recorder)


def _record(
    recorder: _Recorder,
    model: DirichletNB,
    counts: Counts,
    assignment: np.ndarray,
    cells: np.ndarray,
    sizes: np.ndarray,
    gamma: float,
) -> None:
    schema = model.schema
    recorder.components.append(cells.reshape(-1, schema.n_classes, schema.n_values_total).copy())
    recorder.task_component.append(assignment.copy())
    recorder.partitions.append(canonical_partition(assignment))
    recorder.label_counts.append(counts.label_counts.copy())
    recorder.sizes.append(sizes.copy())
    recorder.gammas.append(gamma)
    recorder.log_joint.append(partition_log_joint(model, counts, assignment, sizes.size, gamma))
