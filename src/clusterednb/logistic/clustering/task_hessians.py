"""The tasks' curvature matrices ``H_u`` (each ``d × d``) of
:class:`~clusterednb.logistic.clustering.task_expansions.TaskExpansions`, stored compactly.

A task's label log-likelihood has the curvature ``H_u = Σ_r c_r z_r z_rᵀ`` over its labelled
rows ``z_r`` (one-hot features and an intercept), ``c_r = p_r (1 − p_r)`` at the anchor. Kept
as a ``d × d`` matrix per task it costs ``d² · 8`` bytes a task: 5 GB for 10⁶ tasks of 25
weights, and a second copy when the tempering scales it. :class:`RowFactorHessians` keeps
the factor instead, the rows ``f_r = √c_r z_r`` as one sparse matrix (a one-hot row has
``n_features + 1`` entries), so that ``H_u = Σ_r f_r f_rᵀ``; a task of eight rows of eight
features costs 8 · 9 entries instead of 625. The dense matrices are formed only for the
tasks that need them at once (a sampled core, a batch placed in its clusters).
:class:`DenseHessians` holds given dense matrices behind the same face.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from clusterednb.jit import njit

__all__ = ["DenseHessians", "RowFactorHessians", "as_hessians", "ranges"]


@njit(cache=True, nogil=True)
def gathered_hessians(indptr, indices, data, task_starts, tasks, d, summed):  # pragma: no cover
    """``Σ_r f_r f_rᵀ`` over each task of ``tasks`` (shape (len(tasks), d, d)), or over all of
    them together when ``summed`` (shape (1, d, d)).

    Examples
    --------
    >>> rows = sparse.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    >>> gathered_hessians(rows.indptr, rows.indices, rows.data, np.array([0, 1, 2]),
    ...                   np.array([1, 0]), 2, False).tolist()
    [[[0.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 0.0]]]
    """
    out = np.zeros((1 if summed else tasks.size, d, d))
    for position in range(tasks.size):
        slot = 0 if summed else position
        task = tasks[position]
        for row in range(task_starts[task], task_starts[task + 1]):
            for a in range(indptr[row], indptr[row + 1]):
                column, entry = indices[a], data[a]
                for b in range(indptr[row], indptr[row + 1]):
                    out[slot, column, indices[b]] += entry * data[b]
    return out


def ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenated integer ranges ``starts[k]:stops[k]``, shape (Σ stops − starts,).

    Examples
    --------
    >>> ranges(np.array([0, 5, 2]), np.array([2, 5, 4])).tolist()
    [0, 1, 2, 3]
    """
    lengths = np.asarray(stops, dtype=np.int64) - np.asarray(starts, dtype=np.int64)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - firsts, lengths)


def _positions(tasks: Any, n_tasks: int) -> tuple[np.ndarray, bool]:
    """Task positions as an int64 array, and whether one task (a scalar) was asked for."""
    if isinstance(tasks, slice):
        return np.arange(n_tasks)[tasks], False
    positions = np.asarray(tasks)
    if positions.dtype == bool:
        return np.flatnonzero(positions), False
    one = positions.ndim == 0
    positions = np.atleast_1d(positions).astype(np.int64)
    return np.where(positions < 0, positions + n_tasks, positions), one


class RowFactorHessians:
    """``H_u = Σ_r f_r f_rᵀ`` over task ``u``'s factor rows, all tasks' rows in one sparse
    matrix.

    Parameters
    ----------
    rows : sparse matrix of shape (n_rows, d)
        The factor rows ``f_r``, grouped by task.
    task_starts : ndarray of shape (n_tasks + 1,)
        Task ``u``'s rows are ``rows[task_starts[u]:task_starts[u + 1]]``.

    Examples
    --------
    >>> rows = sparse.csr_matrix(np.array([[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]]))
    >>> hessians = RowFactorHessians(rows, np.array([0, 2, 3]))  # task 0: rows 0-1
    >>> hessians.shape, hessians[0].tolist()
    ((2, 2, 2), [[1.0, 1.0], [1.0, 5.0]])
    >>> hessians.summed(np.array([0, 1])).tolist()
    [[10.0, 1.0], [1.0, 5.0]]
    """

    def __init__(self, rows, task_starts: np.ndarray) -> None:
        self.rows = sparse.csr_matrix(rows, dtype=np.float64)
        self.task_starts = np.asarray(task_starts, dtype=np.int64)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(n_tasks, d, d)``."""
        d = self.rows.shape[1]
        return (self.task_starts.size - 1, d, d)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes held (the factor rows and the task starts).

        Examples
        --------
        A thousand tasks of eight one-hot rows with nine entries each, ``d = 25``:

        >>> columns = np.arange(8000 * 9).reshape(8000, 9) % 25
        >>> rows = sparse.csr_matrix((np.ones(72000), columns.ravel(), np.arange(0, 72001, 9)))
        >>> hessians = RowFactorHessians(rows, np.arange(0, 8001, 8))
        >>> hessians.nbytes < 1_000 * 25 * 25 * 8 // 5  # a fifth of the dense matrices
        True
        """
        rows = self.rows
        return rows.data.nbytes + rows.indices.nbytes + rows.indptr.nbytes + self.task_starts.nbytes

    def _gather(self, tasks: np.ndarray, summed: bool) -> np.ndarray:
        rows = self.rows
        return gathered_hessians(
            rows.indptr,
            rows.indices,
            rows.data,
            self.task_starts,
            np.ascontiguousarray(tasks, dtype=np.int64),
            self.shape[1],
            summed,
        )

    def __getitem__(self, tasks: Any) -> np.ndarray:
        """Dense ``H_u``: shape (d, d) for one task, (k, d, d) for k of them."""
        positions, one = _positions(tasks, len(self))
        dense = self._gather(positions, summed=False)
        return dense[0] if one else dense

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        dense = self[:]
        return dense if dtype is None else dense.astype(dtype)

    def summed(self, tasks: Any) -> np.ndarray:
        """``Σ_{u ∈ tasks} H_u``, shape (d, d)."""
        return self._gather(_positions(tasks, len(self))[0], summed=True)[0]

    def scaled(self, weights: np.ndarray) -> RowFactorHessians:
        """``τ_u H_u`` for task weights ``τ`` of shape (n_tasks,): each factor row times ``√τ_u``
        (the sparsity pattern is shared, not copied).

        Examples
        --------
        >>> rows = sparse.csr_matrix(np.array([[1.0, 1.0], [3.0, 0.0]]))
        >>> RowFactorHessians(rows, np.array([0, 1, 2])).scaled(np.array([4.0, 1.0]))[0].tolist()
        [[4.0, 4.0], [4.0, 4.0]]
        """
        task_scale = np.sqrt(np.asarray(weights, dtype=np.float64))
        row_scale = np.repeat(task_scale, np.diff(self.task_starts))
        entry_scale = np.repeat(row_scale, np.diff(self.rows.indptr))
        rows = sparse.csr_matrix(
            (self.rows.data * entry_scale, self.rows.indices, self.rows.indptr),
            shape=self.rows.shape,
        )
        return RowFactorHessians(rows, self.task_starts)

    def take(self, tasks: np.ndarray) -> RowFactorHessians:
        """The factors of ``tasks`` (positions), renumbered 0, 1, ….

        Examples
        --------
        >>> rows = sparse.csr_matrix(np.array([[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]]))
        >>> RowFactorHessians(rows, np.array([0, 2, 3])).take(np.array([1]))[0].tolist()
        [[9.0, 0.0], [0.0, 0.0]]
        """
        positions = _positions(tasks, len(self))[0]
        starts, stops = self.task_starts[positions], self.task_starts[positions + 1]
        kept_starts = np.concatenate([[0], np.cumsum(stops - starts)])
        return RowFactorHessians(self.rows[ranges(starts, stops)], kept_starts)

    def restricted(self, dims: np.ndarray) -> RowFactorHessians:
        """Every ``H_u`` restricted to the weights ``dims`` (positions, shape (k,)): the factor
        rows' columns ``dims``, so each matrix becomes ``H_u[dims][:, dims]``.

        Examples
        --------
        >>> rows = sparse.csr_matrix(np.array([[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]]))
        >>> RowFactorHessians(rows, np.array([0, 2, 3])).restricted(np.array([1]))[0].tolist()
        [[5.0]]
        """
        return RowFactorHessians(self.rows[:, np.asarray(dims, dtype=np.int64)], self.task_starts)


class DenseHessians:
    """Given dense curvature matrices behind :class:`RowFactorHessians`' face.

    Parameters
    ----------
    matrices : ndarray of shape (n_tasks, d, d)

    Examples
    --------
    >>> hessians = DenseHessians(np.stack([np.eye(2), 2 * np.eye(2)]))
    >>> hessians.summed([0, 1]).tolist(), hessians.scaled(np.array([1.0, 0.5]))[1].tolist()
    ([[3.0, 0.0], [0.0, 3.0]], [[1.0, 0.0], [0.0, 1.0]])
    """

    def __init__(self, matrices: np.ndarray) -> None:
        self.matrices = np.asarray(matrices, dtype=np.float64)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(n_tasks, d, d)``."""
        return self.matrices.shape

    def __len__(self) -> int:
        return self.matrices.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return self.matrices.nbytes

    def __getitem__(self, tasks: Any) -> np.ndarray:
        return self.matrices[tasks]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.matrices if dtype is None else self.matrices.astype(dtype)

    def summed(self, tasks: Any) -> np.ndarray:
        """``Σ_{u ∈ tasks} H_u``, shape (d, d)."""
        return self.matrices[_positions(tasks, len(self))[0]].sum(axis=0)

    def scaled(self, weights: np.ndarray) -> DenseHessians:
        """``τ_u H_u`` for task weights of shape (n_tasks,)."""
        return DenseHessians(self.matrices * np.asarray(weights)[:, None, None])

    def take(self, tasks: np.ndarray) -> DenseHessians:
        """The matrices of ``tasks`` (positions)."""
        return DenseHessians(self.matrices[_positions(tasks, len(self))[0]])

    def restricted(self, dims: np.ndarray) -> DenseHessians:
        """Every matrix restricted to the weights ``dims`` (positions, shape (k,))."""
        dims = np.asarray(dims, dtype=np.int64)
        return DenseHessians(self.matrices[:, dims][:, :, dims])


def as_hessians(hessians: Any) -> DenseHessians | RowFactorHessians:
    """``hessians`` behind the common face: a dense array of shape (n_tasks, d, d) is wrapped.

    Examples
    --------
    >>> type(as_hessians(np.zeros((1, 2, 2)))).__name__
    'DenseHessians'
    """
    if isinstance(hessians, DenseHessians | RowFactorHessians):
        return hessians
    return DenseHessians(hessians)
