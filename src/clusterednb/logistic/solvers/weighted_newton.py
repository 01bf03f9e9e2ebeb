"""Weighted L2-penalised logistic regression by Newton's method, fast when a block of columns
is a one-hot of the task.

The objective is scikit-learn's ``LogisticRegression(C=C)`` with sample weights ``m_i`` (the
intercept unpenalised):

    minimise  C Σ_i m_i loss_i(w) + ½ |w|²   ⇔   Σ_i m_i loss_i(w) + ½ (1/C) |w|².

Each Newton step solves ``H δ = g``; when the design holds a one-hot of the task, by the task
block's Schur complement (:mod:`clusterednb.logistic.solvers.task_block`).
"""

from __future__ import annotations

import copy
import hashlib
from functools import cached_property

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit, logit

from clusterednb.logistic.solvers.lbfgs import minimize_lbfgs
from clusterednb.logistic.solvers.task_block import TaskBlockSolver, TaskSums

REUSE_BELOW = 1e-2
"""Once a step's decrement ``½ gᵀ H⁻¹ g`` is below this, the next step reuses its factored
Hessian (one step in two is then a pass over the rows without a new Hessian): near the
minimum the Hessian barely moves, and the minimum itself does not depend on it."""
MAX_NEWTON_COLUMNS = 2000
"""Above this many columns (a vocabulary of words) Newton's ``d × d`` Hessian is too large to
form: the same objective is minimised by L-BFGS from the same start instead."""
REMEMBERED_FITS = 64
"""Fits a :class:`WeightedLogistic` keeps by their row weights: tuning meets the same
weights again (a cluster of the same tasks under two settings) and gets its minimum back."""


def penalised_loss(
    design, y: np.ndarray, weights: np.ndarray, coef: np.ndarray, penalty: np.ndarray
) -> float:
    """``Σ m_i loss_i + ½ Σ_j P_j w_j²`` of coefficients (the intercept a column of ``design``).

    Examples
    --------
    >>> design = np.array([[1.0], [1.0]])
    >>> round(penalised_loss(design, np.array([1, 0]), np.ones(2), np.zeros(1), np.ones(1)), 4)
    1.3863
    """
    return loss_of_margin(design @ coef, y, weights, coef, penalty)


def loss_of_margin(
    margin: np.ndarray, y: np.ndarray, weights: np.ndarray, coef: np.ndarray, penalty: np.ndarray
) -> float:
    """:func:`penalised_loss` from the rows' margins ``design @ coef``, shape (n_rows,).

    Examples
    --------
    >>> round(loss_of_margin(np.zeros(2), np.array([1, 0]), np.ones(2), np.zeros(1),
    ...                      np.ones(1)), 4)
    1.3863
    """
    log_likelihood = weights @ log_expit(np.where(y > 0, margin, -margin))
    return float(-log_likelihood + 0.5 * penalty @ (coef * coef))


class WeightedLogistic:
    """One design, labels and penalty, fitted under many row weightings.

    The bias column, the penalty and the task block's solver are built once, and the fit
    with every row weighing 1 (the pooled regression) is kept once computed, so the
    regressions of many clusters (and of many floors while tuning) share them.

    Parameters
    ----------
    design : sparse matrix of shape (n_rows, n_columns)
    y : ndarray of shape (n_rows,)
        Labels in {0, 1}.
    C : float
        Inverse penalty of every column but the intercept: each weight's prior is
        ``N(0, C / column_precision)``.
    task_columns : slice, optional
        Columns that one-hot encode the task: solved by their diagonal block when every row
        sets at most one of them (else the plain step is taken).
    max_newton_columns : int, default=MAX_NEWTON_COLUMNS
        With more columns than this (not counting a task block), L-BFGS instead of Newton's
        method.
    tol : float, default=1e-8
        Newton stops after the step whose decrement ``½ gᵀ H⁻¹ g`` (about the distance of the
        objective from its minimum) is below this.
    column_precision : ndarray of shape (n_columns,), optional
        Each column's prior precision in units of ``1 / C`` (default: 1 for every column).

    Examples
    --------
    >>> from scipy import sparse
    >>> design = sparse.csr_matrix(np.array([[1.0], [0.0], [1.0], [0.0]]))
    >>> problem = WeightedLogistic(design, np.array([1, 0, 1, 1]), C=1.0)
    >>> coef, intercept = problem.pooled
    >>> heavier = problem.fit(np.array([1.0, 3.0, 1.0, 1.0]))[0]  # the 0 at x = 0 counts 3 times
    >>> bool(heavier[0] > coef[0] > 0)
    True
    """

    def __init__(
        self,
        design,
        y: np.ndarray,
        C: float,
        task_columns: slice | None = None,
        max_newton_columns: int = MAX_NEWTON_COLUMNS,
        tol: float = 1e-8,
        column_precision: np.ndarray | None = None,
    ):
        self.y = y
        self.tol = tol
        self.n_columns = design.shape[1]
        self.one_class = np.unique(y).size < 2
        self.with_bias = sparse.hstack([design, np.ones((design.shape[0], 1))]).tocsr()
        precision = np.ones(self.n_columns) if column_precision is None else column_precision
        self.penalty = np.append(np.asarray(precision, dtype=np.float64) / C, 0.0)
        self.solver = None
        self.remembered: dict[bytes, tuple[np.ndarray, float]] = {}
        self.pooled_start: np.ndarray | None = None
        task_block = (
            not self.one_class
            and task_columns is not None
            and TaskBlockSolver.applies(self.with_bias, task_columns)
        )
        n_task_columns = len(range(*task_columns.indices(self.n_columns))) if task_block else 0
        # the task block is solved by its diagonal: only the other columns make H large
        self.quasi_newton = self.n_columns - n_task_columns > max_newton_columns
        if task_block and not self.quasi_newton:
            self.solver = TaskBlockSolver(self.with_bias, task_columns, self.penalty)

    def with_precision(self, column_precision: np.ndarray, C: float) -> WeightedLogistic:
        """The same design and labels under another prior, ``column_precision`` (n_columns,)
        in units of ``1 / C``: the bias column and the task block's rows are shared, nothing
        fitted is (what a new :class:`WeightedLogistic` of that prior fits, without building
        its solver again)."""
        other = copy.copy(self)
        other.penalty = np.append(np.asarray(column_precision, dtype=np.float64) / C, 0.0)
        other.remembered, other.pooled_start = {}, None
        for fitted in ("pooled", "pooled_task_sums"):  # cached properties of this prior
            other.__dict__.pop(fitted, None)
        if self.solver is not None:
            other.solver = self.solver.with_penalty(other.penalty)
        return other

    @cached_property
    def pooled(self) -> tuple[np.ndarray, float]:
        """The fit with every row weighing 1: ``(coef, intercept)``, from ``pooled_start``
        (weights then intercept: a nearby problem's pooled fit) when set, else zeros."""
        return self.fit(np.ones(self.y.size), self.pooled_start)

    def fit(self, weights: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """Newton's method with a backtracking line search under row weights ``weights``.

        The minimum depends on the weights alone (``start`` only shortens the way to it): a
        fit under weights already fitted returns the remembered minimum (up to
        :data:`REMEMBERED_FITS` of them).

        Parameters
        ----------
        weights : ndarray of shape (n_rows,)
            The rows' weights ``m_i ≥ 0``.
        start : ndarray of shape (n_columns + 1,), optional
            Weights then intercept to start from (zeros by default).

        Returns
        -------
        coef : ndarray of shape (n_columns,)
        intercept : float
        """
        return self._remembered(weights, lambda: self._fit(weights, start))

    def fit_from_pooled(
        self, task_weights: np.ndarray, row_task: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """:meth:`fit` under row weights ``task_weights[row_task]`` (one weight per task,
        shape (U,); ``row_task`` the rows' task columns, shape (n_rows,)) from the pooled fit;
        its first Newton step from the tasks' :class:`TaskSums` at the pooled fit, without a
        pass over the rows (the same step, summed in another order)."""
        weights = task_weights[row_task]
        pooled = np.append(*self.pooled)
        sums = self.pooled_task_sums
        if sums is None:  # no task block, or no room for the sums
            return self._remembered(weights, lambda: self._fit(weights, pooled))
        return self._remembered(
            weights, lambda: self._fit(weights, pooled, self._first_step(task_weights, sums))
        )

    @cached_property
    def pooled_task_sums(self) -> TaskSums | None:
        """:meth:`TaskBlockSolver.task_sums` at the pooled fit (None without a task block)."""
        if self.solver is None or self.one_class or self.quasi_newton:
            return None
        return self.solver.task_sums(self.solver.margin(np.append(*self.pooled)), self.y)

    def _first_step(self, task_weights: np.ndarray, sums: TaskSums) -> tuple:
        """The start, its margins and loss, the gradient and the factored Hessian at the
        pooled fit under task weights ``task_weights`` (U,), from ``sums``."""
        solver, penalty = self.solver, self.penalty
        coef = np.append(*self.pooled)
        gradient = -penalty * coef
        gradient[solver.rest_index] += task_weights @ sums.residual_rest
        gradient[solver.task_index] += task_weights * sums.residual
        a = np.tensordot(task_weights, sums.gram, axes=1) + np.diag(solver.penalty_rest)
        b = (sums.curvature_rest * task_weights[:, None]).T
        d = solver.penalty_tasks + task_weights * sums.curvature
        loss = float(-(task_weights @ sums.log_likelihood) + 0.5 * penalty @ (coef * coef))
        return coef, solver.margin(coef), loss, gradient, solver.block_solver(a, b, d)

    def _remembered(self, weights: np.ndarray, fit) -> tuple[np.ndarray, float]:
        """``fit()``'s minimum, or the one remembered for ``weights``."""
        key = hashlib.blake2b(np.ascontiguousarray(weights, dtype=np.float64)).digest()
        if key in self.remembered:
            coef, intercept = self.remembered[key]
            return coef.copy(), intercept
        coef, intercept = fit()
        if len(self.remembered) < REMEMBERED_FITS:
            self.remembered[key] = (coef.copy(), intercept)
        return coef, intercept

    def _fit(
        self, weights: np.ndarray, start: np.ndarray | None, first: tuple | None = None
    ) -> tuple[np.ndarray, float]:
        y, with_bias, penalty = self.y, self.with_bias, self.penalty
        if self.one_class:
            frequency = (weights @ y + 1.0) / (weights.sum() + 2.0)
            return np.zeros(self.n_columns), float(logit(frequency))
        if self.quasi_newton:
            return self._fit_quasi_newton(weights, start)
        solver = self.solver
        margin_of = solver.margin if solver is not None else with_bias.__matmul__
        transpose_times = solver.transpose_times if solver is not None else with_bias.T.__matmul__
        if first is None:
            coef = np.zeros(with_bias.shape[1]) if start is None else start.copy()
            margin = margin_of(coef)
            loss = loss_of_margin(margin, y, weights, coef, penalty)
        else:
            coef, margin, loss, first_gradient, first_solve = first
        solve, reused, previous = None, False, np.inf
        for step in range(100):
            if step == 0 and first is not None:
                gradient, solve = first_gradient, first_solve
            else:
                probability = expit(margin)
                gradient = transpose_times(weights * (y - probability)) - penalty * coef
                if solve is None or previous > REUSE_BELOW or reused:
                    curvature = weights * probability * (1.0 - probability)
                    solve, reused = self._factor(curvature), False
                else:
                    reused = True
            direction = solve(gradient)
            decrement = 0.5 * float(gradient @ direction)
            size = 1.0
            while True:
                candidate = coef + size * direction
                candidate_margin = margin_of(candidate)
                candidate_loss = loss_of_margin(candidate_margin, y, weights, candidate, penalty)
                if candidate_loss <= loss + 1e-12 or size < 1e-8:
                    break
                size *= 0.5
            coef, loss, margin = candidate, candidate_loss, candidate_margin
            if decrement < self.tol:
                break
            previous = decrement
        return coef[:-1], float(coef[-1])

    def _factor(self, curvature: np.ndarray):
        """``g ↦ H⁻¹ g`` at rows' curvatures ``curvature`` (shape (n_rows,))."""
        if self.solver is not None:
            return self.solver.factor(curvature)
        scaled = self.with_bias.multiply(curvature[:, None])
        hessian = (self.with_bias.T @ scaled).toarray() + np.diag(self.penalty)
        factored = cho_factor(hessian)
        return lambda gradient: cho_solve(factored, gradient)

    def _fit_quasi_newton(
        self, weights: np.ndarray, start: np.ndarray | None
    ) -> tuple[np.ndarray, float]:
        """The same objective by SciPy's L-BFGS-B (gradient from two sparse products), BLAS on one
        thread (:mod:`clusterednb.logistic.solvers.lbfgs`)."""
        y, with_bias, penalty = self.y, self.with_bias, self.penalty
        transposed = with_bias.T.tocsr()

        def loss_and_gradient(coef: np.ndarray) -> tuple[float, np.ndarray]:
            margin = with_bias @ coef
            residual = weights * (y - expit(margin))
            loss = loss_of_margin(margin, y, weights, coef, penalty)
            return loss, penalty * coef - transposed @ residual

        first = np.zeros(with_bias.shape[1]) if start is None else start
        result = minimize_lbfgs(loss_and_gradient, first, gtol=1e-6, ftol=1e-12)
        return result.x[:-1], float(result.x[-1])


def fit_weighted_logistic(
    design,
    y: np.ndarray,
    weights: np.ndarray,
    C: float,
    start: np.ndarray | None = None,
    task_columns: slice | None = None,
) -> tuple[np.ndarray, float]:
    """Weighted L2 logistic regression by Newton's method with a backtracking line search.

    One fit of a :class:`WeightedLogistic`.

    Parameters
    ----------
    design : sparse matrix of shape (n_rows, n_columns)
    y : ndarray of shape (n_rows,)
        Labels in {0, 1}.
    weights : ndarray of shape (n_rows,)
        The rows' weights ``m_i ≥ 0``.
    C : float
        Inverse penalty of every column but the intercept.
    start : ndarray of shape (n_columns + 1,), optional
        Weights then intercept to start from (zeros by default).
    task_columns : slice, optional
        Columns that one-hot encode the task (see :class:`WeightedLogistic`).

    Returns
    -------
    coef : ndarray of shape (n_columns,)
    intercept : float

    Examples
    --------
    One class only: no weights to learn, the add-one frequency as the intercept.

    >>> from scipy import sparse
    >>> coef, intercept = fit_weighted_logistic(sparse.csr_matrix(np.eye(2)), np.array([1, 1]),
    ...                                         np.ones(2), C=1.0)
    >>> coef.tolist(), round(float(1 / (1 + np.exp(-intercept))), 4)  # (2 + 1) / (2 + 2)
    ([0.0, 0.0], 0.75)
    """
    return WeightedLogistic(design, y, C, task_columns).fit(weights, start)
