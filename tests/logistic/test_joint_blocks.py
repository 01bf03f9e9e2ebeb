"""The anchored Laplace label marginal, batched: the augmented Cholesky is the plain formula."""

from __future__ import annotations

import numpy as np
import pytest

from clusterednb.exceptions import CNBError
from clusterednb.logistic.clustering.joint_blocks import TaskExpansions


def plain_log_marginal(expansions, value, gradient, hessian, precision):
    d = expansions.anchor.size
    a = hessian + precision * np.eye(d)
    b = gradient - precision * expansions.anchor
    _, log_det = np.linalg.slogdet(a)
    return (
        value
        + 0.5 * b @ np.linalg.solve(a, b)
        - 0.5 * precision * expansions.anchor @ expansions.anchor
        + 0.5 * d * np.log(precision)
        - 0.5 * log_det
    )


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])  # gradients small to large
def test_batched_marginals_match_the_plain_formula(scale):
    rng = np.random.default_rng(0)
    n_sets, d, precision = 7, 12, 0.5
    roots = rng.normal(size=(n_sets, d, 30))
    hessian = roots @ roots.transpose(0, 2, 1) * rng.uniform(0.0, 2.0, size=(n_sets, 1, 1))
    gradient = scale * rng.normal(size=(n_sets, d))
    value = rng.normal(size=n_sets)
    expansions = TaskExpansions(rng.normal(size=d), value, gradient, hessian)
    batched = expansions.log_marginals_of_sums(value, gradient, hessian, precision)
    plain = [
        plain_log_marginal(expansions, value[k], gradient[k], hessian[k], precision)
        for k in range(n_sets)
    ]
    np.testing.assert_allclose(batched, plain, rtol=1e-10, atol=1e-8)


def test_a_precision_matrix_that_is_not_positive_definite_is_refused():
    d = 3
    expansions = TaskExpansions(np.zeros(d), np.zeros(1), np.zeros((1, d)), np.zeros((1, d, d)))
    with pytest.raises(CNBError, match="not positive definite"):
        expansions.log_marginals_of_sums(np.zeros(1), np.zeros((1, d)), -5 * np.eye(d)[None], 1.0)
