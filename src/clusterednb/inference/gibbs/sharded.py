"""The assignment sweep of the Gibbs sampler split into shards that run in parallel.

Each sweep the tasks are dealt to shards by a seeded permutation; every shard runs the
sequential sweep kernel (:func:`~clusterednb.inference.gibbs.kernels.sweep_assignments`)
over its own tasks against a copy of the cluster statistics taken at the start of the
sweep, updated only by its own moves. The driver then adds up the shards' changes,
proposes to merge the clusters that different shards opened in the same sweep, and the
rest of the Gibbs step (label resampling, Jain–Neal split–merge moves, the update of γ)
runs on the merged state as in the sequential sampler.

**Approximation.** Within a sweep a shard does not see the other shards' moves (its
statistics are stale), so the chain is not exactly the collapsed Gibbs sampler; the
measured distance to the exact posterior is in the tests and ``BENCHMARKS.md``. With one
shard it *is* the sequential sampler, draw for draw. Two shards that each open a cluster
for the same group in the same sweep would leave two clusters that single-task moves merge
only slowly; the driver therefore offers each such pair the choice "merged" or "separate"
with probabilities proportional to their posterior (the same ratio as a split–merge move,
without a reverse proposal: part of the approximation).

Shards run in a thread pool (the kernels release the GIL) for ``ClusteredNB(n_jobs=N)``,
or on Dask workers (:mod:`clusterednb.distributed.dask`), which receive only their own
tasks' sparse counts, once per fit (fixed shards), and each sweep only the assignments and
the clusters' statistics.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from clusterednb.inference.gibbs.data import GibbsData, LogGammaTables
from clusterednb.inference.gibbs.moves import log_split_ratio
from clusterednb.inference.gibbs.state import GibbsState

_NEW_SLOTS = 64  # a shard's first slots for new clusters (more are added as needed)

ShardMap = Callable[[Callable, Sequence, Sequence], Sequence]
"""``map_shards(function, jobs, statics)``: ``[function(j, s) for j, s in zip(jobs,
statics)]``, run anywhere (a thread pool's ``map``, Dask's, or ``map``). A mapper may keep a
static part where it runs and send it once: with fixed shards the same objects come back
every sweep of a fit."""


@dataclass(frozen=True, eq=False)
class ShardStatic:
    """What one shard needs that does not change from sweep to sweep (with fixed shards).

    Attributes
    ----------
    order : int array of shape (n_s,)
        The shard's tasks, as indices into ``tasks``.
    tasks : tuple of int arrays
        Sparse task counts (:meth:`.SparseTaskCounts.packed`).
    new_score : float array
        Each task's score against an empty cluster, indexed like ``tasks``.
    tables : tuple of arrays, or (cell_prior, total_prior, max_count)
        Packed log-gamma tables, or what builds them where the shard runs (remote workers
        build their own instead of receiving them).

    Examples
    --------
    Task 2 of :func:`clusterednb.examples.inference.gibbs_start` as a shard of its own:

    >>> from clusterednb.examples import inference as toy
    >>> data, _ = toy.gibbs_start()
    >>> static = ShardStatic(np.array([2]), data.tasks.packed(), data.new_score,
    ...                      data.tables.packed())
    >>> static.order.tolist(), len(static.tables)
    ([2], 7)
    """

    order: np.ndarray
    tasks: tuple[np.ndarray, ...]
    new_score: np.ndarray
    tables: tuple


@dataclass(frozen=True)
class ShardJob:
    """What one shard needs for one sweep.

    Attributes
    ----------
    assignment : int array of shape (n,)
        Cluster of each task of the static part's ``tasks`` as an index into the broadcast
        clusters (-1: not placed); only the entries in ``order`` are read, and they are
        overwritten.
    cells, totals, sizes : int arrays of shape (K, C·V), (K, C·F), (K,)
        Statistics of the K occupied clusters over ALL tasks (the shard's included).
    log_gamma : float
    uniforms : float array of shape (n,)
        ``uniforms[u]`` decides task ``u``.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> _, state = toy.gibbs_start()
    >>> job = ShardJob(state.assignment.copy(), state.cluster_cells[:2].copy(),
    ...                state.cluster_totals[:2].copy(), state.sizes[:2].copy(), 0.0,
    ...                np.full(3, 0.5))
    >>> job.sizes.tolist()  # the two broadcast clusters
    [2, 1]
    """

    assignment: np.ndarray
    cells: np.ndarray
    totals: np.ndarray
    sizes: np.ndarray
    log_gamma: float
    uniforms: np.ndarray


@dataclass(frozen=True)
class ShardSweep:
    """What one shard sends back.

    Attributes
    ----------
    assignment : int array of shape (n_s,)
        New cluster of each task in ``order``: ids below K are the broadcast clusters, ids
        ``K + j`` the shard's new clusters.
    delta_cells, delta_totals, delta_sizes : int arrays of shape (K + n_new, C·V), (…, C·F),
        (K + n_new,)
        Change of each cluster's statistics.

    Examples
    --------
    >>> result = ShardSweep(np.array([0]), np.zeros((2, 4), int), np.zeros((2, 2), int),
    ...                     np.array([1, -1]))
    >>> int(result.delta_sizes.sum())  # a move between clusters changes no total
    0
    """

    assignment: np.ndarray
    delta_cells: np.ndarray
    delta_totals: np.ndarray
    delta_sizes: np.ndarray


def sweep_shard(job: ShardJob, static: ShardStatic) -> ShardSweep:
    """Sweep one shard's tasks against the broadcast statistics (see :class:`ShardJob`).

    Examples
    --------
    Task 2, alone in cluster 1, is taken out and drawn again: cluster 0 weighs ``2 · 1/3``, a
    new cluster ``1 · 1/3`` (cluster 1, now empty, nothing), and the uniform 0.5 picks cluster 0:

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> static = ShardStatic(np.array([2]), data.tasks.packed(), data.new_score,
    ...                      data.tables.packed())
    >>> job = ShardJob(state.assignment.copy(), state.cluster_cells[:2].copy(),
    ...                state.cluster_totals[:2].copy(), state.sizes[:2].copy(), 0.0,
    ...                np.full(3, 0.5))
    >>> result = sweep_shard(job, static)
    >>> result.assignment.tolist(), result.delta_sizes.tolist(), result.delta_cells.tolist()
    ([0], [1, -1], [[0, 0, 0, 2], [0, 0, 0, -2]])
    """
    tables = static.tables
    if len(tables) == 3:
        tables = LogGammaTables.build(*tables).packed()
    n_clusters = job.sizes.size
    capacity = n_clusters + min(static.order.size, _NEW_SLOTS)
    state = GibbsState(
        assignment=job.assignment,
        sizes=np.zeros(capacity, dtype=np.int64),
        active=np.arange(capacity),
        position=np.arange(capacity),
        free=np.zeros(capacity, dtype=np.int64),
        counters=np.array([n_clusters, capacity - n_clusters], dtype=np.int64),
        cluster_cells=np.zeros((capacity, job.cells.shape[1]), dtype=np.int64),
        cluster_totals=np.zeros((capacity, job.totals.shape[1]), dtype=np.int64),
        labels=np.zeros(0, dtype=np.int64),
        task_label_counts=np.zeros((0, 0), dtype=np.int64),
        gamma=float(np.exp(job.log_gamma)),
    )
    state.free[: capacity - n_clusters] = np.arange(capacity - 1, n_clusters - 1, -1)
    state.sizes[:n_clusters] = job.sizes
    state.cluster_cells[:n_clusters] = job.cells
    state.cluster_totals[:n_clusters] = job.totals
    state.sweep(static.order, static.new_score, job.log_gamma, job.uniforms, static.tasks, tables)
    cells, totals, sizes = state.cluster_cells, state.cluster_totals, state.sizes
    assignment = job.assignment[static.order]
    used = max(n_clusters, int(assignment.max(initial=-1)) + 1)
    cells, totals, sizes = cells[:used], totals[:used], sizes[:used]
    cells[:n_clusters] -= job.cells
    totals[:n_clusters] -= job.totals
    sizes[:n_clusters] -= job.sizes
    return ShardSweep(assignment, cells, totals, sizes)


@dataclass
class ShardedSweep:
    """The assignment move of :func:`~clusterednb.inference.gibbs.moves.gibbs_step`, sharded.

    Parameters
    ----------
    n_shards : int
    map_shards : callable
        Runs :func:`sweep_shard` on each job (:data:`ShardMap`).
    remote : bool
        Shards run in other processes: each shard's static part carries its tasks' own sparse
        counts and builds its log-gamma tables there, instead of sharing the driver's arrays.
    fixed_shards : bool
        Deal the tasks to shards once per fit (while the tasks' counts stay the same) instead
        of every sweep, so that each shard's static part is the same object every sweep and a
        remote mapper sends it once; only assignments, the clusters' statistics and their
        changes then travel. Still an approximation of the same kind; one shard is exact.

    Examples
    --------
    Two shards, run one after the other (``map``), as the Gibbs sampler's assignment move:

    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.data.synthetic import make_planted_population
    >>> from clusterednb.inference.gibbs.engine import fit_gibbs
    >>> from clusterednb.inference.gibbs.state import GibbsSettings
    >>> population = make_planted_population(
    ...     np.random.default_rng(0), group_sizes=(4, 4), rows_per_task=20)
    >>> frame = population.frame
    >>> fitted = ClusteredNB(inference="bhc").fit(
    ...     frame[population.feature_names], frame["label"], frame["task"])
    >>> no_rows = np.zeros((0, len(population.feature_names)), dtype=np.int64)
    >>> result = fit_gibbs(fitted.observation_, fitted.counts_, no_rows, np.zeros(0, np.int64),
    ...                    1.0, GibbsSettings(n_sweeps=30, burn_in=10),
    ...                    np.random.default_rng(0), sweep=ShardedSweep(2))
    >>> result.partition.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """

    n_shards: int
    map_shards: ShardMap = map
    remote: bool = False
    fixed_shards: bool = False
    _dealt: tuple = field(default=(), init=False, repr=False)

    def __call__(
        self, rng: np.random.Generator, state: GibbsState, data: GibbsData
    ) -> dict[str, int]:
        """One sharded sweep; updates ``state`` in place; returns ``{"cross_shard_merges"}``."""
        n_tasks = data.n_tasks
        active = state.active_slots().copy()
        local_of = np.full(state.sizes.size, -1, dtype=np.int64)
        local_of[active] = np.arange(active.size)
        assignment = np.where(state.assignment >= 0, local_of[state.assignment], -1)
        uniforms = rng.random(n_tasks)
        shards, statics = self._deal(rng, data)
        cells, totals = state.cluster_cells[active], state.cluster_totals[active]
        sizes, log_gamma = state.sizes[active], float(np.log(state.gamma))
        jobs = [
            ShardJob(
                assignment[shard] if self.remote else assignment.copy(),
                cells,
                totals,
                sizes,
                log_gamma,
                uniforms[shard] if self.remote else uniforms,
            )
            for shard in shards
        ]
        results = list(self.map_shards(sweep_shard, jobs, statics))
        births = _merge_results(state, active, shards, results)
        return {"cross_shard_merges": _merge_births(rng, state, data, births)}

    def _deal(
        self, rng: np.random.Generator, data: GibbsData
    ) -> tuple[list[np.ndarray], list[ShardStatic]]:
        """This sweep's shards (sorted task indices) and their static parts."""
        if self.fixed_shards and self._dealt and self._dealt[0] is data.tasks:
            return self._dealt[1], self._dealt[2]
        n_tasks = data.n_tasks
        shards = [
            np.sort(s) for s in np.array_split(rng.permutation(n_tasks), self.n_shards) if s.size
        ]
        statics = [self._static(shard, data) for shard in shards]
        if self.fixed_shards:
            self._dealt = (data.tasks, shards, statics)
        return shards, statics

    def _static(self, shard: np.ndarray, data: GibbsData) -> ShardStatic:
        if not self.remote:
            return ShardStatic(shard, data.tasks.packed(), data.new_score, data.tables.packed())
        max_count = int(data.labelled_label_counts.sum()) + data.unlabelled_X.shape[0]
        return ShardStatic(
            np.arange(shard.size),
            data.tasks.take(shard).packed(),
            data.new_score[shard],
            (data.cell_prior, data.total_prior, max_count),
        )


def _merge_results(
    state: GibbsState,
    active: np.ndarray,
    shards: list[np.ndarray],
    results: list[ShardSweep],
) -> list[tuple[int, int]]:
    """Add the shards' changes to ``state``; return ``(shard, slot)`` of each new cluster."""
    n_clusters = active.size
    for result in results:
        state.cluster_cells[active] += result.delta_cells[:n_clusters]
        state.cluster_totals[active] += result.delta_totals[:n_clusters]
        state.sizes[active] += result.delta_sizes[:n_clusters]
    for slot in active[state.sizes[active] == 0]:
        state.release_slot(int(slot))
    births = []
    for s, (shard, result) in enumerate(zip(shards, results, strict=True)):
        global_slot = np.full(result.delta_sizes.size, -1, dtype=np.int64)
        global_slot[:n_clusters] = active
        for j in np.flatnonzero(result.delta_sizes[n_clusters:] > 0) + n_clusters:
            slot = state.take_free_slot()
            state.cluster_cells[slot] = result.delta_cells[j]
            state.cluster_totals[slot] = result.delta_totals[j]
            state.sizes[slot] = result.delta_sizes[j]
            global_slot[j] = slot
            births.append((s, slot))
        state.assignment[shard] = global_slot[result.assignment]
    return births


def _merge_births(
    rng: np.random.Generator, state: GibbsState, data: GibbsData, births: list[tuple[int, int]]
) -> int:
    """Offer every pair of clusters opened by different shards the choice merged/separate."""
    merged = 0
    for (shard_a, a), (shard_b, b) in itertools.combinations(births, 2):
        if shard_a == shard_b or state.sizes[a] == 0 or state.sizes[b] == 0:
            continue
        log_separate_over_merged = log_split_ratio(
            state.gamma,
            state.sizes[[a, b]],
            state.cluster_cells,
            state.cluster_totals,
            a,
            b,
            data,
        )
        if np.log(rng.random()) < -np.logaddexp(0.0, log_separate_over_merged):
            state.merge_into(b, a)
            merged += 1
    return merged
