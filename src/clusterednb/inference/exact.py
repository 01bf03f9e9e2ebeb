"""Exact inference for Clustered Naive Bayes by enumerating every set partition of the tasks.

The number of partitions is the Bell number B(U) (B(10) = 115 975), so this engine refuses
more than ``MAX_EXACT_TASKS`` tasks. Every block of a partition is a subset of tasks; the
feature evidence of all ``2^U`` subsets is computed once, and a partition's score is a sum of
its blocks' evidence plus the CRP log prior.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

from clusterednb.exceptions import CNBError
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.models.observation import ConjugateModel
from clusterednb.models.partition_prior import set_partitions
from clusterednb.stats.counts import Counts
from clusterednb.stats.special import log_rising_factorial

MAX_EXACT_TASKS = 10


def subset_value_counts(value_counts: np.ndarray) -> np.ndarray:
    """Pooled value counts of every subset of tasks, indexed by bit mask.

    Parameters
    ----------
    value_counts : ndarray of shape (n_tasks, n_classes, n_values_total)

    Returns
    -------
    ndarray of shape (2**n_tasks, n_classes, n_values_total)
        Entry ``mask`` sums the tasks whose bits are set in ``mask`` (entry 0 is zero).

    Examples
    --------
    >>> value_counts = np.array([[[1, 0]], [[0, 2]]])  # two tasks, one class, two values
    >>> subset_value_counts(value_counts)[:, 0].tolist()  # masks 0, {0}, {1}, {0, 1}
    [[0, 0], [1, 0], [0, 2], [1, 2]]
    """
    n_tasks = value_counts.shape[0]
    subsets = np.zeros((1 << n_tasks, *value_counts.shape[1:]), dtype=np.int64)
    for mask in range(1, 1 << n_tasks):
        lowest = mask & -mask
        subsets[mask] = subsets[mask ^ lowest] + value_counts[lowest.bit_length() - 1]
    return subsets


def enumerate_partitions(n_tasks: int) -> np.ndarray:
    """All set partitions as restricted-growth strings, shape (B(n_tasks), n_tasks).

    Examples
    --------
    >>> enumerate_partitions(3).tolist()  # Bell(3) = 5
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]]
    """
    return np.array(list(set_partitions(n_tasks)), dtype=np.int64).reshape(-1, n_tasks)


def partition_blocks(n_tasks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every partition (:func:`enumerate_partitions`, shape (P, U)), the bit mask of each of
    its blocks (P, U; block ``k`` of partition ``p`` at ``[p, k]``, 0 where it is empty) and
    each block's size (P, U).

    Examples
    --------
    >>> partitions, masks, sizes = partition_blocks(2)  # {0, 1}; {0}, {1}
    >>> masks.tolist(), sizes.tolist()
    ([[3, 0], [1, 2]], [[2, 0], [1, 1]])
    """
    partitions = enumerate_partitions(n_tasks)
    bits = np.left_shift(1, np.arange(n_tasks))
    block_masks = np.stack([(partitions == b) @ bits for b in range(n_tasks)], axis=1)
    block_sizes = np.stack([(partitions == b).sum(axis=1) for b in range(n_tasks)], axis=1)
    return partitions, block_masks, block_sizes


def fit_exact(model: ConjugateModel, counts: Counts, gamma: float) -> ClusteringResult:
    """Engine ``"exact"``: the posterior over every partition, the exact evidence and the
    exact predictive.

    The result's ``evidence_kind`` is ``"exact"``; its posterior mixes joints
    (``mix_joint``), so the predictive is exactly ``P(y | x, D) ∝ Σ_z P(z) P(D ∪ {(x, y)} |
    z)``. Arguments as in :mod:`clusterednb.inference.result`.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> result = fit_exact(toy.colour_model(), toy.three_task_counts(), 1.0)
    >>> total = round(float(result.partition_weights.sum()), 12)
    >>> result.evidence_kind, len(result.partitions), total
    ('exact', 5, 1.0)
    >>> round(float(result.coclustering()[0, 1]), 6)  # tasks 0 and 1 share a cluster: 9/14
    0.642857
    """
    require_conjugate(model, "exact")
    n_tasks = counts.n_groups
    if n_tasks > MAX_EXACT_TASKS:
        raise CNBError(
            f"exact inference enumerates every partition of the tasks and is limited to "
            f"{MAX_EXACT_TASKS} tasks; this data set has {n_tasks}. Use inference='gibbs' or 'bhc'."
        )
    subsets = subset_value_counts(counts.value_counts)
    log_block = model.log_marginal_features(subsets)
    log_block[0] = 0.0
    partitions, block_masks, block_sizes = partition_blocks(n_tasks)
    n_blocks = (block_sizes > 0).sum(axis=1)
    log_prior = (
        n_blocks * np.log(gamma)
        + np.where(block_sizes > 0, gammaln(np.maximum(block_sizes, 1)), 0.0).sum(axis=1)
        - log_rising_factorial(gamma, n_tasks)
    )
    log_joint = log_prior + log_block[block_masks].sum(axis=1)
    log_total = logsumexp(log_joint)
    log_post = log_joint - log_total
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())

    # P(task v's block is S | D) for every subset S containing v.
    n_masks = 1 << n_tasks
    log_block_weight = np.full((n_tasks, n_masks), -np.inf)
    own_block = np.take_along_axis(block_masks, partitions, axis=1)  # (P, U)
    np.logaddexp.at(
        log_block_weight,
        (np.broadcast_to(np.arange(n_tasks), own_block.shape), own_block),
        np.broadcast_to(log_post[:, None], own_block.shape),
    )
    # A new task joins block b with probability |b| / (U + γ), or a new block with γ / (U + γ).
    log_cold = np.full(n_masks, -np.inf)
    occupied = block_sizes > 0
    np.logaddexp.at(
        log_cold,
        block_masks[occupied],
        (log_post[:, None] + np.log(np.maximum(block_sizes, 1)))[occupied],
    )
    log_cold[0] = np.log(gamma)
    log_cold -= np.log(n_tasks + gamma)

    present = np.isfinite(log_block_weight)
    cold_present = np.flatnonzero(np.isfinite(log_cold))
    posterior = Posterior(
        component_counts=subsets,
        task_label_counts=counts.label_counts,
        indptr=np.concatenate([[0], np.cumsum(present.sum(axis=1))]),
        components=np.nonzero(present)[1],
        log_weights=log_block_weight[present],
        cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
        cold_components=cold_present,
        cold_log_weights=log_cold[cold_present],
        mix_joint=True,
    )
    weights = np.exp(log_post)
    return ClusteringResult(
        posterior=posterior,
        log_evidence=float(log_total) + log_labels,
        evidence_kind="exact",
        partition=partitions[np.argmax(log_joint)],
        n_clusters_probability=np.bincount(n_blocks, weights=weights, minlength=n_tasks + 1),
        partitions=partitions,
        partition_weights=weights,
    )
