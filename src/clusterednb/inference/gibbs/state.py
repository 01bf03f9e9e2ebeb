"""The collapsed Gibbs sampler's data and state: what a fit reads, what its moves change.

:class:`GibbsData` holds what does not change during a fit (each task's non-zero counts and
the look-up tables of ``log Γ`` from :mod:`.gibbs_tables`); :class:`GibbsState` what the
moves change (assignments, cluster statistics, free cluster slots). :func:`prepare` and
:func:`initial_state` build them; :func:`feature_log_ml` is the state's feature log marginal
likelihood.

Examples
--------
The three tasks of :func:`clusterednb.examples.models.three_task_counts`, tasks 0 and 1 together:

>>> from clusterednb.examples import inference as toy
>>> data, state = toy.gibbs_start()
>>> state.assignment.tolist(), state.sizes[state.active_slots()].tolist()
([0, 0, 1], [2, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from clusterednb.inference.gibbs.data import GibbsData, LogGammaTables
from clusterednb.inference.gibbs.kernels import merged_log_ml
from clusterednb.inference.gibbs.sweep_kernel import sweep_assignments
from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts
from clusterednb.stats.special import segment_sum

_INITIAL_SLOTS = 64  # cluster slots of a new state (more are added as needed)


@dataclass(frozen=True)
class GibbsSettings:
    """Sampler settings (see :class:`clusterednb.ClusteredNB` for their meaning).

    Examples
    --------
    >>> settings = GibbsSettings(n_sweeps=20, burn_in=5)
    >>> (settings.n_sweeps - settings.burn_in) // settings.thin  # sweeps kept
    15
    """

    n_sweeps: int = 200
    burn_in: int = 50
    thin: int = 1
    sample_gamma: bool = False
    gamma_prior: tuple[float, float] = (1.0, 1.0)
    split_merge_moves: int = 3
    progress: bool = False
    n_jobs: int = 1


@dataclass
class GibbsState:
    """The sampler's state; :func:`gibbs_step` updates it in place and returns it.

    Cluster slots number ``K`` (the capacity), not one per task: :meth:`grow` adds slots when
    the free ones run out, so memory follows the number of clusters.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> _, state = toy.gibbs_start()
    >>> state.cluster_cells[:2].tolist()  # (class, value) cells: no·red, no·blue, yes·red, yes·blue
    [[4, 0, 0, 0], [0, 0, 0, 2]]
    """

    assignment: np.ndarray  # (U,) cluster slot of each task, -1 = not yet placed
    sizes: np.ndarray  # (K,)
    active: np.ndarray  # (K,) occupied slots in active[:counters[0]]
    position: np.ndarray  # (K,) index of a slot in active
    free: np.ndarray  # (K,) empty slots in free[:counters[1]]
    counters: np.ndarray  # (2,) [n_active, n_free]
    cluster_cells: np.ndarray  # (K, C * V)
    cluster_totals: np.ndarray  # (K, C * F)
    labels: np.ndarray  # (R,) current labels of the unlabelled rows
    task_label_counts: np.ndarray  # (U, C) including the unlabelled rows' current labels
    gamma: float

    def kernel_state(self) -> tuple[np.ndarray, ...]:
        """The ``state`` tuple of :func:`.gibbs_kernels.sweep_assignments` (views, not copies).

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> _, state = toy.gibbs_start()
        >>> state.kernel_state()[0] is state.assignment
        True
        """
        return (self.assignment, self.sizes, self.active, self.position, self.free, self.counters)

    @property
    def n_clusters(self) -> int:
        """How many clusters hold at least one task.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> toy.gibbs_start()[1].n_clusters
        2
        """
        return int(self.counters[0])

    def active_slots(self) -> np.ndarray:
        """The slots of the occupied clusters, shape (n_clusters,), in no particular order.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> sorted(toy.gibbs_start()[1].active_slots().tolist())
        [0, 1]
        """
        return self.active[: self.counters[0]]

    @property
    def capacity(self) -> int:
        """How many cluster slots the arrays hold, occupied or free.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> toy.gibbs_start()[1].capacity  # at most one slot per task to start with
        3
        """
        return int(self.sizes.size)

    def grow(self) -> None:
        """Double the cluster slots (at most one per task); the new slots are free.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> _, state = toy.gibbs_start()
        >>> state.grow()
        >>> state.capacity, state.n_clusters, state.cluster_cells.shape
        (4, 2, (4, 4))
        """
        old = self.capacity
        new = max(min(2 * old, self.assignment.size), old + 1)
        n_free = int(self.counters[1])
        free = np.zeros(new, dtype=np.int64)
        free[: new - old] = np.arange(new - 1, old - 1, -1)
        free[new - old : new - old + n_free] = self.free[:n_free]
        self.free = free
        self.counters[1] = n_free + new - old
        for name in ("sizes", "active", "position", "cluster_cells", "cluster_totals"):
            array = getattr(self, name)
            bigger = np.zeros((new, *array.shape[1:]), dtype=array.dtype)
            bigger[:old] = array
            setattr(self, name, bigger)

    def sweep(
        self,
        order: np.ndarray,
        new_score: np.ndarray,
        log_gamma: float,
        uniforms: np.ndarray,
        tasks: tuple[np.ndarray, ...],
        tables: tuple[np.ndarray, ...],
        temperature: float = 1.0,
    ) -> None:
        """One compiled sweep (:func:`.sweep_kernel.sweep_assignments`, same arguments) over
        the tasks in ``order``, adding slots whenever the kernel stops for want of one.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> data, state = toy.gibbs_start()
        >>> uniforms = np.random.default_rng(0).random(data.n_tasks)
        >>> state.sweep(data.all_tasks, data.new_score, 0.0, uniforms, data.tasks.packed(),
        ...             data.tables.packed())
        >>> int(state.sizes.sum()), state.cluster_cells.sum(axis=0).tolist()  # nothing lost
        (3, [4, 0, 0, 2])
        """
        done = 0
        while done < order.size:
            done += sweep_assignments(
                self.kernel_state(),
                order[done:],
                new_score,
                log_gamma,
                uniforms,
                tasks,
                self.cluster_cells,
                self.cluster_totals,
                tables,
                temperature,
            )
            if done < order.size:
                self.grow()

    def take_free_slot(self) -> int:
        """Open an empty cluster in a free slot (growing the slots if none is free); return it.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> _, state = toy.gibbs_start()
        >>> state.take_free_slot(), state.n_clusters
        (2, 3)
        """
        if self.counters[1] == 0:
            self.grow()
        self.counters[1] -= 1
        slot = int(self.free[self.counters[1]])
        self.active[self.counters[0]] = slot
        self.position[slot] = self.counters[0]
        self.counters[0] += 1
        return slot

    def merge_into(self, source: int, target: int) -> None:
        """Move every task of cluster ``source`` to cluster ``target`` and free ``source``.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> _, state = toy.gibbs_start()
        >>> state.merge_into(1, 0)
        >>> state.assignment.tolist(), state.cluster_cells[0].tolist(), state.n_clusters
        ([0, 0, 0], [4, 0, 0, 2], 1)
        """
        self.assignment[self.assignment == source] = target
        self.cluster_cells[target] += self.cluster_cells[source]
        self.cluster_totals[target] += self.cluster_totals[source]
        self.sizes[target] += self.sizes[source]
        self.cluster_cells[source] = 0
        self.cluster_totals[source] = 0
        self.sizes[source] = 0
        self.release_slot(source)

    def release_slot(self, slot: int) -> None:
        """Mark the (emptied) cluster ``slot`` free; the occupied slots stay packed.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> _, state = toy.gibbs_start()
        >>> state.release_slot(0)
        >>> state.active_slots().tolist(), int(state.counters[1])  # one more free slot
        ([1], 2)
        """
        last = self.active[self.counters[0] - 1]
        self.active[self.position[slot]] = last
        self.position[last] = self.position[slot]
        self.counters[0] -= 1
        self.free[self.counters[1]] = slot
        self.counters[1] += 1


def prepare(
    model: ConjugateModel,
    counts: Counts | SparseCounts,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
) -> GibbsData:
    """Sampler inputs from per-task labelled counts and the unlabelled rows (codes of shape
    (R, n_features) and their tasks, (R,)).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> data = prepare(toy.colour_model(), toy.three_task_counts(), np.zeros((0, 1), int),
    ...                np.zeros(0, int))
    >>> data.labelled_cells.toarray().tolist()
    [[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]]
    """
    cells = counts.flat_cells()  # dense Counts or SparseCounts alike
    return prepare_sparse(model, cells, counts.label_counts, unlabelled_X, unlabelled_task)


def prepare_sparse(
    model: ConjugateModel,
    cells: sparse.csr_matrix,
    label_counts: np.ndarray,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
) -> GibbsData:
    """:func:`prepare` from sparse value counts of shape (n_tasks, n_classes * n_values_total)
    (``counts.value_counts[u].ravel()`` in row ``u``) and label counts (n_tasks, n_classes):
    nothing dense per task but the label counts.

    Examples
    --------
    >>> from scipy import sparse
    >>> from clusterednb.examples import models as toy
    >>> cells = sparse.csr_matrix([[2, 0, 0, 0], [0, 0, 0, 2]])
    >>> data = prepare_sparse(toy.colour_model(), cells, [[2, 0], [0, 2]], np.zeros((0, 1), int),
    ...                       np.zeros(0, int))
    >>> data.n_tasks, data.cell_prior.tolist(), data.total_prior.tolist()  # β; Σ_v β per feature
    (2, [1.0, 1.0, 1.0, 1.0], [2.0, 2.0])
    """
    schema = model.schema
    cell_prior = model.beta.ravel()
    total_prior = segment_sum(model.beta, schema.offsets).ravel()
    label_counts = np.asarray(label_counts, dtype=np.int64)
    max_count = int(label_counts.sum()) + unlabelled_X.shape[0]
    return GibbsData(
        model=model,
        labelled_cells=sparse.csr_matrix(cells),
        labelled_label_counts=label_counts,
        unlabelled_X=np.ascontiguousarray(unlabelled_X, dtype=np.int64),
        unlabelled_task=np.ascontiguousarray(unlabelled_task, dtype=np.int64),
        cell_prior=cell_prior,
        total_prior=total_prior,
        tables=LogGammaTables.build(cell_prior, total_prior, max_count),
    )


def initial_state(
    rng: np.random.Generator, data: GibbsData, gamma: float, assignment: np.ndarray | None = None
) -> GibbsState:
    """A state with unlabelled rows' labels drawn uniformly and tasks placed per ``assignment``.

    Tasks with ``assignment == -1`` (all of them by default) are placed by the first sweep.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, _ = toy.gibbs_start()
    >>> rng = np.random.default_rng(0)
    >>> initial_state(rng, data, 1.0).n_clusters  # nothing placed yet
    0
    >>> initial_state(rng, data, 1.0, np.array([5, -1, 5])).sizes.tolist()
    [2, 0, 0]
    """
    schema = data.model.schema
    n_tasks = data.n_tasks
    labels = rng.integers(0, schema.n_classes, size=data.unlabelled_X.shape[0]).astype(np.int64)
    label_counts = data.refresh(labels)
    n_start = 0 if assignment is None else np.unique(assignment[assignment >= 0]).size
    capacity = min(n_tasks, max(_INITIAL_SLOTS, 2 * n_start))
    state = GibbsState(
        assignment=np.full(n_tasks, -1, dtype=np.int64),
        sizes=np.zeros(capacity, dtype=np.int64),
        active=np.zeros(capacity, dtype=np.int64),
        position=np.zeros(capacity, dtype=np.int64),
        free=np.arange(capacity, dtype=np.int64)[::-1].copy(),
        counters=np.array([0, capacity], dtype=np.int64),
        cluster_cells=np.zeros((capacity, schema.n_classes * schema.n_values_total), np.int64),
        cluster_totals=np.zeros((capacity, schema.n_classes * schema.n_features), np.int64),
        labels=labels,
        task_label_counts=label_counts,
        gamma=float(gamma),
    )
    if assignment is not None:
        slot_of_label: dict[int, int] = {}
        for task, label in enumerate(assignment):
            if label < 0:
                continue
            if label not in slot_of_label:
                slot_of_label[label] = state.take_free_slot()
            _move(state, data, task, slot_of_label[label], +1)
    return state


def _move(state: GibbsState, data: GibbsData, task: int, slot: int, sign: int) -> None:
    t = data.tasks
    cells = slice(t.cell_ptr[task], t.cell_ptr[task + 1])
    totals = slice(t.total_ptr[task], t.total_ptr[task + 1])
    state.cluster_cells[slot, t.cell_key[cells]] += sign * t.cell_count[cells]
    state.cluster_totals[slot, t.total_key[totals]] += sign * t.total_count[totals]
    state.sizes[slot] += sign
    state.assignment[task] = slot if sign > 0 else -1


def feature_log_ml(state: GibbsState, data: GibbsData) -> float:
    """``Σ_k Σ_{y,f} log DM(N[k, y, f]; β)`` over the occupied clusters of ``state``.

    Examples
    --------
    With ``β = 1``: cluster {0, 1} saw red four times under "no", ``log(4! 1! / 5!) =
    log(1/5)``; cluster {2} blue twice under "yes", ``log(2! 1! / 3!) = log(1/3)``:

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> bool(np.isclose(feature_log_ml(state, data), np.log(1 / 15)))
    True
    """
    tables = data.tables.packed()
    return float(
        sum(
            merged_log_ml(state.cluster_cells, state.cluster_totals, int(slot), -1, tables)
            for slot in state.active_slots()
        )
    )
