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
    from clusterednb.inference.variational.engine import VariationalSettings, fit_variational

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

    from clusterednb.inference.variational.collapsed import sequential_partition
    from clusterednb.inference.variational.problem import VariationalProblem

    population = make_planted_population(
        np.random.default_rng(5), group_sizes=(4, 3, 3), rows_per_task=30
    )
    model = fit(population, "bhc")
    counts = model.counts_
    n_tasks = counts.value_counts.shape[0]
    dense = counts.value_counts.reshape(n_tasks, -1).astype(float)
    problem = VariationalProblem(model.observation_, sparse.csr_matrix(dense), counts.label_counts)
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


def _problem_of(model):
    from scipy import sparse

    from clusterednb.inference.variational.problem import VariationalProblem

    counts = model.counts_
    dense = counts.value_counts.reshape(counts.value_counts.shape[0], -1).astype(float)
    return VariationalProblem(model.observation_, sparse.csr_matrix(dense), counts.label_counts)


def _log_joint(problem, partition: np.ndarray, gamma: float) -> float:
    """``log P(z, D)`` of the collapsed model: the CRP prior and each cluster's marginal."""
    from scipy.special import gammaln

    dense = problem.task_counts.toarray()
    sizes = np.bincount(partition)
    sizes = sizes[sizes > 0]
    n_tasks = partition.size
    log_crp = (
        sizes.size * np.log(gamma)
        + gammaln(sizes).sum()
        + gammaln(gamma)
        - gammaln(gamma + n_tasks)
    )
    sums = np.array([dense[partition == k].sum(axis=0) for k in np.unique(partition)])
    return float(log_crp + problem.log_features(sums))


def test_the_polish_gives_each_task_its_collapsed_gibbs_conditional():
    """With no search pass, row ``u`` is ``P(z_u = k | z_{-u}) ∝ |k|^{-u} P(n_u | N_k^{-u})``
    (``γ P(n_u)`` for a new cluster), checked against Dirichlet–multinomial marginals of dense
    sums, for every task."""
    from clusterednb.inference.variational.collapsed import collapsed_polish

    population = make_planted_population(
        np.random.default_rng(8), group_sizes=(3, 3, 2), rows_per_task=6, n_features=3
    )
    model = fit(population, "bhc")
    problem = _problem_of(model)
    dense = problem.task_counts.toarray()
    partition = population.labels_for(model.task_ids_)
    gamma = 0.8
    polished = collapsed_polish(problem, np.eye(partition.max() + 1)[partition], gamma, 0, 0.0)

    def log_features(row: np.ndarray) -> float:
        return problem.log_features(row[None, :])

    for task in range(partition.size):
        scores = []
        for k in range(partition.max() + 1):
            members = np.flatnonzero((partition == k) & (np.arange(partition.size) != task))
            total = dense[members].sum(axis=0)
            scores.append(
                np.log(members.size) + log_features(total + dense[task]) - log_features(total)
                if members.size
                else -np.inf
            )
        new_cluster = np.log(gamma) + log_features(dense[task])
        if np.isinf(scores).any():  # the task's own singleton is the new cluster's slot
            scores[int(np.argmax(np.isinf(scores)))] = new_cluster
            scores.append(-np.inf)
        else:
            scores.append(new_cluster)
        expected = np.exp(np.array(scores) - max(scores))
        np.testing.assert_allclose(
            polished[task, : len(scores)], expected / expected.sum(), rtol=1e-9, atol=1e-12
        )


def test_a_task_alone_in_a_component_made_of_itself_rejoins_its_group():
    """Mean field keeps a task in a component of its own (the component fits it perfectly);
    the polish scores it against the other tasks and moves it to its group. The search
    starts from the most probable components (one-hot), and never lowers ``log P(z, D)``."""
    from clusterednb.inference.variational.collapsed import collapsed_polish

    population = make_planted_population(
        np.random.default_rng(9), group_sizes=(4, 3, 3), rows_per_task=30
    )
    model = fit(population, "bhc")
    problem = _problem_of(model)
    truth = population.labels_for(model.task_ids_)
    n_groups = truth.max() + 1
    start = np.eye(n_groups + 1)[np.where(np.arange(truth.size) == 0, n_groups, truth)]
    polished = collapsed_polish(problem, start, 1.0, max_passes=5)
    assert polished[0].argmax() == truth[0]
    assert adjusted_rand_score(truth, polished.argmax(axis=1)) == pytest.approx(1.0)
    mode = polished.argmax(axis=1)
    assert _log_joint(problem, mode, 1.0) > _log_joint(problem, start.argmax(axis=1), 1.0)
    soft = start.copy()
    soft[1] = 0.9 * start[1] + 0.1 * start[0]
    np.testing.assert_array_equal(
        collapsed_polish(problem, soft, 1.0, max_passes=1, floor=0.0),
        collapsed_polish(problem, start, 1.0, max_passes=1, floor=0.0),
    )


def test_the_collapsed_finish_brings_a_diffuse_posterior_back_from_the_mode():
    """Weakly identified tasks (2 rows each) have a posterior spread over many partitions:
    the mode's co-clustering is far from the exact one, the refined average close to it, and
    the bound reported is the same ELBO with and without the refinement."""
    from clusterednb.inference.exact import fit_exact
    from clusterednb.inference.variational.engine import fit_variational
    from clusterednb.inference.variational.problem import VariationalSettings

    population = make_planted_population(
        np.random.default_rng(4), group_sizes=(3, 3), rows_per_task=2, n_features=3
    )
    model = fit(population, "exact")
    exact = fit_exact(model.observation_, model.counts_, 1.0).coclustering()

    def finished(sweeps):
        settings = VariationalSettings(refine_sweeps=sweeps)
        result = fit_variational(
            model.observation_, model.counts_, 1.0, np.random.default_rng(0), settings
        )
        return result, np.abs(result.coclustering() - exact).max()

    mode, mode_error = finished(0)
    refined, refined_error = finished(1500)
    assert refined.log_evidence == pytest.approx(mode.log_evidence)
    assert refined.evidence_kind == "lower_bound"
    assert refined_error < 0.05 < mode_error
