"""Compiled row-wise softmax of the variational engine (one pass, in place).

Serial on purpose: a Numba ``parallel=True`` kernel in a process that the evaluation harness
then forks into workers killed a worker (the threading layer does not survive ``fork``).
"""

from __future__ import annotations

import math

import numpy as np

from clusterednb.jit import njit


@njit(cache=True)
def _softmax_rows(values, entropies):  # pragma: no cover
    for u in range(values.shape[0]):
        row = values[u]
        top = -np.inf
        for k in range(row.shape[0]):
            top = max(top, row[k])
        total = 0.0
        weighted = 0.0
        for k in range(row.shape[0]):
            if row[k] > -np.inf:
                e = math.exp(row[k] - top)
                weighted += e * (row[k] - top)
                row[k] = e
                total += e
            else:
                row[k] = 0.0
        log_total = math.log(total)
        for k in range(row.shape[0]):
            row[k] /= total
        entropies[u] = log_total - weighted / total


def softmax_rows_inplace(log_values: np.ndarray) -> float:
    """Turn each row of ``log_values`` (float64, C-contiguous; ``-inf`` allowed, not a whole
    row) into its softmax in place; return the summed entropy ``−Σ_uk r_uk log r_uk``.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.log(np.array([[1.0, 3.0], [2.0, 2.0]]))
    >>> round(softmax_rows_inplace(values), 12) == round(float(-(0.25 * np.log(0.25)
    ...     + 0.75 * np.log(0.75)) + np.log(2)), 12)
    True
    >>> values.tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    entropies = np.empty(log_values.shape[0])
    _softmax_rows(log_values, entropies)
    return float(entropies.sum())
