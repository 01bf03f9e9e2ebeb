"""Dirichlet-process clustering of tasks for any block score: enumeration and Gibbs sampling.

These engines need nothing of the observation model but a function ``log B(S)`` of a set of
tasks (its marginal likelihood, possibly approximate and tempered), so a non-conjugate model
(e.g. :class:`~clusterednb.inference.joint_blocks.JointLogisticBlocks`) joins the
Dirichlet-process prior without sufficient statistics. The posterior over partitions is

    log P(z | D) = const + K log γ + Σ_k lgamma(|S_k|) + Σ_k log B(S_k).

:func:`enumerate_blocks` sums it over every partition (U ≤ 10); :func:`gibbs_blocks` samples
it one task at a time (Neal 2000, algorithm 3, with the block scores cached per set).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp

from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS, enumerate_partitions
from clusterednb.priors import canonical_partition
from clusterednb.special import log_rising_factorial

BlockScore = Callable[..., float]
"""``log_block(members: frozenset[int], near: frozenset[int] | None = None) -> float``."""


@dataclass(frozen=True)
class BlockClustering:
    """A posterior over partitions of the tasks, summarised.

    Attributes
    ----------
    partition : ndarray of shape (n_tasks,)
        The highest-scoring partition found (canonical labels).
    log_joint : float
        Its ``log P(z, D)`` (block scores plus the CRP prior).
    coclustering : ndarray of shape (n_tasks, n_tasks)
        ``P(u and v share a cluster | D)``.
    n_clusters_probability : ndarray of shape (n_tasks + 1,)
        ``P(K = k | D)``.

    Examples
    --------
    >>> clustering = enumerate_blocks(2, lambda members, near=None: 0.0, gamma=1.0)
    >>> clustering.partition.tolist(), clustering.n_clusters_probability.tolist()
    ([0, 0], [0.0, 0.5, 0.5])
    """

    partition: np.ndarray
    log_joint: float
    coclustering: np.ndarray
    n_clusters_probability: np.ndarray


def partition_log_joint(partition: np.ndarray, log_block: BlockScore, gamma: float) -> float:
    """``log P(z, D)`` of one partition: the CRP log prior plus its blocks' scores.

    Examples
    --------
    With every block scoring 0 only the CRP prior remains: ``P([0, 0, 1]) = 1 / 6`` for γ = 1.

    >>> import numpy as np
    >>> flat = lambda members, near=None: 0.0
    >>> bool(np.isclose(partition_log_joint(np.array([0, 0, 1]), flat, 1.0), np.log(1 / 6)))
    True
    """
    labels, sizes = np.unique(partition, return_counts=True)
    log_prior = labels.size * np.log(gamma) + gammaln(sizes).sum()
    log_prior -= log_rising_factorial(gamma, partition.size)
    blocks = sum(log_block(frozenset(np.flatnonzero(partition == k).tolist())) for k in labels)
    return float(log_prior + blocks)


def enumerate_blocks(n_tasks: int, log_block: BlockScore, gamma: float) -> BlockClustering:
    """The exact posterior over every set partition (at most ``MAX_EXACT_TASKS`` tasks).

    Examples
    --------
    Under the CRP prior alone (γ = 1) two of three tasks share a cluster with probability 1/2:

    >>> result = enumerate_blocks(3, lambda members, near=None: 0.0, gamma=1.0)
    >>> result.n_clusters_probability.round(4).tolist()
    [0.0, 0.3333, 0.5, 0.1667]
    >>> float(result.coclustering[0, 1])
    0.5
    """
    if n_tasks > MAX_EXACT_TASKS:
        raise CNBError(
            f"enumeration is limited to {MAX_EXACT_TASKS} tasks; this data set has {n_tasks}"
        )
    partitions = enumerate_partitions(n_tasks)
    log_joint = np.array([partition_log_joint(p, log_block, gamma) for p in partitions])
    weights = np.exp(log_joint - logsumexp(log_joint))
    together = partitions[:, :, None] == partitions[:, None, :]
    n_blocks = partitions.max(axis=1) + 1
    best = int(np.argmax(log_joint))
    return BlockClustering(
        partition=partitions[best],
        log_joint=float(log_joint[best]),
        coclustering=np.tensordot(weights, together, axes=1),
        n_clusters_probability=np.bincount(n_blocks, weights=weights, minlength=n_tasks + 1),
    )


def _gibbs_step(
    task: int,
    assignment: np.ndarray,
    clusters: dict[int, set[int]],
    log_block: BlockScore,
    log_gamma: float,
    rng: np.random.Generator,
    greedy: bool,
) -> None:
    """Reassign one task given the others (in place)."""
    old = int(assignment[task])
    if old >= 0:
        clusters[old].discard(task)
        if not clusters[old]:
            del clusters[old]
    labels = list(clusters)
    scores = np.empty(len(labels) + 1)
    for i, label in enumerate(labels):
        members = frozenset(clusters[label])
        joined = members | {task}
        scores[i] = (
            np.log(len(members)) + log_block(joined, near=members) - log_block(members, near=joined)
        )
    scores[-1] = log_gamma + log_block(frozenset((task,)))
    if greedy:
        choice = int(np.argmax(scores))
    else:
        choice = int(np.argmax(scores + rng.gumbel(size=scores.size)))
    if choice == len(labels):
        label = max(clusters, default=-1) + 1
        clusters[label] = set()
    else:
        label = labels[choice]
    clusters[label].add(task)
    assignment[task] = label


def gibbs_blocks(
    n_tasks: int,
    log_block: BlockScore,
    gamma: float,
    rng: np.random.Generator,
    n_sweeps: int = 30,
    burn_in: int = 10,
) -> BlockClustering:
    """Collapsed Gibbs sampling of the partition, started from a greedy sequential pass.

    The start puts each task in turn where it scores best given the tasks before it; each
    sweep then resamples every task in a random order. Sweeps after ``burn_in`` are averaged
    into the co-clustering and ``P(K)``; the best partition of any sweep is kept.

    Parameters
    ----------
    n_tasks : int
    log_block : callable
        ``log B(S)``, see :data:`BlockScore`.
    gamma : float
        The Dirichlet-process concentration.
    rng : numpy.random.Generator
    n_sweeps, burn_in : int
        ``n_sweeps > burn_in ≥ 0``.

    Examples
    --------
    The sampler's co-clustering approaches the enumerated 1/2 of the CRP prior:

    >>> import numpy as np
    >>> flat = lambda members, near=None: 0.0
    >>> sampled = gibbs_blocks(3, flat, 1.0, np.random.default_rng(0), n_sweeps=4000, burn_in=10)
    >>> round(float(sampled.coclustering[0, 1]), 1)
    0.5
    """
    if not 0 <= burn_in < n_sweeps:
        raise CNBError(f"need 0 <= burn_in < n_sweeps, got {burn_in} and {n_sweeps}")
    log_gamma = float(np.log(gamma))
    assignment = np.full(n_tasks, -1, dtype=np.int64)
    clusters: dict[int, set[int]] = {}
    for task in range(n_tasks):
        _gibbs_step(task, assignment, clusters, log_block, log_gamma, rng, greedy=True)
    best = canonical_partition(assignment)
    best_log_joint = partition_log_joint(best, log_block, gamma)
    together = np.zeros((n_tasks, n_tasks))
    n_clusters = np.zeros(n_tasks + 1)
    for sweep in range(n_sweeps):
        for task in rng.permutation(n_tasks):
            _gibbs_step(int(task), assignment, clusters, log_block, log_gamma, rng, greedy=False)
        log_joint = partition_log_joint(assignment, log_block, gamma)
        if log_joint > best_log_joint:
            best, best_log_joint = canonical_partition(assignment), log_joint
        if sweep >= burn_in:
            together += assignment[:, None] == assignment[None, :]
            n_clusters[len(clusters)] += 1
    n_kept = n_sweeps - burn_in
    return BlockClustering(
        partition=best,
        log_joint=best_log_joint,
        coclustering=together / n_kept,
        n_clusters_probability=n_clusters / n_kept,
    )
