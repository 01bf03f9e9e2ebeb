"""Laplace-approximated marginal likelihood of a Gaussian-prior logistic regression.

For rows ``z_i`` (shape ``(d,)``, a column of ones included when an intercept is wanted),
labels ``y_i ∈ {0, 1}`` and row weights ``m_i`` (multiplicities), with the prior
``w ~ N(0, λ⁻¹ I)``, the log joint is

    f(w) = Σ_i m_i [y_i log σ(w·z_i) + (1 − y_i) log σ(−w·z_i)] − ½ λ |w|² + ½ d log(λ / 2π)

and the Laplace approximation of ``log ∫ exp f(w) dw`` is

    f(ŵ) + ½ d log 2π − ½ log det H,   H = Σ_i m_i σ_i (1 − σ_i) z_i z_iᵀ + λ I,

at the MAP ``ŵ`` (found by Newton's method; ``f`` is strictly concave, so it converges from
any start; ``H`` is summed in float64 at every step, as one-hot columns with millions of
rows make it singular but for ``λ I``, which single precision would round away). Rows with
the same features and label are merged first, their weights summed
(:func:`~clusterednb.logistic.solvers.distinct_rows.merged_rows`). It is exact when the
likelihood is Gaussian in ``w`` and its relative error vanishes as the rows grow;
``tests/logistic/test_clustered_logistic.py`` checks it against quadrature in 1-D.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit

from clusterednb.exceptions import CNBError
from clusterednb.logistic.solvers.distinct_rows import merged_rows


@dataclass(frozen=True)
class LaplaceFit:
    """The MAP and Laplace evidence of one logistic regression.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The MAP weights ``ŵ``.
    log_marginal : float
        Laplace approximation of ``log P(y | Z)`` (the prior integrated out).
    log_joint : float
        ``f(ŵ)``: log likelihood plus log prior density at the MAP.
    log_det_hessian : float
        ``log det H`` at the MAP.
    n_iter : int
        Newton steps taken.

    Examples
    --------
    The Laplace evidence is the joint at the MAP plus ``d/2 log 2π − ½ log det H``:

    >>> fit = fit_laplace(np.array([[1.0, 0], [1, 1], [1, 0], [1, 1]]), np.array([1, 0, 1, 1]))
    >>> d = fit.coef.size
    >>> bool(np.isclose(fit.log_marginal,
    ...                 fit.log_joint + d / 2 * np.log(2 * np.pi) - fit.log_det_hessian / 2))
    True
    """

    coef: np.ndarray
    log_marginal: float
    log_joint: float
    log_det_hessian: float
    n_iter: int


def _log_joint(
    design: np.ndarray, y: np.ndarray, weights: np.ndarray, coef: np.ndarray, precision: float
) -> float:
    margin = design @ coef
    log_likelihood = weights @ np.where(y > 0, log_expit(margin), log_expit(-margin))
    d = coef.size
    return float(
        log_likelihood - 0.5 * precision * coef @ coef + 0.5 * d * np.log(precision / (2 * np.pi))
    )


def fit_laplace(
    design: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
    precision: float = 1.0,
    start: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> LaplaceFit:
    """MAP by damped Newton steps and the Laplace log marginal likelihood.

    Parameters
    ----------
    design : ndarray of shape (n_rows, d)
        The rows ``z_i`` (float64).
    y : ndarray of shape (n_rows,)
        Labels in {0, 1}.
    weights : ndarray of shape (n_rows,), optional
        Row multiplicities ``m_i ≥ 0`` (default 1).
    precision : float, default=1.0
        ``λ > 0``, the prior precision of every weight.
    start : ndarray of shape (d,), optional
        Where Newton starts (a nearby MAP makes it a few steps); zeros by default.
    tol : float
        Stop after the step whose Newton decrement ``gᵀ H⁻¹ g / 2`` is below ``tol``.
    max_iter : int

    Returns
    -------
    LaplaceFit

    Examples
    --------
    With no rows the posterior is the prior, Gaussian, so Laplace is exact: evidence 1.

    >>> import numpy as np
    >>> bool(abs(fit_laplace(np.zeros((0, 2)), np.zeros(0)).log_marginal) < 1e-12)
    True
    """
    if not precision > 0:
        raise CNBError(f"the prior precision must be positive, got {precision!r}")
    design = np.asarray(design, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    weights = np.ones(y.size) if weights is None else np.asarray(weights, dtype=np.float64)
    design, y, weights = merged_rows(design, y, weights)
    d = design.shape[1]
    coef = np.zeros(d) if start is None else np.array(start, dtype=np.float64)
    value = _log_joint(design, y, weights, coef, precision)
    n_steps = 0
    for n_steps in range(1, max_iter + 1):  # noqa: B007 (the count is reported)
        probability = expit(design @ coef)
        gradient = design.T @ (weights * (y - probability)) - precision * coef
        # float64: with millions of rows the curvature's entries reach 10⁷ while one-hot
        # columns make it singular but for λ I, which float32 would round away.
        curvature = weights * probability * (1.0 - probability)
        hessian = design.T @ (design * curvature[:, None])
        factor = cho_factor(hessian + precision * np.eye(d))
        direction = cho_solve(factor, gradient)
        decrement = 0.5 * float(gradient @ direction)
        size = 1.0
        while True:
            candidate = coef + size * direction
            candidate_value = _log_joint(design, y, weights, candidate, precision)
            if candidate_value >= value - 1e-12 or size < 1e-8:
                break
            size *= 0.5
        coef, value = candidate, candidate_value
        if decrement < tol:  # converged; the step just taken squares the remaining error
            break
    probability = expit(design @ coef)
    hessian = (design.T * (weights * probability * (1.0 - probability))) @ design
    hessian += precision * np.eye(d)
    factor = cho_factor(hessian)
    log_det = 2.0 * float(np.log(np.diag(factor[0])).sum())
    return LaplaceFit(
        coef=coef,
        log_marginal=value + 0.5 * d * np.log(2 * np.pi) - 0.5 * log_det,
        log_joint=value,
        log_det_hessian=log_det,
        n_iter=n_steps,
    )
