"""ClusteredLogisticRegression: the Laplace marginal, the partition engines, recovery, files."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score, roc_auc_score

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.data.synthetic import make_logistic_population
from clusterednb.exceptions import CNBError, ModelFileError, NotFittedError
from clusterednb.inference.blocks.engine import enumerate_blocks, gibbs_blocks
from clusterednb.logistic.clustering.joint_blocks import one_hot_design
from clusterednb.logistic.fit import FitSettings, JointData
from clusterednb.logistic.solvers.cluster_weighted import sparse_design
from clusterednb.logistic.solvers.laplace import fit_laplace
from clusterednb.logistic.tuning import like_fewest_rows
from clusterednb.models.partition_prior import crp_log_prior, set_partitions


def one_dimensional(n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_rows, 1))
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-1.5 * x[:, 0]))).astype(float)
    return x, y


def log_evidence_by_quadrature(x: np.ndarray, y: np.ndarray, precision: float) -> float:
    def log_joint(w: float) -> float:
        margin = w * x[:, 0]
        return float(
            np.where(y > 0, log_expit(margin), log_expit(-margin)).sum()
            - 0.5 * precision * w * w
            + 0.5 * np.log(precision / (2 * np.pi))
        )

    mode = fit_laplace(x, y, precision=precision).coef[0]
    shift = log_joint(mode)
    value, _ = quad(lambda w: np.exp(log_joint(w) - shift), mode - 20, mode + 20, points=[mode])
    return shift + np.log(value)


def test_laplace_approaches_the_quadrature_evidence_in_one_dimension():
    errors = []
    for n_rows in (10, 100, 1000):
        x, y = one_dimensional(n_rows)
        exact = log_evidence_by_quadrature(x, y, precision=2.0)
        errors.append(abs(fit_laplace(x, y, precision=2.0).log_marginal - exact))
    assert errors[-1] < 0.01
    assert errors[0] > errors[-1]


def test_laplace_on_merged_repeated_rows_is_laplace_on_every_row(monkeypatch):
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 3, size=(400, 2))  # 9 feature rows, each repeated
    design = one_hot_design(codes, np.array([0, 3, 6]))
    y = (rng.random(400) < 0.3 + 0.1 * codes[:, 0]).astype(float)
    weights = rng.uniform(0.5, 2.0, size=400)
    merged = fit_laplace(design, y, weights, precision=0.7)
    from clusterednb.logistic.solvers import laplace

    monkeypatch.setattr(laplace, "merged_rows", lambda design, y, weights: (design, y, weights))
    every_row = fit_laplace(design, y, weights, precision=0.7)
    np.testing.assert_allclose(merged.coef, every_row.coef, atol=1e-10)
    assert merged.log_marginal == pytest.approx(every_row.log_marginal, rel=1e-12)
    assert merged.log_det_hessian == pytest.approx(every_row.log_det_hessian, rel=1e-12)


def test_laplace_is_the_gaussian_integral_at_the_mode():
    x, y = one_dimensional(30)
    fit = fit_laplace(x, y, precision=0.5)
    curvature = np.exp(fit.log_det_hessian)
    value, _ = quad(lambda d: np.exp(-0.5 * curvature * d * d), -np.inf, np.inf)
    assert fit.log_marginal == pytest.approx(fit.log_joint + np.log(value), abs=1e-10)
    # At the MAP the gradient of the log joint vanishes.
    p = 1 / (1 + np.exp(-x[:, 0] * fit.coef[0]))
    assert x[:, 0] @ (y - p) - 0.5 * fit.coef[0] == pytest.approx(0.0, abs=1e-8)


def toy_blocks(n_tasks: int, rows: int = 12, seed: int = 3, effective_rows: float = np.inf):
    population = make_logistic_population(
        np.random.default_rng(seed),
        group_sizes=(n_tasks - n_tasks // 2, n_tasks // 2),
        rows_per_task=rows,
        n_features=3,
        n_values=2,
    )
    frame = population.frame
    codes = frame[population.feature_names].to_numpy()
    task = pd.factorize(frame["task"])[0]
    offsets = np.arange(0, 2 * 3 + 1, 2)
    data = JointData.from_codes(codes, frame["label"].to_numpy(), task, n_tasks, offsets)
    return data, data.blocks(FitSettings(effective_rows=effective_rows))


def test_the_anchored_expansion_is_laplace_for_the_set_at_the_anchor():
    data, blocks = toy_blocks(4)
    rows = data.labelled
    pooled = fit_laplace(one_hot_design(data.codes[rows], data.offsets), data.y[rows].astype(float))
    assert blocks.log_labels(frozenset(range(4))) == pytest.approx(pooled.log_marginal, abs=1e-8)


def test_the_anchored_expansion_ranks_a_split_as_laplace_does():
    """Away from the anchor the expansion is an approximation of its own: for two planted
    groups it must still prefer the split, by a gain within 25 % of per-cluster Laplace."""
    data, blocks = toy_blocks(6, rows=40)

    def own_laplace(tasks: list[int]) -> float:
        rows = data.labelled[np.isin(data.task[data.labelled], tasks)]
        design = one_hot_design(data.codes[rows], data.offsets)
        return fit_laplace(design, data.y[rows].astype(float)).log_marginal

    groups, everyone = ([0, 1, 2], [3, 4, 5]), list(range(6))
    exact_gain = sum(own_laplace(g) for g in groups) - own_laplace(everyone)
    anchored_gain = sum(blocks.log_labels(frozenset(g)) for g in groups) - blocks.log_labels(
        frozenset(everyone)
    )
    assert exact_gain > 0 and anchored_gain > 0
    assert anchored_gain == pytest.approx(exact_gain, rel=0.25)


def test_enumeration_is_the_normalised_sum_over_every_partition():
    n_tasks, gamma = 5, 0.7
    _, blocks = toy_blocks(n_tasks, effective_rows=4.0)
    result = enumerate_blocks(n_tasks, blocks.log_block, gamma)
    log_joint, together = [], np.zeros((n_tasks, n_tasks))
    partitions = list(set_partitions(n_tasks))
    for z in partitions:
        blocks_of_z = [frozenset(np.flatnonzero(z == k).tolist()) for k in np.unique(z)]
        log_joint.append(crp_log_prior(z, gamma) + sum(blocks.log_block(b) for b in blocks_of_z))
    weights = np.exp(np.array(log_joint) - np.logaddexp.reduce(log_joint))
    for w, z in zip(weights, partitions, strict=True):
        together += w * (z[:, None] == z[None, :])
    np.testing.assert_allclose(result.coclustering, together, atol=1e-12)
    assert result.log_joint == pytest.approx(max(log_joint))
    assert result.n_clusters_probability.sum() == pytest.approx(1.0)


def test_gibbs_samples_the_enumerated_posterior():
    n_tasks, gamma = 5, 1.0
    _, blocks = toy_blocks(n_tasks, effective_rows=2.0)
    exact = enumerate_blocks(n_tasks, blocks.log_block, gamma)
    assert 0.05 < exact.coclustering[0, 4] < 0.95  # a posterior with real uncertainty
    sampled = gibbs_blocks(
        n_tasks, blocks.log_block, gamma, np.random.default_rng(0), n_sweeps=4000, burn_in=100
    )
    np.testing.assert_allclose(sampled.coclustering, exact.coclustering, atol=0.04)
    np.testing.assert_allclose(
        sampled.n_clusters_probability, exact.n_clusters_probability, atol=0.04
    )


def test_gibbs_on_sums_samples_what_gibbs_on_cached_set_scores_samples():
    """Moving one task's statistics at a time is the same chain as scoring every set afresh:
    same seed, same partitions (the scores agree to rounding)."""
    n_tasks = 9
    data, blocks = toy_blocks(n_tasks, effective_rows=2.0)
    fresh = data.blocks(FitSettings(effective_rows=2.0))
    on_sums = gibbs_blocks(n_tasks, blocks, 1.0, np.random.default_rng(0), n_sweeps=60, burn_in=5)
    on_sets = gibbs_blocks(
        n_tasks, fresh.log_block, 1.0, np.random.default_rng(0), n_sweeps=60, burn_in=5
    )
    np.testing.assert_array_equal(on_sums.partition, on_sets.partition)
    np.testing.assert_array_equal(on_sums.coclustering, on_sets.coclustering)
    assert on_sums.log_joint == pytest.approx(on_sets.log_joint, rel=1e-12)
    assert 0.0 < on_sums.coclustering[0, 8] < 1.0  # the chain moved


def test_added_and_removed_sums_equal_sums_from_scratch():
    _, blocks = toy_blocks(6)
    stats = blocks.of_members([0])
    for task in (3, 5, 1):
        stats = blocks.added(stats, task)
    stats = blocks.removed(stats, 5)
    direct = blocks.of_members([0, 1, 3])
    np.testing.assert_allclose(stats.hessian, direct.hessian, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.counts, direct.counts, rtol=1e-12)
    assert blocks.log_score(stats) == pytest.approx(
        blocks.log_block(frozenset({0, 1, 3})), rel=1e-12
    )


def fit(population, **params) -> ClusteredLogisticRegression:
    frame = population.frame
    model = ClusteredLogisticRegression(random_state=0, **params)
    return model.fit(frame[population.feature_names], frame["label"], frame["task"])


def test_a_planted_population_is_recovered():
    population = make_logistic_population(
        np.random.default_rng(1), group_sizes=(8, 8, 8), rows_per_task=40
    )
    model = fit(population)
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, model.partition_) >= 0.9


def test_a_user_with_the_reversed_rule_is_learnt():
    rng = np.random.default_rng(2)
    population = make_logistic_population(rng, group_sizes=(12,), rows_per_task=60, n_features=4)
    frame = population.frame.copy()
    reversed_users = ["u00", "u01", "u02"]
    flip = frame["task"].isin(reversed_users)
    frame.loc[flip, "label"] = 1 - frame.loc[flip, "label"]
    test = frame[frame["task"] == "u00"].iloc[40:]
    train = frame.drop(test.index)
    features = population.feature_names
    model = ClusteredLogisticRegression(random_state=0)
    model.fit(train[features], train["label"], train["task"])
    assert model.partition_[0] == model.partition_[1] == model.partition_[2]
    assert model.partition_[0] != model.partition_[5]
    p1 = model.predict_proba(test[features], test["task"])[:, 1]
    assert roc_auc_score(test["label"], p1) > 0.8


def pooled_logistic(train: pd.DataFrame, test: pd.DataFrame, features: list[str]) -> np.ndarray:
    model = ClusteredLogisticRegression(effective_rows=1.0, floor=1.0, relevance=False).fit(
        train[features], train["label"], train["task"]
    )
    tasks = pd.Index(model.task_ids_)
    offsets = model.schema_.offsets
    design = sparse_design(
        model.schema_.encode_features(train[features]),
        offsets,
        tasks.get_indexer(train["task"]),
        tasks.size,
    )
    reference = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(design, train["label"])
    query = sparse_design(
        model.schema_.encode_features(test[features]),
        offsets,
        tasks.get_indexer(test["task"]),
        tasks.size,
    )
    ours = model.predict_proba(test[features], test["task"])[:, 1]
    np.testing.assert_allclose(ours, reference.predict_proba(query)[:, 1], atol=1e-6)
    return ours


def test_with_no_cluster_structure_it_predicts_as_well_as_pooled_regression():
    population = make_logistic_population(
        np.random.default_rng(4), group_sizes=(10,), rows_per_task=50, n_features=4
    )
    frame = population.frame
    test = frame.groupby("task").tail(20)
    train = frame.drop(test.index)
    features = population.feature_names
    pooled = pooled_logistic(train, test, features)
    model = ClusteredLogisticRegression(random_state=0).fit(
        train[features], train["label"], train["task"]
    )
    ours = model.predict_proba(test[features], test["task"])[:, 1]
    assert roc_auc_score(test["label"], ours) >= roc_auc_score(test["label"], pooled) - 0.005


def test_unlabelled_rows_count_in_the_features_only():
    population = make_logistic_population(np.random.default_rng(5), group_sizes=(3, 3))
    frame = population.frame.copy()
    frame.loc[frame.index[::3], "label"] = np.nan
    model = ClusteredLogisticRegression(effective_rows=np.inf, floor=0.2, random_state=0)
    model.fit(frame[population.feature_names], frame["label"].to_numpy(dtype=float), frame["task"])
    assert model.clusters_.cluster_value_counts.sum() == len(frame) * len(population.feature_names)
    assert set(model.classes_.tolist()) == {0.0, 1.0}


def test_a_new_task_chooses_a_cluster_by_its_features():
    population = make_logistic_population(
        np.random.default_rng(6), group_sizes=(5, 5), rows_per_task=40
    )
    frame = population.frame
    features = population.feature_names
    held = frame[frame["task"] == "u9"]
    model = fit(
        type(population)(frame[frame["task"] != "u9"], population.true_group, features),
        effective_rows=np.inf,
        floor=0.2,
    )
    proba = model.predict_proba(held[features], ["new"] * len(held))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    from clusterednb.logistic.placement import new_task_mixture

    codes = model.schema_.encode_features(held[features])
    settings = model._settings_used()
    mixture = new_task_mixture(model.clusters_, codes, model.schema_.offsets, settings)
    assert mixture.sum() == pytest.approx(1.0)
    cluster_of_group_1 = model.partition_[list(model.task_ids_).index("u5")]
    assert mixture[cluster_of_group_1] > 0.9


def test_save_and_load_give_the_same_predictions_without_pickle(tmp_path):
    population = make_logistic_population(np.random.default_rng(7), group_sizes=(3, 3))
    model = fit(population)
    path = tmp_path / "model.cnb"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        with archive.open("arrays.npz") as arrays:
            np.load(arrays, allow_pickle=False)
    again = clusterednb.load(path)
    frame = population.frame
    np.testing.assert_array_equal(
        again.predict_proba(frame[population.feature_names], frame["task"]),
        model.predict_proba(frame[population.feature_names], frame["task"]),
    )
    assert (again.effective_rows_, again.floor_) == (model.effective_rows_, model.floor_)
    np.testing.assert_array_equal(again.coclustering_, model.coclustering_)
    data = path.read_bytes()
    broken = tmp_path / "broken.cnb"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError):
        clusterednb.load(broken)


def test_bad_settings_and_inputs_are_refused_by_name():
    population = make_logistic_population(np.random.default_rng(8), group_sizes=(2, 2))
    frame = population.frame
    features = population.feature_names
    for params, word in (
        ({"effective_rows": -1.0}, "effective_rows"),
        ({"floor": -0.1}, "floor"),
        ({"gamma": 0}, "gamma"),
        ({"inference": "magic"}, "inference"),
        ({"n_sweeps": 5, "burn_in": 5}, "burn_in"),
        ({"validation": "quarter"}, "validation"),
    ):
        with pytest.raises(CNBError, match=word):
            model = ClusteredLogisticRegression(**params)
            model.fit(frame[features], frame["label"], frame["task"])
    with pytest.raises(CNBError, match="binary"):
        three_classes = frame["label"] + frame["f0"]
        ClusteredLogisticRegression().fit(frame[features], three_classes, frame["task"])
    with pytest.raises(NotFittedError):
        ClusteredLogisticRegression().predict_proba(frame[features], frame["task"])


def test_tempering_counts_no_task_as_more_than_the_effective_rows():
    data, tempered = toy_blocks(4, rows=12, effective_rows=6.0)
    _, plain = toy_blocks(4, rows=12)
    pair = frozenset({0, 1})
    counts = data.value_counts[[0, 1]].sum(axis=0)
    # Every task has 12 rows: each counts as 6, so its counts and log-likelihood are halved.
    expected = float(tempered.log_features(0.5 * counts))
    expansions = plain.expansions
    half = type(expansions)(
        expansions.anchor,
        0.5 * expansions.value,
        0.5 * expansions.gradient,
        expansions.hessian.scaled(np.full(4, 0.5)),
    )
    expected += half.log_marginal([0, 1], precision=1.0)
    assert tempered.log_block(pair) == pytest.approx(expected, rel=1e-12)
    # A task of fewer rows than R keeps its full weight.
    _, roomy = toy_blocks(4, rows=12, effective_rows=50.0)
    assert roomy.log_block(pair) == pytest.approx(plain.log_block(pair), rel=1e-12)


def few_label_frame(rows_of_target: int, unlabelled: int) -> tuple[pd.DataFrame, list[str]]:
    population = make_logistic_population(
        np.random.default_rng(9), group_sizes=(6, 6), rows_per_task=30
    )
    frame = population.frame.copy()
    target = frame.index[frame["task"] == "u00"]
    frame = frame.drop(target[rows_of_target + unlabelled :])
    frame.loc[target[rows_of_target : rows_of_target + unlabelled], "label"] = np.nan
    return frame, population.feature_names


@pytest.mark.parametrize("unlabelled", [0, 10])
def test_like_fewest_validation_cuts_a_third_of_the_tasks_to_the_fewest_labels(unlabelled):
    frame, features = few_label_frame(rows_of_target=2, unlabelled=unlabelled)
    model = ClusteredLogisticRegression(validation="like-fewest", random_state=0)
    y = frame["label"].to_numpy(dtype=float)
    model.fit(frame[features], y, frame["task"])
    data = JointData.from_codes(
        model.schema_.encode_features(frame[features]),
        np.where(np.isnan(y), -1, y).astype(np.int64),
        pd.Index(model.task_ids_).get_indexer(frame["task"]),
        len(model.task_ids_),
        model.schema_.offsets,
    )
    held, keep_features = like_fewest_rows(data, np.random.default_rng(3))
    lent_by = np.bincount(data.task[held], minlength=data.n_tasks)
    # 11 tasks have 30 labelled rows: 3 of them keep 2 and lend 28; the target lends nothing.
    assert sorted(lent_by[lent_by > 0].tolist()) == [28, 28, 28]
    assert lent_by[0] == 0
    assert keep_features is (unlabelled > 0)
    fewer = data.without_rows(held)
    assert fewer.rows_per_task.sum() == data.rows_per_task.sum() - held.size
    assert np.diff(fewer.task_starts)[lent_by > 0].tolist() == [2, 2, 2]
    assert len(model.tuning_) > 0 and model.tuning_["log_loss"].notna().all()
