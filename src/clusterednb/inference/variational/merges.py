"""Merge moves of the variational engines: which components to try, and what a merge changes.

Mean-field updates cannot join two components that split one group; a merge adds one
component's responsibilities into the other's. These helpers are shared by the in-memory
engine (:mod:`clusterednb.inference.variational.engine`) and the streamed one
(:mod:`clusterednb.inference.variational.stream`); each checks the ELBO itself.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy


def closest_pairs(counts: np.ndarray, sizes: np.ndarray, max_pairs: int) -> np.ndarray:
    """Up to ``max_pairs`` pairs (n, 2) of occupied components, closest count profiles
    (expected counts (K, CV) over sizes (K,)) first.

    Examples
    --------
    >>> counts = np.array([[4.0, 0.0], [3.0, 1.0], [0.0, 4.0]])
    >>> closest_pairs(counts, np.ones(3), max_pairs=2).tolist()  # 0 and 1 are the most alike
    [[0, 1], [1, 2]]
    """
    occupied = np.flatnonzero(sizes > 0)
    if occupied.size < 2 or max_pairs == 0:
        return np.zeros((0, 2), dtype=np.int64)
    profiles = counts[occupied] / sizes[occupied, None]
    distance = np.abs(profiles[:, None, :] - profiles[None, :, :]).sum(axis=2)
    first, second = np.triu_indices(occupied.size, k=1)
    closest = np.argsort(distance[first, second], kind="stable")[:max_pairs]
    return np.column_stack([occupied[first[closest]], occupied[second[closest]]])


def merged_components(
    counts: np.ndarray, sizes: np.ndarray, a: int, b: int
) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the expected counts (K, CV) and sizes (K,) with component ``b`` added into
    ``a`` (``b`` left empty).

    Examples
    --------
    >>> counts, sizes = merged_components(np.array([[4.0, 0.0], [3.0, 1.0]]), np.array([1.0, 2.0]),
    ...                                   0, 1)
    >>> counts.tolist(), sizes.tolist()
    ([[7.0, 1.0], [0.0, 0.0]], [3.0, 0.0])
    """
    counts, sizes = counts.copy(), sizes.copy()
    counts[a] += counts[b]
    counts[b] = 0.0
    sizes[a] += sizes[b]
    sizes[b] = 0.0
    return counts, sizes


def merge_entropy(r_a: np.ndarray, r_b: np.ndarray) -> float:
    """Change of ``−Σ r log r`` when the responsibilities ``r_a`` and ``r_b`` (same tasks)
    become one component's ``r_a + r_b``.

    Examples
    --------
    A task split half and half between the two components loses its ``log 2`` of entropy:

    >>> bool(np.isclose(merge_entropy(np.array([0.5, 1.0]), np.array([0.5, 0.0])), -np.log(2)))
    True
    """
    together = r_a + r_b
    return -float(xlogy(together, together).sum() - xlogy(r_a, r_a).sum() - xlogy(r_b, r_b).sum())
