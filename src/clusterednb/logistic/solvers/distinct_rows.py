"""The distinct rows of a dense matrix: one-hot features repeat (a thousand films rated
100 000 times), and a sum over rows is a sum over distinct rows times their counts."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from clusterednb.jit import njit


def distinct_rows(matrix) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The distinct rows of a dense matrix and each row's index among them, when there are at
    most half as many.

    Rows are grouped by a random projection, then checked equal to their group's first row,
    so the grouping is exact (on a collision, too few repeats, or a sparse matrix,
    ``(None, None)``).

    Parameters
    ----------
    matrix : ndarray of shape (n_rows, n_columns)

    Returns
    -------
    patterns : ndarray of shape (n_distinct, n_columns), or None
    pattern_of_row : ndarray of shape (n_rows,), or None
        ``matrix == patterns[pattern_of_row]``.

    Examples
    --------
    >>> matrix = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    >>> patterns, pattern_of_row = distinct_rows(matrix)
    >>> bool(np.array_equal(patterns[pattern_of_row], matrix)), len(patterns)
    (True, 2)
    >>> distinct_rows(np.eye(3))  # no repeats: nothing to gain
    (None, None)
    """
    if sparse.issparse(matrix) or matrix.shape[0] < 2:
        return None, None
    key = matrix @ np.random.default_rng(0).normal(size=matrix.shape[1])
    _, first, pattern_of_row = np.unique(key, return_index=True, return_inverse=True)
    if first.size > matrix.shape[0] // 2:
        return None, None
    patterns = matrix[first]
    if not rows_match(np.ascontiguousarray(matrix), patterns, pattern_of_row.ravel()):
        return None, None
    return patterns, pattern_of_row


@njit(cache=True, nogil=True)
def rows_match(matrix, patterns, pattern_of_row):  # pragma: no cover
    """Whether ``matrix == patterns[pattern_of_row]`` (without forming the right side): every
    row equal, entry by entry, to its pattern (NaN equals nothing).

    Examples
    --------
    >>> patterns = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> rows_match(np.array([[0.0, 1.0], [1.0, 0.0]]), patterns, np.array([1, 0]))
    True
    >>> rows_match(np.array([[0.0, 1.0], [1.0, 2.0]]), patterns, np.array([1, 0]))
    False
    """
    for row in range(matrix.shape[0]):
        pattern = pattern_of_row[row]
        for column in range(matrix.shape[1]):
            if not matrix[row, column] == patterns[pattern, column]:
                return False
    return True


def merged_rows(
    design: np.ndarray, y: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows with the same features and label merged into one, their weights summed (the same
    weighted sums of any function of a row and its label); as they are when few repeat.

    Examples
    --------
    >>> design = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 2)
    >>> y = np.array([1.0, 1.0, 1.0, 0.0, 1.0, 1.0])
    >>> merged, labels, counts = merged_rows(design, y, np.ones(6))
    >>> merged.tolist(), labels.tolist(), counts.tolist()
    ([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], [0.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    """
    patterns, pattern_of_row = distinct_rows(np.column_stack([design, y]))
    if patterns is None:
        return design, y, weights
    counts = np.bincount(pattern_of_row, weights=weights, minlength=patterns.shape[0])
    return patterns[:, :-1], patterns[:, -1], counts
