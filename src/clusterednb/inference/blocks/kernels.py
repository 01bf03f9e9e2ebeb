"""Compiled sweeps of the block Gibbs sampler over joint feature-and-label clusters.

The statistics of :class:`~clusterednb.logistic.clustering.joint_blocks.JointLogisticBlocks` live in
preallocated slot arrays here, one slot per cluster (at most one per task):

- ``slot_counts[s]`` of shape (n_values_total,): tempered feature-value counts;
- ``slot_value[s]``, ``slot_gradient[s]`` of shape (d,), ``slot_hessian[s]`` of shape (d, d):
  the summed label expansions ``L, G, H`` at the anchor ``w₀``.

A cluster's score is ``log P(X_S) + log ∫ exp(L + Gᵀδ − ½ δᵀHδ) N(w₀ + δ; 0, λ⁻¹I) dδ``:
the Dirichlet–multinomial evidence of the counts plus the Gaussian integral of the summed
expansions, ``L + ½ bᵀA⁻¹b − ½ λ|w₀|² + ½ d log λ − ½ log|A|`` with ``A = H + λI`` and
``b = G − λw₀``, from one Cholesky factor of ``A`` per cluster.

:func:`joint_sweep` moves every task once, in the order given, drawing from the numpy
``Generator`` passed in exactly the numbers
:func:`~clusterednb.inference.blocks.engine.gibbs_blocks` draws (one Gumbel per candidate,
the candidates in the order their clusters were opened), so the two samplers run the same
chain from the same seed.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def log_features(counts, task_counts, beta, offsets, log_norm_prior):  # pragma: no cover
    """``log P(X)`` of the counts ``counts + task_counts`` (pass an empty ``task_counts``
    for ``counts`` alone).

    Examples
    --------
    >>> counts, offsets = np.array([1.0, 1.0]), np.array([0, 2])
    >>> round(float(np.exp(log_features(counts, np.zeros(0), 1.0, offsets, 0.0))), 12)
    0.166666666667
    """
    with_task = task_counts.size > 0
    total = 0.0
    for f in range(offsets.size - 1):
        feature_total = 0.0
        for v in range(offsets[f], offsets[f + 1]):
            pseudo = counts[v] + beta
            if with_task:
                pseudo += task_counts[v]
            total += math.lgamma(pseudo)
            feature_total += pseudo
        total -= math.lgamma(feature_total)
    return total - log_norm_prior


@njit(cache=True, nogil=True, fastmath={"reassoc", "nsz"})
def log_labels(
    value, gradient, hessian, task, expansions, precision, work, whitened
):  # pragma: no cover
    """The Gaussian integral of summed expansions, with task ``task``'s added (-1: none).

    ``expansions = (task_value, task_gradient, task_hessian, anchor, constant)`` with
    ``constant = −½ λ|w₀|² + ½ d log λ``; ``work`` (d, d) and ``whitened`` (d,) are scratch.
    Returns NaN when ``H + λI`` is not positive definite.

    Examples
    --------
    One weight, no data (``H = 0``, ``G = 0``) at ``w₀ = 0``: the prior integrates to 1.

    >>> expansions = (np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1, 1)), np.zeros(1), 0.0)
    >>> log_labels(0.0, np.zeros(1), np.zeros((1, 1)), -1, expansions, 1.0,
    ...            np.empty((1, 1)), np.empty(1))
    0.0
    """
    task_value, task_gradient, task_hessian, anchor, constant = expansions
    d = anchor.size
    with_task = task >= 0
    for i in range(d):
        for j in range(i + 1):
            entry = hessian[i, j]
            if with_task:
                entry += task_hessian[task, i, j]
            work[i, j] = entry
        work[i, i] += precision
    log_det = 0.0
    for j in range(d):
        pivot = work[j, j]
        for k in range(j):
            pivot -= work[j, k] * work[j, k]
        if not pivot > 0.0:
            return np.nan
        root = math.sqrt(pivot)
        work[j, j] = root
        log_det += 2.0 * math.log(root)
        for i in range(j + 1, d):
            entry = work[i, j]
            for k in range(j):
                entry -= work[i, k] * work[j, k]
            work[i, j] = entry / root
    quadratic = 0.0
    for i in range(d):
        entry = gradient[i] - precision * anchor[i]
        if with_task:
            entry += task_gradient[task, i]
        for k in range(i):
            entry -= work[i, k] * whitened[k]
        whitened[i] = entry / work[i, i]
        quadratic += whitened[i] * whitened[i]
    total_value = value + task_value[task] if with_task else value
    return total_value + 0.5 * quadratic + constant - 0.5 * log_det


@njit(cache=True, nogil=True)
def slot_score(
    slots, slot, task, features, expansions, precision, work, whitened
):  # pragma: no cover
    """``log B`` of slot ``slot``'s cluster, with task ``task`` added (-1: as it is).

    ``slots = (counts, value, gradient, hessian)``; ``features = (task_counts, beta,
    offsets, log_norm_prior)``.
    """
    counts, value, gradient, hessian = slots
    task_counts, beta, offsets, log_norm_prior = features
    added = task_counts[task] if task >= 0 else task_counts[0, :0]
    return log_features(counts[slot], added, beta, offsets, log_norm_prior) + log_labels(
        value[slot], gradient[slot], hessian[slot], task, expansions, precision, work, whitened
    )


@njit(cache=True, nogil=True)
def move_task(slots, slot, task, sign, features, expansions):  # pragma: no cover
    """Add (``sign = 1``) or remove (``-1``) task ``task``'s statistics in slot ``slot``."""
    counts, value, gradient, hessian = slots
    task_counts = features[0]
    task_value, task_gradient, task_hessian = expansions[0], expansions[1], expansions[2]
    for v in range(counts.shape[1]):
        counts[slot, v] += sign * task_counts[task, v]
    value[slot] += sign * task_value[task]
    for i in range(gradient.shape[1]):
        gradient[slot, i] += sign * task_gradient[task, i]
        for j in range(gradient.shape[1]):
            hessian[slot, i, j] += sign * task_hessian[task, i, j]


@njit(cache=True, nogil=True)
def clear_slot(slots, slot):  # pragma: no cover
    """Zero slot ``slot``'s statistics (a cluster opened there starts empty)."""
    counts, value, gradient, hessian = slots
    counts[slot] = 0.0
    value[slot] = 0.0
    gradient[slot] = 0.0
    hessian[slot] = 0.0


@njit(cache=True, nogil=True)
def joint_sweep(
    order, greedy, rng, state, slots, features, expansions, precision, log_gamma, alone
):  # pragma: no cover
    """Reassign every task of ``order`` in turn (in place); False if a score was not finite.

    ``state = (assignment, sizes, opened, scores)``: each task's slot (-1: not placed yet),
    each slot's size, the open slots in the order they were opened (``opened[-1]`` holds
    their number), each slot's score. ``greedy`` puts each task where it scores best;
    otherwise a Gumbel draw per candidate (numpy's ``Generator.gumbel``, drawn the same way)
    samples it. ``alone[u]`` is ``log B({u})``.
    """
    assignment, sizes, opened, scores = state
    d = expansions[3].size
    work = np.empty((d, d))
    whitened = np.empty(d)
    n_slots = sizes.size
    candidate = np.empty(n_slots + 1)
    joined = np.empty(n_slots)
    for task in order:
        left = assignment[task]
        if left >= 0:
            move_task(slots, left, task, -1.0, features, expansions)
            sizes[left] -= 1
            assignment[task] = -1
            if sizes[left] == 0:
                position = 0
                while opened[position] != left:
                    position += 1
                for later in range(position, opened[-1] - 1):
                    opened[later] = opened[later + 1]
                opened[-1] -= 1
        if left >= 0 and sizes[left] > 0:
            scores[left] = slot_score(
                slots, left, -1, features, expansions, precision, work, whitened
            )
        n_open = opened[-1]
        for position in range(n_open):
            slot = opened[position]
            joined[position] = slot_score(
                slots, slot, task, features, expansions, precision, work, whitened
            )
            candidate[position] = math.log(sizes[slot]) + joined[position] - scores[slot]
        candidate[n_open] = log_gamma + alone[task]
        choice = 0
        best = -np.inf
        for position in range(n_open + 1):
            if not math.isfinite(candidate[position]):
                return False
            draw = candidate[position]
            if not greedy:
                uniform = 1.0 - rng.random()
                while uniform >= 1.0:
                    uniform = 1.0 - rng.random()
                draw -= math.log(-math.log(uniform))
            if draw > best:
                best, choice = draw, position
        if choice == n_open:
            slot = 0
            while sizes[slot] > 0:
                slot += 1
            clear_slot(slots, slot)
            opened[n_open] = slot
            opened[-1] += 1
            scores[slot] = alone[task]
        else:
            slot = opened[choice]
            scores[slot] = joined[choice]
        move_task(slots, slot, task, 1.0, features, expansions)
        sizes[slot] += 1
        assignment[task] = slot
    return True


@njit(cache=True, nogil=True)
def refresh_slots(state, slots, features, expansions, precision):  # pragma: no cover
    """Every open slot's statistics summed afresh from its members (in task order) and
    rescored, so that the rounding of many moves does not pile up."""
    assignment, _, opened, scores = state
    d = expansions[3].size
    work = np.empty((d, d))
    whitened = np.empty(d)
    for position in range(opened[-1]):
        slot = opened[position]
        clear_slot(slots, slot)
    for task in range(assignment.size):
        if assignment[task] >= 0:
            move_task(slots, assignment[task], task, 1.0, features, expansions)
    for position in range(opened[-1]):
        slot = opened[position]
        scores[slot] = slot_score(slots, slot, -1, features, expansions, precision, work, whitened)


@njit(cache=True, nogil=True)
def alone_scores(slots, features, expansions, precision):  # pragma: no cover
    """``log B({u})`` of every task, shape (n_tasks,) (scored in slot 0, left empty)."""
    d = expansions[3].size
    work = np.empty((d, d))
    whitened = np.empty(d)
    n_tasks = features[0].shape[0]
    out = np.empty(n_tasks)
    clear_slot(slots, 0)
    for task in range(n_tasks):
        out[task] = slot_score(slots, 0, task, features, expansions, precision, work, whitened)
    return out


@njit(cache=True, nogil=True)
def placement_scores(
    slots, open_slots, sizes, scores, features, expansions, precision
):  # pragma: no cover
    """``log |c| + log B(c ∪ {u}) − log B(c)`` of every task ``u`` of ``features`` and
    ``expansions`` (tasks outside the chain, expanded at its anchor) against each slot of
    ``open_slots``, shape (n_tasks, len(open_slots)); the slots are left as they are."""
    d = expansions[3].size
    work = np.empty((d, d))
    whitened = np.empty(d)
    n_tasks = features[0].shape[0]
    out = np.empty((n_tasks, open_slots.size))
    for task in range(n_tasks):
        for position in range(open_slots.size):
            slot = open_slots[position]
            joined = slot_score(slots, slot, task, features, expansions, precision, work, whitened)
            out[task, position] = math.log(sizes[slot]) + joined - scores[slot]
    return out
