"""Additive count statistics of labelled rows, per task (or per cluster of tasks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError
from clusterednb.stats.kernels import count_rows, count_rows_sparse


@dataclass(frozen=True)
class Counts:
    """Label and value counts over the flat value axis, with a leading group axis.

    Counts add: the statistics of a union of tasks are the sum of theirs, so a cluster's
    counts are a sum of its members' and the pooled counts are the sum of everyone's.

    Attributes
    ----------
    label_counts : ndarray of shape (n_groups, n_classes), dtype int64 or float64
        ``m[g, y]``: labelled rows of group ``g`` with label ``y``.
    value_counts : ndarray of shape (n_groups, n_classes, n_values_total), dtype int64 or float64
        ``n[g, y, v]``: labelled rows of group ``g`` with label ``y`` whose feature
        ``value_feature[v]`` takes flat value ``v``. Missing feature values are not counted.
        Counts are integers except for the expected counts of an EM fit (float64).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, -1]]); y = np.array([1, 0]); tasks = np.array([0, 0])
    >>> c = Counts.from_codes(X, y, tasks, n_tasks=1, n_classes=2, offsets=np.array([0, 2, 4]))
    >>> c.label_counts.tolist(), c.value_counts[0].tolist()
    ([[1, 1]], [[0, 1, 0, 0], [1, 0, 0, 1]])
    """

    label_counts: np.ndarray
    value_counts: np.ndarray

    def __post_init__(self) -> None:
        lc, vc = self.label_counts, self.value_counts
        if lc.ndim != 2 or vc.ndim != 3 or vc.shape[:2] != lc.shape:
            raise DataError(f"inconsistent count shapes: labels {lc.shape}, values {vc.shape}")

    @classmethod
    def from_codes(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        task_index: np.ndarray,
        *,
        n_tasks: int,
        n_classes: int,
        offsets: np.ndarray,
    ) -> Counts:
        """Count labelled rows per task (one compiled pass over the rows).

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Category codes, -1 for missing.
        y : ndarray of shape (n_rows,)
            Class codes, -1 for unlabelled (such rows are not counted).
        task_index : ndarray of shape (n_rows,)
            Group of each row, in ``0 .. n_tasks - 1``.
        n_tasks, n_classes : int
        offsets : ndarray of shape (n_features + 1,)
            Flat-axis offsets from the schema.

        Examples
        --------
        Two tasks, one feature of two values; the unlabelled row (class -1) is not counted.

        >>> X = np.array([[0], [1], [1], [0]])
        >>> counts = Counts.from_codes(
        ...     X, np.array([1, 0, 1, -1]), np.array([0, 0, 1, 1]),
        ...     n_tasks=2, n_classes=2, offsets=np.array([0, 2]),
        ... )
        >>> counts.label_counts.tolist()
        [[1, 1], [0, 1]]
        >>> counts.value_counts[0].tolist()  # task 0: (class, value)
        [[0, 1], [1, 0]]
        """
        counts = cls.zeros(n_tasks, n_classes, int(offsets[-1]))
        count_rows(
            np.ascontiguousarray(X),
            np.ascontiguousarray(y, dtype=np.int64),
            np.ascontiguousarray(task_index, dtype=np.int64),
            np.asarray(offsets, dtype=np.int64),
            counts.label_counts,
            counts.value_counts,
        )
        return counts

    @classmethod
    def zeros(cls, n_groups: int, n_classes: int, n_values_total: int) -> Counts:
        """Empty statistics for ``n_groups`` groups.

        Examples
        --------
        >>> Counts.zeros(2, 2, 3).value_counts.shape
        (2, 2, 3)
        """
        return cls(
            np.zeros((n_groups, n_classes), dtype=np.int64),
            np.zeros((n_groups, n_classes, n_values_total), dtype=np.int64),
        )

    @property
    def n_groups(self) -> int:
        """Length of the leading group axis.

        Examples
        --------
        >>> Counts(np.zeros((3, 2), int), np.zeros((3, 2, 4), int)).n_groups
        3
        """
        return int(self.label_counts.shape[0])

    def flat_cells(self) -> sparse.csr_matrix:
        """The value counts as sparse rows of shape (n_groups, n_classes * n_values_total):
        row ``g`` is ``value_counts[g].ravel()`` (what the Gibbs and variational engines read).

        Examples
        --------
        >>> Counts(np.array([[1, 0]]), np.array([[[0, 1], [0, 0]]])).flat_cells().toarray()
        array([[0, 1, 0, 0]])
        """
        return sparse.csr_matrix(self.value_counts.reshape(self.n_groups, -1))

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.label_counts + other.label_counts, self.value_counts + other.value_counts
        )

    def __sub__(self, other: Counts) -> Counts:
        result = Counts(
            self.label_counts - other.label_counts, self.value_counts - other.value_counts
        )
        if (result.label_counts < 0).any() or (result.value_counts < 0).any():
            raise DataError("subtracting counts that were never added: a count became negative")
        return result

    def add_at(self, position: np.ndarray, other: Counts) -> Counts:
        """A copy with ``other``'s group ``i`` added to group ``position[i]`` (positions
        distinct).

        Examples
        --------
        >>> counts = Counts(np.array([[1, 0], [0, 2]]), np.zeros((2, 2, 1), int))
        >>> counts.add_at(np.array([1]), counts.take([0])).label_counts.tolist()
        [[1, 0], [1, 2]]
        """
        label_counts, value_counts = self.label_counts.copy(), self.value_counts.copy()
        label_counts[position] += other.label_counts
        value_counts[position] += other.value_counts
        return Counts(label_counts, value_counts)

    def take(self, index: np.ndarray | list[int]) -> Counts:
        """The groups at ``index``, in that order.

        Examples
        --------
        >>> counts = Counts(np.array([[1, 0], [0, 2], [1, 1]]), np.zeros((3, 2, 3), int))
        >>> counts.take([2, 0]).label_counts.tolist()
        [[1, 1], [1, 0]]
        """
        index = np.asarray(index, dtype=np.int64)
        return Counts(self.label_counts[index], self.value_counts[index])

    def total(self, index: np.ndarray | list[int] | None = None) -> Counts:
        """Sum over the groups at ``index`` (default all) as a single group (leading axis 1).

        Examples
        --------
        >>> counts = Counts(np.array([[1, 0], [0, 2], [1, 1]]), np.zeros((3, 2, 3), int))
        >>> counts.total().label_counts.tolist()
        [[2, 3]]
        """
        chosen = self if index is None else self.take(index)
        return Counts(
            chosen.label_counts.sum(axis=0, keepdims=True),
            chosen.value_counts.sum(axis=0, keepdims=True),
        )

    def group_by(self, assignment: np.ndarray, n_blocks: int) -> Counts:
        """Sum groups into blocks: block ``k`` gets every group ``g`` with ``assignment[g] == k``.

        Parameters
        ----------
        assignment : ndarray of shape (n_groups,)
        n_blocks : int

        Returns
        -------
        Counts with leading axis n_blocks (same dtype: expected counts stay fractional)

        Examples
        --------
        >>> counts = Counts(np.array([[1, 0], [0, 2], [1, 1]]), np.zeros((3, 2, 3), int))
        >>> counts.group_by(np.array([0, 1, 0]), 2).label_counts.tolist()
        [[2, 1], [0, 2]]
        """
        label_counts = np.zeros(
            (n_blocks, *self.label_counts.shape[1:]), dtype=self.label_counts.dtype
        )
        value_counts = np.zeros(
            (n_blocks, *self.value_counts.shape[1:]), dtype=self.value_counts.dtype
        )
        np.add.at(label_counts, assignment, self.label_counts)
        np.add.at(value_counts, assignment, self.value_counts)
        return Counts(label_counts, value_counts)

    def remap(
        self, n_classes: int, n_values_total: int, class_map: np.ndarray, value_map: np.ndarray
    ) -> Counts:
        """Move counts onto a larger class / value axis (after a schema grew).

        Parameters
        ----------
        n_classes, n_values_total : int
            Sizes of the new axes.
        class_map : ndarray of shape (old n_classes,)
            New position of each old class.
        value_map : ndarray of shape (old n_values_total,)
            New position of each old flat value.

        Examples
        --------
        A third class and a value between the old ones appear:

        >>> counts = Counts(np.array([[2, 1]]), np.array([[[1, 1], [0, 1]]]))
        >>> moved = counts.remap(3, 3, class_map=np.array([0, 1]), value_map=np.array([0, 2]))
        >>> moved.label_counts.tolist(), moved.value_counts[0].tolist()
        ([[2, 1, 0]], [[1, 0, 1], [0, 0, 1], [0, 0, 0]])
        """
        label_counts = np.zeros((self.n_groups, n_classes), dtype=np.int64)
        label_counts[:, class_map] = self.label_counts
        value_counts = np.zeros((self.n_groups, n_classes, n_values_total), dtype=np.int64)
        value_counts[:, class_map[:, None], value_map[None, :]] = self.value_counts
        return Counts(label_counts, value_counts)

    def pad_groups(self, n_groups: int) -> Counts:
        """Append empty groups up to ``n_groups``.

        Examples
        --------
        >>> Counts.zeros(1, 2, 3).pad_groups(4).n_groups
        4
        """
        extra = n_groups - self.n_groups
        if extra <= 0:
            return self
        empty = Counts.zeros(extra, self.label_counts.shape[1], self.value_counts.shape[2])
        return Counts(
            np.concatenate([self.label_counts, empty.label_counts]),
            np.concatenate([self.value_counts, empty.value_counts]),
        )


def sparse_value_counts(
    X: np.ndarray, y: np.ndarray, task_index: np.ndarray, n_tasks: int, schema: FeatureSchema
) -> sparse.csr_matrix:
    """Per-task value counts of rows, sparse: what :meth:`Counts.from_codes` counts, without a
    dense (n_tasks, n_classes, n_values_total) array.

    Parameters
    ----------
    X : int ndarray of shape (n_rows, n_features)
        Category codes, -1 for missing (not counted).
    y : int ndarray of shape (n_rows,)
        Class codes in ``0 .. n_classes - 1``; -1 marks an unlabelled row (not counted).
    task_index : int ndarray of shape (n_rows,)
    n_tasks : int
    schema : FeatureSchema
        Gives the classes and the flat value axis (``offsets``).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_tasks, n_classes * n_values_total), int64
        Entry ``(u, c * V + offsets[f] + x)`` counts task ``u``'s rows of class ``c`` with
        value ``x`` of feature ``f`` (``counts.value_counts[u].ravel()``).

    Examples
    --------
    >>> from clusterednb import FeatureSchema
    >>> schema = FeatureSchema(("a", "b"), ((0, 1), (0, 1)), ("no", "yes"))
    >>> X = np.array([[0, 1], [1, -1], [0, 0]])
    >>> sparse_value_counts(X, np.array([0, 1, 0]), np.array([0, 0, 1]), 2, schema).toarray()
    array([[1, 0, 0, 1, 0, 1, 0, 0],
           [1, 0, 1, 0, 0, 0, 0, 0]])
    """
    X = np.ascontiguousarray(X)  # any integer codes as they are: no int64 copy of every row
    indptr, indices, data = count_rows_sparse(
        X if X.dtype.kind == "i" else X.astype(np.int64),
        np.ascontiguousarray(y, dtype=np.int64),
        np.ascontiguousarray(task_index, dtype=np.int64),
        np.asarray(schema.offsets, dtype=np.int64),
        n_tasks,
        schema.n_classes,
    )
    width = schema.n_classes * schema.n_values_total
    return sparse.csr_matrix((data, indices, indptr), shape=(n_tasks, width))


def document_counts(
    X: sparse.csr_matrix,
    y: np.ndarray,
    task_index: np.ndarray,
    n_tasks: int,
    n_classes: int,
    observation: str,
) -> Counts:
    """Per-task counts of labelled documents, never densifying ``X``.

    ``"multinomial"``: value counts are token counts, shape (n_tasks, C, W).
    ``"bernoulli"``: flat values ``2w`` (absent) and ``2w + 1`` (present), shape
    (n_tasks, C, 2W); absent = labelled documents of the class minus present ones.

    Examples
    --------
    Two documents of task 0 (classes 1 and 0) and one unlabelled of task 1:

    >>> from scipy import sparse
    >>> X = sparse.csr_matrix([[2, 0], [1, 1], [0, 3]])
    >>> y, task = np.array([1, 0, -1]), np.array([0, 0, 1])
    >>> tokens = document_counts(X, y, task, n_tasks=2, n_classes=2, observation="multinomial")
    >>> tokens.value_counts[0].tolist(), tokens.label_counts.tolist()
    ([[1, 1], [2, 0]], [[1, 1], [0, 0]])
    >>> present = document_counts(X, y, task, n_tasks=2, n_classes=2, observation="bernoulli")
    >>> present.value_counts[0].tolist()  # per word: (absent, present) documents
    [[0, 1, 0, 1], [0, 1, 1, 0]]
    """
    labelled = np.flatnonzero(y >= 0)
    group = task_index[labelled] * n_classes + y[labelled]
    indicator = sparse.csr_matrix(
        (np.ones(labelled.size, dtype=np.int64), (group, np.arange(labelled.size))),
        shape=(n_tasks * n_classes, labelled.size),
    )
    label_counts = np.bincount(group, minlength=n_tasks * n_classes).reshape(n_tasks, n_classes)
    rows = X[labelled]
    n_words = X.shape[1]
    if observation == "multinomial":
        tokens = (indicator @ rows).toarray().reshape(n_tasks, n_classes, n_words)
        return Counts(label_counts.astype(np.int64), tokens.astype(np.int64))
    present = (indicator @ (rows > 0).astype(np.int64)).toarray().reshape(n_tasks, n_classes, -1)
    values = np.empty((n_tasks, n_classes, 2 * n_words), dtype=np.int64)
    values[..., 0::2] = label_counts[..., None] - present
    values[..., 1::2] = present
    return Counts(label_counts.astype(np.int64), values)
