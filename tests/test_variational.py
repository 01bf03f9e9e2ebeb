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


def variational_of(model, **settings):
    """The variational engine on a fitted model's counts (γ = 1, seed 0)."""
    from clusterednb.inference.variational import VariationalSettings, fit_variational

    return fit_variational(
        model.observation_,
        model.counts_,
        1.0,
        np.random.default_rng(0),
        VariationalSettings(**settings),
    )


def test_merge_moves_join_components_that_split_a_group():
    """Seeding 40 components for 4 groups of 20 tasks splits groups between components;
    mean-field updates cannot join them again (6 clusters, adjusted Rand 0.94), the
    ELBO-checked merge moves can (4 clusters, 1.0; the bound 126 nats higher, and it only
    rises)."""
    population = make_planted_population(
        np.random.default_rng(4), group_sizes=(20, 20, 20, 20), rows_per_task=60
    )
    model = fit(population, "bhc")  # for its counts and observation model
    fits = {
        pairs: variational_of(
            model, n_components=40, n_init=1, merge_pairs=pairs, sequential_start_tasks=0
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


def test_the_sequential_start_is_the_greedy_pass_of_the_collapsed_model():
    """Each task joins the argmax of ``log|k| + log P(n_u | N_k)`` (or ``log γ + log P(n_u)``),
    checked against the Dirichlet–multinomial marginals computed densely."""
    from scipy import sparse

    from clusterednb.inference.variational import _Problem
    from clusterednb.inference.variational_seeds import sequential_partition

    population = make_planted_population(
        np.random.default_rng(5), group_sizes=(4, 3, 3), rows_per_task=30
    )
    model = fit(population, "bhc")
    counts = model.counts_
    n_tasks = counts.value_counts.shape[0]
    dense = counts.value_counts.reshape(n_tasks, -1).astype(float)
    problem = _Problem(model.observation_, sparse.csr_matrix(dense), counts.label_counts)
    gamma = 0.7
    partition = sequential_partition(problem, gamma)

    def log_features(row: np.ndarray) -> float:
        return problem.log_features(row[None, :])

    expected = np.zeros(n_tasks, dtype=np.int64)
    sums: list[np.ndarray] = []
    for task in range(n_tasks):
        scores = [
            np.log(np.sum(expected[:task] == k))
            + log_features(total + dense[task])
            - log_features(total)
            for k, total in enumerate(sums)
        ]
        scores.append(np.log(gamma) + log_features(dense[task]))
        expected[task] = int(np.argmax(scores))
        if expected[task] == len(sums):
            sums.append(np.zeros(dense.shape[1]))
        sums[expected[task]] += dense[task]
    np.testing.assert_array_equal(partition, expected)
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, partition) == pytest.approx(1.0)


def test_the_sequential_restart_wins_when_few_tasks_hold_many_rows():
    """Twelve tasks of 400 rows in 6 groups: every seeded start keeps each task in a cluster of
    its own (mean field cannot merge them); the restart from the sequential pass reaches the
    planted groups and an ELBO about 370 nats higher."""
    population = make_planted_population(
        np.random.default_rng(6),
        group_sizes=(2, 2, 2, 2, 2, 2),
        rows_per_task=400,
        feature_concentration=2.0,
    )
    model = fit(population, "bhc")
    fits = {limit: variational_of(model, sequential_start_tasks=limit) for limit in (0, 2000)}
    assert fits[2000].log_evidence > fits[0].log_evidence + 100.0
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, fits[0].partition) < 0.5
    assert adjusted_rand_score(truth, fits[2000].partition) == pytest.approx(1.0)
