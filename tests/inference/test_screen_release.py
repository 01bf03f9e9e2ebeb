"""The screen's held columns released by their evidence on the clusters (issue 49): the rule
against the evidences written out, and what ``relevance="auto"`` fits when it releases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import clusterednb
from clusterednb import ClusteredNB, Counts
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.synthetic import make_planted_population
from clusterednb.estimation.decisions import AUTO_HELD, AUTO_RELEASED
from clusterednb.inference.relevance import LABEL_FREE_SHARE, log_prior_count
from clusterednb.inference.screen_release import evidence_gap, released_columns
from clusterednb.models.observation import DirichletNB
from model_helpers import log_dm


def _written_out(model: DirichletNB, counts: Counts, partition: np.ndarray) -> np.ndarray:
    """Each feature's evidence with one class-conditional distribution per cluster, minus its
    evidence when shared (label-dependent or label-free, mixed by ``LABEL_FREE_SHARE``)."""
    offsets, beta = model.schema.offsets, model.beta
    gap = np.empty(model.schema.n_features)
    for f in range(gap.size):
        cut = slice(offsets[f], offsets[f + 1])
        relevant = sum(
            log_dm(counts.value_counts[partition == k].sum(axis=0)[y, cut], beta[y, cut])
            for k in np.unique(partition)
            for y in range(beta.shape[0])
        )
        pooled = counts.value_counts.sum(axis=0)
        dependent = sum(log_dm(pooled[y, cut], beta[y, cut]) for y in range(beta.shape[0]))
        free = log_dm(pooled[:, cut].sum(axis=0), beta[:, cut].mean(axis=0))
        shared = np.logaddexp(
            np.log1p(-LABEL_FREE_SHARE) + dependent, np.log(LABEL_FREE_SHARE) + free
        )
        gap[f] = relevant - shared
    return gap


def _best_release(gap: np.ndarray, held: np.ndarray) -> list[bool]:
    """The held columns released: every subset of them scored by its gaps and the
    Beta(1, 1) prior of how many of the held ones are relevant, the best kept."""
    n = int(held.sum())
    best, chosen = -np.inf, np.zeros(n, bool)
    for mask in itertools.product([False, True], repeat=n):
        mask = np.array(mask, dtype=bool)
        score = gap[held][mask].sum() + log_prior_count((1.0, 1.0), n)[mask.sum()]
        if score > best + 1e-12:
            best, chosen = score, mask
    released = np.zeros_like(held)
    released[held] = chosen
    return released.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_held_columns_are_released_where_their_evidence_on_the_clusters_beats_shared(seed):
    """Judged together: the set of held columns released is the most probable one, each
    scoring its gap, the set its prior (two held columns: a lone one needs a gap above
    log 2)."""
    rng = np.random.default_rng(seed)
    schema = FeatureSchema(("a", "b", "c"), ((0, 1), (0, 1, 2), (0, 1, 2, 3)), ("no", "yes"))
    model = DirichletNB(schema, beta=np.array([0.7, 1.3, 1.0, 0.5, 2.0, 1.0, 1.0, 1.5, 0.8]))
    n_tasks = 6
    task = np.repeat(np.arange(n_tasks), 8)
    y = rng.integers(0, 2, task.size)
    flips = (task % 2 == 1) & (rng.random(task.size) < 0.8)  # "a" means the label, or not
    codes = np.column_stack(
        [np.where(flips, 1 - y, y), rng.integers(0, 3, task.size), rng.integers(0, 4, task.size)]
    )
    counts = Counts.from_codes(codes, y, task, n_tasks=n_tasks, n_classes=2, offsets=schema.offsets)
    for partition in (np.arange(n_tasks) % 2, np.zeros(n_tasks, int), rng.integers(0, 3, 6)):
        gap = _written_out(model, counts, partition)
        np.testing.assert_allclose(evidence_gap(model, counts, partition), gap, rtol=1e-10)
        held = np.array([True, True, False])
        got = released_columns(model, counts, held, partition)
        assert got.tolist() == _best_release(gap, held), gap
    assert released_columns(model, counts, np.ones(3, bool), np.arange(n_tasks) % 2)[0]


def _planted(seed: int):
    population = make_planted_population(
        np.random.default_rng(seed), group_sizes=(3, 2, 2), rows_per_task=10, n_features=4
    )
    frame = population.frame
    return frame[population.feature_names], frame["label"], frame["task"]


@pytest.mark.parametrize("inference", ["exact", "gibbs"])
def test_where_every_held_column_is_released_the_fit_is_the_plain_one(inference, tmp_path):
    """Seven planted tasks of ten rows: the screen holds one signal column (the last) that the
    clusters of the others release; the fit is then the plain fit, to the last digit (its
    draws those of a first fit), and the summary says what happened."""
    X, y, tasks = _planted(2)
    settings = {"inference": inference, "random_state": 0, "progress": False, "n_sweeps": 60}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    plain = ClusteredNB(**settings, relevance=False).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))
    assert auto.log_evidence_ == plain.log_evidence_
    summary = auto.fit_summary()
    assert summary["relevance"] == AUTO_RELEASED
    assert summary["columns_released"] == [X.columns[3]]
    assert not hasattr(auto, "feature_relevance_")
    auto.save(tmp_path / "auto.cnb")
    loaded = clusterednb.load(tmp_path / "auto.cnb")
    assert loaded.fit_summary() == summary
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), auto.predict_proba(X, tasks))


def test_a_column_released_beside_one_still_held_is_clustered_with_the_kept_ones():
    """The screen holds two columns, the clusters release one: the fit holds the other
    alone, as a fit on the table without it clusters the tasks."""
    X, y, tasks = _planted(6)
    settings = {"inference": "exact", "random_state": 0, "progress": False}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    summary = auto.fit_summary()
    assert summary["relevance"] == AUTO_HELD
    assert summary["columns_held_shared"] == [X.columns[0]]
    assert summary["columns_released"] == [X.columns[3]]
    without = ClusteredNB(**settings, relevance=False).fit(X.drop(columns=X.columns[0]), y, tasks)
    np.testing.assert_allclose(auto.coclustering_, without.coclustering_, rtol=1e-12)
