"""The exact mean and variance of Pearson's X² of a groups × values table over every deal of
its values that keeps both margins (each group's count, each value's count), and how many
standard deviations of that distribution the table itself stands above its mean.

A deal that keeps the margins is a uniformly random matching of the ``N`` counted values to
the ``N`` places the groups hold. Under it the table's cells have the falling-factorial
moments of the multivariate hypergeometric law: for any orders ``a_ij``,

    E[Π_ij (n_ij)_(a_ij)] = Π_i (r_i)_(a_i·) · Π_j (c_j)_(a_·j) / (N)_(a··),

``(x)_(m) = x (x − 1) … (x − m + 1)``, ``r_i`` the groups' counts, ``c_j`` the values'. With
``X² = N (S − 1)`` and ``S = Σ_ij n_ij² / (r_i c_j)``, whose weights are a product of a
group's and a value's, ``E[S]`` and ``E[S²]`` reduce to sums over the groups times sums over
the values (``n² = (n)_(2) + (n)_(1)``, ``n⁴ = (n)_(4) + 6 (n)_(3) + 7 (n)_(2) + (n)_(1)``):
``O(groups + values)`` for each column, where the deals cost ``O(N)`` each. The mean is the
classical ``N (R − 1)(C − 1) / (N − 1)`` (``R`` groups and ``C`` values that occur); the
variance is Haldane's exact one, here from the moments above (tested against every deal of
small tables).

Cantelli's inequality turns the two into a bound with no assumption on the law's shape: a
table dealt at random stands ``z`` standard deviations above the mean with probability at most
``1 / (1 + z²)``.

The other tail has an exact answer where it matters. A table whose every cell is what the
margins expect (``n_ij = r_i c_j / N``: every group holds the values in the same
proportions, as in a survey where every person rated the same products) has X² = 0, and no
other table has: so its chance under the deals is that of the table itself, the
multivariate hypergeometric ``Π_i r_i! Π_j c_j! / (N! Π_ij n_ij!)``
(:func:`log_table_chance`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

FOURTH_POWER = ((1, 1.0), (2, 7.0), (3, 6.0), (4, 1.0))
"""``n⁴ = Σ_m S(4, m) (n)_(m)``: each order ``m`` with its Stirling number of the second kind."""
MIN_COUNTED = 4
"""Values a column must count for its fourth moments to be defined (``(N)_(4) > 0``)."""


class Margins(NamedTuple):
    """A groups × values table's counts and margins, column by column."""

    counts: np.ndarray  # (G, V), float
    starts: np.ndarray  # (F,): where each column's values start
    rows: np.ndarray  # (G, F): each group's count of the column's values, r_i
    values: np.ndarray  # (V,): each value's count, c_j
    total: np.ndarray  # (F,): the values each column counts, N


def margins(by_group: np.ndarray, offsets: np.ndarray) -> Margins:
    """The :class:`Margins` of ``by_group`` (G, V), its columns' values starting at
    ``offsets[:-1]``.

    Examples
    --------
    >>> m = margins(np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 1.0]]), np.array([0, 2, 3]))
    >>> m.rows.tolist(), m.total.tolist()
    ([[3.0, 3.0], [1.0, 1.0]], [4.0, 4.0])
    """
    counts = np.asarray(by_group, dtype=np.float64)
    starts = np.asarray(offsets)[:-1]
    rows = np.add.reduceat(counts, starts, axis=1)
    return Margins(counts, starts, rows, counts.sum(axis=0), rows.sum(axis=0))


def falling(x: np.ndarray, order: int) -> np.ndarray:
    """``(x)_(order) = x (x − 1) … (x − order + 1)`` elementwise (1 for order 0).

    Examples
    --------
    >>> falling(np.array([5.0, 1.0, 0.0]), 2).tolist()
    [20.0, 0.0, -0.0]
    """
    out = np.ones_like(np.asarray(x, dtype=np.float64))
    for step in range(order):
        out = out * (x - step)
    return out


def pearson_z(by_group: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """How many standard deviations each column's Pearson X² of groups × values stands above
    its mean over the deals that keep both margins, shape (n_features,); NaN where the law is
    degenerate (fewer than :data:`MIN_COUNTED` values counted, or fewer than two groups or two
    values occurring: X² is then constant or its moments undefined).

    Parameters
    ----------
    by_group : ndarray of shape (n_groups, n_values_total)
        Each group's count of each value, the columns' values side by side.
    offsets : ndarray of shape (n_features + 1,)
        Where each column's values start.

    Examples
    --------
    Two groups of four that each hold one value only (X² = 8) against one that mixes them:

    >>> z = pearson_z(np.array([[4.0, 0.0, 2.0, 2.0], [0.0, 4.0, 2.0, 2.0]]),
    ...               np.array([0, 2, 4]))
    >>> [round(float(v), 4) for v in z]
    [4.4721, -0.7454]
    """
    statistic, mean, variance = pearson_moments(by_group, offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(variance > 0.0, (statistic - mean) / np.sqrt(variance), np.nan)


def pearson_moments(
    by_group: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's Pearson X², and its exact mean and variance over the deals that keep
    both margins (see the module), each of shape (n_features,); the mean and variance NaN
    where fewer than :data:`MIN_COUNTED` values are counted.

    Parameters
    ----------
    by_group : ndarray of shape (n_groups, n_values_total)
    offsets : ndarray of shape (n_features + 1,)

    Examples
    --------
    Two groups of two, two values of two each: every deal is one of three tables, X² = 4
    once (the values apart) and 0 twice; mean 4/3, variance 32/9.

    >>> x2, mean, variance = pearson_moments(np.array([[2.0, 0.0], [0.0, 2.0]]),
    ...                                      np.array([0, 2]))
    >>> [round(float(v[0]), 10) for v in (x2, mean, variance)]
    [4.0, 1.3333333333, 3.5555555556]
    """
    counts, starts, rows, values, total = margins(by_group, offsets)
    with np.errstate(divide="ignore"):
        row_weight = np.where(rows > 0, 1.0 / rows, 0.0)  # ρ_i
        value_weight = np.where(values > 0, 1.0 / values, 0.0)  # κ_j
    by_row = np.add.reduceat(counts * counts * value_weight, starts, axis=1)  # Σ_j n²κ, (G, F)
    statistic = total * ((row_weight * by_row).sum(axis=0) - 1.0)

    def per_column(terms: np.ndarray) -> np.ndarray:
        """Terms of the groups (G, F) or of the values (V,) summed for each column, (F,)."""
        return terms.sum(axis=0) if terms.ndim == 2 else np.add.reduceat(terms, starts)

    def sides(weights: np.ndarray, margin: np.ndarray) -> tuple[dict, dict]:
        """Σ ρ (x)_(a), a = 1, 2, and Σ ρ² (x)_(m), m = 1 … 4, over groups or values."""
        single = {a: per_column(weights * falling(margin, a)) for a in (1, 2)}
        squared = {m: per_column(weights**2 * falling(margin, m)) for m in (1, 2, 3, 4)}
        return single, squared

    def pairs(single: dict, squared: dict, weights: np.ndarray, margin: np.ndarray) -> dict:
        """Σ over ordered pairs of groups (the same one included) of ρρ' (x)_(a) (x')_(b),
        with a group paired with itself read as one cell of order a + b."""
        out = {}
        for a in (1, 2):
            for b in (1, 2):
                cross = per_column(weights**2 * falling(margin, a) * falling(margin, b))
                out[a, b] = single[a] * single[b] - cross + squared[a + b]
        return out

    row_single, row_squared = sides(row_weight, rows)
    value_single, value_squared = sides(value_weight, values)
    row_pairs = pairs(row_single, row_squared, row_weight, rows)
    value_pairs = pairs(value_single, value_squared, value_weight, values)
    with np.errstate(invalid="ignore", divide="ignore"):
        denominators = {m: falling(total, m) for m in (1, 2, 3, 4)}
        mean_s = sum(row_single[a] * value_single[a] / denominators[a] for a in (1, 2))
        second = sum(
            (row_pairs[a, b] * value_pairs[a, b] - row_squared[a + b] * value_squared[a + b])
            / denominators[a + b]
            for a in (1, 2)
            for b in (1, 2)
        )
        second += sum(
            stirling * row_squared[m] * value_squared[m] / denominators[m]
            for m, stirling in FOURTH_POWER
        )
    defined = total >= MIN_COUNTED
    mean = np.where(defined, total * (mean_s - 1.0), np.nan)
    spread = np.maximum(total * total * (second - mean_s * mean_s), 0.0)
    variance = np.where(defined, spread, np.nan)
    return statistic, mean, variance


def log_table_chance(by_group: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each column's log chance of its own groups × values table among the deals that keep
    both margins, ``log Π_i r_i! Π_j c_j! − log N! − Σ_ij log n_ij!``, shape (n_features,).

    Parameters
    ----------
    by_group : ndarray of shape (n_groups, n_values_total)
    offsets : ndarray of shape (n_features + 1,)

    Examples
    --------
    Two groups of two, two values of two each: of the three tables the deals give, the one
    that splits both values evenly has chance C(2, 1) C(2, 1) / C(4, 2) = 4/6.

    >>> round(float(np.exp(log_table_chance(np.array([[1.0, 1.0], [1.0, 1.0]]),
    ...                                      np.array([0, 2]))[0])), 6)
    0.666667
    """
    counts, starts, rows, values, total = margins(by_group, offsets)
    cells = np.add.reduceat(gammaln(counts + 1.0), starts, axis=1).sum(axis=0)
    by_margin = gammaln(rows + 1.0).sum(axis=0) + np.add.reduceat(gammaln(values + 1.0), starts)
    return by_margin - gammaln(total + 1.0) - cells


def proportional(by_group: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Whether each column's table is exactly what its margins expect, every cell
    ``r_i c_j / N`` (X² = 0, the one such table), bool of shape (n_features,); a column that
    counts nothing is not.

    Examples
    --------
    >>> proportional(np.array([[2.0, 2.0, 3.0, 1.0], [1.0, 1.0, 1.0, 1.0]]),
    ...              np.array([0, 2, 4])).tolist()
    [True, False]
    """
    counts, starts, rows, values, total = margins(by_group, offsets)
    widths = np.diff(offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.repeat(rows / total, widths, axis=1) * values  # (G, V)
    apart = np.abs(counts - expected) > 1e-9 * np.maximum(expected, 1.0)
    return (np.add.reduceat(apart, starts, axis=1).sum(axis=0) == 0) & (total > 0)
