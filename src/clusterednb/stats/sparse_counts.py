"""Per-task counts kept sparse: what a fit over millions of tasks holds instead of a dense
(n_tasks, n_classes, n_values_total) array.

A task has ``n_rows × n_features`` non-zero cells at most (a user with 10 rows of 15 features
has ~83 of 210 in the planted benchmark), so the sparse table is a small multiple of the
rows, where the dense one grows with ``n_tasks × n_classes × n_values_total``: 1.7 GB at a
million tasks of 105 values. :class:`SparseCounts` offers what an estimator needs of
:class:`~clusterednb.stats.counts.Counts` — adding chunks, growing the schema, new tasks, a few
tasks'
or clusters' dense counts, and the flat cells the Gibbs and variational engines read — and
nothing that would densify every task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError
from clusterednb.stats.counts import Counts, sparse_value_counts


@dataclass(frozen=True)
class SparseCounts:
    """Label counts (dense) and value counts (sparse rows, class-major flat cells) per group.

    Attributes
    ----------
    label_counts : ndarray of shape (n_groups, n_classes), int64
    cells : scipy.sparse.csr_matrix of shape (n_groups, n_classes * n_values_total), int64
        Row ``g`` holds ``Counts.value_counts[g].ravel()``: entry ``c * V + v`` counts group
        ``g``'s rows of class ``c`` with flat value ``v``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> dense = toy.three_task_counts()
    >>> kept = SparseCounts.from_dense(dense)
    >>> kept.n_groups, kept.cells.nnz, kept.n_values_total
    (3, 3, 2)
    >>> bool((kept.take([2, 0]).value_counts == dense.take([2, 0]).value_counts).all())
    True
    """

    label_counts: np.ndarray
    cells: sparse.csr_matrix

    def __post_init__(self) -> None:
        labels, cells = self.label_counts, self.cells
        if labels.ndim != 2 or cells.shape[0] != labels.shape[0] or labels.shape[1] == 0:
            raise DataError(
                f"inconsistent count shapes: labels {labels.shape}, cells {cells.shape}"
            )
        if cells.shape[1] % labels.shape[1]:
            raise DataError(
                f"{cells.shape[1]} cells per group do not split into {labels.shape[1]} classes"
            )

    @classmethod
    def from_codes(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        task_index: np.ndarray,
        n_tasks: int,
        schema: FeatureSchema,
    ) -> SparseCounts:
        """Count labelled rows per task without a dense per-task array.

        Parameters
        ----------
        X : int ndarray of shape (n_rows, n_features)
            Category codes, -1 for missing (not counted).
        y : int ndarray of shape (n_rows,)
            Class codes; -1 marks an unlabelled row (not counted).
        task_index : int ndarray of shape (n_rows,)
        n_tasks : int
        schema : FeatureSchema

        Examples
        --------
        The same numbers as :meth:`Counts.from_codes`:

        >>> from clusterednb import FeatureSchema
        >>> schema = FeatureSchema(("a",), ((0, 1),), ("no", "yes"))
        >>> X, y, task = np.array([[0], [1], [1]]), np.array([1, 0, -1]), np.array([0, 0, 1])
        >>> kept = SparseCounts.from_codes(X, y, task, 2, schema)
        >>> dense = Counts.from_codes(X, y, task, n_tasks=2, n_classes=2, offsets=schema.offsets)
        >>> same = bool((kept.dense().value_counts == dense.value_counts).all())
        >>> same, kept.label_counts.tolist()
        (True, [[1, 1], [0, 0]])
        """
        y = np.asarray(y, dtype=np.int64)
        task_index = np.asarray(task_index, dtype=np.int64)
        labelled = y >= 0
        n_classes = schema.n_classes
        flat = np.bincount(
            task_index[labelled] * n_classes + y[labelled], minlength=n_tasks * n_classes
        )
        return cls(
            flat.reshape(n_tasks, n_classes).astype(np.int64),
            sparse_value_counts(X, y, task_index, n_tasks, schema),
        )

    @classmethod
    def from_dense(cls, counts: Counts) -> SparseCounts:
        """The same counts, kept sparse.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).cells.toarray().tolist()
        [[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]]
        """
        return cls(np.asarray(counts.label_counts, dtype=np.int64), counts.flat_cells())

    @property
    def n_groups(self) -> int:
        """Number of groups (tasks).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).n_groups
        3
        """
        return int(self.label_counts.shape[0])

    @property
    def n_values_total(self) -> int:
        """Length of the flat value axis.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).n_values_total
        2
        """
        return self.cells.shape[1] // self.label_counts.shape[1]

    def flat_cells(self) -> sparse.csr_matrix:
        """The value counts as sparse rows of shape (n_groups, n_classes * n_values_total).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).flat_cells().shape
        (3, 4)
        """
        return self.cells

    def dense(self) -> Counts:
        """All groups' counts as a dense :class:`~clusterednb.stats.counts.Counts` (small data
        only).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).dense().value_counts.shape
        (3, 2, 2)
        """
        shape = (self.n_groups, self.label_counts.shape[1], self.n_values_total)
        return Counts(self.label_counts.copy(), self.cells.toarray().reshape(shape))

    def take(self, index: np.ndarray | list[int]) -> Counts:
        """The groups at ``index``, in that order, as dense counts.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).take([2]).label_counts.tolist()
        [[0, 2]]
        """
        index = np.asarray(index, dtype=np.int64)
        chosen = SparseCounts(self.label_counts[index], self.cells[index])
        return chosen.dense()

    def total(self, index: np.ndarray | list[int] | None = None) -> Counts:
        """Sum over the groups at ``index`` (default all) as one dense group.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).total().label_counts.tolist()
        [[4, 2]]
        """
        if index is None:
            index = np.arange(self.n_groups)
        return self.group_by(np.zeros(len(index), dtype=np.int64), 1, np.asarray(index))

    def group_by(
        self, assignment: np.ndarray, n_blocks: int, members: np.ndarray | None = None
    ) -> Counts:
        """Sum groups into ``n_blocks`` dense blocks: block ``k`` gets every group ``g`` with
        ``assignment[g] == k`` (``members``: the groups ``assignment`` speaks of, default all).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> kept = SparseCounts.from_dense(toy.three_task_counts())
        >>> kept.group_by(np.array([0, 0, 1]), 2).value_counts[:, 0].tolist()  # class 0 rows
        [[4, 0], [0, 0]]
        """
        members = np.arange(self.n_groups) if members is None else members
        assignment = np.asarray(assignment, dtype=np.int64)
        block = sparse.csr_matrix(
            (np.ones(members.size, dtype=np.int64), (assignment, members)),
            shape=(n_blocks, self.n_groups),
        )
        n_classes = self.label_counts.shape[1]
        values = (block @ self.cells).toarray().reshape(n_blocks, n_classes, self.n_values_total)
        return Counts(block @ self.label_counts, values)

    def remap(
        self, n_classes: int, n_values_total: int, class_map: np.ndarray, value_map: np.ndarray
    ) -> SparseCounts:
        """Move counts onto a larger class / value axis (after a schema grew), as
        :meth:`clusterednb.stats.counts.Counts.remap` does.

        Examples
        --------
        >>> kept = SparseCounts(np.array([[2, 1]]), sparse.csr_matrix([[1, 1, 0, 1]]))
        >>> moved = kept.remap(3, 3, class_map=np.array([0, 1]), value_map=np.array([0, 2]))
        >>> moved.cells.toarray().tolist()
        [[1, 0, 1, 0, 0, 1, 0, 0, 0]]
        """
        old_values = self.n_values_total
        label_counts = np.zeros((self.n_groups, n_classes), dtype=np.int64)
        label_counts[:, class_map] = self.label_counts
        coo = self.cells.tocoo()
        old_class, old_value = np.divmod(coo.col, old_values)
        columns = class_map[old_class] * n_values_total + value_map[old_value]
        cells = sparse.csr_matrix(
            (coo.data, (coo.row, columns)), shape=(self.n_groups, n_classes * n_values_total)
        )
        return SparseCounts(label_counts, cells)

    def pad_groups(self, n_groups: int) -> SparseCounts:
        """Append empty groups up to ``n_groups``.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> SparseCounts.from_dense(toy.three_task_counts()).pad_groups(5).n_groups
        5
        """
        extra = n_groups - self.n_groups
        if extra <= 0:
            return self
        labels = np.concatenate([self.label_counts, np.zeros((extra, self.label_counts.shape[1]))])
        cells = sparse.vstack([self.cells, sparse.csr_matrix((extra, self.cells.shape[1]))])
        return SparseCounts(labels.astype(np.int64), sparse.csr_matrix(cells, dtype=np.int64))

    def add_at(self, position: np.ndarray, other: Counts | SparseCounts) -> SparseCounts:
        """Add ``other``'s group ``i`` to group ``position[i]`` (positions distinct).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> kept = SparseCounts.from_dense(toy.three_task_counts())
        >>> more = toy.three_task_counts().take([0])
        >>> kept.add_at(np.array([2]), more).label_counts.tolist()
        [[2, 0], [2, 0], [2, 2]]
        """
        position = np.asarray(position, dtype=np.int64)
        scatter = sparse.csr_matrix(
            (np.ones(position.size, dtype=np.int64), (position, np.arange(position.size))),
            shape=(self.n_groups, position.size),
        )
        label_counts = self.label_counts.copy()
        label_counts[position] += other.label_counts
        cells = self.cells + scatter @ other.flat_cells()
        return SparseCounts(label_counts, sparse.csr_matrix(cells, dtype=np.int64))


def as_sparse(counts: Counts | SparseCounts) -> SparseCounts:
    """``counts`` kept sparse (unchanged when it is already).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> kept = as_sparse(toy.three_task_counts())
    >>> as_sparse(kept) is kept
    True
    """
    return counts if isinstance(counts, SparseCounts) else SparseCounts.from_dense(counts)
