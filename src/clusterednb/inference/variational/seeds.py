"""Seeded starts of the variational engine: seed tasks far apart, chosen k-means++ style
(the greedy sequential start is in :mod:`clusterednb.inference.variational.collapsed`).

The divergence is the naive-Bayes log-likelihood: a task is far from the seeds when the best
seed explains its counts much worse than the task explains itself.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import sparse

SEEDING_SAMPLE = 20_000

LogTheta = Callable[[np.ndarray], np.ndarray]
"""``E[log θ]`` (K, CV) of pseudo-counts (K, CV) added to the prior."""


def spread_seeds(
    task_counts: sparse.csr_matrix, log_theta: LogTheta, n_seeds: int, rng: np.random.Generator
) -> np.ndarray:
    """Indices (n_seeds,) of seed tasks far apart (k-means++ with the naive-Bayes
    log-likelihood as divergence).

    The first is drawn uniformly; each next one with probability proportional to how much
    worse the best seed so far explains a task than the task explains itself,
    ``n_u·E[log θ | n_u] − max_s n_u·E[log θ | n_s] ≥ 0``, so every planted group tends to get
    a seed of its own (uniform seeds put two in some groups and none in others). Above
    :data:`SEEDING_SAMPLE` tasks the seeds are chosen among a random sample of that many
    (each seed costs a pass over the candidates).

    Examples
    --------
    Two tasks that saw value 0 and two that saw value 1 (one class, two values, ``β = 1``):
    two seeds land in different groups:

    >>> from scipy.special import digamma
    >>> def log_theta(pseudo):
    ...     return digamma(1.0 + pseudo) - digamma((1.0 + pseudo).sum(axis=1, keepdims=True))
    >>> counts = sparse.csr_matrix([[5, 0], [4, 0], [0, 5], [0, 4]])
    >>> seeds = spread_seeds(counts, log_theta, 2, np.random.default_rng(0))
    >>> sorted(int(s) // 2 for s in seeds)  # one seed per group
    [0, 1]
    """
    n_tasks = task_counts.shape[0]
    pool = np.arange(n_tasks)
    if n_tasks > SEEDING_SAMPLE:
        pool = np.sort(rng.choice(n_tasks, size=SEEDING_SAMPLE, replace=False))
    counts = task_counts[pool]
    own = _self_scores(counts, log_theta)
    seeds = [int(rng.integers(pool.size))]
    best = counts @ log_theta(counts[seeds].toarray())[0]
    for _ in range(1, n_seeds):
        gap = np.maximum(own - best, 0.0)
        total = gap.sum()
        if total > 0:
            seed = int(rng.choice(pool.size, p=gap / total))
        else:
            seed = int(rng.integers(pool.size))
        seeds.append(seed)
        best = np.maximum(best, counts @ log_theta(counts[[seed]].toarray())[0])
    return pool[np.array(seeds)]


def _self_scores(counts: sparse.csr_matrix, log_theta: LogTheta) -> np.ndarray:
    """``n_u · E[log θ | β + n_u]`` for every row of ``counts``, in chunks (shape (n,))."""
    out = np.empty(counts.shape[0])
    for start in range(0, counts.shape[0], 4096):
        block = counts[start : start + 4096]
        explained = block.multiply(log_theta(block.toarray())).sum(axis=1)
        out[start : start + block.shape[0]] = np.asarray(explained).ravel()
    return out
