"""Log Dirichlet normalisers and segment sums over the flat value axis."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = ["log_dirichlet_multinomial", "log_dirichlet_norm", "logsumexp", "segment_sum"]


def segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum the last axis over the feature segments of the flat value axis.

    Parameters
    ----------
    values : ndarray of shape (..., n_values_total)
    offsets : ndarray of shape (n_features + 1,)
        Segment boundaries; every segment must be non-empty.

    Returns
    -------
    ndarray of shape (..., n_features)

    Examples
    --------
    >>> segment_sum(np.array([1, 2, 3, 4, 5]), np.array([0, 2, 5])).tolist()
    [3, 12]
    """
    return np.add.reduceat(values, offsets[:-1], axis=-1)


def log_dirichlet_norm(pseudo_counts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``log Z(a) = Σ_x lgamma(a_x) − lgamma(Σ_x a_x)`` for each feature segment.

    Parameters
    ----------
    pseudo_counts : ndarray of shape (..., n_values_total)
        Positive Dirichlet parameters.
    offsets : ndarray of shape (n_features + 1,)

    Returns
    -------
    ndarray of shape (..., n_features)

    Examples
    --------
    >>> log_dirichlet_norm(np.ones(3), np.array([0, 3])).round(4).tolist()  # 0 − lgamma(3)
    [-0.6931]
    """
    return segment_sum(gammaln(pseudo_counts), offsets) - gammaln(
        segment_sum(pseudo_counts, offsets)
    )


def log_dirichlet_multinomial(
    counts: np.ndarray, prior: np.ndarray, offsets: np.ndarray
) -> np.ndarray:
    """Log probability of an ordered sequence with the given counts under a Dirichlet prior.

    ``log DM(c; a) = log Z(a + c) − log Z(a)``, summed over the feature segments; no
    multinomial coefficient.

    Parameters
    ----------
    counts : ndarray of shape (..., n_values_total)
    prior : ndarray broadcastable to ``counts``
    offsets : ndarray of shape (n_features + 1,)

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    Two heads and a tail under a uniform Beta(1, 1): ``1 · 1 · 2 / (2 · 3 · 4)``.

    >>> import numpy as np
    >>> float(np.exp(log_dirichlet_multinomial(np.array([2, 1]), np.ones(2), np.array([0, 2]))))
    0.08333333333333333
    """
    prior = np.broadcast_to(prior, counts.shape)
    per_segment = log_dirichlet_norm(prior + counts, offsets) - log_dirichlet_norm(prior, offsets)
    return per_segment.sum(axis=-1)


_RISING_SUM_LIMIT = 4096


def log_rising_factorial(a: float, n: int) -> float:
    """``log Γ(a + n) − log Γ(a)`` for ``a > 0`` and an integer ``n ≥ 0``, without cancellation.

    For ``n`` up to 4096 it is the compensated sum ``Σ_{i<n} log(a + i)`` (exact to rounding
    even when ``a`` is huge, where the difference of two large log-gammas loses digits);
    beyond that the log-gamma difference, whose terms then dominate the rounding anyway.

    Examples
    --------
    >>> round(log_rising_factorial(2.0, 3), 12) == round(float(np.log(2 * 3 * 4)), 12)
    True
    """
    if n <= _RISING_SUM_LIMIT:
        return math.fsum(math.log(a + i) for i in range(n))
    return float(gammaln(a + n) - gammaln(a))
