"""Compiled loops of Bayesian Hierarchical Clustering over tasks.

Node statistics are dense rows ``cells[k, c * V + v]`` and ``totals[k, c * F + f]``; the
feature log evidence of a node (or of two nodes pooled) is :func:`merged_log_ml`. ``tables``
is the look-up tuple described in :mod:`clusterednb.inference.gibbs.kernels`.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from clusterednb.inference.gibbs.kernels import merged_log_ml
from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def _log_add(a, b):  # pragma: no cover
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


@njit(cache=True, nogil=True)
def merge_quantities(
    log_gamma, size, log_d_a, log_d_b, log_p_a, log_p_b, log_ml
):  # pragma: no cover
    """BHC recursion for a node with ``size`` tasks and children ``a``, ``b`` (log space).

    Returns ``(log_d, log_p, log_r, log_one_minus_r)`` where
    ``d = γ Γ(n) + d_a d_b``, ``π = γ Γ(n) / d``,
    ``p = π p(D|H) + (1 − π) p_a p_b`` and ``r = π p(D|H) / p``; ``1 − π = d_a d_b / d``
    exactly, so nothing is subtracted from 1.

    Examples
    --------
    Two leaves (``d = 1``, ``p = 1/2`` each) under ``γ = 1``: ``d = Γ(2) + 1 = 2``, ``π = 1/2``;
    with ``p(D | H) = 0.2``, ``p = 0.1 + 0.125 = 0.225`` and ``r = 0.1 / 0.225``:

    >>> values = merge_quantities(0.0, 2, 0.0, 0.0, np.log(0.5), np.log(0.5), np.log(0.2))
    >>> np.exp(values).round(6).tolist()
    [2.0, 0.225, 0.444444, 0.555556]
    """
    log_merge = log_gamma + math.lgamma(size)
    log_split = log_d_a + log_d_b
    log_d = _log_add(log_merge, log_split)
    together = log_merge - log_d + log_ml
    apart = log_split - log_d + log_p_a + log_p_b
    log_p = _log_add(together, apart)
    return log_d, log_p, together - log_p, apart - log_p


@njit(cache=True, nogil=True)
def _node_arrays(cells, totals):  # pragma: no cover
    """Statistics rows for all ``2 U − 1`` nodes of a tree over ``U`` leaves (leaves first)."""
    n_tasks = cells.shape[0]
    n_nodes = 2 * n_tasks - 1
    node_cells = np.zeros((n_nodes, cells.shape[1]), dtype=np.int64)
    node_totals = np.zeros((n_nodes, totals.shape[1]), dtype=np.int64)
    node_cells[:n_tasks] = cells
    node_totals[:n_tasks] = totals
    return node_cells, node_totals


@njit(cache=True, nogil=True)
def greedy_bhc(cells, totals, log_gamma, tables):  # pragma: no cover
    """Agglomerate tasks greedily by the highest merge posterior ``r`` (a heap of candidates).

    Parameters
    ----------
    cells : int64 array of shape (n_tasks, C * V)
    totals : int64 array of shape (n_tasks, C * F)

    Returns
    -------
    children : int64 array of shape (n_tasks - 1, 2)
        Node ``n_tasks + i`` merges ``children[i]`` (linkage numbering).

    Examples
    --------
    The tasks of :func:`clusterednb.examples.models.three_task_counts` (``β = 1``):

    >>> from clusterednb.examples import inference as toy
    >>> cells, totals, tables = toy.dense_statistics()
    >>> greedy_bhc(cells, totals, 0.0, tables).tolist()  # 0 and 1 alike, then task 2
    [[0, 1], [2, 3]]
    """
    n_tasks = cells.shape[0]
    node_cells, node_totals = _node_arrays(cells, totals)
    n_nodes = node_cells.shape[0]
    size = np.ones(n_nodes)
    log_d = np.full(n_nodes, log_gamma)
    log_p = np.zeros(n_nodes)
    active = np.zeros(n_nodes, dtype=np.bool_)
    children = np.zeros((max(n_tasks - 1, 0), 2), dtype=np.int64)
    for i in range(n_tasks):
        log_p[i] = merged_log_ml(node_cells, node_totals, i, -1, tables)
        active[i] = True
    heap = [(0.0, 0, 0)]
    heap.pop()
    for a in range(n_tasks):
        for b in range(a + 1, n_tasks):
            log_ml = merged_log_ml(node_cells, node_totals, a, b, tables)
            log_r = merge_quantities(
                log_gamma, size[a] + size[b], log_d[a], log_d[b], log_p[a], log_p[b], log_ml
            )[2]
            heap.append((-log_r, a, b))
    heapq.heapify(heap)
    for step in range(n_tasks - 1):
        while True:
            _, a, b = heapq.heappop(heap)
            if active[a] and active[b]:
                break
        new = n_tasks + step
        node_cells[new] = node_cells[a] + node_cells[b]
        node_totals[new] = node_totals[a] + node_totals[b]
        size[new] = size[a] + size[b]
        log_ml = merged_log_ml(node_cells, node_totals, new, -1, tables)
        log_d[new], log_p[new], _, _ = merge_quantities(
            log_gamma, size[new], log_d[a], log_d[b], log_p[a], log_p[b], log_ml
        )
        active[a] = False
        active[b] = False
        active[new] = True
        children[step, 0] = a
        children[step, 1] = b
        for c in range(new):
            if active[c]:
                log_ml = merged_log_ml(node_cells, node_totals, c, new, tables)
                log_r = merge_quantities(
                    log_gamma,
                    size[c] + size[new],
                    log_d[c],
                    log_d[new],
                    log_p[c],
                    log_p[new],
                    log_ml,
                )[2]
                heapq.heappush(heap, (-log_r, c, new))
    return children


@njit(cache=True, nogil=True)
def tree_quantities(children, cells, totals, log_gamma, tables):  # pragma: no cover
    """Node statistics and the BHC recursion over a given binary tree, bottom-up.

    Parameters
    ----------
    children : int64 array of shape (n_tasks - 1, 2), children of node ``n_tasks + i``
        (each child's number is smaller than its parent's)
    cells, totals : leaf statistics, shapes (n_tasks, C * V) and (n_tasks, C * F)

    Returns
    -------
    node_cells : (n_nodes, C * V); size, log_ml, log_d, log_p, log_r, log_one_minus_r :
    (n_nodes,) each (leaves: ``r = 1``, ``log(1 − r) = −inf``).

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> cells, totals, tables = toy.dense_statistics()
    >>> parts = tree_quantities(np.array([[0, 1], [2, 3]]), cells, totals, 0.0, tables)
    >>> parts[1].tolist(), np.exp(parts[5]).round(4).tolist()  # sizes; r of every node
    ([1.0, 1.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 0.6429, 0.5625])
    """
    n_tasks = cells.shape[0]
    node_cells, node_totals = _node_arrays(cells, totals)
    n_nodes = node_cells.shape[0]
    size = np.ones(n_nodes)
    log_ml = np.zeros(n_nodes)
    log_d = np.full(n_nodes, log_gamma)
    log_p = np.zeros(n_nodes)
    log_r = np.zeros(n_nodes)
    log_one_minus_r = np.full(n_nodes, -np.inf)
    for k in range(n_nodes):
        if k >= n_tasks:
            a, b = children[k - n_tasks, 0], children[k - n_tasks, 1]
            node_cells[k] = node_cells[a] + node_cells[b]
            node_totals[k] = node_totals[a] + node_totals[b]
            size[k] = size[a] + size[b]
        log_ml[k] = merged_log_ml(node_cells, node_totals, k, -1, tables)
        if k < n_tasks:
            log_p[k] = log_ml[k]
        else:
            log_d[k], log_p[k], log_r[k], log_one_minus_r[k] = merge_quantities(
                log_gamma, size[k], log_d[a], log_d[b], log_p[a], log_p[b], log_ml[k]
            )
    return node_cells, size, log_ml, log_d, log_p, log_r, log_one_minus_r


@njit(cache=True, nogil=True)
def assign_to_sides(cells, totals, tasks, side_cells, side_totals, tables):  # pragma: no cover
    """For each task, the side (0 or 1) under whose pooled counts its data are likelier.

    Compares ``log ML(N_s + n_u) − log ML(N_s)`` for the two rows of ``side_cells``; ties go
    to side 0.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> cells, totals, tables = toy.dense_statistics()
    >>> sides = assign_to_sides(cells, totals, np.arange(3), np.array([[4, 0, 0, 0], [0, 0, 0, 2]]),
    ...                         np.array([[4, 0], [0, 2]]), tables)
    >>> sides.tolist()  # red tasks to the red side, the blue one to the blue side
    [0, 0, 1]
    """
    out = np.zeros(tasks.shape[0], dtype=np.int64)
    rows_cells = np.zeros((3, cells.shape[1]), dtype=np.int64)
    rows_totals = np.zeros((3, totals.shape[1]), dtype=np.int64)
    rows_cells[:2] = side_cells
    rows_totals[:2] = side_totals
    base = np.zeros(2)
    gain = np.zeros(2)
    for s in range(2):
        base[s] = merged_log_ml(rows_cells, rows_totals, s, -1, tables)
    for i in range(tasks.shape[0]):
        rows_cells[2] = cells[tasks[i]]
        rows_totals[2] = totals[tasks[i]]
        for s in range(2):
            gain[s] = merged_log_ml(rows_cells, rows_totals, s, 2, tables) - base[s]
        out[i] = 0 if gain[0] >= gain[1] else 1
    return out
