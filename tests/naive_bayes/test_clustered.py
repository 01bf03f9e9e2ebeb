"""Clustered Naive Bayes engines against brute force and each other."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.metrics import adjusted_rand_score

import clusterednb
from clusterednb import ClusteredNB, DirichletNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.exceptions import CNBError
from clusterednb.inference.gibbs.kernels import task_log_score
from clusterednb.inference.gibbs.moves import split_merge_move
from clusterednb.inference.gibbs.state import initial_state, prepare
from clusterednb.models.partition_prior import canonical_partition, crp_log_prior, set_partitions
from conftest import random_frame, schema_for

FEATURES = ["f0", "f1", "f2"]


def quiet(**kwargs):
    return ClusteredNB(progress=False, random_state=0, **kwargs)


def small_population(seed: int, group_sizes=(2, 3), rows=4):
    population = make_planted_population(
        np.random.default_rng(seed),
        group_sizes=group_sizes,
        rows_per_task=rows,
        n_features=3,
        n_values=3,
        feature_concentration=1.0,
    )
    frame = population.frame
    return frame[population.feature_names], frame["label"], frame["task"]


def partition_distribution(result):
    return {tuple(p): w for p, w in zip(result.partitions, result.partition_weights, strict=True)}


def total_variation(p, q):
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


# ---------------------------------------------------------------------------- exact engine
@pytest.mark.parametrize("gamma", [0.3, 1.0, 4.0])
def test_exact_evidence_two_and_three_users_equals_hand_summed_crp(rng, gamma):
    frame = random_frame(rng, n_rows=18, n_tasks=3, missing=0.1)
    schema = schema_for(3, 3, 2)
    model = DirichletNB(schema, alpha=1.5, beta=0.8)
    for n_users in (2, 3):
        part = frame[frame["task"].isin([f"t{i}" for i in range(n_users)])]
        fitted = ClusteredNB(
            inference="exact", gamma=gamma, alpha=1.5, beta=0.8, schema=schema
        ).fit(part[FEATURES], part["label"], part["task"])
        counts = fitted.counts_
        labels = model.log_marginal_labels(counts.label_counts).sum()

        def block(*users, counts=counts):
            return model.log_marginal_features(counts.total(list(users)).value_counts)[0]

        g = gamma
        if n_users == 2:
            terms = [np.log(1 / (1 + g)) + block(0, 1), np.log(g / (1 + g)) + block(0) + block(1)]
        else:
            norm = (1 + g) * (2 + g)
            terms = [
                np.log(2 / norm) + block(0, 1, 2),
                np.log(g / norm) + block(0, 1) + block(2),
                np.log(g / norm) + block(0, 2) + block(1),
                np.log(g / norm) + block(1, 2) + block(0),
                np.log(g**2 / norm) + block(0) + block(1) + block(2),
            ]
        assert fitted.log_evidence_ == pytest.approx(logsumexp(terms) + labels, abs=1e-11)
        assert fitted.evidence_kind_ == "exact"


def test_exact_predictive_is_the_ratio_of_evidences(rng):
    frame = random_frame(rng, n_rows=16, n_tasks=4, missing=0.1)
    schema = schema_for(3, 3, 2)
    params = {"inference": "exact", "gamma": 0.7, "schema": schema}
    model = ClusteredNB(**params).fit(frame[FEATURES], frame["label"], frame["task"])
    query = frame[FEATURES].iloc[[2]]
    for task in ("t1", "brand-new"):
        proba = model.predict_proba(query, [task])[0]
        log_evidence = []
        for label in (0, 1):
            extended = frame.copy()
            extended.loc[len(extended)] = [task, label, *query.iloc[0].tolist()]
            log_evidence.append(
                ClusteredNB(**params)
                .fit(extended[FEATURES], extended["label"], extended["task"])
                .log_evidence_
            )
        expected = np.exp(np.array(log_evidence) - logsumexp(log_evidence))
        np.testing.assert_allclose(proba, expected, atol=1e-12)


def test_exact_refuses_too_many_tasks(rng):
    frame = random_frame(rng, n_rows=40, n_tasks=11)
    with pytest.raises(CNBError, match="limited to 10 tasks; this data set has 11"):
        ClusteredNB(inference="exact").fit(frame[FEATURES], frame["label"], frame["task"])


def test_crp_prior_sums_to_one_over_partitions():
    for gamma in (0.5, 2.0):
        total = logsumexp([crp_log_prior(p, gamma) for p in set_partitions(6)])
        assert total == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------- Gibbs
@pytest.mark.parametrize(("split_merge", "n_sweeps"), [(False, 20_000), (1, 8_000)])
def test_gibbs_partition_frequencies_match_exact_posterior(split_merge, n_sweeps):
    X, y, tasks = small_population(1)
    exact = quiet(inference="exact").fit(X, y, tasks)
    gibbs = quiet(inference="gibbs", n_sweeps=n_sweeps, burn_in=500, split_merge=split_merge).fit(
        X, y, tasks
    )
    distance = total_variation(
        partition_distribution(exact.result_), partition_distribution(gibbs.result_)
    )
    assert distance < 0.03
    np.testing.assert_allclose(gibbs.coclustering_, exact.coclustering_, atol=0.03)
    np.testing.assert_allclose(gibbs.n_clusters_posterior_, exact.n_clusters_posterior_, atol=0.03)
    if split_merge:
        assert gibbs.result_.extras["split_merge_accepted"] > 0


def test_gibbs_predictive_matches_the_exact_predictive():
    """The sampler's samples mix their joints, so its ``P(y | x)`` tends to the exact
    engine's ratio of evidences, for known tasks and a new one (an average of each sample's
    ``P(y | x)`` would stay apart: the row's own ``x`` also weighs the partitions)."""
    X, y, tasks = small_population(1)
    exact = quiet(inference="exact").fit(X, y, tasks)
    gibbs = quiet(inference="gibbs", n_sweeps=8_000, burn_in=500).fit(X, y, tasks)
    assert gibbs.posterior_.mix_joint
    known = gibbs.predict_proba(X, tasks)  # each sample's P(y | x) averaged: 0.024 apart
    np.testing.assert_allclose(known, exact.predict_proba(X, tasks), atol=0.01)
    new = ["someone new"] * len(X)
    np.testing.assert_allclose(gibbs.predict_proba(X, new), exact.predict_proba(X, new), atol=0.01)


def _split_merge_only_distance(n_moves: int, seed: int) -> float:
    X, y, tasks = small_population(1)
    exact = quiet(inference="exact").fit(X, y, tasks)
    data = prepare(
        exact.observation_,
        exact.counts_,
        np.zeros((0, 3), dtype=np.int64),
        np.zeros(0, dtype=np.int64),
    )
    rng = np.random.default_rng(seed)
    state = initial_state(rng, data, 1.0, np.zeros(5, dtype=np.int64))
    visits: dict[tuple, int] = {}
    for _ in range(n_moves):
        split_merge_move(rng, state, data)
        key = tuple(canonical_partition(state.assignment))
        visits[key] = visits.get(key, 0) + 1
    frequencies = {k: v / n_moves for k, v in visits.items()}
    return total_variation(frequencies, partition_distribution(exact.result_))


def test_split_merge_alone_targets_the_exact_posterior():
    # Split-merge moves without any single-site sweep must leave the posterior invariant.
    assert _split_merge_only_distance(30_000, seed=0) < 0.04


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_split_merge_alone_targets_the_exact_posterior_closely(seed):
    # Measured: 0.011-0.013 when correct; 0.030-0.041 with the ratio taken on the launch
    # state instead of the proposed split (a bug this test was written to catch).
    assert _split_merge_only_distance(150_000, seed) < 0.02


def test_gibbs_missing_label_marginal_matches_enumeration():
    X, y, tasks = small_population(3, group_sizes=(2, 1), rows=4)
    y = y.astype(float).copy()
    hidden = [1, 6]
    y.iloc[hidden] = np.nan
    schema = quiet(inference="exact").fit(X, y, tasks).schema_
    # Exact: sum over both labellings of the hidden rows × all partitions, of the model the
    # sampler fits with unlabelled rows (every column in it: relevance=False).
    log_evidence = {}
    for labels in itertools.product((0, 1), repeat=2):
        filled = y.copy()
        filled.iloc[hidden] = labels
        exact = quiet(inference="exact", schema=schema, relevance=False)
        log_evidence[labels] = exact.fit(X, filled, tasks).log_evidence_
    total = logsumexp(list(log_evidence.values()))
    exact_p1 = [
        sum(np.exp(v - total) for k, v in log_evidence.items() if k[i] == 1) for i in range(2)
    ]
    gibbs = quiet(
        inference="gibbs", n_sweeps=20_000, burn_in=500, split_merge=False, schema=schema
    ).fit(X, y, tasks)
    np.testing.assert_allclose(gibbs.unlabelled_proba_[:, 1], exact_p1, atol=0.02)


def test_gamma_sampling_matches_grid_posterior():
    X, y, tasks = small_population(4, group_sizes=(2, 2), rows=3)
    shape, rate = 2.0, 1.0
    grid = np.linspace(0.005, 15, 3000)
    log_post = np.array(
        [quiet(inference="exact", gamma=g).fit(X, y, tasks).log_evidence_ for g in grid[::30]]
    )
    # The evidence is smooth in γ: interpolate it, add the Gamma(2, 1) prior.
    log_post = np.interp(grid, grid[::30], log_post) + (shape - 1) * np.log(grid) - rate * grid
    weights = np.exp(log_post - logsumexp(log_post))
    grid_mean = float((weights * grid).sum())
    gibbs = quiet(
        inference="gibbs",
        n_sweeps=30_000,
        burn_in=500,
        sample_gamma=True,
        gamma_prior=(shape, rate),
        split_merge=False,
    ).fit(X, y, tasks)
    samples = gibbs.gamma_samples_
    assert samples.mean() == pytest.approx(grid_mean, rel=0.05)
    grid_cdf = np.cumsum(weights)
    for q in (0.25, 0.5, 0.75):
        assert np.quantile(samples, q) == pytest.approx(
            grid[np.searchsorted(grid_cdf, q)], rel=0.08
        )


def test_compiled_score_equals_numpy_evidence_difference(rng):
    frame = random_frame(rng, n_rows=60, n_tasks=5, n_values=4, n_classes=3, missing=0.2)
    model = ClusteredNB(inference="exact", beta=[0.5, 1.0, 2.0]).fit(
        frame[FEATURES], frame["label"], frame["task"]
    )
    counts = model.counts_
    data = prepare(
        model.observation_, counts, np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
    )
    data.refresh(np.zeros(0, dtype=np.int64))
    cluster = counts.total([1, 2, 3]).value_counts  # (1, C, V)
    schema = model.schema_
    cells = cluster.reshape(1, -1)
    from clusterednb.stats.special import segment_sum

    totals = segment_sum(cluster, schema.offsets).reshape(1, -1)
    compiled = task_log_score(0, 0, data.tasks.packed(), cells, totals, data.tables.packed())
    obs = model.observation_
    expected = (
        obs.log_marginal_features(cluster + counts.value_counts[:1])
        - obs.log_marginal_features(cluster)
    )[0]
    assert compiled == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_search_finds_the_exact_map_partition_on_small_problems(seed):
    X, y, tasks = small_population(10 + seed, group_sizes=(3, 3), rows=6)
    exact = quiet(inference="exact").fit(X, y, tasks)
    search = quiet(inference="search").fit(X, y, tasks)
    weights = exact.result_.partition_weights
    map_partition = exact.result_.partitions[np.argmax(weights)]
    np.testing.assert_array_equal(search.partition_, map_partition)
    # log P(D | z*) + log P(z*) = log P(D) + log P(z* | D) for the MAP partition.
    expected = exact.log_evidence_ + np.log(weights.max())
    assert search.log_evidence_ == pytest.approx(expected, abs=1e-9)


# ---------------------------------------------------------------------------- BHC
def test_bhc_two_users_equals_exact_evidence(rng):
    frame = random_frame(rng, n_rows=12, n_tasks=2)
    for gamma in (0.2, 1.0, 5.0):
        exact = quiet(inference="exact", gamma=gamma).fit(
            frame[FEATURES], frame["label"], frame["task"]
        )
        bhc = quiet(inference="bhc", gamma=gamma).fit(
            frame[FEATURES], frame["label"], frame["task"]
        )
        assert bhc.log_evidence_ == pytest.approx(exact.log_evidence_, abs=1e-11)


@pytest.mark.parametrize("seed", range(6))
def test_bhc_bound_never_exceeds_exact_evidence(seed):
    rng = np.random.default_rng(seed)
    n_tasks = 3 + seed
    frame = random_frame(rng, n_rows=6 * n_tasks, n_tasks=n_tasks, missing=0.1)
    gamma = float(rng.uniform(0.2, 3))
    exact = quiet(inference="exact", gamma=gamma).fit(
        frame[FEATURES], frame["label"], frame["task"]
    )
    for engine in ("bhc", "bhc-randomized", "gibbs", "search"):
        model = quiet(inference=engine, gamma=gamma, n_sweeps=100, burn_in=10).fit(
            frame[FEATURES], frame["label"], frame["task"]
        )
        assert model.evidence_kind_ == "lower_bound"
        assert model.log_evidence_ <= exact.log_evidence_ + 1e-9


def test_bhc_path_weights_sum_to_one_and_tree_is_valid(rng):
    from scipy.cluster.hierarchy import is_valid_linkage

    frame = random_frame(rng, n_rows=80, n_tasks=9)
    model = quiet(inference="bhc").fit(frame[FEATURES], frame["label"], frame["task"])
    posterior = model.posterior_
    for task in range(9):
        entries = slice(posterior.indptr[task], posterior.indptr[task + 1])
        assert logsumexp(posterior.log_weights[entries]) == pytest.approx(0.0, abs=1e-12)
    assert is_valid_linkage(model.tree_)
    assert model.node_log_r_.shape == (17,)
    assert model.n_clusters_posterior_.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(np.diag(model.coclustering_), 1.0)


# ---------------------------------------------------------------------------- agreement
@pytest.fixture(scope="module")
def planted():
    population = make_planted_population(
        np.random.default_rng(7), group_sizes=(10, 10, 10), rows_per_task=40
    )
    frame = population.frame
    return population, frame[population.feature_names], frame["label"], frame["task"]


def test_planted_partition_is_recovered_and_engines_agree(planted):
    population, X, y, tasks = planted
    models = {
        engine: quiet(inference=engine, n_sweeps=150, burn_in=50).fit(X, y, tasks)
        for engine in ("gibbs", "bhc", "bhc-randomized", "search")
    }
    truth = population.labels_for(models["gibbs"].task_ids_)
    for engine in ("gibbs", "bhc", "search"):
        assert adjusted_rand_score(truth, models[engine].partition_) >= 0.9
    proba = {name: m.predict_proba(X, tasks)[:, 1] for name, m in models.items()}
    for a, b in itertools.combinations(proba, 2):
        assert np.abs(proba[a] - proba[b]).mean() < 0.02


def test_cold_start_sums_to_one_and_moves_toward_matching_cluster(planted):
    population, X, y, tasks = planted
    model = quiet(inference="bhc").fit(X, y, tasks)
    truth = population.labels_for(model.task_ids_)
    frame = population.frame
    group_rows = {g: frame[frame["task"].map(population.true_group) == g] for g in range(3)}
    query = group_rows[0][population.feature_names].iloc[:1]
    alone = model.predict_proba(query, ["newcomer"])
    np.testing.assert_allclose(alone.sum(axis=1), 1.0)
    own_cluster_member = model.task_ids_[np.flatnonzero(truth == 0)[0]]
    target = model.predict_proba(query, [own_cluster_member])[0, 1]
    evidence = pd.concat([query, group_rows[0][population.feature_names].iloc[40:70]])
    with_rows = model.predict_proba(evidence, ["newcomer"] * len(evidence))[0, 1]
    assert abs(with_rows - target) < abs(alone[0, 1] - target)
    assert abs(with_rows - target) < 0.05


def test_save_load_and_partial_fit(tmp_path, planted):
    population, X, y, tasks = planted
    model = quiet(inference="gibbs", n_sweeps=40, burn_in=10).fit(
        X.iloc[:800], y.iloc[:800], tasks.iloc[:800]
    )
    model.save(tmp_path / "g.cnb")
    loaded = clusterednb.load(tmp_path / "g.cnb")
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
    np.testing.assert_array_equal(loaded.partition_, model.partition_)
    model.partial_fit(X.iloc[800:], y.iloc[800:], tasks.iloc[800:])
    assert model.task_ids_.size == 30
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, model.partition_) >= 0.9


def test_seeded_runs_are_identical(planted):
    _, X, y, tasks = planted
    first = quiet(inference="gibbs", n_sweeps=30, burn_in=5).fit(X, y, tasks)
    second = quiet(inference="gibbs", n_sweeps=30, burn_in=5).fit(X, y, tasks)
    np.testing.assert_array_equal(first.predict_proba(X, tasks), second.predict_proba(X, tasks))


def test_bad_settings(rng):
    frame = random_frame(rng)
    args = (frame[FEATURES], frame["label"], frame["task"])
    with pytest.raises(CNBError, match="inference must be one of"):
        ClusteredNB(inference="vi").fit(*args)
    with pytest.raises(CNBError, match="gamma must be positive"):
        ClusteredNB(gamma=0).fit(*args)
    with pytest.raises(CNBError, match="burn_in"):
        ClusteredNB(n_sweeps=10, burn_in=10).fit(*args)


def test_without_semi_supervision_unlabelled_rows_change_nothing(planted):
    _, X, y, tasks = planted
    hidden = y.astype(float).copy()
    hidden.iloc[::5] = np.nan
    labelled = hidden.notna().to_numpy()
    settings = {"inference": "gibbs", "n_sweeps": 30, "burn_in": 5, "semi_supervised": False}
    with_rows = quiet(**settings).fit(X, hidden, tasks)
    without = quiet(**settings).fit(X[labelled], hidden[labelled], tasks[labelled])
    np.testing.assert_allclose(
        with_rows.predict_proba(X, tasks), without.predict_proba(X, tasks), atol=1e-12
    )
    assert with_rows.log_evidence_ == pytest.approx(without.log_evidence_, abs=1e-9)
    semi = quiet(**{**settings, "semi_supervised": "auto"}).fit(X, hidden, tasks)
    assert semi.unlabelled_proba_.shape == ((~labelled).sum(), 2)
    truth = y.to_numpy()[~labelled]
    assert np.mean(semi.unlabelled_proba_.argmax(axis=1) == truth) > 0.8


@pytest.mark.parametrize("engine", ["exact", "bhc", "search", "gibbs"])
def test_an_engine_refuses_an_observation_model_without_closed_form_marginals(engine):
    """The engines' contract: a non-conjugate observation model is refused by name."""
    from clusterednb import NoSharingNB
    from clusterednb.inference.bhc.engine import fit_bhc
    from clusterednb.inference.exact import fit_exact
    from clusterednb.inference.gibbs.engine import GibbsSettings, fit_gibbs
    from clusterednb.inference.gibbs.search import fit_search

    class Laplace(DirichletNB):  # the interface of a model whose marginal is approximate
        conjugate = False

    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(2, 2), rows_per_task=5, n_features=2
    )
    fitted = NoSharingNB().fit(
        population.frame[population.feature_names],
        population.frame["label"],
        population.frame["task"],
    )
    model, counts = Laplace(fitted.schema_), fitted.counts_
    rng = np.random.default_rng(0)
    engines = {
        "exact": lambda: fit_exact(model, counts, 1.0),
        "bhc": lambda: fit_bhc(model, counts, 1.0),
        "search": lambda: fit_search(model, counts, 1.0, rng),
        "gibbs": lambda: fit_gibbs(
            model,
            counts,
            np.zeros((0, 2), np.int32),
            np.zeros(0, np.int64),
            1.0,
            GibbsSettings(),
            rng,
        ),
    }
    with pytest.raises(CNBError, match=f"'{engine}' engine .* Laplace has none"):
        engines[engine]()
