"""The screen before the relevance engines (issue 49): its statistics against brute force, its
shuffles against the margins they must keep, and what ``ClusteredNB(relevance=True)`` does
with the columns it holds shared."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import pearsonr

from clusterednb import ClusteredNB
from clusterednb.inference import relevance_screen as screen
from clusterednb.stats.counts import Counts

OFFSETS = np.array([0, 5, 8])


def _counts(codes, y, task, n_tasks, offsets=OFFSETS):
    return Counts.from_codes(
        codes, y, task, n_tasks=n_tasks, n_classes=2, offsets=offsets
    ).value_counts


def test_the_ordinal_statistic_is_the_sum_of_each_tasks_squared_correlation():
    rng = np.random.default_rng(2)
    task = np.repeat(np.arange(6), [7, 9, 5, 12, 3, 8])
    y = rng.integers(0, 2, task.size)
    codes = np.column_stack([rng.integers(0, 5, task.size), rng.integers(0, 3, task.size)])
    codes[rng.random(task.size) < 0.15, 0] = -1  # missing: not counted
    expected = np.zeros(2)
    for column in range(2):
        for u in range(6):
            rows = (task == u) & (codes[:, column] >= 0)
            x, labels = codes[rows, column], y[rows]
            if rows.sum() > 1 and np.ptp(x) > 0 and np.ptp(labels) > 0:
                expected[column] += rows.sum() * pearsonr(x, labels)[0] ** 2
    found = screen._ordinal_correlations(_counts(codes, y, task, 6), OFFSETS)
    np.testing.assert_allclose(found, expected, rtol=1e-10, atol=1e-12)


def _recording(monkeypatch, name: str) -> list[np.ndarray]:
    """The counts each call of the screen's statistic ``name`` scores, in call order (the
    statistic itself still answers)."""
    seen, original = [], getattr(screen, name)

    def record(counts, widths, beta):
        seen.append(counts.copy())
        return original(counts, widths, beta)

    monkeypatch.setattr(screen, name, record)
    return seen


def test_each_deal_keeps_every_tasks_count_and_every_columns_values(monkeypatch):
    rng = np.random.default_rng(4)
    task = np.repeat(np.arange(8), 6)
    codes = np.column_stack([rng.integers(0, 5, 48), rng.integers(0, 3, 48)])
    y = rng.integers(0, 2, 48)
    by_task = _counts(codes, y, task, 8).sum(axis=1)
    seen = _recording(monkeypatch, "group_split_evidence")
    screen.heterogeneity(_counts(codes, y, task, 8), OFFSETS, np.random.default_rng(0))
    observed, *dealt = seen
    np.testing.assert_array_equal(observed, by_task)
    assert len(dealt) in (screen.EARLY_DRAWS, screen.N_DRAWS)
    assert any(not np.array_equal(d, by_task) for d in dealt)  # the deals move values
    for d in dealt:
        np.testing.assert_array_equal(d.sum(axis=0), by_task.sum(axis=0))  # each value's count
        for start, stop in itertools.pairwise(OFFSETS):  # each task's count
            np.testing.assert_array_equal(
                d[:, start:stop].sum(axis=1), by_task[:, start:stop].sum(axis=1)
            )


def test_each_shuffle_keeps_every_tasks_values_and_classes(monkeypatch):
    rng = np.random.default_rng(5)
    task = np.repeat(np.arange(8), 6)
    codes = np.column_stack([rng.integers(0, 5, 48), rng.integers(0, 3, 48)])
    y = rng.integers(0, 2, 48)
    counts = _counts(codes, y, task, 8)
    seen = _recording(monkeypatch, "class_split_evidence")
    screen.dependence(counts, OFFSETS, np.array([False, False]), np.random.default_rng(0))
    observed, *shuffled = seen
    np.testing.assert_array_equal(observed, counts)
    assert any(not np.array_equal(s, counts) for s in shuffled)
    for s in shuffled:
        np.testing.assert_array_equal(s.sum(axis=1), counts.sum(axis=1))  # task × value
        for start, stop in itertools.pairwise(OFFSETS):  # task × class
            np.testing.assert_array_equal(
                s[:, :, start:stop].sum(axis=2), counts[:, :, start:stop].sum(axis=2)
            )


def _population(seed: int, n_noise: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Sixty tasks of ten rows in three groups that differ only in how the label follows two
    numbers (drawn alike in every group), and ``n_noise`` numbers sharing one latent factor
    row by row (moving together from task to task by chance)."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(60), 10)
    signal = rng.normal(size=(600, 2))
    slopes = np.array([[3.0, -3.0], [-3.0, 3.0], [0.0, 3.0]])[task % 3]
    y = (rng.random(600) < expit((signal * slopes).sum(axis=1))).astype(int)
    latent = rng.normal(size=600)
    noise = 0.8 * latent[:, None] + 0.6 * rng.normal(size=(600, n_noise))
    columns = {"s0": signal[:, 0], "s1": signal[:, 1]}
    columns |= {f"noise{j}": noise[:, j] for j in range(n_noise)}
    return pd.DataFrame(columns), y, task


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_correlated_noise_is_held_shared_and_the_signals_are_judged(inference):
    X, y, task = _population(0, 12)
    model = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    model.fit(X, y, task)
    held = model.result_.extras["held_shared"]
    assert held[2:].all() and not held[:2].any(), held
    np.testing.assert_array_equal(model.feature_relevance_[2:], 0.0)
    assert (model.feature_relevance_[:2] > 0.5).all(), model.feature_relevance_
    # a held column predicts from the pooled counts, the same in every component, and the
    # same for both classes (a noise column: likelier label-free)
    component_counts = model.result_.posterior.component_counts
    values = held[model.schema_.value_feature]
    assert np.ptp(component_counts[:, :, values], axis=0).max() == 0
    assert np.ptp(component_counts[:, :, values], axis=1).max() == 0
    again = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    np.testing.assert_array_equal(
        again.fit(X, y, task).predict_proba(X, task), model.predict_proba(X, task)
    )  # same seed, same numbers


def test_what_the_screen_holds_nothing_of_is_fitted_as_without_it(monkeypatch):
    X, y, task = _population(1, 0)
    model = ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)
    assert not model.result_.extras.get("held_shared", np.zeros(2, dtype=bool)).any()
    monkeypatch.setattr(screen, "SCREEN_Z", -np.inf)  # nothing held: the engine alone
    alone = ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)
    np.testing.assert_array_equal(model.predict_proba(X, task), alone.predict_proba(X, task))


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_counts_kept_sparse_are_screened_and_judged_as_dense_ones(monkeypatch, inference):
    """Above a size the estimator keeps its counts sparse: the screen reads them without a
    dense table of every task, and the fit holds and predicts as the dense one."""
    from clusterednb.data import guards

    X, y, task = _population(0, 6)
    dense = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    dense.fit(X, y, task)
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    kept = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    kept.fit(X, y, task)
    assert type(kept.counts_).__name__ == "SparseCounts"
    assert dense.result_.extras["held_shared"][2:].all()  # the noise held: the sparse path
    np.testing.assert_array_equal(
        kept.result_.extras["held_shared"], dense.result_.extras["held_shared"]
    )
    np.testing.assert_allclose(
        kept.predict_proba(X, task), dense.predict_proba(X, task), rtol=0, atol=1e-9
    )


def test_gibbs_relevance_refuses_a_dense_table_too_large(monkeypatch):
    from clusterednb.data import guards
    from clusterednb.exceptions import CNBError
    from clusterednb.naive_bayes import engines

    X, y, task = _population(0, 2)
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    monkeypatch.setattr(engines, "MAX_COUNT_BYTES", 1)
    with pytest.raises(CNBError, match="use inference='variational'"):
        ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)
