"""The compiled collapsed Gibbs sweep over task assignments (Neal 2000, algorithm 3).

For the length of a sweep the active clusters' statistics are also laid side by side, one
column per position in ``active`` — the *columns* — so that a task is scored against every
cluster cell by cell with the clusters in the inner, contiguous loop:

- ``steps[s - 1, key, a] = lgamma(β + N + s) − lgamma(β + N)`` for ``s = 1 .. STEPS``, with
  ``N`` cluster ``a``'s count of cell ``key`` (a sum of logs, ``Σ_{i<s} log(β + N + i)``):
  a cell the task holds ``s ≤ STEPS`` times costs one
  add per cluster (97 % of the cells at 10 rows per task);
- ``held[key, a] = N``, for cells the task holds more often (two table look-ups);
- ``totals[key, a]``, the per-feature totals.

The columns of a cluster are refreshed where a task joins or leaves it. The tuples
``tasks`` and ``tables`` are those of :mod:`.gibbs_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.inference.gibbs.kernels import (
    log_gamma_lookup,
    move_task,
    sample_index,
    task_log_score,
)
from clusterednb.jit import njit

STEPS = 4  # counts whose per-cluster term is kept in the columns


@njit(cache=True, nogil=True)
def _set_cell(key, p, count, record, columns):  # pragma: no cover
    """Column ``p``'s entries of cell ``key`` for a cluster count of ``count``."""
    _, _, cell_row, cell_base = record
    steps, held, _ = columns
    base = cell_base[cell_row[key]] + count
    held[key, p] = count
    step = 0.0
    for s in range(steps.shape[0]):  # only for clusters a task joined or left: log is cheap
        step += math.log(base + s)
        steps[s, key, p] = step


@njit(cache=True, nogil=True)
def _fill_column(p, slot, record, columns):  # pragma: no cover
    """Copy cluster ``slot``'s statistics into column ``p``
    (``record = (cluster_cells, cluster_totals, cell_row, cell_base)``)."""
    cluster_cells, cluster_totals = record[0], record[1]
    totals = columns[2]
    for key in range(cluster_cells.shape[1]):
        _set_cell(key, p, cluster_cells[slot, key], record, columns)
    for key in range(totals.shape[0]):
        totals[key, p] = cluster_totals[slot, key]


@njit(cache=True, nogil=True)
def _update_column(task, p, slot, tasks, record, columns):  # pragma: no cover
    """Refresh column ``p`` where task ``task`` has counts (after it joined or left ``slot``)."""
    cluster_cells, cluster_totals = record[0], record[1]
    cell_ptr, cell_key, _, total_ptr, total_key, _ = tasks
    totals = columns[2]
    for j in range(cell_ptr[task], cell_ptr[task + 1]):
        key = cell_key[j]
        _set_cell(key, p, cluster_cells[slot, key], record, columns)
    for j in range(total_ptr[task], total_ptr[task + 1]):
        key = total_key[j]
        totals[key, p] = cluster_totals[slot, key]


@njit(cache=True, nogil=True)
def _move_column(source, target, columns):  # pragma: no cover
    steps, held, totals = columns
    for key in range(held.shape[0]):
        for s in range(steps.shape[0]):
            steps[s, key, target] = steps[s, key, source]
        held[key, target] = held[key, source]
    for key in range(totals.shape[0]):
        totals[key, target] = totals[key, source]


@njit(cache=True, nogil=True)
def _new_columns(n_keys, n_total_keys, capacity):  # pragma: no cover
    return (
        np.empty((STEPS, n_keys, capacity)),
        np.empty((n_keys, capacity), dtype=np.int64),
        np.empty((n_total_keys, capacity), dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _grown(columns, capacity):  # pragma: no cover
    steps, held, totals = columns
    width = held.shape[1]
    bigger = _new_columns(held.shape[0], totals.shape[0], capacity)
    bigger[0][:, :, :width] = steps
    bigger[1][:, :width] = held
    bigger[2][:, :width] = totals
    return bigger


@njit(cache=True, nogil=True)
def _score_columns(task, n, tasks, tables, columns, scores, first_term, fast):  # pragma: no cover
    """``scores[a] = Σ_{y,f} [log Z(β + N_a + n_task) − log Z(β + N_a)]`` for the ``n`` active
    clusters side by side.

    ``fast = (covered, tied)``: ``covered`` says every count this sweep can reach is inside
    the lgamma tables (no bound test in the inner loop); ``tied[key]`` says total ``key``
    equals total ``key − 1`` in every cluster and task of the sweep (features of a class
    without missing values), so its term is the previous key's.
    """
    cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count = tasks
    cell_row, cell_table, cell_base, total_row, total_table, total_base, _ = tables
    steps, held, totals = columns
    covered, tied = fast
    for a in range(n):
        scores[a] = 0.0
    for j in range(cell_ptr[task], cell_ptr[task + 1]):
        key = cell_key[j]
        count = cell_count[j]
        if count <= STEPS:
            column = steps[count - 1, key]
            for a in range(n):
                scores[a] += column[a]
        elif covered:
            table = cell_table[cell_row[key]]
            column_held = held[key]
            for a in range(n):
                h = column_held[a]
                scores[a] += table[h + count] - table[h]
        else:
            row = cell_row[key]
            column_held = held[key]
            for a in range(n):
                h = column_held[a]
                scores[a] += log_gamma_lookup(cell_table, cell_base, row, h + count)
                scores[a] -= log_gamma_lookup(cell_table, cell_base, row, h)
    repeats = 0
    for j in range(total_ptr[task], total_ptr[task + 1]):
        key = total_key[j]
        if tied[key] and j > total_ptr[task]:
            repeats += 1
            continue
        if repeats:  # the previous run's term (first_term holds nothing before the first run)
            for a in range(n):
                scores[a] -= repeats * first_term[a]
        repeats = 1
        row, count = total_row[key], total_count[j]
        column_held = totals[key]
        if covered:
            table = total_table[row]
            for a in range(n):
                h = column_held[a]
                first_term[a] = table[h + count] - table[h]
        else:
            for a in range(n):
                h = column_held[a]
                first_term[a] = log_gamma_lookup(total_table, total_base, row, h + count)
                first_term[a] -= log_gamma_lookup(total_table, total_base, row, h)
    if repeats:
        for a in range(n):
            scores[a] -= repeats * first_term[a]


@njit(cache=True, nogil=True)
def sweep_shortcuts(
    order, assignment, tasks, tables, cluster_cells, cluster_totals, active, n
):  # pragma: no cover
    """``(covered, tied)`` of :func:`_score_columns` for a sweep over ``order``.

    A cell's (or total's) count summed over the ``n`` occupied clusters and the tasks not
    yet placed cannot change during the sweep, and bounds every count the sweep looks up.
    A total is tied to the one before it when they are equal in every occupied cluster and
    in every task of ``order`` (then they stay equal in every cluster the sweep makes).

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> covered, tied = sweep_shortcuts(data.all_tasks, state.assignment, data.tasks.packed(),
    ...                                 data.tables.packed(), state.cluster_cells,
    ...                                 state.cluster_totals, state.active, state.n_clusters)
    >>> covered, tied.tolist()  # the tables reach every count; no total repeats another
    (True, [False, False])
    """
    cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count = tasks
    _, cell_table, _, total_row, total_table, _, _ = tables
    n_keys, n_total_keys = cluster_cells.shape[1], cluster_totals.shape[1]
    cell_sum = np.zeros(n_keys, dtype=np.int64)
    total_sum = np.zeros(n_total_keys, dtype=np.int64)
    tied = np.zeros(n_total_keys, dtype=np.bool_)
    for key in range(1, n_total_keys):
        tied[key] = total_row[key] == total_row[key - 1]
    for a in range(n):
        slot = active[a]
        for key in range(n_keys):
            cell_sum[key] += cluster_cells[slot, key]
        for key in range(n_total_keys):
            total_sum[key] += cluster_totals[slot, key]
            if key > 0 and cluster_totals[slot, key] != cluster_totals[slot, key - 1]:
                tied[key] = False
    for visit in range(order.shape[0]):
        task = order[visit]
        unplaced = assignment[task] < 0
        if unplaced:
            for j in range(cell_ptr[task], cell_ptr[task + 1]):
                cell_sum[cell_key[j]] += cell_count[j]
        start, stop = total_ptr[task], total_ptr[task + 1]
        for j in range(start, stop):
            key = total_key[j]
            if unplaced:
                total_sum[key] += total_count[j]
            same_before = j > start and total_key[j - 1] == key - 1
            if not (same_before and total_count[j - 1] == total_count[j]):
                tied[key] = False  # key − 1 absent from the task, or another count
            if key + 1 < n_total_keys and not (j + 1 < stop and total_key[j + 1] == key + 1):
                tied[key + 1] = False  # key + 1 absent while key is present
    covered = (
        cell_sum.max() + 1 < cell_table.shape[1] and total_sum.max() + 1 < total_table.shape[1]
    )
    return covered, tied


@njit(cache=True, nogil=True)
def sweep_assignments(
    state,
    order,
    new_cluster_score,
    log_gamma,
    uniforms,
    tasks,
    cluster_cells,
    cluster_totals,
    tables,
    temperature,
):  # pragma: no cover
    """One collapsed Gibbs sweep over the tasks (Neal 2000, algorithm 3), in place.

    ``state = (assignment, sizes, active, position, free, counters)``. ``assignment[u] = -1``
    marks a task not yet placed (the first sweep then draws from the sequential CRP
    posterior). ``active[:counters[0]]`` lists occupied slots, ``position[slot]`` is a slot's
    index in ``active``, ``free[:counters[1]]`` the empty slots (the last one is taken
    first). ``order`` lists the tasks to visit, in turn (all of them for the sampler; one
    shard's for :func:`~clusterednb.inference.gibbs.sharded.sweep_shard`). ``uniforms[u]`` decides
    task ``u``. The likelihood is raised to ``temperature`` (1 for plain Gibbs; annealed
    importance sampling uses the tempered targets ``P(z) P(X, Y | z)^τ``). Returns the number
    of tasks visited: all of ``order``, or fewer when a visit finds no free slot.

    ``cluster_cells`` and ``cluster_totals`` stay the statistics' record; the columns (see
    the module) are a copy laid out for scoring. The visited task's own cluster is scored
    from the record (one cluster, with the task taken out), so that its column is refreshed
    only if the task moves.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> visited = sweep_assignments(state.kernel_state(), data.all_tasks, data.new_score, 0.0,
    ...                             np.full(3, 0.5), data.tasks.packed(), state.cluster_cells,
    ...                             state.cluster_totals, data.tables.packed(), 1.0)
    >>> visited, int(state.sizes.sum()), state.cluster_cells.sum(axis=0).tolist()
    (3, 3, [4, 0, 0, 2])
    """
    assignment, sizes, active, position, free, counters = state
    record = (cluster_cells, cluster_totals, tables[0], tables[2])
    columns = _new_columns(cluster_cells.shape[1], cluster_totals.shape[1], counters[0] + 16)
    for a in range(counters[0]):
        _fill_column(a, active[a], record, columns)
    scores = np.empty(active.shape[0] + 1)
    first_term = np.empty(active.shape[0] + 1)
    fast = sweep_shortcuts(
        order, assignment, tasks, tables, cluster_cells, cluster_totals, active, counters[0]
    )
    largest = sizes.sum() + order.shape[0] + 1  # no cluster can grow beyond this
    log_size = np.log(np.maximum(np.arange(largest), 1).astype(np.float64))
    for visit in range(order.shape[0]):
        if counters[1] == 0:
            return visit  # no free slot for a new cluster: the caller adds slots, resumes
        task = order[visit]
        old = assignment[task]
        stale = -1  # the column of the task's cluster, still counting the task
        if old >= 0:
            move_task(task, old, -1, tasks, cluster_cells, cluster_totals)
            sizes[old] -= 1
            if sizes[old] == 0:
                hole, last_position = position[old], counters[0] - 1
                last = active[last_position]
                active[hole] = last
                position[last] = hole
                _move_column(last_position, hole, columns)
                counters[0] -= 1
                free[counters[1]] = old
                counters[1] += 1
            else:
                stale = position[old]
        n_active = counters[0]
        _score_columns(task, n_active, tasks, tables, columns, scores, first_term, fast)
        if stale >= 0:  # scored from the record instead (most tasks stay: no column upkeep)
            scores[stale] = task_log_score(task, old, tasks, cluster_cells, cluster_totals, tables)
        for a in range(n_active):
            scores[a] = log_size[sizes[active[a]]] + temperature * scores[a]
        scores[n_active] = log_gamma + temperature * new_cluster_score[task]
        chosen = sample_index(scores, n_active + 1, uniforms[task])
        if chosen == n_active:
            counters[1] -= 1
            slot = free[counters[1]]
            active[n_active] = slot
            position[slot] = n_active
            counters[0] += 1
            move_task(task, slot, 1, tasks, cluster_cells, cluster_totals)
            if n_active >= columns[1].shape[1]:
                columns = _grown(columns, 2 * columns[1].shape[1])
            _fill_column(n_active, slot, record, columns)
        else:
            slot = active[chosen]
            move_task(task, slot, 1, tasks, cluster_cells, cluster_totals)
            if chosen != stale:
                _update_column(task, chosen, slot, tasks, record, columns)
        if stale >= 0 and slot != old:
            _update_column(task, stale, old, tasks, record, columns)
        sizes[slot] += 1
        assignment[task] = slot
    return order.shape[0]
