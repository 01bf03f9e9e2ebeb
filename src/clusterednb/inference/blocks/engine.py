"""Dirichlet-process clustering of tasks for any model's cluster scores: enumeration and Gibbs
sampling.

These engines need nothing of the observation model but its cluster scores
(:class:`~clusterednb.models.block_scores.BlockAlgebra`, or just a function ``log B(S)`` of a
set of tasks: its marginal likelihood, possibly approximate and tempered), so a conjugate
model (:class:`~clusterednb.models.block_scores.CountBlocks`) and a non-conjugate one (the
clustered logistic model's joint scores) run on the same engine. The posterior over partitions is

    log P(z | D) = const + K log γ + Σ_k lgamma(|S_k|) + Σ_k log B(S_k).

:func:`enumerate_blocks` sums it over every partition (U ≤ 10); :func:`gibbs_blocks` samples
it one task at a time (Neal 2000, algorithm 3: with statistics that add, a move costs one
addition per cluster; otherwise the block scores are cached per set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy.special import gammaln, logsumexp

from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS, enumerate_partitions
from clusterednb.models.block_scores import BlockAlgebra, BlockScore, SetAlgebra
from clusterednb.models.partition_prior import canonical_partition
from clusterednb.stats.special import log_rising_factorial


@dataclass(frozen=True)
class BlockClustering:
    """A posterior over partitions of the tasks, summarised.

    Attributes
    ----------
    partition : ndarray of shape (n_tasks,)
        The highest-scoring partition found (canonical labels).
    log_joint : float
        Its ``log P(z, D)`` (block scores plus the CRP prior).
    coclustering : ndarray of shape (n_tasks, n_tasks), or None
        ``P(u and v share a cluster | D)`` (None when too many tasks to hold it: then
        ``membership`` is given).
    n_clusters_probability : ndarray of shape (n_tasks + 1,)
        ``P(K = k | D)``.
    membership : ndarray of shape (n_tasks, K), optional
        Each task's weights over the clusters of ``partition``, when not derived from
        ``coclustering`` (:func:`membership`).
    feature_relevance : ndarray of shape (n_features,), optional
        When the scores kept only some features: each one's judged relevance.
    differing_columns : ndarray of shape (n_features,), optional
        When the scores let only some features' label weights differ between clusters:
        bool, those features (:mod:`clusterednb.logistic.clustering.shared_slopes`).

    Examples
    --------
    >>> clustering = enumerate_blocks(2, lambda members: 0.0, gamma=1.0)
    >>> clustering.partition.tolist(), clustering.n_clusters_probability.tolist()
    ([0, 0], [0.0, 0.5, 0.5])
    """

    partition: np.ndarray
    log_joint: float
    coclustering: np.ndarray | None
    n_clusters_probability: np.ndarray
    membership: np.ndarray | None = None
    feature_relevance: np.ndarray | None = None
    differing_columns: np.ndarray | None = None


def membership(coclustering: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """``q_u(c)``: each task's mean co-clustering with the members of each MAP cluster.

    Parameters
    ----------
    coclustering : ndarray of shape (n_tasks, n_tasks)
    partition : ndarray of shape (n_tasks,)
        Canonical labels ``0..K-1``.

    Returns
    -------
    ndarray of shape (n_tasks, K)

    Examples
    --------
    >>> import numpy as np
    >>> together = np.array([[1.0, 0.8, 0.1], [0.8, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> membership(together, np.array([0, 0, 1])).round(2).tolist()
    [[0.9, 0.1], [0.9, 0.2], [0.15, 1.0]]
    """
    n_clusters = int(partition.max()) + 1
    indicator = np.eye(n_clusters)[partition]
    return coclustering @ indicator / indicator.sum(axis=0)


def partition_log_joint(partition: np.ndarray, log_block: BlockScore, gamma: float) -> float:
    """``log P(z, D)`` of one partition: the CRP log prior plus its blocks' scores.

    Examples
    --------
    With every block scoring 0 only the CRP prior remains: ``P([0, 0, 1]) = 1 / 6`` for γ = 1.

    >>> import numpy as np
    >>> flat = lambda members: 0.0
    >>> bool(np.isclose(partition_log_joint(np.array([0, 0, 1]), flat, 1.0), np.log(1 / 6)))
    True
    """
    labels, sizes = np.unique(partition, return_counts=True)
    log_prior = labels.size * np.log(gamma) + gammaln(sizes).sum()
    log_prior -= log_rising_factorial(gamma, partition.size)
    blocks = sum(log_block(frozenset(np.flatnonzero(partition == k).tolist())) for k in labels)
    return float(log_prior + blocks)


def enumerate_blocks(
    n_tasks: int, blocks: BlockScore | BlockAlgebra, gamma: float
) -> BlockClustering:
    """The exact posterior over every set partition (at most ``MAX_EXACT_TASKS`` tasks), of
    any model's cluster scores (:class:`~clusterednb.models.block_scores.BlockAlgebra`) or a
    function ``log B(S)`` of a set.

    Examples
    --------
    Under the CRP prior alone (γ = 1) two of three tasks share a cluster with probability 1/2:

    >>> result = enumerate_blocks(3, lambda members: 0.0, gamma=1.0)
    >>> result.n_clusters_probability.round(4).tolist()
    [0.0, 0.3333, 0.5, 0.1667]
    >>> float(result.coclustering[0, 1])
    0.5
    """
    if n_tasks > MAX_EXACT_TASKS:
        raise CNBError(
            f"enumeration is limited to {MAX_EXACT_TASKS} tasks; this data set has {n_tasks}"
        )
    if hasattr(blocks, "log_score"):
        algebra = blocks
        log_block = lambda members: algebra.log_score(algebra.of_members(members))  # noqa: E731
    else:
        log_block = blocks
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


class Chain(Protocol):
    """A collapsed Gibbs chain over partitions, as :func:`sample_chain` drives it."""

    assignment: np.ndarray
    """Each task's cluster label, shape (n_tasks,) (-1: not placed yet)."""

    @property
    def n_clusters(self) -> int:
        """The number of clusters now."""

    def refresh(self) -> None:
        """Recompute the clusters' statistics from their members."""

    def sweep(self, order: np.ndarray, rng: np.random.Generator, greedy: bool) -> None:
        """Reassign the tasks of ``order`` in turn (``greedy``: each where it scores best)."""

    def log_joint(self) -> float:
        """``log P(z, D)`` of the current partition."""


def sample_chain(
    chain: Chain, rng: np.random.Generator, n_sweeps: int, burn_in: int
) -> BlockClustering:
    """A greedy sequential start, then ``n_sweeps`` sweeps in random orders; sweeps after
    ``burn_in`` are averaged into the co-clustering and ``P(K)``, and the best partition of
    any sweep is kept.

    Examples
    --------
    >>> clusters = _Clusters(SetAlgebra(lambda members: 0.0), 3, gamma=1.0)
    >>> sample_chain(clusters, np.random.default_rng(0), 5, 1).coclustering.shape
    (3, 3)
    """
    if not 0 <= burn_in < n_sweeps:
        raise CNBError(f"need 0 <= burn_in < n_sweeps, got {burn_in} and {n_sweeps}")
    n_tasks = chain.assignment.size
    chain.sweep(np.arange(n_tasks), rng, greedy=True)
    best, best_log_joint = canonical_partition(chain.assignment), chain.log_joint()
    together = np.zeros((n_tasks, n_tasks))
    n_clusters = np.zeros(n_tasks + 1)
    for sweep in range(n_sweeps):
        chain.refresh()
        chain.sweep(rng.permutation(n_tasks), rng, greedy=False)
        log_joint = chain.log_joint()
        if log_joint > best_log_joint:
            best, best_log_joint = canonical_partition(chain.assignment), log_joint
        if sweep >= burn_in:
            assignment = chain.assignment
            together += assignment[:, None] == assignment[None, :]
            n_clusters[chain.n_clusters] += 1
    n_kept = n_sweeps - burn_in
    return BlockClustering(
        partition=best,
        log_joint=best_log_joint,
        coclustering=together / n_kept,
        n_clusters_probability=n_clusters / n_kept,
    )


class _Clusters:
    """The sampler's clusters: members, statistics and scores, by label (a :class:`Chain`)."""

    def __init__(self, algebra: BlockAlgebra, n_tasks: int, gamma: float) -> None:
        self.algebra = algebra
        self.gamma = gamma
        self.log_gamma = float(np.log(gamma))
        self.assignment = np.full(n_tasks, -1, dtype=np.int64)
        self.members: dict[int, set[int]] = {}
        self.stats: dict[int, Any] = {}
        self.scores: dict[int, float] = {}
        self.alone = np.array([algebra.log_score(algebra.of_members([u])) for u in range(n_tasks)])

    def refresh(self) -> None:
        """Statistics from the members afresh (the rounding of many moves does not pile up)."""
        for label, members in self.members.items():
            self.stats[label] = self.algebra.of_members(members)
            self.scores[label] = self.algebra.log_score(self.stats[label])

    def take_out(self, task: int) -> int | None:
        """Remove ``task`` from its cluster; the label of that cluster if it is left with
        members, whose score the caller must set (it is scored with the step's batch)."""
        old = int(self.assignment[task])
        if old < 0:
            return None
        self.members[old].discard(task)
        if not self.members[old]:
            del self.members[old], self.stats[old], self.scores[old]
            return None
        self.stats[old] = self.algebra.removed(self.stats[old], task)
        return old

    def put(self, task: int, label: int | None, stats: Any, score: float) -> None:
        if label is None:
            label = max(self.members, default=-1) + 1
            self.members[label] = set()
        self.members[label].add(task)
        self.stats[label], self.scores[label] = stats, score
        self.assignment[task] = label

    @property
    def n_clusters(self) -> int:
        return len(self.members)

    def sweep(self, order: np.ndarray, rng: np.random.Generator, greedy: bool) -> None:
        for task in order:
            _gibbs_step(int(task), self, self.log_gamma, rng, greedy)

    def log_joint(self) -> float:
        """``log P(z, D)`` of the current partition."""
        sizes = np.array([len(m) for m in self.members.values()])
        log_prior = sizes.size * np.log(self.gamma) + gammaln(sizes).sum()
        log_prior -= log_rising_factorial(self.gamma, self.assignment.size)
        return float(log_prior + sum(self.scores.values()))


def _gibbs_step(
    task: int, clusters: _Clusters, log_gamma: float, rng: np.random.Generator, greedy: bool
) -> None:
    """Reassign one task given the others (in place)."""
    algebra = clusters.algebra
    left = clusters.take_out(task)
    labels = list(clusters.members)
    stats = [clusters.stats[label] for label in labels]
    also = None if left is None else clusters.stats[left]  # scored in the same batch
    joined_scores = algebra.log_scores_added(stats, task, also)
    if left is not None:
        clusters.scores[left], joined_scores = float(joined_scores[-1]), joined_scores[:-1]
    scores = np.empty(len(labels) + 1)
    scores[:-1] = (
        np.log([len(clusters.members[label]) for label in labels])
        + joined_scores
        - np.array([clusters.scores[label] for label in labels])
    )
    scores[-1] = log_gamma + clusters.alone[task]
    if greedy:
        choice = int(np.argmax(scores))
    else:
        choice = int(np.argmax(scores + rng.gumbel(size=scores.size)))
    if choice == len(labels):
        clusters.put(task, None, algebra.of_members([task]), float(clusters.alone[task]))
    else:
        label = labels[choice]
        stats = algebra.added(clusters.stats[label], task)
        clusters.put(task, label, stats, float(joined_scores[choice]))


def gibbs_blocks(
    n_tasks: int,
    blocks: BlockScore | BlockAlgebra,
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
    blocks : callable or BlockAlgebra
        ``log B(S)`` (:data:`BlockScore`), or statistics that follow one task's move
        (:class:`BlockAlgebra`: a step then costs one addition per cluster).
    gamma : float
        The Dirichlet-process concentration.
    rng : numpy.random.Generator
    n_sweeps, burn_in : int
        ``n_sweeps > burn_in ≥ 0``.

    Examples
    --------
    The sampler's co-clustering approaches the enumerated 1/2 of the CRP prior:

    >>> import numpy as np
    >>> flat = lambda members: 0.0
    >>> sampled = gibbs_blocks(3, flat, 1.0, np.random.default_rng(0), n_sweeps=4000, burn_in=10)
    >>> round(float(sampled.coclustering[0, 1]), 1)
    0.5
    """
    algebra = blocks if hasattr(blocks, "log_score") else SetAlgebra(blocks)
    return sample_chain(_Clusters(algebra, n_tasks, gamma), rng, n_sweeps, burn_in)
