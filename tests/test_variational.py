"""The variational engine: a lower bound that rises, exact where it must be, planted groups."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from clusterednb import ClusteredNB, load
from clusterednb.data.synthetic import make_planted_population


def fit(population, inference: str, **params) -> ClusteredNB:
    frame = population.frame
    model = ClusteredNB(inference=inference, random_state=0, progress=False, **params)
    return model.fit(frame[population.feature_names], frame["label"], frame["task"])


@pytest.mark.parametrize("seed", range(5))
def test_the_elbo_rises_and_stays_below_the_exact_evidence(seed):
    population = make_planted_population(
        np.random.default_rng(seed), group_sizes=(3, 2, 2), rows_per_task=10, n_features=4
    )
    exact = fit(population, "exact")
    variational = fit(population, "variational")
    assert variational.evidence_kind_ == "lower_bound"
    assert variational.log_evidence_ <= exact.log_evidence_
    trace = variational.result_.extras["elbo_trace"]
    assert np.all(np.diff(trace) >= -1e-9 * abs(trace[-1]))
    frame = population.frame
    proba = variational.predict_proba(frame[population.feature_names], frame["task"])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_one_task_gets_its_exact_evidence():
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(1,), rows_per_task=15, n_features=3
    )
    assert fit(population, "variational").log_evidence_ == pytest.approx(
        fit(population, "exact").log_evidence_, abs=1e-9
    )


def test_planted_groups_are_recovered_and_saved(tmp_path):
    population = make_planted_population(
        np.random.default_rng(1), group_sizes=(20, 20, 20, 20), rows_per_task=30
    )
    model = fit(population, "variational")
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, model.partition_) >= 0.95
    assert model.n_clusters_posterior_.sum() == pytest.approx(1.0)
    assert model.coclustering_.shape == (80, 80)
    model.save(tmp_path / "vi.cnb")
    frame = population.frame
    np.testing.assert_array_equal(
        load(tmp_path / "vi.cnb").predict_proba(frame[population.feature_names], frame["task"]),
        model.predict_proba(frame[population.feature_names], frame["task"]),
    )


def test_merge_moves_join_components_that_split_a_group():
    """Seeding 40 components for 4 groups of 20 tasks splits groups between components;
    mean-field updates cannot join them again (6 clusters, adjusted Rand 0.94), the
    ELBO-checked merge moves can (4 clusters, 1.0; the bound 126 nats higher, and it only
    rises)."""
    from clusterednb.inference.variational import VariationalSettings, fit_variational

    population = make_planted_population(
        np.random.default_rng(4), group_sizes=(20, 20, 20, 20), rows_per_task=60
    )
    model = fit(population, "bhc")  # for its counts and observation model
    fits = {
        pairs: fit_variational(
            model.observation_,
            model.counts_,
            1.0,
            np.random.default_rng(0),
            VariationalSettings(n_components=40, n_init=1, merge_pairs=pairs),
        )
        for pairs in (0, 20)
    }
    truth = population.labels_for(model.task_ids_)
    assert fits[20].log_evidence > fits[0].log_evidence
    assert fits[0].partition.max() + 1 > 4
    assert fits[20].partition.max() + 1 == 4
    assert adjusted_rand_score(truth, fits[20].partition) == pytest.approx(1.0)
    trace = fits[20].extras["elbo_trace"]
    assert np.all(np.diff(trace) >= -1e-9 * abs(trace[-1]))
