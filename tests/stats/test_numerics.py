"""Numerical extremes against high-precision (mpmath) evaluations of the same formulas.

Measured float64 errors (absolute, on log evidences of order 10–200): at most 4e-15 for
β ≤ 1; 7e-14 at β = 1e3; 1.6e-9 at β = 1e6 and 9e-9 with 10⁷ rows in one task (both from
the cancellation of log-gamma terms of order 10⁷–10⁸, the float64 limit of the
``lgamma(a + n) − lgamma(a)`` form). The tolerances below are those, with headroom.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

from clusterednb import ClusteredNB, Counts, DirichletNB, NoSharingNB
from clusterednb.data.schema import FeatureSchema
from clusterednb.models.partition_prior import crp_log_prior, set_partitions

mp.mp.dps = 50
SCHEMA = FeatureSchema(("f",), ((0, 1, 2),), (0, 1))


def mp_log_dm(counts, prior) -> float:
    """``log Z(prior + counts) − log Z(prior)`` with ``Z(a) = Π Γ(a_i) / Γ(Σ a_i)``."""
    a = [mp.mpf(p) for p in prior]
    b = [x + mp.mpf(int(c)) for x, c in zip(a, counts, strict=True)]

    def log_z(values):
        return mp.fsum(mp.loggamma(v) for v in values) - mp.loggamma(mp.fsum(values))

    return float(log_z(b) - log_z(a))


@pytest.mark.parametrize(
    ("beta", "tolerance"), [(1e-6, 1e-13), (1e-3, 1e-13), (1.0, 1e-13), (1e3, 1e-12), (1e6, 1e-8)]
)
def test_log_marginal_across_beta(beta, tolerance):
    model = DirichletNB(SCHEMA, alpha=1.0, beta=beta)
    counts = Counts(np.array([[3, 2]]), np.array([[[2, 1, 0], [0, 0, 2]]]))
    expected = (
        mp_log_dm([3, 2], [1, 1])
        + mp_log_dm([2, 1, 0], [beta] * 3)
        + mp_log_dm([0, 0, 2], [beta] * 3)
    )
    assert model.log_marginal(counts)[0] == pytest.approx(expected, abs=tolerance)


def test_huge_counts_in_one_task():
    model = DirichletNB(SCHEMA, alpha=1.0, beta=0.5)
    big = 10**7
    counts = Counts(np.array([[big, 3]]), np.array([[[big - 5, 5, 0], [1, 1, 1]]]))
    expected = (
        mp_log_dm([big, 3], [1, 1])
        + mp_log_dm([big - 5, 5, 0], [0.5] * 3)
        + mp_log_dm([1, 1, 1], [0.5] * 3)
    )
    assert model.log_marginal(counts)[0] == pytest.approx(expected, abs=5e-8)


@pytest.mark.parametrize("gamma", [1e-6, 1e-2, 1.0, 1e2, 1e6])
def test_crp_prior_and_exact_evidence_across_gamma(gamma):
    for partition in set_partitions(4):
        sizes = np.bincount(partition)
        expected = (
            len(sizes) * mp.log(gamma)
            + mp.fsum(mp.loggamma(s) for s in sizes)
            + mp.loggamma(gamma)
            - mp.loggamma(gamma + 4)
        )
        assert crp_log_prior(np.asarray(partition), gamma) == pytest.approx(
            float(expected), abs=1e-12 * max(1.0, abs(float(expected)))
        )
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"f": rng.integers(0, 3, 24)})
    y, tasks = rng.integers(0, 2, 24), np.repeat(["a", "b", "c", "d"], 6)
    model = ClusteredNB(inference="exact", gamma=gamma).fit(frame, y, tasks)
    proba = model.predict_proba(frame, tasks)
    assert np.isfinite(model.log_evidence_) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_tiny_beta_predictions_stay_finite():
    frame = pd.DataFrame({"f": [0, 1, 2, 0]})
    model = NoSharingNB(beta=1e-6).fit(frame, [0, 1, 1, 0], ["u"] * 4)
    proba = model.predict_proba(pd.DataFrame({"f": [0, 1, 2]}), ["u"] * 3)
    assert np.isfinite(proba).all() and (proba > 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_a_feature_with_100_000_categories():
    n = 100_000
    frame = pd.DataFrame({"f": np.arange(2 * n) % n})
    y = np.arange(2 * n) % 2
    model = NoSharingNB(numeric=None).fit(frame, y, np.zeros(2 * n, dtype=int))
    assert model.schema_.n_values_total == n  # as categories (numeric=None)
    binned = NoSharingNB().fit(frame, y, np.zeros(2 * n, dtype=int))
    assert binned.schema_.n_values_total == 10  # as a number (the default): ten bins
    proba = model.predict_proba(frame.head(5), np.zeros(5, dtype=int))
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.slow
def test_ten_million_rows_in_one_task():
    rng = np.random.default_rng(0)
    n = 10**7
    X = rng.integers(0, 4, size=(n, 2))
    y = (X[:, 0] + rng.integers(0, 2, n)) % 2
    model = NoSharingNB().fit(X, y, np.zeros(n, dtype=int))
    assert int(model.counts_.label_counts.sum()) == n
    assert np.isfinite(model.log_evidence_)
    proba = model.predict_proba(X[:10], np.zeros(10, dtype=int))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ClusteredNB(
            inference="gibbs",
            n_sweeps=20,
            burn_in=5,
            progress=False,
            random_state=7,
            sample_gamma=True,
        ),
        lambda: ClusteredNB(inference="bhc-randomized", random_state=7),
        lambda: ClusteredNB(inference="search", random_state=7),
        lambda: NoSharingNB(semi_supervised="gibbs", n_iter=10, random_state=7),
    ],
)
def test_same_seed_gives_bit_identical_results(make):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"f": rng.integers(0, 3, 60), "g": rng.integers(0, 2, 60)})
    y = rng.integers(0, 2, 60).astype(float)
    y[::7] = np.nan
    tasks = np.repeat(np.arange(6), 10)
    first, second = make().fit(frame, y, tasks), make().fit(frame, y, tasks)
    np.testing.assert_array_equal(
        first.predict_proba(frame, tasks), second.predict_proba(frame, tasks)
    )
    assert first.log_evidence_ == second.log_evidence_
