"""The partition posterior of many tasks: sampled on a random core of them, the others placed
in the core's clusters.

A sweep of the collapsed Gibbs sampler scores every task against every cluster (one Cholesky
factorisation of a ``d × d`` matrix each), so thirty sweeps over 10⁵ tasks would take hours,
and their co-clustering matrix alone 80 GB. Above :data:`MAX_SAMPLED_TASKS` tasks the chain
samples a core of that many tasks drawn at random (by the fit's generator); then every other
task ``u`` is placed once in the core's MAP clusters, with weights

    P(u ∈ c) ∝ |c| · B(c ∪ {u}) / B(c)

over those clusters (the sampler's own move probabilities, conditioned on joining one: a task
that would rather open a cluster of its own leans on the ones it is closest to). These weights
are its membership of the regressions; a core task keeps the one its sampled co-clustering
gives, and the partition labels each placed task by its most probable cluster. The
co-clustering of all tasks is not formed. Below the limit nothing changes: every task is
sampled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from clusterednb.inference.blocks.engine import BlockClustering, membership, sample_chain
from clusterednb.inference.blocks.kernels import placement_scores
from clusterednb.inference.blocks.slot_chain import JointChain
from clusterednb.models.block_scores import PackedBlocks

MAX_SAMPLED_TASKS = 300
"""Above this many tasks, the partition is sampled on this many and the others are placed
(MovieLens' 943 users: the partition posterior 0.85 s instead of 2.5–4 s; its accuracy in
BENCHMARKS.md)."""
PLACED_AT_ONCE = 10_000
"""Most tasks whose statistics are gathered at once while placing."""
PLACEMENT_BYTES = 2**28
"""Bound on a placed batch's dense Hessians (``batch · d² · 8`` bytes): wide rows place
fewer tasks at once."""


def placement_batch(d: int) -> int:
    """Tasks placed at once for ``d`` label weights: :data:`PLACED_AT_ONCE`, fewer when their
    dense Hessians would pass :data:`PLACEMENT_BYTES`.

    Examples
    --------
    >>> placement_batch(25), placement_batch(1001)
    (10000, 33)
    """
    return max(1, min(PLACED_AT_ONCE, PLACEMENT_BYTES // (8 * d * d)))


def core_tasks(n_tasks: int, rng: np.random.Generator) -> np.ndarray:
    """:data:`MAX_SAMPLED_TASKS` task positions drawn at random, sorted (all if fewer).

    Examples
    --------
    >>> core_tasks(5, np.random.default_rng(0)).tolist()
    [0, 1, 2, 3, 4]
    >>> core_tasks(5000, np.random.default_rng(0)).size
    300
    """
    if n_tasks <= MAX_SAMPLED_TASKS:
        return np.arange(n_tasks)
    return np.sort(rng.choice(n_tasks, MAX_SAMPLED_TASKS, replace=False))


def core_and_place(
    blocks: PackedBlocks,
    gamma: float,
    rng: np.random.Generator,
    n_sweeps: int = 30,
    burn_in: int = 10,
    core: np.ndarray | None = None,
) -> BlockClustering:
    """Sample the partition of ``core`` (:func:`core_tasks` by default), then place the others.

    Returns
    -------
    BlockClustering
        With ``membership`` (n_tasks, K) and no ``coclustering``; ``log_joint`` and
        ``n_clusters_probability`` are the core's (the latter padded to n_tasks + 1).

    Examples
    --------
    Four tasks, two sampled: the other two join the sampled clusters.

    >>> from clusterednb.examples import logistic as toy
    >>> blocks = toy.joint_blocks()  # 2 tasks
    >>> clustering = core_and_place(blocks, 1.0, np.random.default_rng(0), 5, 1,
    ...                             core=np.array([0]))
    >>> clustering.membership.shape, clustering.coclustering is None
    ((2, 1), True)
    """
    n_tasks = blocks.n_tasks
    core = core_tasks(n_tasks, rng) if core is None else core
    sampled, clusters = sample_core(blocks.subset(core), gamma, rng, n_sweeps, burn_in)
    n_clusters = clusters.open_slots.size
    others = np.setdiff1d(np.arange(n_tasks), core)
    weights = np.zeros((n_tasks, n_clusters))
    weights[core] = membership(sampled.coclustering, sampled.partition)
    partition = np.zeros(n_tasks, dtype=np.int64)
    partition[core] = sampled.partition
    at_once = placement_batch(blocks.expansions.anchor.size)
    for start in range(0, others.size, at_once):
        batch = others[start : start + at_once]
        log_weights = clusters.log_weights(blocks.subset(batch))
        weights[batch] = softmax(log_weights, axis=1)
        partition[batch] = np.argmax(log_weights, axis=1)
    n_clusters_probability = np.zeros(n_tasks + 1)
    n_clusters_probability[: core.size + 1] = sampled.n_clusters_probability
    return BlockClustering(
        partition=partition,
        log_joint=sampled.log_joint,
        coclustering=None,
        n_clusters_probability=n_clusters_probability,
        membership=weights,
    )


@dataclass(frozen=True)
class CoreClusters:
    """The sampled core's MAP clusters as the placement reads them (plain arrays: a shard of
    the tasks placed elsewhere receives them).

    Attributes
    ----------
    slots : tuple
        The chain's slot statistics ``(counts, value, gradient, hessian)``.
    open_slots : ndarray of shape (K,)
        The slots of the MAP clusters, cluster ``c`` in slot ``open_slots[c]``.
    sizes, scores : ndarray
        Each slot's size and score.
    precision : float
    """

    slots: tuple
    open_slots: np.ndarray
    sizes: np.ndarray
    scores: np.ndarray
    precision: float

    def log_weights(self, blocks: PackedBlocks) -> np.ndarray:
        """``log |c| + log B(c ∪ {u}) − log B(c)`` of every task of ``blocks`` (expanded at
        the chain's anchor) against each cluster, shape (n_tasks, K).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # 2 tasks
        >>> _, clusters = sample_core(blocks.subset(np.array([0])), 1.0,
        ...                          np.random.default_rng(0), 5, 1)
        >>> clusters.log_weights(blocks.subset(np.array([1]))).shape
        (1, 1)
        """
        features, expansions = blocks.packed()
        return placement_scores(
            self.slots, self.open_slots, self.sizes, self.scores, features, expansions,
            self.precision,
        )  # fmt: skip


def sample_core(
    blocks: PackedBlocks, gamma: float, rng: np.random.Generator, n_sweeps: int, burn_in: int
) -> tuple[BlockClustering, CoreClusters]:
    """The partition posterior of ``blocks``' tasks (the core), and its MAP clusters held for
    placing other tasks.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> sampled, clusters = sample_core(toy.joint_blocks(), 1.0, np.random.default_rng(0), 5, 1)
    >>> sampled.partition.shape, bool(clusters.open_slots.size == sampled.partition.max() + 1)
    ((2,), True)
    """
    chain = JointChain(blocks, gamma)
    sampled = sample_chain(chain, rng, n_sweeps, burn_in)
    chain.hold(sampled.partition)
    n_clusters = int(sampled.partition.max()) + 1
    clusters = CoreClusters(
        chain.slots, np.arange(n_clusters), chain.sizes, chain.scores, chain.precision
    )
    return sampled, clusters
