"""The relevance sampler's assignment sweep, compiled (:mod:`~clusterednb.inference.relevance`).

A task's move scores every occupied cluster and a new one by the CRP times the evidence of
every feature with the switches summed out. What changes when the task joins a cluster is a
per-feature gain, computed from the task's nonzero counts only (a Dirichlet–multinomial's
log evidence changes in the cells the task touches and in its class totals); the sum over the
switches is the recursion over the number of relevant features of
:func:`~clusterednb.inference.relevance.log_sum_relevance`, ``O(F²)`` per candidate.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def _gain(task, slot, nz_ptr, nz_class, nz_value, nz_count, task_totals, slot_counts,
          slot_totals, beta, beta_totals, value_feature, out):  # fmt: skip
    """``out[f]``: the change of feature ``f``'s log evidence when ``task`` joins ``slot``."""
    out[:] = 0.0
    for i in range(nz_ptr[task], nz_ptr[task + 1]):
        y, v, x = nz_class[i], nz_value[i], nz_count[i]
        before = beta[y, v] + slot_counts[slot, y, v]
        out[value_feature[v]] += math.lgamma(before + x) - math.lgamma(before)
    n_classes, n_features = task_totals.shape[1], task_totals.shape[2]
    for y in range(n_classes):
        for f in range(n_features):
            added = task_totals[task, y, f]
            if added > 0:
                before = beta_totals[y, f] + slot_totals[slot, y, f]
                out[f] -= math.lgamma(before + added) - math.lgamma(before)


@njit(cache=True, nogil=True)
def _log_sum_switches(log_relevant, log_shared, log_prior_count, work):
    """``log Σ_r P(r) Π_f e^{r_f relevant_f + (1 − r_f) shared_f}`` (one candidate).

    ``work[j]`` sums, over the ways of making ``j`` of the features seen so far relevant,
    the product of each feature's factor divided by the larger of its two (so every factor
    is at most 1 and one of each pair is 1: no overflow, and the way that picks each
    feature's larger factor keeps its ``work[j]`` at least 1). The recursion is then plain
    arithmetic, with the features' larger factors added back in logs at the end.
    """
    n_features = log_relevant.shape[0]
    work[:] = 0.0
    work[0] = 1.0
    scale = 0.0
    for f in range(n_features):
        larger = max(log_relevant[f], log_shared[f])
        if larger == -np.inf:
            return -np.inf
        scale += larger
        relevant = math.exp(log_relevant[f] - larger)
        shared = math.exp(log_shared[f] - larger)
        for j in range(f + 1, 0, -1):
            work[j] = work[j] * shared + work[j - 1] * relevant
        work[0] = work[0] * shared
    top = -np.inf
    for j in range(n_features + 1):
        if work[j] > 0.0:
            top = max(top, log_prior_count[j])
    total = 0.0
    for j in range(n_features + 1):
        if work[j] > 0.0:
            total += work[j] * math.exp(log_prior_count[j] - top)
    return scale + top + math.log(total)


@njit(cache=True, nogil=True)
def relevance_sweep(order, uniforms, nz_ptr, nz_class, nz_value, nz_count, task_totals,
                    slot_counts, slot_totals, sizes, assignment, slot_log_ml, alone,
                    log_shared, beta, beta_totals, value_feature, log_gamma,
                    log_prior_count):  # fmt: skip
    """One sweep of moves over ``order`` (each move draws with one of ``uniforms``),
    updating the clusters' counts, sizes, per-feature log evidence and the assignment."""
    n_slots, n_features = slot_log_ml.shape
    gains = np.zeros((n_slots, n_features))
    scores = np.empty(n_slots)
    rest = np.empty(n_features)
    candidate = np.empty(n_features)
    work = np.empty(n_features + 1)
    # the candidates of a move, in increasing slot order: the occupied slots and the lowest
    # empty one (each move reads only these, not every slot: the sweeps after the first few
    # hold a few clusters among as many slots as tasks)
    slots = np.empty(n_slots + 1, dtype=np.int64)
    for step in range(order.shape[0]):
        task = order[step]
        old = assignment[task]
        for i in range(nz_ptr[task], nz_ptr[task + 1]):
            slot_counts[old, nz_class[i], nz_value[i]] -= nz_count[i]
        slot_totals[old] -= task_totals[task]
        sizes[old] -= 1
        if sizes[old] == 0:
            slot_log_ml[old] = 0.0
            slot_counts[old] = 0.0
            slot_totals[old] = 0.0
        else:
            _gain(task, old, nz_ptr, nz_class, nz_value, nz_count, task_totals, slot_counts,
                  slot_totals, beta, beta_totals, value_feature, gains[old])  # fmt: skip
            slot_log_ml[old] -= gains[old]
        n_candidates, empty = _candidates(sizes, slots)
        rest[:] = 0.0
        for c in range(n_candidates):
            if slots[c] != empty:
                rest += slot_log_ml[slots[c]]
        top = -np.inf
        for c in range(n_candidates):
            s = slots[c]
            if s == empty:
                gains[s] = alone[task]
                candidate[:] = rest + alone[task]
                scores[s] = log_gamma + _log_sum_switches(
                    candidate, log_shared, log_prior_count, work
                )
            else:
                _gain(task, s, nz_ptr, nz_class, nz_value, nz_count, task_totals, slot_counts,
                      slot_totals, beta, beta_totals, value_feature, gains[s])  # fmt: skip
                candidate[:] = rest + gains[s]
                scores[s] = math.log(sizes[s]) + _log_sum_switches(
                    candidate, log_shared, log_prior_count, work
                )
            top = max(top, scores[s])
        total = 0.0
        for c in range(n_candidates):
            total += math.exp(scores[slots[c]] - top)
        threshold, chosen, running = uniforms[step] * total, empty, 0.0
        for c in range(n_candidates):
            running += math.exp(scores[slots[c]] - top)
            if running >= threshold and scores[slots[c]] > -np.inf:
                chosen = slots[c]
                break
        assignment[task] = chosen
        for i in range(nz_ptr[task], nz_ptr[task + 1]):
            slot_counts[chosen, nz_class[i], nz_value[i]] += nz_count[i]
        slot_totals[chosen] += task_totals[task]
        sizes[chosen] += 1
        slot_log_ml[chosen] += gains[chosen]


@njit(cache=True, nogil=True)
def _candidates(sizes, slots):
    """Write the occupied slots and the lowest empty one, in increasing order, to ``slots``;
    return their number and the empty slot."""
    n = 0
    empty = -1
    for s in range(sizes.shape[0]):
        if sizes[s] > 0:
            slots[n] = s
            n += 1
        elif empty < 0:
            empty = s
            slots[n] = s
            n += 1
    return n, empty


@njit(cache=True, nogil=True)
def switch_probabilities(log_relevant, log_shared, log_prior_count):
    """``P(r_f = 1 | z, D)`` of every feature (the compiled
    :func:`~clusterednb.inference.relevance_exact.relevance_probability` of one partition)."""
    n_features = log_relevant.shape[0]
    work = np.empty(n_features + 1)
    total = _log_sum_switches(log_relevant, log_shared, log_prior_count, work)
    forced = log_shared.copy()
    probability = np.empty(n_features)
    for f in range(n_features):
        forced[f] = -np.inf
        with_f = _log_sum_switches(log_relevant, forced, log_prior_count, work)
        probability[f] = math.exp(with_f - total)
        forced[f] = log_shared[f]
    return probability
