"""What the collapsed Gibbs sampler reads and does not change: :class:`GibbsData`.

:class:`SparseTaskCounts` holds every task's non-zero (class, value) cells and (class,
feature) totals, in the smallest integer type that fits; :class:`LogGammaTables` holds
``lgamma(prior + count)`` for the counts a fit can reach. The compiled kernels
(:mod:`.gibbs_kernels`, :mod:`.sweep_kernel`) take both as tuples of arrays (``packed``).
:class:`GibbsData` gathers them with the model and the unlabelled rows;
:func:`.gibbs_state.prepare` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError
from clusterednb.inference.gibbs.kernels import new_cluster_scores
from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import sparse_value_counts
from clusterednb.stats.kernels import csr_task_counts

_TABLE_ENTRIES = 1 << 24  # cap on the size of each lgamma look-up table


@dataclass
class SparseTaskCounts:
    """Non-zero value cells and feature totals of each task, in CSR form.

    ``cell_key`` indexes ``c * V + v``; ``total_key`` indexes ``c * F + f``.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> tasks = toy.gibbs_start()[0].tasks  # three tasks, one cell each
    >>> tasks.cell_ptr.tolist(), tasks.cell_count.tolist()
    ([0, 1, 2, 3], [2, 2, 2])
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
        """The counts of ``tasks`` (int array of shape (n,)), renumbered ``0 .. n-1``.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> tasks = toy.gibbs_start()[0].tasks
        >>> part = tasks.take(np.array([2, 0]))
        >>> part.cell_ptr.tolist(), part.cell_key.tolist()  # task 2 (yes·blue), then task 0
        ([0, 1, 2], [3, 0])
        """
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
        """The ``tasks`` tuple the kernels take (see :mod:`.gibbs_kernels`).

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> tasks = toy.gibbs_start()[0].tasks
        >>> len(tasks.packed()), tasks.packed()[1] is tasks.cell_key
        (6, True)
        """
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
    """``lgamma(base + count)`` tables, one row per distinct prior value.

    Examples
    --------
    >>> tables = LogGammaTables.build(np.array([1.0, 0.5, 1.0]), np.array([2.0]), 2)
    >>> tables.cell_base.tolist(), tables.cell_row.tolist()  # two distinct priors
    ([0.5, 1.0], [1, 0, 1])
    """

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
        """The ``tables`` tuple the kernels take (see :mod:`.gibbs_kernels`).

        Examples
        --------
        >>> tables = LogGammaTables.build(np.ones(4), np.full(2, 2.0), 3)
        >>> len(tables.packed()), tables.packed()[-1] is tables.cell_log
        (7, True)
        """
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
    """Everything a step reads but does not change (except the rebuilt task counts).

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, _ = toy.gibbs_start()
    >>> data.tasks.cell_key.tolist()  # task 0: (no, red); task 1: the same; task 2: (yes, blue)
    [0, 0, 3]
    >>> data.new_score.round(4).tolist()  # log P(a task's rows alone) = log(1/3) each
    [-1.0986, -1.0986, -1.0986]
    """

    model: ConjugateModel
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
        """How many tasks (users) the sampler places.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> toy.gibbs_start()[0].n_tasks
        3
        """
        return int(self.labelled_label_counts.shape[0])

    @property
    def all_tasks(self) -> np.ndarray:
        """Every task in index order (the visiting order of a sequential sweep).

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> toy.gibbs_start()[0].all_tasks.tolist()
        [0, 1, 2]
        """
        return np.arange(self.n_tasks, dtype=np.int64)

    def refresh(self, labels: np.ndarray) -> np.ndarray:
        """Rebuild the tasks' counts with the unlabelled rows at ``labels``; return label counts.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> data, _ = toy.gibbs_start()  # no unlabelled rows: the labelled counts come back
        >>> data.refresh(np.zeros(0, dtype=np.int64)).tolist()
        [[2, 0], [2, 0], [0, 2]]
        """
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
