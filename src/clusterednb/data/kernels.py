"""Numba kernels of the data layer: integer values to codes, and which values occur.

Plain loops over the rows, compiled once and cached on disk (``cache=True``), as every kernel
of the package.
"""

from __future__ import annotations

import numpy as np

from clusterednb.jit import njit


@njit(cache=True, nogil=True)
def integer_codes(X, n_values, codes):  # pragma: no cover
    """Copy integer values to ``codes``, with -1 where a value is outside ``0 .. n_values[f] - 1``.

    Parameters
    ----------
    X : int array of shape (n_rows, n_features)
    n_values : int64 array of shape (n_features,)
    codes : int32 array of shape (n_rows, n_features), written in place

    Returns
    -------
    int
        Number of values outside their feature's range (unknown categories).

    Examples
    --------
    >>> codes = np.empty((2, 2), np.int32)
    >>> integer_codes(np.array([[0, 5], [2, 1]]), np.array([3, 2]), codes)  # 5 is unknown
    1
    >>> codes.tolist()
    [[0, -1], [2, 1]]
    """
    n_rows, n_features = X.shape
    n_unknown = 0
    for i in range(n_rows):
        for f in range(n_features):
            value = X[i, f]
            if 0 <= value < n_values[f]:
                codes[i, f] = value
            else:
                codes[i, f] = -1
                n_unknown += 1
    return n_unknown


@njit(cache=True, nogil=True)
def integer_presence(X, limit):  # pragma: no cover
    """Which values ``0 .. limit - 1`` occur in each column of a non-negative integer array.

    Parameters
    ----------
    X : int array of shape (n_rows, n_features)
    limit : int

    Returns
    -------
    presence : bool array of shape (n_features, limit)
    in_range : bool
        False if some value is negative or at least ``limit`` (``presence`` is then partial).

    Examples
    --------
    >>> presence, in_range = integer_presence(np.array([[0, 2], [0, 1]]), 3)
    >>> presence.tolist(), in_range
    ([[True, False, False], [False, True, True]], True)
    >>> integer_presence(np.array([[0, 3]]), 3)[1]
    False
    """
    n_rows, n_features = X.shape
    presence = np.zeros((n_features, limit), dtype=np.bool_)
    for i in range(n_rows):
        for f in range(n_features):
            value = X[i, f]
            if value < 0 or value >= limit:
                return presence, False
            presence[f, value] = True
    return presence, True


@njit(cache=True, nogil=True)
def column_ranges(X):  # pragma: no cover
    """The least and the greatest value of each column of an integer array, in one pass.

    Parameters
    ----------
    X : int array of shape (n_rows, n_features), n_rows ≥ 1

    Returns
    -------
    lowest, highest : int64 arrays of shape (n_features,)

    Examples
    --------
    >>> lowest, highest = column_ranges(np.array([[3, -1], [0, 7]]))
    >>> lowest.tolist(), highest.tolist()
    ([0, -1], [3, 7])
    """
    n_rows, n_features = X.shape
    lowest = np.empty(n_features, dtype=np.int64)
    highest = np.empty(n_features, dtype=np.int64)
    for f in range(n_features):
        lowest[f] = X[0, f]
        highest[f] = X[0, f]
    for i in range(1, n_rows):
        for f in range(n_features):
            value = X[i, f]
            if value < lowest[f]:
                lowest[f] = value
            elif value > highest[f]:
                highest[f] = value
    return lowest, highest
