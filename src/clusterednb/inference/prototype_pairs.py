"""Posterior computations of the prototype model, one (class, feature) pair at a time.

Given the labels, ``log P(D | θ̄, K) = Σ_{y,f} Σ_u log DM(n[u, y, f]; K[y, f] θ̄[y, f])`` plus
the label part, so the pairs are independent a posteriori. Each pair is handled in
unconstrained coordinates (``log K`` and the additive logits of ``θ̄``, last logit fixed at
0), in which the prior density is ``Π β log θ̄ + shape log K − rate K`` (Jacobians
included). Slice sampling (Neal 2003, stepping out then shrinking) updates one coordinate at
a time; a ``temperature`` raises the likelihood for annealing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln, logsumexp

from clusterednb.data.schema import FeatureSchema

_STEP_OUT = 1.0  # initial slice width in the unconstrained coordinates
_MAX_STEPS = 50


class Pair(NamedTuple):
    """The data and prior of one (class, feature) pair.

    Attributes
    ----------
    counts : ndarray of shape (n_tasks, V_f)
        Value counts of every task.
    prior : ndarray of shape (V_f,)
        β of the prototype's Dirichlet prior.
    k_shape, k_rate : float
        Gamma prior of the strength ``K``.

    Examples
    --------
    >>> pair = Pair(np.array([[2, 0], [1, 1]]), np.ones(2), k_shape=2.0, k_rate=1.0)
    >>> pair.counts.sum(axis=0).tolist()  # the pooled counts
    [3, 1]
    """

    counts: np.ndarray
    prior: np.ndarray
    k_shape: float
    k_rate: float


def _log_target(log_k: float, logits: np.ndarray, pair: Pair, temperature: float = 1.0) -> float:
    """Log posterior density of one pair in unconstrained coordinates.

    With ``θ̄ = softmax(logits)`` and ``K = exp(log_k)`` the density is
    ``Σ β log θ̄ + shape log K − rate K + τ Σ_u log DM(n_u; K θ̄)`` (Jacobians included;
    ``τ = temperature`` is 1 except in annealing).
    """
    log_theta = logits - logsumexp(logits)
    log_prior = (pair.prior * log_theta).sum() + pair.k_shape * log_k - pair.k_rate * np.exp(log_k)
    return float(log_prior) + temperature * pair_log_likelihood(log_k, logits, pair.counts)


def pair_log_likelihood(log_k: float, logits: np.ndarray, counts: np.ndarray) -> float:
    """``Σ_u log DM(n_u; K θ̄)`` for value counts of shape (n_tasks, V_f); −inf if underflowed.

    Examples
    --------
    ``K = 2``, ``θ̄ = (1/2, 1/2)``, so the task's prior is Dir(1, 1): two of value 0 have
    probability ``1/2 · 2/3 = 1/3``:

    >>> value = pair_log_likelihood(np.log(2.0), np.zeros(2), np.array([[2, 0]]))
    >>> bool(np.isclose(value, np.log(1 / 3)))
    True
    """
    log_theta = logits - logsumexp(logits)
    k = np.exp(log_k)
    a = k * np.exp(log_theta)
    totals = counts.sum(axis=1)
    used = totals > 0
    value = float(
        (
            (gammaln(a + counts[used]) - gammaln(a)).sum(axis=1)
            - (gammaln(k + totals[used]) - gammaln(k))
        ).sum()
    )
    return value if np.isfinite(value) else -np.inf  # underflowed corner: zero density


def _slice_coordinate(
    rng: np.random.Generator, value: float, log_density: Callable[[float], float]
) -> float:
    """One slice-sampling update of a scalar (stepping out, then shrinking)."""
    threshold = log_density(value) + np.log(rng.random())
    left = value - _STEP_OUT * rng.random()
    right = left + _STEP_OUT
    for _ in range(_MAX_STEPS):
        if log_density(left) <= threshold:
            break
        left -= _STEP_OUT
    for _ in range(_MAX_STEPS):
        if log_density(right) <= threshold:
            break
        right += _STEP_OUT
    while True:
        proposal = left + (right - left) * rng.random()
        if log_density(proposal) > threshold:
            return proposal
        if proposal < value:
            left = proposal
        else:
            right = proposal


def mode_of_pair(pair: Pair) -> tuple[float, np.ndarray]:
    """The posterior mode of ``(K, θ̄)`` for one pair (L-BFGS in unconstrained coordinates).

    Returns ``(K, θ̄)`` with ``θ̄`` of shape (V_f,).

    Examples
    --------
    Tasks that mostly show value 0 give a prototype that leans to it:

    >>> pair = Pair(np.array([[5, 0], [4, 1], [5, 0]]), np.ones(2), k_shape=2.0, k_rate=1.0)
    >>> strength, prototype = mode_of_pair(pair)
    >>> bool(prototype[0] > 0.7), bool(strength > 0), float(prototype.sum().round(12))
    (True, True, 1.0)
    """
    log_k, logits = start_pair(pair)
    start = np.concatenate([[log_k], logits[:-1]])

    def negative(point: np.ndarray) -> float:
        value = _log_target(point[0], np.append(point[1:], 0.0), pair)
        return -value if np.isfinite(value) else 1e300

    best = minimize(negative, start, method="L-BFGS-B").x
    full = np.append(best[1:], 0.0)
    return float(np.exp(best[0])), np.exp(full - logsumexp(full))


def update_pair(
    rng: np.random.Generator,
    log_k: float,
    logits: np.ndarray,
    pair: Pair,
    temperature: float = 1.0,
) -> float:
    """One slice-sampling sweep over ``log K`` and the free logits (``logits`` in place).

    Returns the new ``log K``.

    Examples
    --------
    At temperature 0 the target is the prior, so ``K`` draws average its Gamma(2, 1) mean 2:

    >>> rng, pair = np.random.default_rng(0), Pair(np.zeros((1, 2)), np.ones(2), 2.0, 1.0)
    >>> log_k, logits, draws = 0.0, np.zeros(2), []
    >>> for _ in range(600):
    ...     log_k = update_pair(rng, log_k, logits, pair, temperature=0.0)
    ...     draws.append(np.exp(log_k))
    >>> bool(abs(np.mean(draws) - 2.0) < 0.3)
    True
    """
    log_k = _slice_coordinate(rng, log_k, lambda v: _log_target(v, logits, pair, temperature))
    for x in range(logits.size - 1):

        def density(v: float, x: int = x) -> float:
            trial = logits.copy()
            trial[x] = v
            return _log_target(log_k, trial, pair, temperature)

        logits[x] = _slice_coordinate(rng, logits[x], density)
    return log_k


def start_pair(pair: Pair) -> tuple[float, np.ndarray]:
    """A starting point: the pooled predictive as prototype, the prior mean of ``K``.

    Examples
    --------
    >>> log_k, logits = start_pair(Pair(np.array([[2, 0]]), np.ones(2), 2.0, 1.0))
    >>> round(float(np.exp(log_k)), 6), np.exp(logits).round(6).tolist()  # θ̄ ∝ (3, 1)
    (2.0, [3.0, 1.0])
    """
    pooled = pair.counts.sum(axis=0) + pair.prior
    logits = np.log(pooled / pooled.sum())
    return float(np.log(pair.k_shape / pair.k_rate)), logits - logits[-1]


def pairs_of(schema: FeatureSchema) -> Iterator[tuple[int, int, slice]]:
    """Every (class, feature, flat-value slice) of the schema.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> list(pairs_of(toy.colour_schema()))  # two classes, one feature of two values
    [(0, 0, slice(0, 2, None)), (1, 0, slice(0, 2, None))]
    """
    offsets = schema.offsets
    for c in range(schema.n_classes):
        for f in range(schema.n_features):
            yield c, f, slice(int(offsets[f]), int(offsets[f + 1]))
