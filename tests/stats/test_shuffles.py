"""The compiled shuffle within groups (:func:`clusterednb.stats.kernels.shuffle_within_groups`)
that deals a column's values to the tasks in the relevance screen: it keeps every group's
values, and every order of a group is equally likely."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
from scipy.stats import chisquare

from clusterednb.stats.kernels import shuffle_within_groups


def test_each_group_keeps_its_values_and_the_input_is_left_alone():
    rng = np.random.default_rng(0)
    group = np.repeat(np.arange(5), [1, 4, 2, 7, 3])
    values = rng.integers(0, 100, group.size)
    before = values.copy()
    for _ in range(20):
        dealt = shuffle_within_groups(values, group, rng.random(group.size))
        for g in range(5):
            assert sorted(dealt[group == g]) == sorted(values[group == g])
    np.testing.assert_array_equal(values, before)


def test_every_order_of_a_group_is_equally_likely():
    """6 000 shuffles of a group of three (and a group of two beside it): the six orders
    against a uniform, by a chi-square test (a fixed seed, so the test is deterministic)."""
    rng = np.random.default_rng(1)
    values, group = np.array([0, 1, 2, 7, 8]), np.array([3, 3, 3, 4, 4])
    seen = Counter(
        tuple(shuffle_within_groups(values, group, rng.random(5))[:3]) for _ in range(6000)
    )
    assert set(seen) == set(itertools.permutations((0, 1, 2)))
    assert chisquare(list(seen.values())).pvalue > 0.01


def test_the_same_uniforms_give_the_same_shuffle():
    group, values = np.zeros(10, dtype=np.int64), np.arange(10)
    uniforms = np.random.default_rng(2).random(10)
    np.testing.assert_array_equal(
        shuffle_within_groups(values, group, uniforms),
        shuffle_within_groups(values, group, uniforms.copy()),
    )
