"""Feature relevance summed out exactly over every partition of a few tasks: the reference
the relevance sampler (:mod:`~clusterednb.inference.relevance`) is tested against
(:func:`enumerate_relevance`, the switches summed by their count), and the exact engine with
relevance (:func:`fit_exact_relevance`, the share of relevant features integrated by
Gauss–Jacobi quadrature, which also gives its predictive)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, roots_jacobi

from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS, partition_blocks, subset_value_counts
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.relevance import (
    check_relevance_prior,
    log_sum_relevance,
    shared_evidence,
)
from clusterednb.inference.result import ClusteringResult
from clusterednb.models.observation import DirichletNB
from clusterednb.models.partition_prior import crp_log_prior
from clusterednb.stats.counts import Counts


def relevance_probability(
    log_relevant: np.ndarray, log_shared: np.ndarray, prior: tuple[float, float]
) -> np.ndarray:
    """``P(r_f = 1 | z, D)`` of every feature, shape (..., n_features): the share of
    :func:`log_sum_relevance` in which ``f`` is relevant.

    Examples
    --------
    A feature much likelier when relevant is relevant:

    >>> relevance_probability(np.array([0.0, -30.0]), np.array([-30.0, 0.0]), (1, 1)).round(6)
    array([1., 0.])
    """
    total = log_sum_relevance(log_relevant, log_shared, prior)
    probability = np.empty(log_relevant.shape)
    for f in range(log_relevant.shape[-1]):
        forced = log_shared.copy()
        forced[..., f] = -np.inf  # only the terms with r_f = 1 remain
        probability[..., f] = np.exp(log_sum_relevance(log_relevant, forced, prior) - total)
    return probability


@dataclass
class RelevanceEnumeration:
    """The exact posterior of :func:`enumerate_relevance`.

    Attributes
    ----------
    log_evidence : float
        ``log P(D)`` of the labelled rows (labels and features; switches and partitions
        summed out).
    partitions : ndarray of shape (B(U), U)
    partition_weights : ndarray of shape (B(U),)
        ``P(z | D)``.
    feature_relevance : ndarray of shape (n_features,)
        ``P(r_f = 1 | D)``.
    """

    log_evidence: float
    partitions: np.ndarray
    partition_weights: np.ndarray
    feature_relevance: np.ndarray

    def coclustering(self) -> np.ndarray:
        """``P(tasks i and j share a cluster | D)``, shape (U, U)."""
        same = self.partitions[:, :, None] == self.partitions[:, None, :]
        return np.tensordot(self.partition_weights, same, axes=1)


def enumerate_relevance(
    model: DirichletNB, counts: Counts, gamma: float, prior: tuple[float, float] = (1.0, 1.0)
) -> RelevanceEnumeration:
    """Every partition of at most ``MAX_EXACT_TASKS`` tasks, the switches summed out exactly.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> exact = enumerate_relevance(toy.colour_model(), toy.three_task_counts(), 1.0)
    >>> round(float(exact.partition_weights.sum()), 12), exact.feature_relevance.shape
    (1.0, (1,))
    """
    _checked_tasks(counts)
    prior = check_relevance_prior(prior)
    tables = _PartitionTables.of(model, counts, gamma)
    log_relevant = tables.log_relevant  # (P, F)
    log_shared = shared_evidence(model, tables.subsets[-1])[0]
    log_joint = tables.log_prior + log_sum_relevance(log_relevant, log_shared[None], prior)
    log_total = logsumexp(log_joint)
    weights = np.exp(log_joint - log_total)
    relevance = weights @ relevance_probability(log_relevant, log_shared[None], prior)
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    return RelevanceEnumeration(
        float(log_total) + log_labels, tables.partitions, weights, relevance
    )


def _checked_tasks(counts: Counts) -> int:
    """The number of tasks, refused above ``MAX_EXACT_TASKS``."""
    n_tasks = counts.n_groups
    if n_tasks > MAX_EXACT_TASKS:
        raise CNBError(
            f"exact enumeration is limited to {MAX_EXACT_TASKS} tasks; this data set has "
            f"{n_tasks}. Use inference='gibbs'."
        )
    return n_tasks


MAX_RELEVANCE_TABLE_BYTES = 2**28
"""Most bytes of the exact relevance engine's component tables (:func:`fit_exact_relevance`):
one per partition, block and quadrature node, so at most ``B(U + 1) (F // 2 + 1)`` of shape
(C, V); checked before they are allocated."""


def beta_quadrature(prior: tuple[float, float], degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Jacobi nodes ``π_j`` in (0, 1) and log weights (they log-sum to 0) with
    ``Σ_j w_j g(π_j) = E[g(π)]``, ``π ~ Beta(a, b)``, for every polynomial ``g`` of degree
    at most ``degree`` (``degree // 2 + 1`` nodes: Gauss's rule is exact to ``2n − 1``).

    Examples
    --------
    ``E[π³]`` under Beta(2, 3) is ``(2 · 3 · 4) / (5 · 6 · 7)``:

    >>> share, log_w = beta_quadrature((2.0, 3.0), 3)
    >>> bool(np.isclose(np.exp(log_w) @ share**3, 24 / 210))
    True
    """
    a, b = prior
    x, weights = roots_jacobi(degree // 2 + 1, b - 1.0, a - 1.0)  # (1 − x)^(b−1) (1 + x)^(a−1)
    log_w = np.log(weights)
    return (1.0 + x) / 2.0, log_w - logsumexp(log_w)


def mixed_pseudo_counts(proba: np.ndarray, beta: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Counts whose Dirichlet predictive ``(n_v + β_v) / Σ_{v' ∈ f} (n_v' + β_v')`` is
    ``proba`` (..., C, V), each feature's block summing to 1: ``n_v = p_v T_f − β_v`` with
    ``T_f = max_{v ∈ f} β_v / p_v`` (so every count is at least 0; a mixture of predictives
    is not one of counts, but its pseudo-counts predict exactly as it does).

    Examples
    --------
    Half of a "red" predictive (3/4, 1/4) and half of a flat one, under β = 1:

    >>> proba = np.array([[0.625, 0.375]])
    >>> counts = mixed_pseudo_counts(proba, np.ones((1, 2)), np.array([0, 2]))
    >>> counts.round(6).tolist(), ((counts + 1) / (counts + 1).sum()).tolist()
    ([[0.666667, 0.0]], [[0.625, 0.375]])
    """
    ratio = beta / proba
    most = np.maximum.reduceat(ratio, offsets[:-1], axis=-1)  # (..., C, F)
    value_feature = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    return np.maximum(proba * most[..., value_feature] - beta, 0.0)


def fit_exact_relevance(
    model: DirichletNB,
    counts: Counts,
    gamma: float,
    prior: tuple[float, float] = (1.0, 1.0),
    forced: np.ndarray | None = None,
) -> ClusteringResult:
    """Engine ``"exact"`` with feature relevance: every partition, the switches summed out, and
    the exact predictive as a mixture of naive-Bayes components.

    Given the share ``π`` the switches are independent, so ``P(D, z) = P(z) E_π[Π_f (π L_f(z)
    + (1 − π) S_f)]`` (``L_f(z)`` the feature's evidence relevant in the blocks of ``z``,
    ``S_f`` shared) and the predictive of a row is the same expectation of a product of one
    mixture per feature, ``ρ_f p_f(block) + (1 − ρ_f) p_f(shared)`` with ``ρ_f = P(r_f = 1 | z,
    π, D)``. Both are polynomials of degree ``F`` in ``π``: a Gauss–Jacobi rule of ``F // 2
    + 1`` nodes (:func:`beta_quadrature`) sums them exactly. The posterior mixes, for each task,
    one component per partition and node (its block's mixed predictive, as
    :func:`mixed_pseudo_counts`), weighted by ``P(z, π_j | D)``; the joints are mixed, as in
    :func:`~clusterednb.inference.exact.fit_exact`. ``forced`` (bool, (n_features,)): features
    kept relevant (:func:`~clusterednb.inference.relevance.shared_evidence`).

    The result's ``extras["feature_relevance"]`` is ``P(r_f = 1 | D)``, (n_features,).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> result = fit_exact_relevance(toy.colour_model(), toy.three_task_counts(), 1.0)
    >>> result.evidence_kind, len(result.partitions), result.extras["feature_relevance"].shape
    ('exact', 5, (1,))
    """
    if type(model).log_feature_table is not DirichletNB.log_feature_table:
        raise CNBError(  # the multinomial documents' predictive is no table of probabilities
            "relevance=True with inference='exact' needs a model whose predictive is a table of "
            f"value probabilities (categorical or Bernoulli); {type(model).__name__} predicts a "
            "row otherwise: use inference='gibbs'"
        )
    n_tasks = _checked_tasks(counts)
    prior = check_relevance_prior(prior)
    n_features = model.schema.n_features
    n_nodes = n_features // 2 + 1
    tables = _PartitionTables.of(model, counts, gamma)
    # a component table per partition, block or new one, and node
    n_slots = int((tables.partitions.max(axis=1) + 2).sum())
    table_bytes = n_slots * n_nodes * int(np.prod(counts.value_counts.shape[1:])) * 8
    if table_bytes > MAX_RELEVANCE_TABLE_BYTES:
        raise CNBError(
            f"relevance=True with inference='exact' on {n_tasks} tasks and {n_features} "
            f"features needs {table_bytes / 2**20:.0f} MiB of component tables, above the "
            f"{MAX_RELEVANCE_TABLE_BYTES / 2**20:.0f} MiB limit: use inference='gibbs'"
        )
    log_shared, label_free = shared_evidence(model, tables.subsets[-1], forced)
    share, log_node = beta_quadrature(prior, n_features)
    relevant = np.log(share)[None, :, None] + tables.log_relevant[:, None, :]
    shared = np.log1p(-share)[None, :, None] + log_shared[None, None, :]
    log_either = np.logaddexp(relevant, shared)  # (P, J, F)
    switched = np.exp(relevant - log_either)  # ρ: P(r_f = 1 | z, π_j, D)
    log_joint = tables.log_prior[:, None] + log_node[None, :] + log_either.sum(axis=2)
    log_total = logsumexp(log_joint)
    log_post = log_joint - log_total  # (P, J): P(z, π_j | D)
    shared_proba = _shared_proba(model, tables.subsets[-1], label_free)
    posterior = _mixture(model, tables, switched, log_post, shared_proba, counts, gamma)
    weights = np.exp(logsumexp(log_post, axis=1))
    partitions = tables.partitions
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    return ClusteringResult(
        posterior=posterior,
        log_evidence=float(log_total) + log_labels,
        evidence_kind="exact",
        partition=partitions[np.argmax(weights)],
        n_clusters_probability=np.bincount(
            partitions.max(axis=1) + 1, weights=weights, minlength=n_tasks + 1
        ),
        partitions=partitions,
        partition_weights=weights,
        extras={"feature_relevance": np.einsum("pj,pjf->f", np.exp(log_post), switched)},
    )


@dataclass
class _PartitionTables:
    """Every partition of the tasks (restricted-growth strings, (P, U)), each block's bit
    mask and size (P, U; 0 where empty), the CRP log prior (P,), each subset's counts
    (2^U, C, V) and each partition's per-feature evidence with every feature relevant (P, F)."""

    partitions: np.ndarray
    block_masks: np.ndarray
    block_sizes: np.ndarray
    log_prior: np.ndarray
    subsets: np.ndarray
    log_relevant: np.ndarray

    @classmethod
    def of(cls, model: DirichletNB, counts: Counts, gamma: float) -> _PartitionTables:
        subsets = subset_value_counts(counts.value_counts)
        log_block = model.log_marginal_each_feature(subsets)  # (2^U, F)
        log_block[0] = 0.0
        partitions, block_masks, block_sizes = partition_blocks(counts.n_groups)
        log_prior = np.array([crp_log_prior(z, gamma) for z in partitions])
        log_relevant = log_block[block_masks].sum(axis=1)  # empty blocks add 0
        return cls(partitions, block_masks, block_sizes, log_prior, subsets, log_relevant)


def _mixture(
    model: DirichletNB,
    tables: _PartitionTables,
    switched: np.ndarray,
    log_post: np.ndarray,
    shared_proba: np.ndarray,
    counts: Counts,
    gamma: float,
) -> Posterior:
    """The exact predictive of :func:`fit_exact_relevance`: a component per partition, slot
    (each block, then a new one) and node, its features' predictives mixed by ``switched``
    (P, J, F) between the slot's and ``shared_proba`` (C, V); each task's label prior from its
    own label counts (``counts``)."""
    partitions = tables.partitions
    n_partitions, n_tasks = partitions.shape
    n_nodes = log_post.shape[1]
    n_blocks = partitions.max(axis=1) + 1
    first_slot = np.concatenate([[0], np.cumsum(n_blocks + 1)[:-1]])
    slot_partition = np.repeat(np.arange(n_partitions), n_blocks + 1)
    slot_block = np.arange(slot_partition.size) - first_slot[slot_partition]
    occupied = slot_block < n_blocks[slot_partition]
    block = np.minimum(slot_block, n_tasks - 1)
    slot_mask = np.where(occupied, tables.block_masks[slot_partition, block], 0)
    slot_size = np.where(occupied, tables.block_sizes[slot_partition, block], gamma)
    proba = np.exp(model.log_feature_table(tables.subsets)[..., :-1])  # (2^U, C, V)
    rho = switched[slot_partition][..., model.schema.value_feature][:, :, None, :]
    mixed = rho * proba[slot_mask][:, None] + (1.0 - rho) * shared_proba  # (S, J, C, V)
    pseudo_counts = mixed_pseudo_counts(mixed, model.beta, model.offsets)
    own_slot = first_slot[:, None] + partitions  # (P, U)
    cold = log_post[slot_partition] + np.log(slot_size)[:, None] - np.log(n_tasks + gamma)
    return Posterior(
        component_counts=pseudo_counts.reshape(-1, *pseudo_counts.shape[2:]),
        task_label_counts=counts.label_counts,
        indptr=np.arange(n_tasks + 1, dtype=np.int64) * n_partitions * n_nodes,
        components=(own_slot.T[:, :, None] * n_nodes + np.arange(n_nodes)).ravel(),
        log_weights=np.tile(log_post.ravel(), n_tasks),
        cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
        cold_components=np.arange(slot_partition.size * n_nodes),
        cold_log_weights=cold.ravel(),
        mix_joint=True,
    )


def _shared_proba(model: DirichletNB, pooled: np.ndarray, label_free: np.ndarray) -> np.ndarray:
    """The predictive of each value when its feature is shared by every task, (C, V): pooled
    over the tasks, label-free with probability ``label_free`` (n_features,) (the classes'
    counts summed under the classes' mean ``β``), else per class."""
    dependent = np.exp(model.log_feature_table(pooled)[..., :-1])
    beta = model.beta.mean(axis=0)
    total = pooled.sum(axis=0) + beta
    norm = np.add.reduceat(total, model.offsets[:-1])[model.schema.value_feature]
    free = label_free[model.schema.value_feature]
    return free * (total / norm) + (1.0 - free) * dependent
