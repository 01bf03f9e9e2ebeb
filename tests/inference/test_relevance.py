"""Feature relevance (issue 49): the exact enumeration with the switches summed out against a
brute force over every partition and every switch vector, the sampler against the exact
posterior, and a shared feature that cannot move the partition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import betaln, logsumexp

from clusterednb import Counts
from clusterednb.inference.relevance import (
    RelevanceSettings,
    fit_relevance_gibbs,
    log_prior_count,
    log_sum_relevance,
)
from clusterednb.inference.relevance_exact import (
    enumerate_relevance,
    fit_exact_relevance,
    relevance_probability,
)
from clusterednb.inference.relevance_kernels import _log_sum_switches
from model_helpers import brute_force_relevance, relevance_toy


@pytest.mark.parametrize(("n_tasks", "prior"), [(3, (1.0, 1.0)), (5, (2.0, 0.5)), (6, (1.0, 3.0))])
def test_exact_enumeration_sums_the_switches_as_brute_force_does(n_tasks, prior):
    model, counts = relevance_toy(n_tasks, seed=n_tasks)
    exact = enumerate_relevance(model, counts, 0.8, prior)
    log_evidence, partitions, weights, relevance = brute_force_relevance(model, counts, 0.8, prior)
    assert exact.log_evidence == pytest.approx(log_evidence, abs=1e-9)
    assert (exact.partitions == partitions).all()
    np.testing.assert_allclose(exact.partition_weights, weights, atol=1e-9)
    np.testing.assert_allclose(exact.feature_relevance, relevance, atol=1e-9)


def test_the_recursion_equals_the_sum_over_every_switch_vector():
    rng = np.random.default_rng(3)
    relevant, shared = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    a, b = 1.5, 0.7
    expected = np.array(
        [
            logsumexp(
                [
                    betaln(a + sum(r), b + 5 - sum(r))
                    - betaln(a, b)
                    + np.where(np.array(r) == 1, relevant[i], shared[i]).sum()
                    for r in itertools.product((0, 1), repeat=5)
                ]
            )
            for i in range(4)
        ]
    )
    np.testing.assert_allclose(log_sum_relevance(relevant, shared, (a, b)), expected, atol=1e-12)
    probability = relevance_probability(relevant, shared, (a, b))
    assert ((probability > 0) & (probability < 1)).all()


def test_the_compiled_sum_equals_the_sum_over_every_switch_vector_at_any_scale():
    """The sweep's sum over the switches (computed in plain arithmetic after dividing out each
    feature's larger factor) against the brute force, with evidence of thousands of nats
    either way (as the whole partition's is) and a feature forced relevant."""
    rng = np.random.default_rng(7)
    a, b, n_features = 1.0, 5.0, 5
    log_counts = log_prior_count((a, b), n_features)
    work = np.empty(n_features + 1)
    for scale in (1.0, 1e3, 1e5):
        relevant, shared = scale * rng.normal(size=(2, n_features))
        shared[2] = -np.inf if scale == 1e3 else shared[2]
        expected = logsumexp(
            [
                betaln(a + sum(r), b + n_features - sum(r))
                - betaln(a, b)
                + np.where(np.array(r) == 1, relevant, shared).sum()
                for r in itertools.product((0, 1), repeat=n_features)
            ]
        )
        got = _log_sum_switches(relevant, shared, log_counts, work)
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-9)
    everything_impossible = np.full(n_features, -np.inf)
    assert _log_sum_switches(everything_impossible, everything_impossible, log_counts, work) == (
        -np.inf
    )


def test_a_shared_feature_cannot_move_the_partition():
    """With the switches forced shared for b and c (prior share of relevance ~0), the
    partition posterior is that of feature a alone, whatever b and c hold."""
    model, counts = relevance_toy(5, seed=11)
    scrambled = counts.value_counts.copy()
    scrambled[:, :, 3:] = scrambled[::-1, :, 3:]  # b and c of other tasks
    other = Counts(counts.label_counts, scrambled)
    never = (1e-9, 1e9)
    first = enumerate_relevance(model, counts, 1.0, never)
    second = enumerate_relevance(model, other, 1.0, never)
    np.testing.assert_allclose(first.partition_weights, second.partition_weights, atol=1e-6)
    assert first.feature_relevance.max() < 1e-6


def test_the_sampler_finds_the_exact_posterior():
    model, counts = relevance_toy(5, seed=5)
    exact = enumerate_relevance(model, counts, 1.0)
    sampled = fit_relevance_gibbs(
        model,
        counts,
        1.0,
        RelevanceSettings(n_sweeps=3000, burn_in=200),
        np.random.default_rng(0),
    )
    np.testing.assert_allclose(
        sampled.extras["feature_relevance"], exact.feature_relevance, atol=0.04
    )
    np.testing.assert_allclose(sampled.coclustering(), exact.coclustering(), atol=0.05)
    assert sampled.log_evidence <= exact.log_evidence + 1e-9  # a lower bound
    rows = np.array([[a, b, c] for a in range(3) for b in range(2) for c in range(2)])
    exact_posterior = fit_exact_relevance(model, counts, 1.0).posterior
    for task in (0, 3, -1):  # known tasks of both groups, and a new one
        index = np.full(len(rows), task)
        np.testing.assert_allclose(
            np.exp(sampled.posterior.predict_log_proba(model, rows, index)),
            np.exp(exact_posterior.predict_log_proba(model, rows, index)),
            atol=0.015,  # each sample's P(y | x) averaged instead: 0.019 apart
        )


def test_the_compiled_sweep_keeps_each_clusters_evidence_as_its_counts_say():
    from clusterednb.inference.relevance import _Chain

    model, counts = relevance_toy(6, seed=2)
    chain = _Chain(model, counts, 1.0)
    rng = np.random.default_rng(1)
    for _ in range(200):
        chain.sweep(rng, (1.0, 1.0))
    occupied = chain.sizes > 0
    assert (
        chain.sizes.sum() == 6 and (np.bincount(chain.assignment, minlength=6) == chain.sizes).all()
    )
    members = [counts.value_counts[chain.assignment == s].sum(axis=0) for s in range(6)]
    np.testing.assert_allclose(chain.slot_counts, np.stack(members), atol=1e-9)
    recomputed = model.log_marginal_each_feature(chain.slot_counts[occupied])
    np.testing.assert_allclose(chain.slot_log_ml[occupied], recomputed, atol=1e-8)
