"""Numba kernels for the hot loops over rows: counting and per-row log joints.

Each kernel is a plain loop with the same arithmetic as the formula it implements; compiled
code is cached on disk (``cache=True``) so only the first run on a machine pays the JIT cost.
"""

from __future__ import annotations

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def count_rows(X, y, task_index, offsets, label_counts, value_counts):  # pragma: no cover
    """Add each labelled row to ``label_counts[t, y]`` and ``value_counts[t, y, v]``.

    Parameters
    ----------
    X : int array of shape (n_rows, n_features), -1 for missing
    y : int array of shape (n_rows,), -1 for unlabelled (skipped)
    task_index : int array of shape (n_rows,)
    offsets : int array of shape (n_features + 1,)
    label_counts : int64 array of shape (n_tasks, n_classes), updated in place
    value_counts : int64 array of shape (n_tasks, n_classes, n_values_total), updated in place

    Examples
    --------
    Two features of two values each (offsets 0, 2, 4); the second row misses its second:

    >>> X, y = np.array([[0, 1], [1, -1]]), np.array([1, 0])
    >>> labels, values = np.zeros((1, 2), np.int64), np.zeros((1, 2, 4), np.int64)
    >>> count_rows(X, y, np.array([0, 0]), np.array([0, 2, 4]), labels, values)
    >>> labels.tolist(), values[0].tolist()  # class 0: value 1 of f0; class 1: 0 of f0, 1 of f1
    ([[1, 1]], [[0, 1, 0, 0], [1, 0, 0, 1]])
    """
    n_rows, n_features = X.shape
    for i in range(n_rows):
        label = y[i]
        if label < 0:
            continue
        task = task_index[i]
        label_counts[task, label] += 1
        for f in range(n_features):
            code = X[i, f]
            if code >= 0:
                value_counts[task, label, offsets[f] + code] += 1


@njit(cache=True, nogil=True)
def log_joint_rows(X, offsets, log_prior_rows, log_tables, table_of_row, out):  # pragma: no cover
    """Per-row log joint under each row's own table.

    ``out[i, c] = log_prior_rows[i, c] + Σ_f log_tables[t_i, c, offsets[f] + X[i, f]]`` with
    ``t_i = table_of_row[i]``; missing codes (-1) contribute nothing.

    Parameters
    ----------
    X : int array of shape (n_rows, n_features)
    offsets : int array of shape (n_features + 1,)
    log_prior_rows : float64 array of shape (n_rows, n_classes)
    log_tables : float64 array of shape (n_tables, n_classes, n_values_total + 1)
    table_of_row : int array of shape (n_rows,)
    out : float64 array of shape (n_rows, n_classes), written in place

    Examples
    --------
    >>> log_tables = np.log([[[0.9, 0.1, 1.0], [0.2, 0.8, 1.0]]])  # one table; values 0, 1
    >>> out = np.empty((2, 2))
    >>> log_joint_rows(np.array([[1], [-1]]), np.array([0, 2]), np.log([[0.5, 0.5]] * 2),
    ...                log_tables, np.array([0, 0]), out)
    >>> np.exp(out).round(3).tolist()  # the missing value leaves the prior
    [[0.05, 0.4], [0.5, 0.5]]
    """
    n_rows, n_features = X.shape
    n_classes = log_tables.shape[1]
    for i in range(n_rows):
        table = table_of_row[i]
        for c in range(n_classes):
            total = log_prior_rows[i, c]
            for f in range(n_features):
                code = X[i, f]
                if code >= 0:
                    total += log_tables[table, c, offsets[f] + code]
            out[i, c] = total


@njit(cache=True, nogil=True)
def log_normalize_rows_inplace(log_values):  # pragma: no cover
    """Subtract each row's log-sum-exp in place, so that each row's exponentials sum to 1.

    Parameters
    ----------
    log_values : float64 array of shape (n_rows, n_classes), finite

    Examples
    --------
    >>> log_values = np.log([[1.0, 3.0]])
    >>> log_normalize_rows_inplace(log_values)
    >>> np.exp(log_values).round(6).tolist()
    [[0.25, 0.75]]
    """
    n_rows, n_classes = log_values.shape
    for i in range(n_rows):
        top = log_values[i, 0]
        for c in range(1, n_classes):
            top = max(top, log_values[i, c])
        total = 0.0
        for c in range(n_classes):
            total += np.exp(log_values[i, c] - top)
        shift = top + np.log(total)
        for c in range(n_classes):
            log_values[i, c] -= shift


def log_normalize_rows(log_values: np.ndarray) -> np.ndarray:
    """Return a copy of ``log_values`` with each row's log-sum-exp subtracted.

    Parameters
    ----------
    log_values : ndarray of shape (n_rows, n_classes), finite

    Returns
    -------
    ndarray of shape (n_rows, n_classes)

    Examples
    --------
    >>> log_values = np.array([[0.0, np.log(3.0)], [1000.0, 1000.0]])  # no overflow at 1000
    >>> np.exp(log_normalize_rows(log_values)).round(6).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    out = np.array(log_values, dtype=np.float64, order="C")
    log_normalize_rows_inplace(out)
    return out


@njit(cache=True, nogil=True)
def csr_task_counts(
    indptr, indices, values, total_of_key, n_total_keys, out_dtype
):  # pragma: no cover
    """Per-task non-zero cells and feature totals (CSR form) from a CSR matrix of value counts.

    Row ``u`` of ``(indptr, indices, values)`` holds task ``u``'s counts over the flat cells;
    ``total_of_key[key]`` is the (class, feature) total a cell adds to. Returns ``(cell_ptr,
    cell_key, cell_count, total_ptr, total_key, total_count)``: zero cells dropped, cells in
    the input's order, totals in increasing key order; keys and counts of ``out_dtype``.

    Examples
    --------
    One feature of two values and one of three, two classes (cells 0–4 class 0, 5–9 class
    1; totals 0–1 class 0, 2–3 class 1):

    >>> from scipy import sparse
    >>> cells = sparse.csr_matrix([[2, 0, 1, 1, 0, 0, 0, 0, 0, 0]])
    >>> total_of_key = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, 3])
    >>> parts = csr_task_counts(cells.indptr.astype(np.int64), cells.indices, cells.data,
    ...                         total_of_key, 4, np.int16)
    >>> [part.tolist() for part in parts]
    [[0, 3], [0, 2, 3], [2, 1, 1], [0, 2], [0, 1], [2, 2]]
    """
    n_tasks = indptr.shape[0] - 1
    cell_ptr = np.zeros(n_tasks + 1, dtype=np.int64)
    total_ptr = np.zeros(n_tasks + 1, dtype=np.int64)
    buffer = np.zeros(n_total_keys, dtype=np.int64)
    for j in range(values.shape[0]):
        if values[j] < 0 or values[j] != np.floor(values[j]):
            raise ValueError("task counts must be non-negative integers")
    for task in range(n_tasks):  # first pass: how many of each per task
        cells = 0
        for j in range(indptr[task], indptr[task + 1]):
            if values[j] != 0:
                cells += 1
                buffer[total_of_key[indices[j]]] += 1
        totals = 0
        for key in range(n_total_keys):
            if buffer[key] != 0:
                totals += 1
                buffer[key] = 0
        cell_ptr[task + 1] = cell_ptr[task] + cells
        total_ptr[task + 1] = total_ptr[task] + totals
    cell_key = np.empty(cell_ptr[n_tasks], dtype=out_dtype)
    cell_count = np.empty(cell_ptr[n_tasks], dtype=out_dtype)
    total_key = np.empty(total_ptr[n_tasks], dtype=out_dtype)
    total_count = np.empty(total_ptr[n_tasks], dtype=out_dtype)
    for task in range(n_tasks):
        at = cell_ptr[task]
        for j in range(indptr[task], indptr[task + 1]):
            if values[j] != 0:
                cell_key[at] = indices[j]
                cell_count[at] = values[j]
                buffer[total_of_key[indices[j]]] += np.int64(values[j])
                at += 1
        at = total_ptr[task]
        for key in range(n_total_keys):
            if buffer[key] != 0:
                total_key[at] = key
                total_count[at] = buffer[key]
                buffer[key] = 0
                at += 1
    return cell_ptr, cell_key, cell_count, total_ptr, total_key, total_count


@njit(cache=True, nogil=True)
def _count_task(X, y, offsets, order, first, stop, buffer, touched):  # pragma: no cover
    """Add the cells of rows ``order[first:stop]`` (one task's labelled rows) into ``buffer``;
    list each cell met for the first time in ``touched``; return how many were."""
    n_features = X.shape[1]
    n_values = offsets[n_features]
    n_touched = 0
    for i in range(first, stop):
        r = order[i]
        base = y[r] * n_values
        for f in range(n_features):
            if X[r, f] >= 0:
                key = base + offsets[f] + X[r, f]
                if buffer[key] == 0:
                    touched[n_touched] = key
                    n_touched += 1
                buffer[key] += 1
    return n_touched


@njit(cache=True, nogil=True)
def count_rows_sparse(X, y, task_index, offsets, n_tasks, n_classes):  # pragma: no cover
    """Per-task value counts of the labelled rows (``y >= 0``) as CSR arrays.

    Rows are grouped by task with a counting sort; a first pass finds the number of non-zero
    cells (so the output is allocated once, at its size), then each task's cells are counted
    in a dense buffer of one task's width and emitted in increasing key order (by scanning the
    buffer when it is narrow, by sorting the keys met when it is wide). Returns
    ``(indptr, indices, data)`` of a (n_tasks, n_classes * n_values_total) matrix.

    Examples
    --------
    The rows of :func:`count_rows`' example, as task 1 of two tasks:

    >>> X, y = np.array([[0, 1], [1, -1]]), np.array([1, 0])
    >>> indptr, indices, data = count_rows_sparse(X, y, np.array([1, 1]), np.array([0, 2, 4]),
    ...                                           2, 2)
    >>> indptr.tolist(), indices.tolist(), data.tolist()  # class-major cells 1, 4 and 7
    ([0, 0, 3], [1, 4, 7], [1, 1, 1])
    """
    n_rows, n_features = X.shape
    n_values = offsets[n_features]
    start = np.zeros(n_tasks + 1, dtype=np.int64)
    for r in range(n_rows):
        if y[r] >= 0:
            start[task_index[r] + 1] += 1
    for t in range(n_tasks):
        start[t + 1] += start[t]
    order = np.empty(start[n_tasks], dtype=np.int64)
    fill = start[:n_tasks].copy()
    for r in range(n_rows):
        if y[r] >= 0:
            order[fill[task_index[r]]] = r
            fill[task_index[r]] += 1
    buffer = np.zeros(n_classes * n_values, dtype=np.int64)
    touched = np.empty(n_classes * n_values, dtype=np.int64)
    n_cells = 0  # first pass: the exact number of non-zero cells, so nothing is over-allocated
    for t in range(n_tasks):
        n_touched = _count_task(X, y, offsets, order, start[t], start[t + 1], buffer, touched)
        for j in range(n_touched):
            buffer[touched[j]] = 0
        n_cells += n_touched
    indptr = np.zeros(n_tasks + 1, dtype=np.int64)
    indices = np.empty(n_cells, dtype=np.int32)
    data = np.empty(n_cells, dtype=np.int64)
    at = 0
    for t in range(n_tasks):
        n_touched = _count_task(X, y, offsets, order, start[t], start[t + 1], buffer, touched)
        if buffer.shape[0] <= 8 * n_touched:  # a narrow row: scan it in key order
            for key in range(buffer.shape[0]):
                if buffer[key] != 0:
                    indices[at] = key
                    data[at] = buffer[key]
                    buffer[key] = 0
                    at += 1
        else:  # a wide one (words): sort the keys met
            keys = np.sort(touched[:n_touched])
            for j in range(n_touched):
                indices[at] = keys[j]
                data[at] = buffer[keys[j]]
                buffer[keys[j]] = 0
                at += 1
        indptr[t + 1] = at
    return indptr, indices, data


@njit(cache=True, nogil=True)
def shuffle_within_groups(values, group, uniforms):  # pragma: no cover
    """``values`` with each run of equal ``group`` values shuffled among itself (Fisher–Yates
    along each run, ``uniforms[i]`` choosing the place that place ``i`` swaps with): ``O(n)``,
    against ``O(n log n)`` for a sort.

    Parameters
    ----------
    values : int64 array of shape (n,)
    group : int array of shape (n,), non-decreasing
    uniforms : float64 array of shape (n,), each in [0, 1)

    Returns
    -------
    int64 array of shape (n,): a new array

    Examples
    --------
    >>> values, group = np.array([5, 6, 7, 8, 9]), np.array([0, 0, 0, 1, 1])
    >>> dealt = shuffle_within_groups(values, group, np.random.default_rng(0).random(5))
    >>> sorted(dealt[:3].tolist()), sorted(dealt[3:].tolist())
    ([5, 6, 7], [8, 9])
    """
    out = values.copy()
    _shuffle_runs(out, group, uniforms)
    return out


@njit(cache=True, nogil=True)
def _shuffle_runs(out, group, uniforms):  # pragma: no cover
    """Fisher–Yates of ``out`` in place along each run of equal ``group`` (the first
    ``group.shape[0]`` entries): place ``i`` swaps with a uniform choice, ``uniforms[i]``,
    among the places of its run so far."""
    start = 0
    for i in range(group.shape[0]):
        if i > 0 and group[i] != group[i - 1]:
            start = i
        j = start + min(int(uniforms[i] * (i - start + 1)), i - start)
        out[i], out[j] = out[j], out[i]


@njit(cache=True, nogil=True)
def dealt_counts(values, group, uniforms, rows, scratch, n_rows, n_values):  # pragma: no cover
    """The counts ``(row, value)`` after :func:`shuffle_within_groups` of ``values`` (the
    same shuffle, the same uniforms), without the shuffled array or the flat keys of a
    ``bincount``: each is a fresh allocation as large as the table, which the screen's deals
    paid at every deal.

    Parameters
    ----------
    values : int64 array of shape (n,)
        Each entry's value, in ``[0, n_values)``.
    group : int array of shape (n,), non-decreasing
    uniforms : float64 array of shape (n,), each in [0, 1)
    rows : int array of shape (n,)
        Each entry's place (a task), in ``[0, n_rows)``; it stays while the values move.
    scratch : int64 array of shape (n,) or longer
        Overwritten.
    n_rows, n_values : int

    Returns
    -------
    int64 array of shape (n_rows, n_values)

    Examples
    --------
    >>> values, group = np.array([0, 1, 2, 0, 1]), np.array([0, 0, 0, 1, 1])
    >>> uniforms = np.random.default_rng(0).random(5)
    >>> rows = np.array([0, 1, 1, 0, 1])
    >>> counts = dealt_counts(values, group, uniforms, rows, np.empty(5, np.int64), 2, 3)
    >>> expected = np.zeros((2, 3), np.int64)
    >>> np.add.at(expected, (rows, shuffle_within_groups(values, group, uniforms)), 1)
    >>> bool((counts == expected).all())
    True
    """
    n = group.shape[0]
    for i in range(n):
        scratch[i] = values[i]
    _shuffle_runs(scratch, group, uniforms)
    counts = np.zeros((n_rows, n_values), np.int64)
    for i in range(n):
        counts[rows[i], scratch[i]] += 1
    return counts
