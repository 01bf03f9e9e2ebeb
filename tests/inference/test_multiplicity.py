"""The most probable set of switches under the relevance model's exchangeable prior: against
every subset of a few switches, and the multiplicity it corrects."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from clusterednb.inference.relevance import log_prior_count
from clusterednb.inference.screen_release import most_probable_switches


def _score(log_factors: np.ndarray, chosen: np.ndarray, prior) -> float:
    with np.errstate(invalid="ignore"):
        total = log_factors[chosen].sum() + log_prior_count(prior, chosen.size)[chosen.sum()]
    return -np.inf if np.isnan(total) else float(total)


@pytest.mark.parametrize("prior", [(1.0, 1.0), (1.0, 3.0), (2.0, 0.5)])
@pytest.mark.parametrize("seed", range(6))
def test_the_set_chosen_is_the_best_of_every_subset(prior, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    log_factors = rng.normal(0.0, 3.0, n)
    if seed % 3 == 0:
        log_factors[rng.integers(n)] = np.inf if seed % 2 else -np.inf
    chosen = most_probable_switches(log_factors, prior)
    best = max(
        _score(log_factors, np.array(mask, dtype=bool), prior)
        for mask in itertools.product([False, True], repeat=n)
    )
    assert _score(log_factors, chosen, prior) == pytest.approx(best, abs=1e-12)


def test_one_switch_of_twenty_needs_a_factor_of_twenty():
    """Under the uniform prior on the share, one switch on among 20 has prior odds 1/20
    against none: it goes on above a factor of 20, a lone switch above 1."""
    noise = np.full(19, -8.0)
    for log_factor, on in ((0.5, False), (np.log(20) - 0.01, False), (np.log(20) + 0.01, True)):
        assert most_probable_switches(np.r_[log_factor, noise])[0] == on
    assert most_probable_switches(np.array([0.01]))[0]
    assert not most_probable_switches(np.array([-0.01]))[0]


def test_switches_that_each_score_a_little_go_on_together():
    """Three of three at 1 nat each: together they beat none (the prior favours all or
    nothing), where one alone at 1 nat among three would not."""
    assert most_probable_switches(np.array([1.0, 1.0, 1.0])).all()
    assert not most_probable_switches(np.array([1.0, -5.0, -5.0])).any()
    assert most_probable_switches(np.array([]), (1.0, 1.0)).shape == (0,)
