"""Feature relevance summed out exactly over every partition of a few tasks: the reference
the relevance sampler (:mod:`~clusterednb.inference.relevance`) is tested against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS, enumerate_partitions, subset_value_counts
from clusterednb.inference.relevance import (
    check_relevance_prior,
    log_sum_relevance,
    shared_evidence,
)
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
    n_tasks = counts.n_groups
    if n_tasks > MAX_EXACT_TASKS:
        raise CNBError(
            f"exact enumeration is limited to {MAX_EXACT_TASKS} tasks; this data set has "
            f"{n_tasks}. Use inference='gibbs'."
        )
    prior = check_relevance_prior(prior)
    subsets = subset_value_counts(counts.value_counts)
    log_block = model.log_marginal_each_feature(subsets)  # (2^U, F)
    log_block[0] = 0.0
    partitions = enumerate_partitions(n_tasks)
    bits = np.left_shift(1, np.arange(n_tasks))
    block_masks = np.stack([(partitions == k) @ bits for k in range(n_tasks)], axis=1)
    log_relevant = log_block[block_masks].sum(axis=1)  # (P, F); empty blocks add 0
    log_shared = shared_evidence(model, subsets[-1])[0]
    log_prior = np.array([crp_log_prior(z, gamma) for z in partitions])
    log_joint = log_prior + log_sum_relevance(log_relevant, log_shared[None], prior)
    log_total = logsumexp(log_joint)
    weights = np.exp(log_joint - log_total)
    relevance = weights @ relevance_probability(log_relevant, log_shared[None], prior)
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    return RelevanceEnumeration(float(log_total) + log_labels, partitions, weights, relevance)
