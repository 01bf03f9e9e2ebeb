"""The collapsed Gibbs sampler's data and state: sparse task counts, lgamma tables, clusters.

:class:`GibbsData` holds what does not change during a fit (each task's non-zero counts,
look-up tables of ``log Γ``); :class:`GibbsState` what the moves change (assignments,
cluster statistics, free cluster slots). :func:`prepare` and :func:`initial_state` build
them; :func:`feature_log_ml` is the state's feature log marginal likelihood.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError
from clusterednb.inference.gibbs_kernels import merged_log_ml, new_cluster_scores
from clusterednb.inference.sweep_kernel import sweep_assignments
from clusterednb.kernels import csr_task_counts
from clusterednb.observation import DirichletNB
from clusterednb.special import segment_sum
from clusterednb.stats import Counts, sparse_value_counts

_TABLE_ENTRIES = 1 << 24  # cap on the size of each lgamma look-up table
_INITIAL_SLOTS = 64  # cluster slots of a new state (more are added as needed)


@dataclass(frozen=True)
class GibbsSettings:
    """Sampler settings (see :class:`clusterednb.ClusteredNB` for their meaning)."""

    n_sweeps: int = 200
    burn_in: int = 50
    thin: int = 1
    sample_gamma: bool = False
    gamma_prior: tuple[float, float] = (1.0, 1.0)
    split_merge_moves: int = 3
    progress: bool = False
    n_jobs: int = 1


@dataclass
class SparseTaskCounts:
    """Non-zero value cells and feature totals of each task, in CSR form.

    ``cell_key`` indexes ``c * V + v``; ``total_key`` indexes ``c * F + f``.
    """

    cell_ptr: np.ndarray
    cell_key: np.ndarray
    cell_count: np.ndarray
    total_ptr: np.ndarray
    total_key: np.ndarray
    total_count: np.ndarray

    @classmethod
    def from_csr(cls, cells: sparse.csr_matrix, schema: FeatureSchema) -> SparseTaskCounts:
        """From value counts of shape (n_tasks, n_classes * n_values_total), sparse, with
        non-negative integer entries; the feature totals are summed from them. Keys and
        counts take the smallest integer type that holds every key and every task's largest
        total (int16 for most data: a quarter of the memory of int64).

        Examples
        --------
        Two tasks; features ``a`` (2 values) and ``b`` (3), two classes, so 10 cells:

        >>> from clusterednb import FeatureSchema
        >>> schema = FeatureSchema(("a", "b"), ((0, 1), (0, 1, 2)), ("no", "yes"))
        >>> cells = sparse.csr_matrix([[2, 0, 1, 1, 0, 0, 0, 0, 0, 0],
        ...                            [0, 0, 0, 0, 0, 0, 1, 1, 0, 0]])
        >>> counts = SparseTaskCounts.from_csr(cells, schema)
        >>> counts.cell_key.tolist(), counts.cell_count.tolist()
        ([0, 2, 3, 6, 7], [2, 1, 1, 1, 1])
        >>> counts.total_key.tolist(), counts.total_count.tolist()  # (class, feature) totals
        ([0, 1, 2, 3], [2, 2, 1, 1])
        """
        cells = sparse.csr_matrix(cells)
        n_features = schema.n_features
        feature = np.repeat(np.arange(n_features), np.diff(schema.offsets))
        total_of_key = (np.arange(schema.n_classes)[:, None] * n_features + feature).ravel()
        largest = max(cells.shape[1], int(np.asarray(cells.sum(axis=1)).max(initial=0)))
        dtype = next(t for t in (np.int16, np.int32, np.int64) if largest < np.iinfo(t).max)
        try:
            parts = csr_task_counts(
                cells.indptr.astype(np.int64),
                cells.indices,
                cells.data,
                total_of_key,
                schema.n_classes * n_features,
                dtype,
            )
        except ValueError as error:
            raise DataError(str(error)) from None
        return cls(*parts)

    def take(self, tasks: np.ndarray) -> SparseTaskCounts:
        """The counts of ``tasks`` (int array of shape (n,)), renumbered ``0 .. n-1``."""
        parts: list[np.ndarray] = []
        for ptr, key, count in (
            (self.cell_ptr, self.cell_key, self.cell_count),
            (self.total_ptr, self.total_key, self.total_count),
        ):
            lengths = ptr[tasks + 1] - ptr[tasks]
            starts = np.repeat(ptr[tasks] - np.cumsum(lengths) + lengths, lengths)
            entries = starts + np.arange(lengths.sum())
            parts += [np.concatenate([[0], np.cumsum(lengths)]), key[entries], count[entries]]
        return SparseTaskCounts(*parts)

    def packed(self) -> tuple[np.ndarray, ...]:
        """The ``tasks`` tuple the kernels take (see :mod:`.gibbs_kernels`)."""
        return (
            self.cell_ptr,
            self.cell_key,
            self.cell_count,
            self.total_ptr,
            self.total_key,
            self.total_count,
        )


@dataclass
class LogGammaTables:
    """``lgamma(base + count)`` tables, one row per distinct prior value."""

    cell_row: np.ndarray
    cell_table: np.ndarray
    cell_base: np.ndarray
    total_row: np.ndarray
    total_table: np.ndarray
    total_base: np.ndarray
    cell_log: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        # log(b + N) = lgamma(b + N + 1) − lgamma(b + N), computed directly (no cancellation).
        width = self.cell_table.shape[1] - 1
        self.cell_log = np.log(self.cell_base[:, None] + np.arange(width))

    @classmethod
    def build(
        cls, cell_prior: np.ndarray, total_prior: np.ndarray, max_count: int
    ) -> LogGammaTables:
        """Tables for counts ``0 .. max_count`` (capped; larger counts call lgamma).

        Examples
        --------
        >>> tables = LogGammaTables.build(np.ones(4), np.full(2, 2.0), 3)
        >>> tables.cell_table.round(4).tolist()  # lgamma(1 + n), n = 0 .. 3
        [[0.0, 0.0, 0.6931, 1.7918]]
        >>> tables.cell_log.round(4).tolist()  # log(1 + n), n = 0 .. 2
        [[0.0, 0.6931, 1.0986]]
        """
        parts = []
        for prior in (cell_prior, total_prior):
            base, row = np.unique(prior, return_inverse=True)
            length = int(min(max_count + 1, max(_TABLE_ENTRIES // base.size, 1)))
            parts += [row.astype(np.int64), gammaln(base[:, None] + np.arange(length)), base]
        return cls(*parts)

    def packed(self) -> tuple[np.ndarray, ...]:
        """The ``tables`` tuple the kernels take (see :mod:`.gibbs_kernels`)."""
        return (
            self.cell_row,
            self.cell_table,
            self.cell_base,
            self.total_row,
            self.total_table,
            self.total_base,
            self.cell_log,
        )


@dataclass
class GibbsData:
    """Everything a step reads but does not change (except the rebuilt task counts)."""

    model: DirichletNB
    labelled_cells: sparse.csr_matrix  # (U, C * V) value counts of the labelled rows
    labelled_label_counts: np.ndarray  # (U, C)
    unlabelled_X: np.ndarray  # (R, F) codes
    unlabelled_task: np.ndarray  # (R,)
    cell_prior: np.ndarray  # (C * V,)
    total_prior: np.ndarray  # (C * F,)
    tables: LogGammaTables
    tasks: SparseTaskCounts = field(init=False)
    new_score: np.ndarray = field(init=False)

    @property
    def n_tasks(self) -> int:
        return int(self.labelled_label_counts.shape[0])

    @property
    def all_tasks(self) -> np.ndarray:
        """Every task in index order (the visiting order of a sequential sweep)."""
        return np.arange(self.n_tasks, dtype=np.int64)

    def refresh(self, labels: np.ndarray) -> np.ndarray:
        """Rebuild the tasks' counts with the unlabelled rows at ``labels``; return label counts."""
        schema = self.model.schema
        cells, label_counts = self.labelled_cells, self.labelled_label_counts.copy()
        if labels.size:
            cells = cells + sparse_value_counts(
                self.unlabelled_X, labels, self.unlabelled_task, self.n_tasks, schema
            )
            np.add.at(label_counts, (self.unlabelled_task, labels), 1)
        self.tasks = SparseTaskCounts.from_csr(cells, schema)
        self.new_score = new_cluster_scores(self.tasks.packed(), self.tables.packed())
        return label_counts


@dataclass
class GibbsState:
    """The sampler's state; :func:`gibbs_step` updates it in place and returns it.

    Cluster slots number ``K`` (the capacity), not one per task: :meth:`grow` adds slots when
    the free ones run out, so memory follows the number of clusters.
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
        """The ``state`` tuple of :func:`.gibbs_kernels.sweep_assignments` (views, not copies)."""
        return (self.assignment, self.sizes, self.active, self.position, self.free, self.counters)

    @property
    def n_clusters(self) -> int:
        return int(self.counters[0])

    def active_slots(self) -> np.ndarray:
        return self.active[: self.counters[0]]

    @property
    def capacity(self) -> int:
        return int(self.sizes.size)

    def grow(self) -> None:
        """Double the cluster slots (at most one per task); the new slots are free."""
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
        the tasks in ``order``, adding slots whenever the kernel stops for want of one."""
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
        if self.counters[1] == 0:
            self.grow()
        self.counters[1] -= 1
        slot = int(self.free[self.counters[1]])
        self.active[self.counters[0]] = slot
        self.position[slot] = self.counters[0]
        self.counters[0] += 1
        return slot

    def merge_into(self, source: int, target: int) -> None:
        """Move every task of cluster ``source`` to cluster ``target`` and free ``source``."""
        self.assignment[self.assignment == source] = target
        self.cluster_cells[target] += self.cluster_cells[source]
        self.cluster_totals[target] += self.cluster_totals[source]
        self.sizes[target] += self.sizes[source]
        self.cluster_cells[source] = 0
        self.cluster_totals[source] = 0
        self.sizes[source] = 0
        self.release_slot(source)

    def release_slot(self, slot: int) -> None:
        last = self.active[self.counters[0] - 1]
        self.active[self.position[slot]] = last
        self.position[last] = self.position[slot]
        self.counters[0] -= 1
        self.free[self.counters[1]] = slot
        self.counters[1] += 1


def prepare(
    model: DirichletNB, counts: Counts, unlabelled_X: np.ndarray, unlabelled_task: np.ndarray
) -> GibbsData:
    """Sampler inputs from per-task labelled counts and the unlabelled rows."""
    n_tasks = counts.n_groups
    cells = sparse.csr_matrix(counts.value_counts.reshape(n_tasks, -1))
    return prepare_sparse(model, cells, counts.label_counts, unlabelled_X, unlabelled_task)


def prepare_sparse(
    model: DirichletNB,
    cells: sparse.csr_matrix,
    label_counts: np.ndarray,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
) -> GibbsData:
    """:func:`prepare` from sparse value counts of shape (n_tasks, n_classes * n_values_total)
    (``counts.value_counts[u].ravel()`` in row ``u``) and label counts (n_tasks, n_classes):
    nothing dense per task but the label counts."""
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
    """``Σ_k Σ_{y,f} log DM(N[k, y, f]; β)`` over the occupied clusters of ``state``."""
    tables = data.tables.packed()
    return float(
        sum(
            merged_log_ml(state.cluster_cells, state.cluster_totals, int(slot), -1, tables)
            for slot in state.active_slots()
        )
    )
