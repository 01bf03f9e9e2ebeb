"""Partition priors: the Chinese restaurant process, and canonical partition labels."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.special import gammaln

from clusterednb.stats.special import log_rising_factorial


def crp_log_prior(assignment: np.ndarray, gamma: float) -> float:
    """``log P(z) = K log γ + Σ_k lgamma(|k|) + lgamma(γ) − lgamma(γ + U)``.

    Parameters
    ----------
    assignment : ndarray of shape (n_tasks,)
        Cluster label of each task (any integers).
    gamma : float
        Concentration of the Dirichlet process.

    Examples
    --------
    Two tasks together have prior probability ``1 / (1 + γ)``:

    >>> import numpy as np
    >>> round(float(np.exp(crp_log_prior(np.array([0, 0]), 3.0))), 12)
    0.25
    """
    _, sizes = np.unique(assignment, return_counts=True)
    n_tasks = assignment.size
    return float(
        sizes.size * np.log(gamma) + gammaln(sizes).sum() - log_rising_factorial(gamma, n_tasks)
    )


def canonical_partition(assignment: np.ndarray) -> np.ndarray:
    """Relabel clusters ``0, 1, ...`` in order of first appearance (a canonical form).

    Examples
    --------
    >>> canonical_partition(np.array([7, 3, 7, 9])).tolist()
    [0, 1, 0, 2]
    """
    _, first, inverse = np.unique(assignment, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def set_partitions(n_items: int) -> Iterator[np.ndarray]:
    """Every set partition of ``n_items`` items as a restricted-growth string.

    Yields arrays ``a`` of shape (n_items,) with ``a[0] = 0`` and
    ``a[i] ≤ max(a[:i]) + 1``: each partition exactly once (Bell number many).

    Examples
    --------
    >>> [p.tolist() for p in set_partitions(3)]
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]]
    """
    if n_items == 0:
        return
    labels = [0] * n_items
    maxima = [0] * n_items  # maxima[i] = max(labels[:i + 1])
    while True:
        yield np.array(labels, dtype=np.int64)
        i = n_items - 1
        while i > 0 and labels[i] == maxima[i - 1] + 1:
            i -= 1
        if i == 0:
            return
        labels[i] += 1
        maxima[i] = max(maxima[i - 1], labels[i])
        for j in range(i + 1, n_items):
            labels[j] = 0
            maxima[j] = maxima[i]
