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
    """``log Σ_r P(r) Π_f e^{r_f relevant_f + (1 − r_f) shared_f}`` (one candidate)."""
    n_features = log_relevant.shape[0]
    work[:] = -np.inf
    work[0] = 0.0
    for f in range(n_features):
        for j in range(f + 1, 0, -1):
            work[j] = np.logaddexp(work[j] + log_shared[f], work[j - 1] + log_relevant[f])
        work[0] = work[0] + log_shared[f]
    top = -np.inf
    for j in range(n_features + 1):
        top = max(top, work[j] + log_prior_count[j])
    total = 0.0
    for j in range(n_features + 1):
        total += math.exp(work[j] + log_prior_count[j] - top)
    return top + math.log(total)


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
        rest[:] = 0.0
        for s in range(n_slots):
            if sizes[s] > 0:
                rest += slot_log_ml[s]
        empty = -1
        top = -np.inf
        for s in range(n_slots):
            if sizes[s] == 0:
                scores[s] = -np.inf
                if empty < 0:
                    empty = s
                continue
            _gain(task, s, nz_ptr, nz_class, nz_value, nz_count, task_totals, slot_counts,
                  slot_totals, beta, beta_totals, value_feature, gains[s])  # fmt: skip
            candidate[:] = rest + gains[s]
            scores[s] = math.log(sizes[s]) + _log_sum_switches(
                candidate, log_shared, log_prior_count, work
            )
            top = max(top, scores[s])
        gains[empty] = alone[task]
        candidate[:] = rest + alone[task]
        scores[empty] = log_gamma + _log_sum_switches(candidate, log_shared, log_prior_count, work)
        top = max(top, scores[empty])
        total = 0.0
        for s in range(n_slots):
            total += math.exp(scores[s] - top)
        threshold, chosen, running = uniforms[step] * total, empty, 0.0
        for s in range(n_slots):
            running += math.exp(scores[s] - top)
            if running >= threshold and scores[s] > -np.inf:
                chosen = s
                break
        assignment[task] = chosen
        for i in range(nz_ptr[task], nz_ptr[task + 1]):
            slot_counts[chosen, nz_class[i], nz_value[i]] += nz_count[i]
        slot_totals[chosen] += task_totals[task]
        sizes[chosen] += 1
        slot_log_ml[chosen] += gains[chosen]


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
