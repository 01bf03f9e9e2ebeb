"""Stochastic search for a high-scoring partition: the evidence lower bound of thesis §4.3.

For any partition ``z*``, ``log P(D) ≥ log P(D | z*) + log P(z*)``. The search climbs the
joint ``log P(D | z) + log P(z)`` from several starts (all tasks together, all apart, draws
from the CRP prior): iterated conditional modes move each task, in random order, to the
cluster that maximises the joint (its conditional is proportional to it, so no move lowers
the joint), then greedy merges of pairs of clusters, repeated until nothing improves.
"""

from __future__ import annotations

from math import lgamma

import numpy as np

from clusterednb.inference.gibbs.ais import crp_draw
from clusterednb.inference.gibbs.data import GibbsData
from clusterednb.inference.gibbs.kernels import merged_log_ml, move_task, task_log_score
from clusterednb.inference.gibbs.state import GibbsState, feature_log_ml, initial_state, prepare
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.models.observation import ConjugateModel
from clusterednb.models.partition_prior import canonical_partition, crp_log_prior
from clusterednb.stats.counts import Counts


def _log_joint(state: GibbsState, data: GibbsData) -> float:
    return feature_log_ml(state, data) + crp_log_prior(state.assignment, state.gamma)


def _conditional_modes(rng: np.random.Generator, state: GibbsState, data: GibbsData) -> bool:
    """One sweep of conditional-mode moves; True if any task moved."""
    tasks, tables = data.tasks.packed(), data.tables.packed()
    moved = False
    for task in rng.permutation(data.n_tasks):
        old = int(state.assignment[task])
        move_task(task, old, -1, tasks, state.cluster_cells, state.cluster_totals)
        state.sizes[old] -= 1
        if state.sizes[old] == 0:
            state.release_slot(old)
        slots = state.active_slots().copy()
        scores = [
            np.log(state.sizes[s])
            + task_log_score(task, s, tasks, state.cluster_cells, state.cluster_totals, tables)
            for s in slots
        ]
        scores.append(np.log(state.gamma) + data.new_score[task])
        best = int(np.argmax(scores))
        slot = state.take_free_slot() if best == len(slots) else int(slots[best])
        move_task(task, slot, 1, tasks, state.cluster_cells, state.cluster_totals)
        state.sizes[slot] += 1
        state.assignment[task] = slot
        moved |= slot != old
    return moved


def _best_merge(state: GibbsState, data: GibbsData) -> bool:
    """Merge the pair of clusters that raises the joint most, if any does."""
    tables = data.tables.packed()
    slots = state.active_slots().copy()
    single = {
        int(s): merged_log_ml(state.cluster_cells, state.cluster_totals, int(s), -1, tables)
        for s in slots
    }
    best_gain, best_pair = 0.0, None
    for i, a in enumerate(slots):
        for b in slots[i + 1 :]:
            na, nb = state.sizes[a], state.sizes[b]
            log_prior = np.log(state.gamma) + lgamma(na) + lgamma(nb) - lgamma(na + nb)
            gain = (
                merged_log_ml(state.cluster_cells, state.cluster_totals, int(a), int(b), tables)
                - single[int(a)]
                - single[int(b)]
                - log_prior
            )
            if gain > best_gain:
                best_gain, best_pair = gain, (int(a), int(b))
    if best_pair is None:
        return False
    state.merge_into(*best_pair)
    return True


def search_partition(
    model: ConjugateModel,
    counts: Counts,
    gamma: float,
    rng: np.random.Generator,
    *,
    n_starts: int = 5,
    max_rounds: int = 100,
) -> tuple[np.ndarray, float]:
    """The best partition found and its ``log P(D_features | z) + log P(z)``.

    Returns
    -------
    partition : ndarray of shape (n_tasks,), canonical labels
    log_joint : float

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> partition, log_joint = search_partition(toy.colour_model(), toy.three_task_counts(), 1.0,
    ...                                         np.random.default_rng(0))
    >>> partition.tolist(), bool(np.isfinite(log_joint))
    ([0, 0, 0], True)
    """
    data = prepare(
        model,
        counts,
        np.zeros((0, model.schema.n_features), dtype=np.int64),
        np.zeros(0, dtype=np.int64),
    )
    n_tasks = counts.n_groups
    starts = [np.zeros(n_tasks, dtype=np.int64), np.arange(n_tasks)]
    starts += [crp_draw(rng, n_tasks, gamma) for _ in range(max(n_starts - 2, 0))]
    best_partition, best_score = starts[0], -np.inf
    for start in starts[: max(n_starts, 1)]:
        state = initial_state(rng, data, gamma, start)
        for _ in range(max_rounds):
            moved = _conditional_modes(rng, state, data)
            if not moved and not _best_merge(state, data):
                break
        score = _log_joint(state, data)
        if score > best_score:
            best_partition, best_score = canonical_partition(state.assignment), score
    return best_partition, best_score


def fit_search(
    model: ConjugateModel, counts: Counts, gamma: float, rng: np.random.Generator, n_starts: int = 5
) -> ClusteringResult:
    """Engine ``"search"``: the best partition found, its clusters' predictive, the bound.

    Examples
    --------
    Its bound is below the exact evidence (every partition summed):

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> counts = toy.three_task_counts()
    >>> result = fit_search(toy.colour_model(), counts, 1.0, np.random.default_rng(0))
    >>> exact = nb_toy.exact_clustering().log_evidence_
    >>> result.evidence_kind, bool(result.log_evidence <= exact)
    ('lower_bound', True)
    """
    require_conjugate(model, "search")
    partition, log_joint = search_partition(model, counts, gamma, rng, n_starts=n_starts)
    n_clusters = int(partition.max()) + 1
    n_tasks = counts.n_groups
    posterior = Posterior.of_partition(counts, partition, gamma)
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    probability = np.zeros(n_tasks + 1)
    probability[n_clusters] = 1.0
    return ClusteringResult(
        posterior=posterior,
        log_evidence=log_joint + log_labels,
        evidence_kind="lower_bound",
        partition=partition,
        n_clusters_probability=probability,
        partitions=partition[None, :],
        partition_weights=np.ones(1),
    )
