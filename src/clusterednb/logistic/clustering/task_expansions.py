"""Each task's label log-likelihood expanded to second order at one anchor, and the Gaussian
integral of a set's summed expansions: the label half of the joint cluster likelihood of
:mod:`clusterednb.logistic.clustering.joint_blocks` (its docstring has the formulas).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from clusterednb.exceptions import CNBError
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
    hessian : ndarray of shape (n_tasks, d, d)
        Minus the second derivative (positive semi-definite).

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
    hessian: np.ndarray

    @classmethod
    def at_pooled_map(
        cls, design: np.ndarray, y: np.ndarray, task_starts: np.ndarray, precision: float
    ) -> TaskExpansions:
        """Expansions at the MAP of all rows together (one Newton fit).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> bool(np.allclose(expansions.gradient.sum(axis=0), 1.0 * expansions.anchor))
        True

        At the pooled MAP the tasks' summed gradient balances the prior's pull, ``Σ_u g_u = λ w₀``
        (every weight, the intercept too, has the prior ``N(0, λ⁻¹)``).
        """
        anchor = fit_laplace(design, y, precision=precision).coef
        margin = design @ anchor
        row_value = np.where(y > 0, log_expit(margin), log_expit(-margin))
        probability = expit(margin)
        row_gradient = design * (y - probability)[:, None]
        curvature = probability * (1.0 - probability)
        n_tasks = task_starts.size - 1
        d = design.shape[1]
        value, gradient = np.zeros(n_tasks), np.zeros((n_tasks, d))
        hessian = np.zeros((n_tasks, d, d))
        for task in range(n_tasks):
            rows = slice(task_starts[task], task_starts[task + 1])
            value[task] = row_value[rows].sum()
            gradient[task] = row_gradient[rows].sum(axis=0)
            hessian[task] = (design[rows].T * curvature[rows]) @ design[rows]
        return cls(anchor, value, gradient, hessian)

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
            self.hessian[members].sum(axis=0),
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
        """The Gaussian integrals of K sets' summed expansions at once.

        Parameters
        ----------
        value : ndarray of shape (K,)
        gradient : ndarray of shape (K, d)
        hessian : ndarray of shape (K, d, d)
        precision : float

        Returns
        -------
        ndarray of shape (K,)

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
        d = self.anchor.size
        b = gradient - precision * self.anchor
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
            raise CNBError(
                f"a block's precision matrix is not positive definite ({error})"
            ) from error
        whitened = factor[:, d, :d]  # L⁻¹ b
        log_det = 2.0 * np.log(np.diagonal(factor[:, :d, :d], axis1=-2, axis2=-1)).sum(axis=-1)
        return (
            value
            + 0.5 * np.einsum("kd,kd->k", whitened, whitened)
            - 0.5 * precision * float(self.anchor @ self.anchor)
            + 0.5 * d * np.log(precision)
            - 0.5 * log_det
        )
