"""Weighted L2-penalised logistic regression by Newton's method, fast when a block of columns
is a one-hot of the task.

The objective is scikit-learn's ``LogisticRegression(C=C)`` with sample weights ``m_i`` (the
intercept unpenalised):

    minimise  C Σ_i m_i loss_i(w) + ½ |w|²   ⇔   Σ_i m_i loss_i(w) + ½ (1/C) |w|².

Each Newton step solves ``H δ = g`` with ``H = Zᵀ S Z + P`` (``S`` the rows' weighted
curvatures, ``P`` the penalty). When the design holds a one-hot of the task (each task its own
intercept, :func:`~clusterednb.logistic.solvers.cluster_weighted.sparse_design`), those ``U``
columns
make ``H`` large but its task block diagonal: split the columns into the rest ``f`` and the
tasks ``t``,

    H = [[A, B], [Bᵀ, D]],   D diagonal,   (A − B D⁻¹ Bᵀ) δ_f = g_f − B D⁻¹ g_t,
    δ_t = D⁻¹ (g_t − Bᵀ δ_f),

so a step costs ``O(n d_f² + U d_f²)`` instead of the sparse product ``ZᵀSZ`` over all
columns and a dense ``O((d_f + U)³)`` factorisation: the difference between minutes and
seconds for a thousand users. The solution is the same (tested against the plain step).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit, logit

from clusterednb.logistic.solvers.distinct_rows import distinct_rows
from clusterednb.logistic.solvers.lbfgs import minimize_lbfgs

MAX_DENSE_COLUMNS = 256
"""Up to this many non-task columns, ``Zᵀ S Z`` is a dense BLAS product."""
REUSE_BELOW = 1e-2
"""Once a step's decrement ``½ gᵀ H⁻¹ g`` is below this, the next step reuses its factored
Hessian (one step in two is then a pass over the rows without a new Hessian): near the
minimum the Hessian barely moves, and the minimum itself does not depend on it."""
MAX_NEWTON_COLUMNS = 2000
"""Above this many columns (a vocabulary of words) Newton's ``d × d`` Hessian is too large to
form: the same objective is minimised by L-BFGS from the same start instead."""
MAX_TASK_SUMS = 2**24
"""Entries of the per-task ``d_f × d_f`` curvature sums kept for a first Newton step from
the pooled fit (:class:`TaskSums`; 128 MB)."""
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


def _dense(matrix) -> np.ndarray:
    return matrix.toarray() if sparse.issparse(matrix) else np.asarray(matrix)


@dataclass(frozen=True)
class TaskSums:
    """Sums over each task's rows at one point (the pooled fit): with row weights constant
    within each task, ``w_u``, the gradient, Hessian and loss there are weighted sums of
    these, so a Newton step from that point needs no pass over the rows.

    Attributes
    ----------
    gram : ndarray of shape (U, d_f, d_f)
        ``Σ s_i r_i r_iᵀ`` over the rest columns ``r_i``, ``s_i = p_i (1 − p_i)``.
    curvature_rest : ndarray of shape (U, d_f)
        ``Σ s_i r_i``.
    curvature : ndarray of shape (U,)
        ``Σ s_i``.
    residual_rest : ndarray of shape (U, d_f)
        ``Σ (y_i − p_i) r_i``.
    residual : ndarray of shape (U,)
        ``Σ (y_i − p_i)``.
    log_likelihood : ndarray of shape (U,)
        ``Σ log P(y_i)``.
    """

    gram: np.ndarray
    curvature_rest: np.ndarray
    curvature: np.ndarray
    residual_rest: np.ndarray
    residual: np.ndarray
    log_likelihood: np.ndarray


class _TaskBlockSolver:
    """Solves Newton systems whose task columns form a diagonal block (see the module)."""

    def __init__(self, with_bias: sparse.csr_matrix, task_columns: slice, penalty: np.ndarray):
        n_columns = with_bias.shape[1]
        self.task_index = np.arange(n_columns)[task_columns]
        self.rest_index = np.setdiff1d(np.arange(n_columns), self.task_index)
        rest = with_bias[:, self.rest_index]
        self.rest = rest.toarray() if rest.shape[1] <= MAX_DENSE_COLUMNS else rest.tocsr()
        self.tasks = with_bias[:, self.task_index].tocsr()
        self.rows_of_task = self.tasks.T.tocsr()  # (U, n_rows): each task's rows
        row_task = np.full(with_bias.shape[0], -1)
        nonzero = self.tasks.nonzero()
        row_task[nonzero[0]] = nonzero[1]
        self.row_task = row_task
        self.penalty_rest = penalty[self.rest_index]
        self.penalty_tasks = penalty[self.task_index]
        self.patterns, self.pattern_of_row = distinct_rows(self.rest)

    @staticmethod
    def applies(with_bias: sparse.csr_matrix, task_columns: slice) -> bool:
        """Whether every row has at most one task column set, to 1."""
        tasks = with_bias[:, task_columns].tocsr()
        return bool(np.all(np.diff(tasks.indptr) <= 1) and np.all(tasks.data == 1.0))

    def margin(self, coef: np.ndarray) -> np.ndarray:
        """``Z w`` of every row, shape (n_rows,), the rest's distinct rows multiplied once."""
        if self.patterns is not None:
            rest = (self.patterns @ coef[self.rest_index])[self.pattern_of_row]
        else:
            rest = self.rest @ coef[self.rest_index]
        return rest + np.append(coef[self.task_index], 0.0)[self.row_task]

    def transpose_times(self, values: np.ndarray) -> np.ndarray:
        """``Zᵀ v`` of a vector over the rows, shape (n_columns,)."""
        out = np.empty(self.rest_index.size + self.task_index.size)
        if self.patterns is not None:
            summed = np.bincount(self.pattern_of_row, values, self.patterns.shape[0])
            out[self.rest_index] = self.patterns.T @ summed
        else:
            out[self.rest_index] = self.rest.T @ values
        with_task = self.row_task >= 0
        out[self.task_index] = np.bincount(
            self.row_task[with_task], values[with_task], self.task_index.size
        )
        return out

    def factor(self, curvature: np.ndarray):
        """The Newton system at rows' curvatures ``s`` (shape (n_rows,)), factored: a function
        ``g ↦ H⁻¹ g`` on vectors of shape (n_columns,).

        A dense ``ZᵀSZ`` is summed in single precision: the Hessian only shapes the steps
        (the minimum is where the float64 gradient vanishes), and with the penalty on its
        diagonal a relative error of 1e-7 leaves it positive definite.
        """
        if self.patterns is not None:  # ZᵀSZ over distinct rows, their curvatures summed
            summed = np.bincount(self.pattern_of_row, curvature, self.patterns.shape[0])
            a = self.patterns.T @ (self.patterns * summed[:, None]) + np.diag(self.penalty_rest)
        elif sparse.issparse(self.rest):
            a = _dense(self.rest.T @ self.rest.multiply(curvature[:, None]).tocsr())
            a += np.diag(self.penalty_rest)
        else:
            single = self.rest_single
            a = (single.T @ (single * curvature.astype(np.float32)[:, None])).astype(np.float64)
            a += np.diag(self.penalty_rest)
        rows = self.rows_of_task
        weighted = sparse.csr_matrix(
            (curvature[rows.indices], rows.indices, rows.indptr), shape=rows.shape
        )
        b = _dense(weighted @ self.rest).T  # (d_f, U): Σ over each task's rows of s_i z_i
        d = self.penalty_tasks + np.bincount(
            self.row_task[self.row_task >= 0],
            weights=curvature[self.row_task >= 0],
            minlength=self.task_index.size,
        )
        return self.block_solver(a, b, d)

    def block_solver(self, a: np.ndarray, b: np.ndarray, d: np.ndarray):
        """``g ↦ H⁻¹ g`` of ``H = [[A, B], [Bᵀ, D]]`` from ``A`` (d_f, d_f), ``B`` (d_f, U) and
        the diagonal ``D`` (U,), through the Schur complement (see the module)."""
        schur = cho_factor(a - (b / d) @ b.T)

        def solve(gradient: np.ndarray) -> np.ndarray:
            g_rest, g_tasks = gradient[self.rest_index], gradient[self.task_index]
            step_rest = cho_solve(schur, g_rest - b @ (g_tasks / d))
            step = np.empty_like(gradient)
            step[self.rest_index] = step_rest
            step[self.task_index] = (g_tasks - b.T @ step_rest) / d
            return step

        return solve

    def task_sums(self, margin: np.ndarray, y: np.ndarray) -> TaskSums | None:
        """Each task's sums at rows' margins ``margin`` (n_rows,): what a Newton step under
        weights constant within each task needs; None when a row has no task, the rest
        columns are sparse, or the per-task matrices would pass :data:`MAX_TASK_SUMS`."""
        n_tasks, n_rest = self.task_index.size, self.rest_index.size
        if np.any(self.row_task < 0) or sparse.issparse(self.rest):
            return None
        if n_tasks * n_rest * n_rest > MAX_TASK_SUMS:
            return None
        probability = expit(margin)
        curvature = probability * (1.0 - probability)
        residual = y - probability
        gram = np.empty((n_tasks, n_rest, n_rest))
        rows = self.rows_of_task
        for task in range(n_tasks):
            own = rows.indices[rows.indptr[task] : rows.indptr[task + 1]]
            rest = self.rest[own]
            gram[task] = rest.T @ (rest * curvature[own, None])
        by_task = sparse.csr_matrix(
            (np.ones(rows.indices.size), rows.indices, rows.indptr), shape=rows.shape
        )
        return TaskSums(
            gram=gram,
            curvature_rest=by_task @ (self.rest * curvature[:, None]),
            curvature=by_task @ curvature,
            residual_rest=by_task @ (self.rest * residual[:, None]),
            residual=by_task @ residual,
            log_likelihood=by_task @ log_expit(np.where(y > 0, margin, -margin)),
        )

    @cached_property
    def rest_single(self) -> np.ndarray:
        """The dense rest columns in single precision (for :meth:`factor`)."""
        return self.rest.astype(np.float32)

    def solve(self, curvature: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        """``H⁻¹ g`` for rows' curvatures ``s`` (shape (n_rows,)) and ``g`` (n_columns,)."""
        return self.factor(curvature)(gradient)


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
        Inverse penalty of every column but the intercept.
    task_columns : slice, optional
        Columns that one-hot encode the task: solved by their diagonal block when every row
        sets at most one of them (else the plain step is taken).
    max_newton_columns : int, default=MAX_NEWTON_COLUMNS
        With more columns than this (not counting a task block), L-BFGS instead of Newton's
        method.

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
    ):
        self.y = y
        self.n_columns = design.shape[1]
        self.one_class = np.unique(y).size < 2
        self.with_bias = sparse.hstack([design, np.ones((design.shape[0], 1))]).tocsr()
        self.penalty = np.append(np.full(design.shape[1], 1.0 / C), 0.0)
        self.solver = None
        self.remembered: dict[bytes, tuple[np.ndarray, float]] = {}
        task_block = (
            not self.one_class
            and task_columns is not None
            and _TaskBlockSolver.applies(self.with_bias, task_columns)
        )
        n_task_columns = len(range(*task_columns.indices(self.n_columns))) if task_block else 0
        # the task block is solved by its diagonal: only the other columns make H large
        self.quasi_newton = self.n_columns - n_task_columns > max_newton_columns
        if task_block and not self.quasi_newton:
            self.solver = _TaskBlockSolver(self.with_bias, task_columns, self.penalty)

    @cached_property
    def pooled(self) -> tuple[np.ndarray, float]:
        """The fit with every row weighing 1: ``(coef, intercept)``."""
        return self.fit(np.ones(self.y.size))

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
        if sums is None or self.solver is None:
            return self._remembered(weights, lambda: self._fit(weights, pooled))
        return self._remembered(
            weights, lambda: self._fit(weights, pooled, self._first_step(task_weights, sums))
        )

    @cached_property
    def pooled_task_sums(self) -> TaskSums | None:
        """:meth:`_TaskBlockSolver.task_sums` at the pooled fit (None without a task block)."""
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
            if decrement < 1e-8:
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
