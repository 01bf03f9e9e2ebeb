"""The tasks' curvature matrices kept as factor rows equal the dense matrices they replace."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit

from clusterednb.logistic.clustering.task_expansions import (
    TaskExpansions,
    one_hot_design,
    one_hot_rows,
    pooled_anchor,
)
from clusterednb.logistic.clustering.task_hessians import (
    DenseHessians,
    RowFactorHessians,
    ranges,
)
from clusterednb.logistic.solvers.laplace import fit_laplace


def tasks_rows(seed: int = 0, n_tasks: int = 7):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 6, size=n_tasks)  # some tasks have no labelled row
    codes = rng.integers(-1, 3, size=(int(sizes.sum()), 4))  # -1: missing
    offsets = np.array([0, 3, 6, 9, 12])
    y = rng.integers(0, 2, size=codes.shape[0]).astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return codes, offsets, y, starts


def brute_hessians(design, y, starts, precision):
    anchor = fit_laplace(design, y, precision=precision).coef
    curvature = expit(design @ anchor) * (1 - expit(design @ anchor))
    return np.stack(
        [(design[a:b].T * curvature[a:b]) @ design[a:b] for a, b in itertools.pairwise(starts)]
    )


def test_one_hot_rows_equal_the_dense_design():
    codes, offsets, _, _ = tasks_rows()
    np.testing.assert_array_equal(
        one_hot_rows(codes, offsets).toarray(), one_hot_design(codes, offsets)
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factor_rows_give_the_dense_curvatures_of_every_task(seed):
    codes, offsets, y, starts = tasks_rows(seed)
    design = one_hot_design(codes, offsets)
    expansions = TaskExpansions.at_pooled_map(one_hot_rows(codes, offsets), y, starts, 0.7)
    dense = brute_hessians(design, y, starts, 0.7)
    assert isinstance(expansions.hessian, RowFactorHessians)
    np.testing.assert_allclose(expansions.hessian[:], dense, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(expansions.hessian[3], dense[3], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        expansions.hessian.summed([1, 4, 5]), dense[[1, 4, 5]].sum(axis=0), atol=1e-13
    )
    weights = np.linspace(0.1, 1.0, dense.shape[0])
    np.testing.assert_allclose(
        expansions.hessian.scaled(weights)[:], dense * weights[:, None, None], atol=1e-13
    )
    taken = expansions.hessian.take(np.array([5, 0, 2]))
    np.testing.assert_allclose(taken[:], dense[[5, 0, 2]], atol=1e-13)
    # the dense face answers alike
    wrapped = DenseHessians(dense)
    np.testing.assert_allclose(wrapped.summed([1, 4, 5]), expansions.hessian.summed([1, 4, 5]))
    np.testing.assert_allclose(wrapped.take(np.array([5, 0, 2]))[:], taken[:], atol=1e-13)


def test_the_pooled_anchor_from_distinct_rows_equals_newton_on_every_row():
    codes, offsets, y, _ = tasks_rows(3, n_tasks=40)
    design = one_hot_design(codes, offsets)
    merged = pooled_anchor(one_hot_rows(codes, offsets), y, 1.3)
    np.testing.assert_allclose(merged, fit_laplace(design, y, precision=1.3).coef, atol=1e-9)


def test_expansions_from_a_dense_design_equal_those_from_a_sparse_one():
    codes, offsets, y, starts = tasks_rows(4)
    sparse_rows = TaskExpansions.at_pooled_map(one_hot_rows(codes, offsets), y, starts, 1.0)
    dense_rows = TaskExpansions.at_pooled_map(one_hot_design(codes, offsets), y, starts, 1.0)
    np.testing.assert_allclose(sparse_rows.gradient, dense_rows.gradient, atol=1e-13)
    np.testing.assert_allclose(sparse_rows.value, dense_rows.value, atol=1e-13)
    np.testing.assert_allclose(sparse_rows.hessian[:], dense_rows.hessian[:], atol=1e-13)


def test_ranges_concatenate_integer_ranges():
    starts, stops = np.array([3, 0, 7, 7]), np.array([5, 0, 9, 8])
    expected = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops, strict=True)])
    np.testing.assert_array_equal(ranges(starts, stops), expected)
    assert ranges(np.array([2]), np.array([2])).size == 0


def test_the_pooled_fit_of_tens_of_millions_of_rows_stays_positive_definite():
    """One-hot columns make the curvature singular but for the prior's λ I; with 10⁷ rows a
    pattern its entries reach 10⁷, and in float32 the λ I was rounded away (the fit of 10⁷
    tasks stopped there)."""
    rng = np.random.default_rng(0)
    codes = np.array(np.meshgrid(*[range(3)] * 8, indexing="ij")).reshape(8, -1).T  # 6 561
    codes = np.vstack([codes, codes])
    design = one_hot_design(codes, np.arange(0, 25, 3))
    y = np.repeat([1.0, 0.0], 6561)
    counts = rng.uniform(3e3, 9e3, y.size)  # 8 × 10⁷ rows in all
    fit = fit_laplace(design, y, counts, precision=1.0)
    probability = 1 / (1 + np.exp(-(design @ fit.coef)))
    gradient = design.T @ (counts * (y - probability)) - fit.coef
    assert np.abs(gradient).max() < 1e-3 * counts.sum() ** 0.5
