"""Compiled inner loop of the variational engine: the fused assignment step (scores,
softmax, sparse expected counts) over a chunk of tasks.

No ``parallel=True``: a Numba threading layer in a process that the evaluation harness then
forks into workers killed a worker (it does not survive ``fork``). The fused step releases the
GIL instead, so the engine runs chunks of tasks in a plain thread pool when asked.
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def assign_chunk(
    indptr, indices, data, start, stop, log_theta_t, log_pi, floor, r, counts, sizes
):  # pragma: no cover
    """Responsibilities of tasks ``start .. stop-1`` and their expected counts, in one pass.

    For task ``u`` (row ``u`` of a CSR matrix ``indptr, indices, data`` of value counts):
    ``r[u] = softmax(log_pi + Σ_j data_j · log_theta_t[indices_j])``; entries below ``floor``
    are set to 0 and the row renormalised (a valid distribution, so the ELBO stays exact for
    the q used). Adds ``r[u, k] · data_j`` to ``counts[k, indices_j]`` and ``r[u, k]`` to
    ``sizes[k]`` for the kept entries only (a sparse M-step). Returns the summed entropy
    ``−Σ_uk r_uk log r_uk`` of the chunk.

    Shapes: ``log_theta_t`` (CV, K) C-contiguous, ``log_pi`` (K,), ``r`` (n_tasks, K),
    ``counts`` (K, CV), ``sizes`` (K,).

    Examples
    --------
    One task that holds cell 0 twice; component 0 gives that cell probability 0.9, component 1
    0.1, equal weights: ``r = (0.81, 0.01) / 0.82``:

    >>> log_theta_t = np.log(np.array([[0.9, 0.1], [0.1, 0.9]]))  # (cells, components)
    >>> r, counts, sizes = np.zeros((1, 2)), np.zeros((2, 2)), np.zeros(2)
    >>> entropy = assign_chunk(np.array([0, 1]), np.array([0]), np.array([2.0]), 0, 1,
    ...                        log_theta_t, np.log([0.5, 0.5]), 0.0, r, counts, sizes)
    >>> r.round(5).tolist(), counts[:, 0].round(5).tolist()
    ([[0.9878, 0.0122]], [1.97561, 0.02439])
    """
    n_components = log_pi.shape[0]
    score = np.empty(n_components)
    entropy = 0.0
    for u in range(start, stop):
        for k in range(n_components):
            score[k] = log_pi[k]
        for j in range(indptr[u], indptr[u + 1]):
            column = log_theta_t[indices[j]]
            weight = data[j]
            for k in range(n_components):
                score[k] += weight * column[k]
        top = -np.inf
        for k in range(n_components):
            top = max(top, score[k])
        total = 0.0
        for k in range(n_components):
            score[k] = math.exp(score[k] - top)
            total += score[k]
        kept = 0.0
        for k in range(n_components):
            if score[k] < floor * total:
                score[k] = 0.0
            kept += score[k]
        for k in range(n_components):
            p = score[k] / kept
            r[u, k] = p
            if p > 0.0:
                entropy -= p * math.log(p)
                sizes[k] += p
                for j in range(indptr[u], indptr[u + 1]):
                    counts[k, indices[j]] += p * data[j]
    return entropy
