"""Compiled inner loops of the collapsed Gibbs sampler.

Cluster statistics are kept as two dense integer arrays per cluster slot:

- ``cluster_cells[k, c * V + v]``: value counts ``N[k, c, v]`` over the flat value axis;
- ``cluster_totals[k, c * F + f]``: per-feature totals ``Σ_x N[k, c, f, x]`` (these differ
  from the label counts when feature values are missing).

A task's own counts are sparse (only non-zero cells), so a task–cluster score costs one
pair of ``lgamma`` look-ups per non-zero cell and per non-zero total: the other cells'
terms cancel between ``log Z(β + N + n)`` and ``log Z(β + N)``. Since counts are integers,
``lgamma(β + count)`` comes from a table indexed by count (one row per distinct ``β``).

Two tuples travel through every kernel:

- ``tasks = (cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count)``: the tasks'
  non-zero cells and totals in CSR form (``SparseTaskCounts.packed()``);
- ``tables = (cell_row, cell_table, cell_base, total_row, total_table, total_base,
  cell_log)``: which table row serves each cell / total, the ``lgamma(base + count)``
  tables, and ``cell_log[r, N] = log(base[r] + N)``, the one-step difference
  ``cell_table[r, N + 1] − cell_table[r, N]`` computed directly (``LogGammaTables.packed()``).

The sweep over task assignments, the sampler's hot loop, is in :mod:`.sweep_kernel`.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def log_gamma_lookup(table, base, row, count):  # pragma: no cover
    """``lgamma(base[row] + count)``, from ``table[row, count]`` when the table reaches it.

    Examples
    --------
    >>> from clusterednb.inference.gibbs.data import LogGammaTables
    >>> tables = LogGammaTables.build(np.ones(2), np.ones(1), 3)  # counts 0 .. 3 tabulated
    >>> round(log_gamma_lookup(tables.cell_table, tables.cell_base, 0, 3), 6)  # log 3!
    1.791759
    >>> round(log_gamma_lookup(tables.cell_table, tables.cell_base, 0, 10), 6)  # log 10!
    15.104413
    """
    if count < table.shape[1]:
        return table[row, count]
    return math.lgamma(base[row] + count)


@njit(cache=True, nogil=True)
def merged_log_ml(cells, totals, a, b, tables):  # pragma: no cover
    """Feature log evidence ``Σ_{y,f} log DM(N_a + N_b; β)`` of rows ``a`` and ``b`` pooled.

    Pass ``b = -1`` for row ``a`` alone.

    Examples
    --------
    In :func:`clusterednb.examples.inference.gibbs_start` (``β = 1``), cluster 0 saw red four times
    under
    "no" (``log 1/5``) and cluster 1 blue twice under "yes" (``log 1/3``):

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> cells, totals, tables = state.cluster_cells, state.cluster_totals, data.tables.packed()
    >>> bool(np.isclose(merged_log_ml(cells, totals, 0, -1, tables), np.log(1 / 5)))
    True
    >>> bool(np.isclose(merged_log_ml(cells, totals, 0, 1, tables), np.log(1 / 15)))
    True
    """
    cell_row, cell_table, cell_base, total_row, total_table, total_base, _ = tables
    score = 0.0
    for key in range(cells.shape[1]):
        count = cells[a, key] + (cells[b, key] if b >= 0 else 0)
        if count > 0:
            score += log_gamma_lookup(cell_table, cell_base, cell_row[key], count)
            score -= log_gamma_lookup(cell_table, cell_base, cell_row[key], 0)
    for key in range(totals.shape[1]):
        count = totals[a, key] + (totals[b, key] if b >= 0 else 0)
        if count > 0:
            score -= log_gamma_lookup(total_table, total_base, total_row[key], count)
            score += log_gamma_lookup(total_table, total_base, total_row[key], 0)
    return score


@njit(cache=True, nogil=True)
def task_log_score(task, slot, tasks, cluster_cells, cluster_totals, tables):  # pragma: no cover
    """``Σ_{y,f} [log Z(β + N[slot] + n[task]) − log Z(β + N[slot])]`` from sparse task counts.

    Cells where the task's count is 1 take one look-up in the ``log(β + N)`` table instead of
    two (the same number).

    Examples
    --------
    Task 0 (red twice under "no") taken out of cluster 0, which keeps task 1's two reds:
    ``P(red, red | two reds seen) = 3/4 · 4/5 = 3/5``.

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> tasks, tables = data.tasks.packed(), data.tables.packed()
    >>> move_task(0, 0, -1, tasks, state.cluster_cells, state.cluster_totals)
    >>> score = task_log_score(0, 0, tasks, state.cluster_cells, state.cluster_totals, tables)
    >>> bool(np.isclose(score, np.log(3 / 5)))
    True
    """
    cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count = tasks
    cell_row, cell_table, cell_base, total_row, total_table, total_base, cell_log = tables
    score = 0.0
    for j in range(cell_ptr[task], cell_ptr[task + 1]):
        key = cell_key[j]
        row = cell_row[key]
        held = cluster_cells[slot, key]
        count = cell_count[j]
        if count == 1 and held < cell_log.shape[1]:
            score += cell_log[row, held]
        else:
            score += log_gamma_lookup(cell_table, cell_base, row, held + count)
            score -= log_gamma_lookup(cell_table, cell_base, row, held)
    # Without missing values every feature of a class has the same totals: reuse the term.
    last_row, last_held, last_count, last_term = -1, -1, -1, 0.0
    for j in range(total_ptr[task], total_ptr[task + 1]):
        key = total_key[j]
        row = total_row[key]
        held = cluster_totals[slot, key]
        count = total_count[j]
        if row != last_row or held != last_held or count != last_count:
            last_term = log_gamma_lookup(total_table, total_base, row, held + count)
            last_term -= log_gamma_lookup(total_table, total_base, row, held)
            last_row, last_held, last_count = row, held, count
        score -= last_term
    return score


@njit(cache=True, nogil=True)
def move_task(task, slot, sign, tasks, cluster_cells, cluster_totals):  # pragma: no cover
    """Add (``sign = 1``) or remove (``sign = -1``) a task's counts to or from a cluster slot.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> move_task(2, 0, 1, data.tasks.packed(), state.cluster_cells, state.cluster_totals)
    >>> state.cluster_cells[0].tolist(), state.cluster_totals[0].tolist()  # tasks 0, 1 and 2
    ([4, 0, 0, 2], [4, 2])
    """
    cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count = tasks
    for j in range(cell_ptr[task], cell_ptr[task + 1]):
        cluster_cells[slot, cell_key[j]] += sign * cell_count[j]
    for j in range(total_ptr[task], total_ptr[task + 1]):
        cluster_totals[slot, total_key[j]] += sign * total_count[j]


_NEGLIGIBLE = -50.0  # exp(-50) < 2e-22: below a double's resolution of a total >= 1


@njit(cache=True, nogil=True)
def sample_index(log_weights, n, uniform):  # pragma: no cover
    """Index ``i < n`` drawn with probability ``∝ exp(log_weights[i])`` using one uniform.

    Weights below ``exp(-50)`` of the largest are taken as 0 without calling ``exp``: the
    total (at least 1 after shifting by the largest) cannot tell them apart from 0 unless
    there are more than 10^5 candidates.

    Examples
    --------
    >>> log_weights = np.log([0.2, 0.8])
    >>> sample_index(log_weights, 2, 0.1), sample_index(log_weights, 2, 0.5)  # 0.1 < 0.2
    (0, 1)
    """
    top = -np.inf
    for i in range(n):
        top = max(top, log_weights[i])
    total = 0.0
    for i in range(n):
        shifted = log_weights[i] - top
        if shifted > _NEGLIGIBLE:
            total += math.exp(shifted)
    threshold = uniform * total
    running = 0.0
    for i in range(n):
        shifted = log_weights[i] - top
        if shifted > _NEGLIGIBLE:
            running += math.exp(shifted)
            if running > threshold:
                return i
    return n - 1


@njit(cache=True, nogil=True)
def new_cluster_scores(tasks, tables):  # pragma: no cover
    """Each task's score against an empty cluster: ``Σ_{y,f} [log Z(β + n) − log Z(β)]``.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, _ = toy.gibbs_start()  # each task: one value twice, P = 1/2 · 2/3 = 1/3
    >>> np.exp(new_cluster_scores(data.tasks.packed(), data.tables.packed())).round(6).tolist()
    [0.333333, 0.333333, 0.333333]
    """
    n_tasks = tasks[0].shape[0] - 1
    n_cells = tables[0].shape[0]
    n_totals = tables[3].shape[0]
    empty_cells = np.zeros((1, n_cells), dtype=np.int64)
    empty_totals = np.zeros((1, n_totals), dtype=np.int64)
    out = np.zeros(n_tasks)
    for task in range(n_tasks):
        out[task] = task_log_score(task, 0, tasks, empty_cells, empty_totals, tables)
    return out


@njit(cache=True, nogil=True)
def resample_labels(
    X,
    row_task,
    labels,
    offsets,
    assignment,
    task_label_counts,
    cluster_cells,
    cluster_totals,
    priors,
    uniforms,
    probability_sums,
    temperature,
):  # pragma: no cover
    """Resample the labels of unlabelled rows given their tasks' clusters, in place.

    ``P(y_i = c | …) ∝ (α_c + m_−i[u, c]) Π_f (β[c,f,x] + N_−i[k,c,f,x]) / (Σ_x β[c,f,x] +
    T_−i[k,c,f])`` with ``u`` the row's task and ``k`` its cluster, raised to ``temperature``
    (1 for plain Gibbs). The conditional probabilities are added to ``probability_sums`` (a
    Rao-Blackwellised estimate of each label's marginal).

    Parameters
    ----------
    X : int array of shape (n_rows, n_features), the unlabelled rows' codes
    row_task : int array of shape (n_rows,)
    labels : int array of shape (n_rows,), current labels, updated in place
    offsets : int array of shape (n_features + 1,)
    priors : tuple ``(alpha, cell_prior, total_prior)``: α (n_classes,), β on the flat cells
        (n_classes * n_values_total,), Σ_x β per (class, feature) (n_classes * n_features,)

    Examples
    --------
    One unlabelled red row of task 2 (alone in its cluster, two blue rows under "yes"),
    with ``α = β = 1``: "no" weighs ``1 · (1 + 0) / (2 + 0) = 1/2`` and "yes"
    ``(1 + 2) · (1 + 0) / (2 + 2) = 3/4``, so ``P(no) = 0.4``.

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.inference.gibbs.state import initial_state, prepare
    >>> model = toy.colour_model()
    >>> data = prepare(model, toy.three_task_counts(), np.array([[0]]), np.array([2]))
    >>> state = initial_state(np.random.default_rng(0), data, 1.0, np.array([0, 0, 1]))
    >>> sums = np.zeros((1, 2))
    >>> priors = (model.alpha, data.cell_prior, data.total_prior)
    >>> resample_labels(np.array([[0]]), np.array([2]), state.labels, model.schema.offsets,
    ...                 state.assignment, state.task_label_counts, state.cluster_cells,
    ...                 state.cluster_totals, priors, np.array([0.3]), sums, 1.0)
    >>> sums.round(6).tolist(), state.labels.tolist()  # the uniform 0.3 < 0.4 draws "no"
    ([[0.4, 0.6]], [0])
    """
    alpha, cell_prior, total_prior = priors
    n_rows, n_features = X.shape
    n_classes = alpha.shape[0]
    n_values = offsets[n_features]
    log_p = np.empty(n_classes)
    for i in range(n_rows):
        task = row_task[i]
        slot = assignment[task]
        _move_row(X[i], labels[i], slot, -1, offsets, n_values, cluster_cells, cluster_totals)
        task_label_counts[task, labels[i]] -= 1
        for c in range(n_classes):
            value = math.log(alpha[c] + task_label_counts[task, c])
            for f in range(n_features):
                if X[i, f] >= 0:
                    cell = c * n_values + offsets[f] + X[i, f]
                    key = c * n_features + f
                    value += math.log(cell_prior[cell] + cluster_cells[slot, cell])
                    value -= math.log(total_prior[key] + cluster_totals[slot, key])
            log_p[c] = temperature * value
        top = log_p.max()
        norm = top + math.log(np.exp(log_p - top).sum())
        for c in range(n_classes):
            probability_sums[i, c] += math.exp(log_p[c] - norm)
        labels[i] = sample_index(log_p, n_classes, uniforms[i])
        task_label_counts[task, labels[i]] += 1
        _move_row(X[i], labels[i], slot, 1, offsets, n_values, cluster_cells, cluster_totals)


@njit(cache=True, nogil=True)
def _move_row(
    x, label, slot, sign, offsets, n_values, cluster_cells, cluster_totals
):  # pragma: no cover
    n_features = x.shape[0]
    for f in range(n_features):
        if x[f] >= 0:
            cluster_cells[slot, label * n_values + offsets[f] + x[f]] += sign
            cluster_totals[slot, label * n_features + f] += sign


@njit(cache=True, nogil=True)
def restricted_scan(
    members, side, cells, totals, sizes, forced, uniforms, tasks, tables
):  # pragma: no cover
    """One restricted Gibbs scan of ``members`` between two clusters (rows 0 and 1), in place.

    ``side[k]`` is member ``k``'s current cluster. Where ``forced[k] >= 0`` the member is put
    there instead of drawing with ``uniforms[k]``. Returns the log probability of the moves
    made (Jain & Neal 2004's transition probability).

    Examples
    --------
    Task 1 forced back to cluster 0 (task 0's two reds, weight ``1 · 3/5``) rather than
    cluster 1 (task 2's blues, weight ``1 · 1/3``): the move has probability ``9/14``.

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> cells, totals = state.cluster_cells[:2].copy(), state.cluster_totals[:2].copy()
    >>> log_q = restricted_scan(np.array([1]), np.array([0]), cells, totals, np.array([2, 1]),
    ...                         np.array([0]), np.array([0.5]), data.tasks.packed(),
    ...                         data.tables.packed())
    >>> bool(np.isclose(log_q, np.log(9 / 14)))
    True
    """
    log_q = 0.0
    weight = np.empty(2)
    for k in range(members.shape[0]):
        task = members[k]
        move_task(task, side[k], -1, tasks, cells, totals)
        sizes[side[k]] -= 1
        for s in range(2):
            weight[s] = math.log(sizes[s]) + task_log_score(task, s, tasks, cells, totals, tables)
        top = max(weight[0], weight[1])
        log_norm = top + math.log(math.exp(weight[0] - top) + math.exp(weight[1] - top))
        if forced[k] >= 0:
            side[k] = forced[k]
        else:
            side[k] = sample_index(weight, 2, uniforms[k])
        log_q += weight[side[k]] - log_norm
        move_task(task, side[k], 1, tasks, cells, totals)
        sizes[side[k]] += 1
    return log_q
