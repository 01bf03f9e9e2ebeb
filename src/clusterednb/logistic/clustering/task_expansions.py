"""Each task's label log-likelihood expanded to second order at one anchor, and the Gaussian
integral of a set's summed expansions: the label half of the joint cluster likelihood of
:mod:`clusterednb.logistic.clustering.joint_blocks` (its docstring has the formulas).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from clusterednb.exceptions import CNBError
from clusterednb.logistic.clustering.task_hessians import (
    DenseHessians,
    RowFactorHessians,
    as_hessians,
)
from clusterednb.logistic.solvers.laplace import fit_laplace


def one_hot_design(codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Dense one-hot rows of feature codes with a trailing intercept column.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes per feature, -1 for a missing value (an all-zero block).
    offsets : ndarray of shape (n_features + 1,)

    Returns
    -------
    ndarray of shape (n_rows, offsets[-1] + 1)

    Examples
    --------
    >>> one_hot_design(np.array([[0, 1], [-1, 0]]), np.array([0, 2, 4])).tolist()
    [[1.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0, 1.0]]
    """
    design = np.zeros((codes.shape[0], int(offsets[-1]) + 1))
    rows = np.arange(codes.shape[0])
    for feature in range(codes.shape[1]):
        present = codes[:, feature] >= 0
        design[rows[present], offsets[feature] + codes[present, feature]] = 1.0
    design[:, -1] = 1.0
    return design


def pooled_anchor(
    rows: sparse.csr_matrix, y: np.ndarray, precision: float, start: np.ndarray | None = None
) -> np.ndarray:
    """The MAP of one logistic regression on all ``rows`` (sparse, shape (n_rows, d)), from
    their distinct rows and label counts: one-hot rows repeat (eight features of three values
    have at most 6 561 patterns, however many tasks), so Newton runs on the distinct ones,
    from ``start`` (d,) when given (a nearby problem's MAP: fewer steps to the same one).

    Examples
    --------
    >>> rows = sparse.csr_matrix(np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 1.0]]))
    >>> anchor = pooled_anchor(rows, np.array([1.0, 1.0, 0.0]), 1.0)
    >>> bool(np.allclose(anchor, fit_laplace(rows.toarray(), np.array([1.0, 1.0, 0.0])).coef))
    True
    """
    y = np.asarray(y, dtype=np.float64)
    if rows.shape[0] == 0:
        return fit_laplace(np.zeros((0, rows.shape[1])), y, precision=precision).coef
    key = rows @ np.random.default_rng(0).normal(size=rows.shape[1]) + 1e6 * y
    _, first, pattern = np.unique(key, return_index=True, return_inverse=True)
    patterns = rows[first]
    if (patterns[pattern] != rows).nnz or not np.array_equal(y[first][pattern], y):
        return fit_laplace(rows.toarray(), y, precision=precision, start=start).coef  # a collision
    counts = np.bincount(pattern, minlength=first.size).astype(np.float64)
    return fit_laplace(patterns.toarray(), y[first], counts, precision=precision, start=start).coef


def one_hot_rows(codes: np.ndarray, offsets: np.ndarray) -> sparse.csr_matrix:
    """:func:`one_hot_design` as a sparse matrix (a row holds one entry per present feature
    and the intercept), shape (n_rows, offsets[-1] + 1).

    Examples
    --------
    >>> codes, offsets = np.array([[0, 1], [-1, 0]]), np.array([0, 2, 4])
    >>> bool(np.array_equal(one_hot_rows(codes, offsets).toarray(), one_hot_design(codes, offsets)))
    True
    """
    codes = np.asarray(codes)
    n_rows, n_features = codes.shape
    width = int(offsets[-1]) + 1
    columns = np.empty((n_rows, n_features + 1), dtype=np.int64)
    columns[:, :n_features] = np.where(codes >= 0, codes + offsets[:-1], -1)
    columns[:, n_features] = width - 1
    present = columns >= 0
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    return sparse.csr_matrix(
        (np.ones(int(indptr[-1])), columns[present], indptr), shape=(n_rows, width)
    )


def one_hot_columns(
    codes: np.ndarray, offsets: np.ndarray, columns: np.ndarray
) -> sparse.csr_matrix:
    """:func:`one_hot_rows` of the features ``columns`` (bool, (n_features,)) only, their
    values side by side, shape (n_rows, n_values_read + 1).

    Examples
    --------
    >>> codes, offsets = np.array([[0, 1], [-1, 0]]), np.array([0, 2, 4])
    >>> one_hot_columns(codes, offsets, np.array([False, True])).toarray().tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    """
    widths = np.diff(offsets)[columns]  # the columns not read: no width
    return one_hot_rows(codes[:, columns], np.concatenate([[0], np.cumsum(widths)]))


def label_rows(
    codes: np.ndarray,
    offsets: np.ndarray,
    read: np.ndarray | None,
    numbers: np.ndarray,
    numbered: np.ndarray,
) -> sparse.csr_matrix:
    """The partition's label design of rows where some features are numbers: each feature
    read (``read``, bool (n_features,); None: all) in feature order, a feature of ``numbered``
    (positions, shape (n_numbered,)) as its one column of ``numbers`` (n_rows, n_numbered;
    standardised, 0 where missing), every other one as its values' one-hot; then the
    intercept. Its columns start where :func:`label_offsets` says.

    Why a number's slope and not its bins: under the score's prior (precision ``λ`` on every
    weight), five bins draw a slope of 3 per standard deviation only at a cost of about 20
    nats a cluster against 4.5 for the slope itself, so the evidence merged issue 49's groups
    whose slopes differ; a slope also costs the sampler one dimension where the bins cost
    five (BENCHMARKS.md, "A number's slope in the partition's score").

    Examples
    --------
    >>> codes, offsets = np.array([[0, 1], [-1, 0]]), np.array([0, 2, 5])
    >>> label_rows(codes, offsets, None, np.array([[0.5], [-1.0]]), np.array([1])).toarray()
    array([[ 1. ,  0. ,  0.5,  1. ],
           [ 0. ,  0. , -1. ,  1. ]])
    """
    codes = np.asarray(codes)
    n_rows, n_features = codes.shape
    read = np.ones(n_features, dtype=bool) if read is None else np.asarray(read, dtype=bool)
    numbered = np.asarray(numbered, dtype=np.int64)
    starts = label_offsets(offsets, read, numbered)
    number_of = dict(zip(numbered.tolist(), range(numbered.size), strict=True))
    row_parts, column_parts, value_parts = [], [], []
    everyone = np.arange(n_rows)
    for feature in np.flatnonzero(read):
        if feature in number_of:
            row_parts.append(everyone)
            column_parts.append(np.full(n_rows, starts[feature]))
            value_parts.append(np.asarray(numbers[:, number_of[feature]], dtype=np.float64))
            continue
        present = codes[:, feature] >= 0
        row_parts.append(everyone[present])
        column_parts.append(starts[feature] + codes[present, feature])
        value_parts.append(np.ones(int(present.sum())))
    row_parts.append(everyone)
    column_parts.append(np.full(n_rows, starts[-1]))
    value_parts.append(np.ones(n_rows))
    return sparse.csr_matrix(
        (np.concatenate(value_parts), (np.concatenate(row_parts), np.concatenate(column_parts))),
        shape=(n_rows, int(starts[-1]) + 1),
    )


def label_offsets(
    offsets: np.ndarray, read: np.ndarray | None, numbered: np.ndarray | None = None
) -> np.ndarray:
    """Where each feature's weights start in the label design, shape (n_features + 1,): a
    feature the regressions read (``read``, bool (n_features,); None: all) has its values'
    width, or 1 when it is read by its number (``numbered``, feature positions, shape
    (n_numbered,): its slope; :func:`label_rows`), one they do not read none.

    Examples
    --------
    >>> label_offsets(np.array([0, 2, 5, 6]), np.array([True, False, True])).tolist()
    [0, 2, 2, 3]
    >>> label_offsets(np.array([0, 2, 5, 6]), None, numbered=np.array([1])).tolist()
    [0, 2, 3, 4]
    """
    widths = np.diff(offsets).astype(np.int64)
    if numbered is not None and len(numbered):
        widths[np.asarray(numbered, dtype=np.int64)] = 1
    if read is not None:
        widths = np.where(read, widths, 0)
    return np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)


@dataclass(frozen=True)
class TaskExpansions:
    """Each task's label log-likelihood expanded to second order at one anchor.

    Attributes
    ----------
    anchor : ndarray of shape (d,)
        ``w₀``.
    value : ndarray of shape (n_tasks,)
        ``ℓ_u(w₀)``.
    gradient : ndarray of shape (n_tasks, d)
    hessian : RowFactorHessians or DenseHessians, shape (n_tasks, d, d)
        Minus the second derivative (positive semi-definite); a dense array given is wrapped
        (:mod:`~clusterednb.logistic.clustering.task_hessians`).

    Examples
    --------
    >>> design = one_hot_design(np.array([[0], [1], [0], [1]]), np.array([0, 2]))
    >>> y = np.array([1.0, 0.0, 1.0, 1.0])
    >>> starts = np.array([0, 2, 4])  # task 0: rows 0-1, task 1: rows 2-3
    >>> expansions = TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)
    >>> expansions.value.shape, expansions.hessian.shape  # two tasks, 2 values + intercept
    ((2,), (2, 3, 3))
    """

    anchor: np.ndarray
    value: np.ndarray
    gradient: np.ndarray
    hessian: RowFactorHessians | DenseHessians

    def __post_init__(self) -> None:
        object.__setattr__(self, "hessian", as_hessians(self.hessian))

    @classmethod
    def at_pooled_map(
        cls,
        design,
        y: np.ndarray,
        task_starts: np.ndarray,
        precision: float,
        start: np.ndarray | None = None,
    ) -> TaskExpansions:
        """Expansions at the MAP of all rows together (one Newton fit, from ``start`` (d,) when
        given); ``design`` dense or sparse, shape (n_rows, d), its rows grouped by task as
        ``task_starts`` says. The curvatures are kept as factor rows (:class:`RowFactorHessians`).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> bool(np.allclose(expansions.gradient.sum(axis=0), 1.0 * expansions.anchor))
        True

        At the pooled MAP the tasks' summed gradient balances the prior's pull, ``Σ_u g_u = λ w₀``
        (every weight, the intercept too, has the prior ``N(0, λ⁻¹)``).
        """
        rows = sparse.csr_matrix(design, dtype=np.float64)
        return cls.at_anchor(rows, y, task_starts, pooled_anchor(rows, y, precision, start))

    @classmethod
    def at_anchor(
        cls, design, y: np.ndarray, task_starts: np.ndarray, anchor: np.ndarray
    ) -> TaskExpansions:
        """Expansions at a given anchor ``w₀`` of shape (d,) (a shard of the tasks expanded at
        the MAP of every shard's rows together).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> design, y, starts = toy.logistic_rows()
        >>> pooled = TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)
        >>> second = TaskExpansions.at_anchor(design[2:], y[2:], starts[1:] - 2, pooled.anchor)
        >>> bool(np.allclose(second.gradient[0], pooled.gradient[1]))
        True
        """
        rows = sparse.csr_matrix(design, dtype=np.float64)
        task_starts = np.asarray(task_starts, dtype=np.int64)
        margin = rows @ anchor
        row_value = np.where(y > 0, log_expit(margin), log_expit(-margin))
        probability = expit(margin)
        n_tasks = task_starts.size - 1
        task_of_row = np.repeat(np.arange(n_tasks), np.diff(task_starts))
        by_task = sparse.csr_matrix(
            (np.ones(task_of_row.size), (task_of_row, np.arange(task_of_row.size))),
            shape=(n_tasks, task_of_row.size),
        )
        value = np.bincount(task_of_row, weights=row_value, minlength=n_tasks)
        gradient = np.asarray((by_task @ sparse.diags(y - probability) @ rows).todense())
        factor = sparse.diags(np.sqrt(probability * (1.0 - probability))) @ rows
        return cls(anchor, value, gradient, RowFactorHessians(factor, task_starts))

    def restricted(self, dims: np.ndarray) -> TaskExpansions:
        """The expansions of the weights ``dims`` only (positions, shape (k,)), the others
        held at the anchor: each task's ``ℓ_u(w₀)`` kept, its gradient and curvature
        restricted to ``dims``.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> expansions = toy.task_expansions()  # the class's example: 2 values, an intercept
        >>> intercept = expansions.restricted(np.array([2]))
        >>> intercept.gradient.shape, intercept.hessian.shape
        ((2, 1), (2, 1, 1))
        """
        dims = np.asarray(dims, dtype=np.int64)
        return TaskExpansions(
            self.anchor[dims], self.value, self.gradient[:, dims], self.hessian.restricted(dims)
        )

    def log_marginal(self, members: list[int], precision: float) -> float:
        """The closed-form Gaussian integral of the members' summed expansions.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> design, y, starts = toy.logistic_rows()  # the class's example
        >>> expansions = TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)
        >>> both = expansions.log_marginal([0, 1], precision=1.0)
        >>> from clusterednb.logistic.solvers.laplace import fit_laplace
        >>> bool(np.isclose(both, fit_laplace(design, y, precision=1.0).log_marginal))
        True
        """
        return self.log_marginal_of_sums(
            float(self.value[members].sum()),
            self.gradient[members].sum(axis=0),
            self.hessian.summed(members),
            precision,
        )

    def log_marginal_of_sums(
        self, value: float, gradient: np.ndarray, hessian: np.ndarray, precision: float
    ) -> float:
        """The Gaussian integral of summed expansions ``(L, G, H)``, G of shape (d,), H (d, d).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> sums = expansions.value[0], expansions.gradient[0], expansions.hessian[0]
        >>> bool(np.isclose(expansions.log_marginal_of_sums(*sums, precision=1.0),
        ...                 expansions.log_marginal([0], precision=1.0)))
        True
        """
        return float(
            self.log_marginals_of_sums(np.array([value]), gradient[None], hessian[None], precision)[
                0
            ]
        )

    def log_marginals_of_sums(
        self, value: np.ndarray, gradient: np.ndarray, hessian: np.ndarray, precision: float
    ) -> np.ndarray:
        """The Gaussian integrals of K sets' summed expansions at once, at this anchor
        (:func:`gaussian_log_marginals`, which gives the shapes).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> both = expansions.log_marginals_of_sums(
        ...     expansions.value, expansions.gradient, expansions.hessian, precision=1.0)
        >>> bool(np.allclose(both, [expansions.log_marginal([0], 1.0),
        ...                         expansions.log_marginal([1], 1.0)]))
        True
        """
        return gaussian_log_marginals(value, gradient, hessian, self.anchor, precision)


def gaussian_log_marginals(
    value: np.ndarray,
    gradient: np.ndarray,
    hessian: np.ndarray,
    anchor: np.ndarray,
    precision: float,
) -> np.ndarray:
    """The Gaussian integrals of K sets' summed expansions ``(L, G, H)`` at ``anchor``
    (:mod:`~clusterednb.logistic.clustering.joint_blocks` has the formula).

    Parameters
    ----------
    value : ndarray of shape (K,)
    gradient : ndarray of shape (K, d)
    hessian : ndarray of shape (K, d, d)
    anchor : ndarray of shape (d,)
    precision : float

    Returns
    -------
    ndarray of shape (K,)

    Examples
    --------
    One weight, no rows: the integral of the prior alone is 1.

    >>> abs(float(gaussian_log_marginals(np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1, 1)),
    ...                                  np.zeros(1), 2.0)[0])) < 1e-15
    True
    """
    d = anchor.size
    b = gradient - precision * anchor
    # One batched Cholesky of [[A, b], [bᵀ, c]] for every set: its last row is (L⁻¹b, ·),
    # so bᵀA⁻¹b = |L⁻¹b|² needs no triangular solve (numpy has no batched one). The
    # first d entries of that row do not depend on c; c > bᵀA⁻¹b keeps the matrix
    # positive definite, and |b|²/λ + 1 is larger since A ⪰ λI.
    augmented = np.empty((b.shape[0], d + 1, d + 1))
    augmented[:, :d, :d] = hessian + precision * np.eye(d)
    augmented[:, d, :d] = b
    augmented[:, :d, d] = b
    augmented[:, d, d] = np.einsum("kd,kd->k", b, b) / precision + 1.0
    try:
        factor = np.linalg.cholesky(augmented)
    except np.linalg.LinAlgError as error:
        raise CNBError(f"a block's precision matrix is not positive definite ({error})") from error
    whitened = factor[:, d, :d]  # L⁻¹ b
    log_det = 2.0 * np.log(np.diagonal(factor[:, :d, :d], axis1=-2, axis2=-1)).sum(axis=-1)
    return (
        value
        + 0.5 * np.einsum("kd,kd->k", whitened, whitened)
        - 0.5 * precision * float(anchor @ anchor)
        + 0.5 * d * np.log(precision)
        - 0.5 * log_det
    )
