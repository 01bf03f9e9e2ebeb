"""The weighted Newton fit: the task block's Schur-complement step is the plain step."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from clusterednb.logistic.solvers import task_block, weighted_newton
from clusterednb.logistic.solvers.cluster_weighted import sparse_design
from clusterednb.logistic.solvers.distinct_rows import distinct_rows, rows_match
from clusterednb.logistic.solvers.weighted_newton import WeightedLogistic, fit_weighted_logistic


def problem(seed: int = 0, n_rows: int = 300, n_tasks: int = 7):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, size=(n_rows, 4))
    codes[rng.random(codes.shape) < 0.1] = -1  # missing values: no column set
    task = rng.integers(0, n_tasks, size=n_rows)
    numeric = rng.normal(size=(n_rows, 1))
    offsets = np.arange(0, 13, 3)
    design = sparse_design(codes, offsets, task, n_tasks, numeric)
    margin = 0.8 * (codes[:, 0] == 1) - 0.5 * numeric[:, 0] + 0.3 * (task % 3 - 1)
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-margin))).astype(float)
    weights = rng.uniform(0.1, 1.0, size=n_rows)
    return design, y, weights, slice(12, 12 + n_tasks)


@pytest.mark.parametrize("dense_limit", [256, 0])  # the rest dense, then sparse
def test_the_task_block_step_finds_the_plain_steps_optimum(monkeypatch, dense_limit):
    monkeypatch.setattr(task_block, "MAX_DENSE_COLUMNS", dense_limit)
    design, y, weights, tasks = problem()
    plain = fit_weighted_logistic(design, y, weights, C=0.7)
    blocked = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    np.testing.assert_allclose(blocked[0], plain[0], atol=1e-8)
    assert blocked[1] == pytest.approx(plain[1], abs=1e-8)


def test_it_is_scikit_learns_weighted_regression():
    design, y, weights, tasks = problem(seed=1)
    coef, intercept = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    reference = LogisticRegression(C=0.7, tol=1e-12, max_iter=10_000)
    reference.fit(design.toarray(), y, sample_weight=weights)
    np.testing.assert_allclose(coef, reference.coef_[0], atol=1e-5)
    assert intercept == pytest.approx(reference.intercept_[0], abs=1e-5)


def test_a_design_whose_task_columns_are_not_one_hot_takes_the_plain_step():
    design, y, weights, tasks = problem(seed=2)
    design = design.tolil()
    design[0, tasks.start] = 2.0  # no longer an indicator
    design = design.tocsr()
    with_bias = weighted_newton.sparse.hstack([design, np.ones((design.shape[0], 1))]).tocsr()
    assert not task_block.TaskBlockSolver.applies(with_bias, tasks)
    plain = fit_weighted_logistic(design, y, weights, C=0.7)
    asked = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    np.testing.assert_allclose(asked[0], plain[0], atol=1e-12)


def test_one_task_block_step_solves_the_full_newton_system():
    design, _, weights, tasks = problem(seed=3)
    with_bias = weighted_newton.sparse.hstack([design, np.ones((design.shape[0], 1))]).tocsr()
    penalty = np.append(np.full(design.shape[1], 1 / 0.7), 0.0)
    curvature = weights * np.random.default_rng(4).uniform(0.05, 0.25, size=weights.size)
    gradient = np.random.default_rng(5).normal(size=with_bias.shape[1])
    hessian = (with_bias.T @ with_bias.multiply(curvature[:, None])).toarray() + np.diag(penalty)
    solver = task_block.TaskBlockSolver(with_bias, tasks, penalty)
    assert solver.patterns is None and isinstance(solver.rest, np.ndarray)  # the dense product
    # ZᵀSZ is summed in single precision, as (S^½Z)ᵀ(S^½Z): the step is the Newton step to
    # about 1e-6 of its size.
    exact = np.linalg.solve(hessian, gradient)
    step = solver.solve(curvature, gradient)
    assert np.linalg.norm(step - exact) <= 1e-5 * np.linalg.norm(exact)


def test_single_precision_steps_reach_the_double_precision_minimum():
    design, y, weights, tasks = problem(seed=3)
    blocked = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    plain = fit_weighted_logistic(design, y, weights, C=0.7)  # every step in float64
    np.testing.assert_allclose(blocked[0], plain[0], atol=1e-7)
    assert blocked[1] == pytest.approx(plain[1], abs=1e-7)


def test_a_reused_hessian_stops_at_the_same_minimum():
    design, y, weights, tasks = problem(seed=7)
    fresh = weighted_newton.REUSE_BELOW
    try:
        weighted_newton.REUSE_BELOW = 0.0  # a new Hessian at every step
        every_step = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    finally:
        weighted_newton.REUSE_BELOW = fresh
    reused = fit_weighted_logistic(design, y, weights, C=0.7, task_columns=tasks)
    np.testing.assert_allclose(reused[0], every_step[0], atol=1e-7)


def test_repeated_rows_are_summed_once_and_solve_the_same_system():
    rng = np.random.default_rng(6)
    n_rows, n_tasks = 2000, 5
    codes = rng.integers(0, 3, size=(n_rows, 2))  # 9 distinct feature rows
    task = rng.integers(0, n_tasks, size=n_rows)
    design = sparse_design(codes, np.array([0, 3, 6]), task, n_tasks)
    with_bias = weighted_newton.sparse.hstack([design, np.ones((n_rows, 1))]).tocsr()
    penalty = np.append(np.full(design.shape[1], 1.0), 0.0)
    solver = task_block.TaskBlockSolver(with_bias, slice(6, 6 + n_tasks), penalty)
    assert solver.patterns is not None and solver.patterns.shape[0] == 9
    curvature = rng.uniform(0.05, 0.25, size=n_rows)
    gradient = rng.normal(size=with_bias.shape[1])
    hessian = (with_bias.T @ with_bias.multiply(curvature[:, None])).toarray() + np.diag(penalty)
    np.testing.assert_allclose(
        solver.solve(curvature, gradient), np.linalg.solve(hessian, gradient), rtol=1e-10
    )


def test_one_problem_fitted_under_many_weightings_matches_fresh_fits():
    design, y, weights, tasks = problem(seed=7)
    shared = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    for row_weights in (weights, np.ones(y.size), weights[::-1].copy()):
        reused = shared.fit(row_weights, start=np.append(*shared.pooled))
        fresh = fit_weighted_logistic(design, y, row_weights, C=0.7, task_columns=tasks)
        # Newton stops at a decrement below 1e-8: two starts agree to about 1e-7.
        np.testing.assert_allclose(reused[0], fresh[0], atol=1e-6)
        assert reused[1] == pytest.approx(fresh[1], abs=1e-6)
    unweighted = fit_weighted_logistic(design, y, np.ones(y.size), C=0.7, task_columns=tasks)
    np.testing.assert_array_equal(shared.pooled[0], unweighted[0])


def _task_problem(seed: int):
    design, y, _, tasks = problem(seed=seed)
    row_task = design[:, tasks].tocsr().indices  # every row of problem() has one task
    task_weights = np.random.default_rng(seed).uniform(0.05, 1.0, size=tasks.stop - tasks.start)
    return design, y, tasks, row_task, task_weights


def test_the_first_step_from_task_sums_is_the_step_from_a_pass_over_the_rows():
    design, y, tasks, row_task, task_weights = _task_problem(seed=8)
    shared = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    weights = task_weights[row_task]
    coef, margin, loss, gradient, solve = shared._first_step(task_weights, shared.pooled_task_sums)
    with_bias = shared.with_bias
    np.testing.assert_array_equal(coef, np.append(*shared.pooled))
    np.testing.assert_allclose(margin, with_bias @ coef, rtol=1e-12)
    assert loss == pytest.approx(
        weighted_newton.penalised_loss(with_bias, y, weights, coef, shared.penalty), rel=1e-12
    )
    p1 = 1 / (1 + np.exp(-(with_bias @ coef)))
    by_rows = with_bias.T @ (weights * (y - p1)) - shared.penalty * coef
    np.testing.assert_allclose(gradient, by_rows, atol=1e-10)
    hessian = with_bias.T @ with_bias.multiply((weights * p1 * (1 - p1))[:, None])
    exact = np.linalg.solve(hessian.toarray() + np.diag(shared.penalty), by_rows)
    np.testing.assert_allclose(solve(gradient), exact, rtol=1e-9, atol=1e-12)


def test_a_fit_from_the_pooled_task_sums_reaches_the_minimum_of_a_plain_fit():
    design, y, tasks, row_task, task_weights = _task_problem(seed=9)
    shared = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    from_sums = shared.fit_from_pooled(task_weights, row_task)
    plain = fit_weighted_logistic(design, y, task_weights[row_task], C=0.7)
    np.testing.assert_allclose(from_sums[0], plain[0], atol=1e-7)
    assert from_sums[1] == pytest.approx(plain[1], abs=1e-7)


def test_without_room_for_the_task_sums_the_fit_passes_over_the_rows(monkeypatch):
    monkeypatch.setattr(task_block, "MAX_TASK_SUMS", 10)
    design, y, tasks, row_task, task_weights = _task_problem(seed=9)
    shared = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    assert shared.pooled_task_sums is None
    fitted = shared.fit_from_pooled(task_weights, row_task)
    plain = fit_weighted_logistic(design, y, task_weights[row_task], C=0.7)
    np.testing.assert_allclose(fitted[0], plain[0], atol=1e-7)


def test_a_looser_tolerance_stops_within_it_of_the_minimum():
    design, y, weights, tasks = problem(seed=12)
    tight = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    loose = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks, tol=1e-2)
    exact, rough = np.append(*tight.fit(weights)), np.append(*loose.fit(weights))
    losses = [
        weighted_newton.penalised_loss(tight.with_bias, y, weights, coef, tight.penalty)
        for coef in (exact, rough)
    ]
    assert 0.0 <= losses[1] - losses[0] <= 1e-2


def test_a_fit_under_weights_already_fitted_is_remembered_not_refitted(monkeypatch):
    design, y, weights, tasks = problem(seed=10)
    shared = weighted_newton.WeightedLogistic(design, y, C=0.7, task_columns=tasks)
    first = shared.fit(weights)
    calls = []
    monkeypatch.setattr(shared, "_fit", lambda *args: calls.append(args))
    again = shared.fit(weights.copy(), start=np.ones(design.shape[1] + 1))
    assert calls == []
    np.testing.assert_array_equal(again[0], first[0])
    again[0][0] = 99.0  # the caller's copy: the remembered minimum is unchanged
    assert shared.fit(weights)[0][0] == first[0][0]


@pytest.mark.parametrize(("numeric", "dense_limit"), [(True, 256), (True, 0), (False, 256)])
def test_the_solvers_products_are_the_designs(monkeypatch, numeric, dense_limit):
    """Margins and ``Zᵀv`` from the rest's columns (dense, sparse, or, with no numeric column,
    its 27 distinct rows) and the task block equal the design's products."""
    monkeypatch.setattr(task_block, "MAX_DENSE_COLUMNS", dense_limit)
    rng = np.random.default_rng(8)
    n_rows, n_tasks = 300, 7
    codes = rng.integers(0, 3, size=(n_rows, 3))
    task = rng.integers(0, n_tasks, size=n_rows)
    column = rng.normal(size=(n_rows, 1)) if numeric else None
    design = sparse_design(codes, np.arange(0, 10, 3), task, n_tasks, column).tolil()
    design[0, 9 : 9 + n_tasks] = 0.0  # a row of no task
    with_bias = weighted_newton.sparse.hstack([design.tocsr(), np.ones((n_rows, 1))]).tocsr()
    penalty = np.ones(with_bias.shape[1])
    solver = task_block.TaskBlockSolver(with_bias, slice(9, 9 + n_tasks), penalty)
    assert (solver.patterns is None) == numeric
    coef, values = rng.normal(size=with_bias.shape[1]), rng.normal(size=n_rows)
    np.testing.assert_allclose(solver.margin(coef), with_bias @ coef, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        solver.transpose_times(values), with_bias.T @ values, rtol=1e-12, atol=1e-10
    )


@pytest.mark.parametrize("start", [False, True])
def test_the_quasi_newton_fit_for_wide_designs_reaches_newtons_optimum(start):
    """Above ``max_newton_columns`` (a vocabulary) L-BFGS minimises the same objective."""
    design, y, weights, tasks = problem(seed=5)
    newton = weighted_newton.WeightedLogistic(design, y, 0.7, task_columns=tasks)
    wide = weighted_newton.WeightedLogistic(design, y, 0.7, tasks, max_newton_columns=4)
    assert wide.quasi_newton and not newton.quasi_newton
    begin = np.append(*newton.pooled) if start else None
    expected = newton.fit(weights)
    found = wide.fit(weights, begin)
    np.testing.assert_allclose(found[0], expected[0], atol=1e-4)
    assert found[1] == pytest.approx(expected[1], abs=1e-4)


def test_minimize_lbfgs_runs_blas_on_one_thread_and_restores_the_callers_limit():
    """OpenBLAS's threads made L-BFGS over a vocabulary ~5 times slower (see ``lbfgs``); the
    quasi-Newton fits of ``weighted_newton`` and ``task_deviations`` call this helper."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from clusterednb.logistic.solvers.lbfgs import minimize_lbfgs

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    seen: list[set[int]] = []

    def loss_and_gradient(x):
        seen.append(blas_threads())
        return float(x @ x), 2 * x

    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()  # {2} on two cores or more
        minimize_lbfgs(loss_and_gradient, np.ones(3), gtol=1e-10, ftol=1e-14)
        after = blas_threads()
    assert seen and all(threads == {1} for threads in seen)
    assert after == before


@pytest.mark.parametrize("seed", range(5))
def test_the_design_is_each_rows_one_hots_task_and_numbers(seed):
    """``sparse_design`` built as CSR arrays directly: each row's one-hot features (a missing
    code sets none), its task's column (an unseen task, none) and its numbers (a zero stored
    as no entry, a NaN kept), in canonical form, against the dense rows built by hand."""
    rng = np.random.default_rng(seed)
    n_rows, widths, n_tasks = int(rng.integers(0, 40)), rng.integers(1, 4, 3), 4
    offsets = np.concatenate([[0], np.cumsum(widths)])
    codes = np.column_stack([rng.integers(-1, w, n_rows) for w in widths])
    task = rng.integers(-1, n_tasks, n_rows)
    numeric = np.where(rng.random((n_rows, 2)) < 0.3, 0.0, rng.normal(size=(n_rows, 2)))
    if n_rows:
        numeric[0, 1] = np.nan
    expected = np.zeros((n_rows, int(offsets[-1]) + n_tasks + 2))
    for row in range(n_rows):
        for feature, code in enumerate(codes[row]):
            if code >= 0:
                expected[row, offsets[feature] + code] = 1.0
        if task[row] >= 0:
            expected[row, offsets[-1] + task[row]] = 1.0
        expected[row, -2:] = numeric[row]
    design = sparse_design(codes, offsets, task, n_tasks, numeric)
    assert design.has_canonical_format
    np.testing.assert_array_equal(design.toarray(), expected)
    assert design.nnz == int(np.count_nonzero(expected))  # NaN counts as nonzero
    plain = sparse_design(codes, offsets, task, n_tasks)
    np.testing.assert_array_equal(plain.toarray(), expected[:, :-2])


@pytest.mark.parametrize("seed", range(5))
def test_distinct_rows_are_exact_and_refused_where_a_row_differs(seed):
    """The distinct rows rebuild the matrix exactly; a row that differs from its group's first
    only where the projection cannot see it (a NaN), or too few repeats, gives none."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 2, (int(rng.integers(1, 6)), 4)).astype(np.float64)
    matrix = pool[rng.integers(0, pool.shape[0], 30)]
    patterns, pattern_of_row = distinct_rows(matrix)
    np.testing.assert_array_equal(patterns[pattern_of_row], matrix)
    assert len(patterns) == len(np.unique(matrix, axis=0))
    assert rows_match(matrix, patterns, pattern_of_row)
    changed = matrix.copy()
    changed[int(rng.integers(30)), int(rng.integers(4))] += 1.0
    assert not rows_match(changed, patterns, pattern_of_row)
    with_nan = matrix.copy()
    with_nan[3, 2] = np.nan
    assert distinct_rows(with_nan) == (None, None)
    assert distinct_rows(np.eye(5)) == (None, None)


@pytest.mark.parametrize("task_block_solver", [True, False])
def test_a_columns_precision_is_its_prior_as_a_rescaled_column(task_block_solver):
    """A weight of prior precision ``s / C`` is the weight of the column divided by ``√s``
    under precision ``1 / C``, divided by ``√s``: the same objective in other units."""
    design, y, weights, tasks = problem(seed=5)
    precision = np.random.default_rng(5).uniform(0.25, 8.0, design.shape[1])
    task_columns = tasks if task_block_solver else None
    scaled = WeightedLogistic(design, y, 0.7, task_columns, column_precision=precision)
    assert (scaled.solver is not None) == task_block_solver
    coef, intercept = scaled.fit(weights)
    rescaled = design @ sparse.diags(1.0 / np.sqrt(precision))
    plain, plain_intercept = fit_weighted_logistic(
        rescaled.tocsr(), y, weights, C=0.7, task_columns=task_columns
    )
    np.testing.assert_allclose(coef, plain / np.sqrt(precision), atol=1e-8)
    assert intercept == pytest.approx(plain_intercept, abs=1e-8)


@pytest.mark.parametrize("task_block_solver", [True, False])
def test_another_prior_on_the_same_rows_fits_as_a_new_problem_and_keeps_the_first(
    task_block_solver,
):
    """``with_precision`` shares the rows and the solver's structure, not what was fitted:
    its pooled and weighted fits are those of a problem built with that prior, to the last
    digit, and the first problem's are untouched."""
    design, y, weights, tasks = problem(seed=6)
    task_columns = tasks if task_block_solver else None
    first = WeightedLogistic(design, y, 0.7, task_columns)
    pooled_before = first.pooled[0].copy()
    first.fit(weights)
    precision = np.random.default_rng(6).uniform(0.25, 8.0, design.shape[1])
    other = first.with_precision(precision, 0.7)
    fresh = WeightedLogistic(design, y, 0.7, task_columns, column_precision=precision)
    np.testing.assert_array_equal(other.pooled[0], fresh.pooled[0])
    np.testing.assert_array_equal(other.fit(weights)[0], fresh.fit(weights)[0])
    assert not np.allclose(other.pooled[0], pooled_before)
    np.testing.assert_array_equal(first.pooled[0], pooled_before)
    np.testing.assert_array_equal(
        first.fit(weights)[0], WeightedLogistic(design, y, 0.7, task_columns).fit(weights)[0]
    )
