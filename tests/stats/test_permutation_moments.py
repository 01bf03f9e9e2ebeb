"""The exact moments of Pearson's X² over deals that keep both margins: against every deal of
small tables, against the classical mean, and in float64 against exact rationals at a
large table (the variance is a difference of nearly equal terms)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from clusterednb.stats.permutation_moments import (
    log_table_chance,
    pearson_moments,
    pearson_z,
    proportional,
)


def _table(groups: np.ndarray, values: np.ndarray, n_groups: int, n_values: int) -> np.ndarray:
    table = np.zeros((n_groups, n_values))
    np.add.at(table, (groups, values), 1.0)
    return table


def _pearson(table: np.ndarray) -> float:
    rows, columns = table.sum(axis=1), table.sum(axis=0)
    expected = np.outer(rows, columns) / table.sum()
    seen = expected > 0
    return float(((table[seen] - expected[seen]) ** 2 / expected[seen]).sum())


def _every_deal(groups: np.ndarray, values: np.ndarray, n_groups: int, n_values: int):
    """X² of the table under each of the N! deals of the values to the places."""
    return np.array(
        [
            _pearson(_table(groups, np.array(dealt), n_groups, n_values))
            for dealt in itertools.permutations(values.tolist())
        ]
    )


@pytest.mark.parametrize("seed", range(8))
def test_the_moments_are_those_of_every_deal_of_a_small_table(seed):
    rng = np.random.default_rng(seed)
    n, n_groups, n_values = int(rng.integers(4, 8)), 3, 3
    groups, values = rng.integers(0, n_groups, n), rng.integers(0, n_values, n)
    table = _table(groups, values, n_groups, n_values)
    dealt = _every_deal(groups, values, n_groups, n_values)
    statistic, mean, variance = pearson_moments(table, np.array([0, n_values]))
    assert statistic[0] == pytest.approx(_pearson(table), abs=1e-12)
    assert mean[0] == pytest.approx(dealt.mean(), abs=1e-10)
    assert variance[0] == pytest.approx(dealt.var(), abs=1e-10)


def test_columns_side_by_side_are_each_their_own_table():
    """A group may count no value of one column (a missing value) and a value may not occur."""
    rng = np.random.default_rng(11)
    groups = rng.integers(0, 3, 7)
    first = _table(groups, rng.integers(0, 2, 7), 3, 3)  # its third value never occurs
    second = _table(groups[:5], rng.integers(0, 3, 5), 3, 3)
    second[groups[5:6], 0] += 0  # the last rows missing in the second column
    side_by_side = np.hstack([first, second])
    together = pearson_moments(side_by_side, np.array([0, 3, 6]))
    for column, alone in enumerate((first, second)):
        single = pearson_moments(alone, np.array([0, 3]))
        for both, one in zip(together, single, strict=True):
            assert both[column] == pytest.approx(one[0], abs=1e-12)


def test_the_mean_is_the_classical_one():
    rng = np.random.default_rng(3)
    table = rng.integers(0, 9, (7, 5)).astype(float)
    table[2] = 0.0  # a group with no values
    n, groups, values = table.sum(), 6, 5
    mean = pearson_moments(table, np.array([0, 5]))[1][0]
    assert mean == pytest.approx(n * (groups - 1) * (values - 1) / (n - 1), rel=1e-12)


def _exact_variance(table: np.ndarray) -> Fraction:
    """The variance by the module's moments in exact rationals."""
    rows = [int(r) for r in table.sum(axis=1) if r > 0]
    columns = [int(c) for c in table.sum(axis=0) if c > 0]
    n = sum(rows)

    def fall(x: int, m: int) -> int:
        out = 1
        for step in range(m):
            out *= x - step
        return out

    def single(margins, a):
        return sum(Fraction(fall(x, a), x) for x in margins)

    def squared(margins, m):
        return sum(Fraction(fall(x, m), x * x) for x in margins)

    def pair(margins, a, b):
        cross = sum(Fraction(fall(x, a) * fall(x, b), x * x) for x in margins)
        return single(margins, a) * single(margins, b) - cross + squared(margins, a + b)

    mean_s = sum(single(rows, a) * single(columns, a) / fall(n, a) for a in (1, 2))
    second = sum(
        (pair(rows, a, b) * pair(columns, a, b) - squared(rows, a + b) * squared(columns, a + b))
        / fall(n, a + b)
        for a in (1, 2)
        for b in (1, 2)
    )
    second += sum(
        s * squared(rows, m) * squared(columns, m) / fall(n, m)
        for m, s in ((1, 1), (2, 7), (3, 6), (4, 1))
    )
    return n * n * (second - mean_s * mean_s)


def test_the_float_variance_of_a_large_table_matches_exact_rationals():
    rng = np.random.default_rng(5)
    table = rng.integers(0, 400, (300, 6)).astype(float)  # about 360 000 values
    found = pearson_moments(table, np.array([0, 6]))[2][0]
    assert found == pytest.approx(float(_exact_variance(table)), rel=1e-7)


def test_degenerate_tables_have_no_z():
    offsets = np.array([0, 2])
    assert np.isnan(pearson_z(np.array([[2.0, 1.0]]), offsets)[0])  # one group
    assert np.isnan(pearson_z(np.array([[3.0, 0.0], [2.0, 0.0]]), offsets)[0])  # one value
    assert np.isnan(pearson_z(np.array([[1.0, 0.0], [0.0, 2.0]]), offsets)[0])  # three values


def test_a_table_dealt_at_random_rarely_stands_far_above_by_the_bound():
    """Cantelli: deals standing z standard deviations above the mean are at most
    1 / (1 + z²) of them; the z of real deals of a mid-sized table agree with it."""
    rng = np.random.default_rng(8)
    groups = np.repeat(np.arange(20), 15)
    values = rng.integers(0, 4, groups.size)
    offsets = np.array([0, 4])
    z = np.array(
        [pearson_z(_table(groups, rng.permutation(values), 20, 4), offsets)[0] for _ in range(2000)]
    )
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1.0) < 0.1  # standardised exactly
    for bar in (1.0, 2.0, 3.0):
        assert (z >= bar).mean() <= 1.0 / (1.0 + bar * bar)


@pytest.mark.parametrize("seed", range(4))
def test_a_tables_chance_is_its_share_of_every_deal(seed):
    rng = np.random.default_rng(20 + seed)
    n = int(rng.integers(4, 8))
    groups, values = rng.integers(0, 3, n), rng.integers(0, 3, n)
    table = _table(groups, values, 3, 3)
    dealt = [
        _table(groups, np.array(order), 3, 3) for order in itertools.permutations(values.tolist())
    ]
    share = np.mean([np.array_equal(d, table) for d in dealt])
    chance = np.exp(log_table_chance(table, np.array([0, 3]))[0])
    assert chance == pytest.approx(share, rel=1e-12)
    distinct = {d.tobytes(): d for d in dealt}.values()
    total = sum(np.exp(log_table_chance(d, np.array([0, 3]))[0]) for d in distinct)
    assert total == pytest.approx(1.0, rel=1e-12)  # every table a deal gives, once


def test_only_the_table_its_margins_expect_is_proportional():
    even = np.array([[2.0, 4.0], [1.0, 2.0]])
    assert proportional(even, np.array([0, 2])).tolist() == [True]
    assert _pearson(even) == pytest.approx(0.0, abs=1e-12)
    assert proportional(np.array([[2.0, 4.0], [2.0, 1.0]]), np.array([0, 2])).tolist() == [False]
    assert proportional(np.zeros((2, 2)), np.array([0, 2])).tolist() == [False]  # counts nothing
