"""ClusteredLearner: any classifier inside the clusters of the clustered logistic regression
(issue 49, "any learner inside a cluster")."""

from __future__ import annotations

import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import clusterednb
from clusterednb import ClusteredLearner
from clusterednb.exceptions import CNBError, MissingExtraError
from clusterednb.learners.cluster_fits import fit_cluster_learners, thinned_weights
from clusterednb.learners.tables import TASK_COLUMN
from conftest import spam_word_counts

SMALL_TREES = {"max_iter": 15}


@pytest.fixture(scope="module")
def fitted(learner_population):
    return ClusteredLearner(learner_params=SMALL_TREES, random_state=0).fit(*learner_population)


def _training_frame(model, X, tasks):
    """The rows as the learners read them (no task column)."""
    return model._rows(X, tasks, "pooled")[0]


def _hgb(seed, **kwargs):
    return HistGradientBoostingClassifier(
        categorical_features="from_dtype", random_state=seed, **SMALL_TREES, **kwargs
    )


@pytest.mark.parametrize("thin_below", [0.0, 0.25])
def test_each_cluster_learner_is_the_learner_fitted_with_the_clusters_row_weights(
    fitted, learner_population, thin_below
):
    """Without thinning each learner is the learner fitted with weights ``floor + (1 −
    floor) q``; with it, with the thinned weights drawn from the same generator."""
    X, y, tasks = learner_population
    clustering = fitted.clustering_
    q, floor = clustering.clusters_.cluster_weights, clustering.floor_
    row_task = pd.Index(clustering.task_ids_).get_indexer(tasks)
    frame = _training_frame(fitted, X, tasks)
    learners = fit_cluster_learners(
        lambda: _hgb(7), frame, y, row_task, q, floor, np.random.default_rng(5), thin_below
    )
    draws = np.random.default_rng(5)
    for cluster in range(q.shape[1]):
        weights = thinned_weights(
            (floor + (1.0 - floor) * q[:, cluster])[row_task], draws, thin_below
        )
        kept = weights > 0
        direct = _hgb(7).fit(frame[kept], y[kept], sample_weight=weights[kept])
        np.testing.assert_allclose(
            learners.models[cluster].predict_proba(frame), direct.predict_proba(frame)
        )
    np.testing.assert_allclose(learners.new_cluster, q.sum(axis=0) / q.sum())


def test_thinning_keeps_every_rows_expected_weight():
    weights = np.array([1.0, 0.6, 0.25, 0.2, 0.05, 0.01, 0.0])
    rng = np.random.default_rng(0)
    draws = np.array([thinned_weights(weights, rng, 0.25) for _ in range(20000)])
    np.testing.assert_array_equal(draws[:, :3], np.broadcast_to(weights[:3], (20000, 3)))
    assert set(np.unique(draws[:, 3:])) <= {0.0, 0.25}
    error = draws.std(axis=0) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - weights) <= 4 * error + 1e-12).all()
    assert (draws[:, -1] == 0).all()


def test_a_known_task_is_its_membership_mixture_of_the_learners(fitted, learner_population):
    X, _, tasks = learner_population
    frame = _training_frame(fitted, X, tasks)
    membership = fitted.clustering_.clusters_.membership
    position = pd.Index(fitted.task_ids_).get_indexer(tasks)
    per_learner = np.column_stack([m.predict_proba(frame)[:, 1] for m in fitted.learners_.models])
    mixture = membership[position]
    assert (mixture[:, -1] == 0).all()
    expected = (per_learner * mixture[:, :-1]).sum(axis=1)
    np.testing.assert_allclose(fitted.predict_proba(X, tasks)[:, 1], expected, atol=1e-12)


def test_a_new_cluster_mixes_the_learners_by_the_clusters_sizes(fitted, learner_population):
    X, _, tasks = learner_population
    frame = _training_frame(fitted, X, tasks)
    per_learner = np.column_stack([m.predict_proba(frame)[:, 1] for m in fitted.learners_.models])
    only_new = np.zeros((len(frame), len(fitted.learners_.models) + 1))
    only_new[:, -1] = 1.0
    np.testing.assert_allclose(
        fitted.learners_.proba(frame, only_new), per_learner @ fitted.learners_.new_cluster
    )


def test_with_floor_one_every_cluster_shares_one_pooled_learner(learner_population):
    X, y, tasks = learner_population
    model = ClusteredLearner(
        learner_params=SMALL_TREES,
        clustering_params={"floor": 1.0, "effective_rows": 10.0},
        random_state=0,
    ).fit(X, y, tasks)
    first = model.learners_.models[0]
    assert all(learner is first for learner in model.learners_.models)
    frame = _training_frame(model, X, tasks)
    pooled = _hgb(first.random_state).fit(frame, y)
    np.testing.assert_allclose(model.predict_proba(X, tasks), pooled.predict_proba(frame))


def test_it_separates_opposite_groups_where_the_pooled_trees_cannot():
    """Two groups of tasks with opposite rules on one column (and a column that tells the
    groups apart): the clusters' trees rank each task's held rows far better than the pooled
    trees, which see the two rules cancel (the point of sharing by cluster)."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    tasks = np.repeat([f"u{t}" for t in range(8)], 40)
    group = np.repeat(np.arange(8) // 4, 40)
    colour = rng.choice(["red", "blue"], tasks.size)
    room = np.where(rng.random(tasks.size) < 0.8, group, 1 - group).astype(str)
    likes_red = (colour == "red") ^ (rng.random(tasks.size) < 0.1)
    y = np.where(group == 0, likes_red, ~likes_red).astype(int)
    X = pd.DataFrame({"colour": colour, "room": room})
    held = np.arange(tasks.size) % 4 == 0
    model = ClusteredLearner(learner_params=SMALL_TREES, random_state=0)
    model.fit(X[~held], y[~held], tasks[~held])
    assert model.partition_.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    clustered = model.predict_proba(X[held], tasks[held])[:, 1]
    seed = model.learners_.models[0].random_state
    pooled = _hgb(seed).fit(_training_frame(model, X[~held], tasks[~held]), y[~held])
    pooled = pooled.predict_proba(_training_frame(model, X[held], tasks[held]))
    clustered_auc, pooled_auc = (
        roc_auc_score(y[held], clustered),
        roc_auc_score(y[held], pooled[:, 1]),
    )
    assert clustered_auc > 0.85 and clustered_auc > pooled_auc + 0.15, (clustered_auc, pooled_auc)


def test_same_seed_same_numbers_and_a_new_task_is_placed(learner_population):
    X, y, tasks = learner_population
    first = ClusteredLearner(learner_params=SMALL_TREES, random_state=3).fit(X, y, tasks)
    again = ClusteredLearner(learner_params=SMALL_TREES, random_state=3).fit(X, y, tasks)
    np.testing.assert_array_equal(first.predict_proba(X, tasks), again.predict_proba(X, tasks))
    new = first.predict_proba(X.head(5), ["stranger"] * 5, new_tasks="each-row")
    np.testing.assert_allclose(new.sum(axis=1), 1.0)


def test_with_task_adds_the_task_as_a_category(learner_population):
    X, y, tasks = learner_population
    model = ClusteredLearner(learner_params=SMALL_TREES, with_task=True, random_state=0)
    model.fit(X, y, tasks)
    frame = _training_frame(model, X, tasks)
    assert str(frame[TASK_COLUMN].dtype) == "category"
    assert frame[TASK_COLUMN].cat.categories.size == model.task_ids_.size
    unseen = _training_frame(model, X.head(2), ["stranger", "stranger"])
    assert unseen[TASK_COLUMN].isna().all()
    assert model.fit_summary()["with_task"] is True


def test_partial_fit_keeps_the_rows_and_refits_the_learners(learner_population):
    X, y, tasks = learner_population
    model = ClusteredLearner(learner_params=SMALL_TREES, random_state=0)
    model.fit(X[:200], y[:200], tasks[:200])
    newcomer = np.where(np.arange(len(y) - 200) < 10, "newcomer", tasks[200:])
    model.partial_fit(X[200:], y[200:], newcomer)
    assert model.rows_y_.size == len(y)
    assert "newcomer" in model.task_ids_.tolist()
    assert len(model.learners_.models) == model.partition_.max() + 1
    np.testing.assert_allclose(model.predict_proba(X, tasks).sum(axis=1), 1.0)


def test_unlabelled_rows_help_the_clustering_only(learner_population):
    X, y, tasks = learner_population
    labels = pd.Series(y, dtype=object)
    labels[::4] = None
    model = ClusteredLearner(learner_params=SMALL_TREES, random_state=0).fit(X, labels, tasks)
    assert model.rows_y_.size == int(labels.notna().sum())


def test_log_odds_by_feature_is_the_fall_when_a_value_is_hidden(fitted, learner_population):
    X, _, tasks = learner_population
    rows, own = X.head(6).copy(), tasks[:6]
    explained = fitted.log_odds_by_feature(rows, own)
    full = fitted.predict_proba(rows, own)[:, 1]
    hidden = rows.assign(f0=None)
    without = fitted.predict_proba(hidden, own)[:, 1]
    expected = np.log(full / (1 - full)) - np.log(without / (1 - without))
    np.testing.assert_allclose(explained["f0"], expected, atol=1e-9)
    rows.loc[rows.index[0], "f1"] = None
    assert fitted.log_odds_by_feature(rows, own).loc[0, "f1"] == 0.0


def test_a_lightgbm_model_survives_its_file_and_holds_no_pickle(learner_population, tmp_path):
    pytest.importorskip("lightgbm")
    X, y, tasks = learner_population
    model = ClusteredLearner("lightgbm", {"n_estimators": 20}, random_state=0).fit(X, y, tasks)
    path = tmp_path / "trees.cnb"
    model.save(path)
    assert sorted(zipfile.ZipFile(path).namelist()) == ["arrays.npz", "metadata.json"]
    loaded = clusterednb.load(path)
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
    new = ["stranger"] * 5
    np.testing.assert_allclose(
        loaded.predict_proba(X.head(5), new), model.predict_proba(X.head(5), new)
    )
    loaded.partial_fit(X.head(10), y[:10], tasks[:10])
    assert loaded.rows_y_.size == len(y) + 10


def test_scikit_learn_trees_are_refused_by_name_when_saved(fitted, tmp_path):
    path = tmp_path / "hgb.cnb"
    with pytest.raises(CNBError, match="learner 'hgb' cannot be saved as plain data"):
        fitted.save(path)
    assert not path.exists() and not list(tmp_path.iterdir())


def test_any_scikit_learn_classifier_with_sample_weight_fits_inside(learner_population):
    from sklearn.ensemble import RandomForestClassifier

    X, y, tasks = learner_population
    forest = RandomForestClassifier(n_estimators=10, random_state=0)
    model = ClusteredLearner(forest, random_state=0).fit(X.fillna(0), y, tasks)
    assert model.fit_summary()["learner"] == "RandomForestClassifier"
    assert model.predict_proba(X.head(3), tasks[:3]).shape == (3, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"learner": "forest"}, "unknown learner 'forest'"),
        (
            {"learner": HistGradientBoostingClassifier(), "learner_params": {"max_iter": 3}},
            "learner_params go with a learner named by a string",
        ),
        ({"learner": object()}, "has no fit and predict_proba"),
        ({"clustering_params": {"observation": "multinomial"}}, "take no sparse word counts"),
        ({"clustering_params": {"random_state": 1}}, "set random_state on the ClusteredLearner"),
        ({"thin_below": 1.0}, r"thin_below must be in \[0, 1\)"),
    ],
)
def test_bad_settings_are_refused_before_fitting(learner_population, kwargs, message):
    X, y, tasks = learner_population
    with pytest.raises(CNBError, match=message):
        ClusteredLearner(**kwargs).fit(X, y, tasks)


def test_lightgbm_missing_names_the_extra(learner_population, monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    X, y, tasks = learner_population
    with pytest.raises(MissingExtraError, match=r"\[trees\]"):
        ClusteredLearner("lightgbm").fit(X, y, tasks)


def test_a_harness_kind_runs_it():
    from clusterednb.evaluation.models.registry import fit_predict
    from clusterednb.examples import evaluation as toy

    train, test = toy.transfer_split()
    p = fit_predict("cnb-hgb+task", train, test, ["colour"], seed=0)
    assert p.shape == (len(test),) and ((p >= 0) & (p <= 1)).all()


def test_numbers_with_many_values_are_read_through_the_trees_own_unweighted_bins():
    """A numeric column of 600 distinct values is binned once by the same unweighted quantiles
    scikit-learn's trees would find, so the row weights never reach its (slow) weighted
    percentiles; the bins survive a model file."""
    from sklearn.ensemble._hist_gradient_boosting.binning import _BinMapper

    rng = np.random.default_rng(1)
    tasks = np.repeat([f"u{t}" for t in range(6)], 100)
    X = pd.DataFrame(
        {"hour": rng.normal(12.0, 3.0, tasks.size), "room": rng.choice(["a", "b"], tasks.size)}
    )
    y = (X["hour"] > 12.0).to_numpy() ^ (rng.random(tasks.size) < 0.1)
    model = ClusteredLearner(
        learner_params=SMALL_TREES, clustering_params={"numeric": ["hour"]}, random_state=0
    ).fit(X, y, tasks)
    edges = model.number_edges_[0]
    expected = _BinMapper(n_bins=256).fit(X[["hour"]].to_numpy()).bin_thresholds_[0]
    np.testing.assert_allclose(edges, expected)
    frame = _training_frame(model, X, tasks)
    assert frame["hour"].nunique() <= 255
    np.testing.assert_array_equal(frame["hour"], np.searchsorted(edges, X["hour"], side="left"))
    unbinned = ClusteredLearner(
        HistGradientBoostingClassifier(**SMALL_TREES), clustering_params={"numeric": ["hour"]}
    ).fit(X, y, tasks)
    assert unbinned.number_edges_ == {}


def test_the_bins_survive_a_model_file(tmp_path):
    pytest.importorskip("lightgbm")
    rng = np.random.default_rng(2)
    tasks = np.repeat(["a", "b", "c"], 150)
    X = pd.DataFrame({"hour": rng.normal(12.0, 3.0, tasks.size)})
    y = (X["hour"] > 12.0).to_numpy()
    model = ClusteredLearner(
        "lightgbm", {"n_estimators": 10}, clustering_params={"numeric": ["hour"]}, random_state=0
    ).fit(X, y, tasks)
    model.save(tmp_path / "hours.cnb")
    loaded = clusterednb.load(tmp_path / "hours.cnb")
    np.testing.assert_array_equal(loaded.number_edges_[0], model.number_edges_[0])
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_lightgbm_inside_the_clusters_reads_documents_word_counts(tmp_path):
    """Documents: the clustering on word counts (multinomial), LightGBM inside the clusters on
    the same sparse counts; two groups of users who call opposite words spam are told apart,
    the model survives its file, and explanations are refused by name (tables only)."""
    pytest.importorskip("lightgbm")
    from sklearn.metrics import roc_auc_score

    n = 600
    X, spam, tasks = spam_word_counts(n, filler=True)
    held = np.arange(n) % 4 == 0
    model = ClusteredLearner(
        "lightgbm",
        {"n_estimators": 30},
        clustering_params={"observation": "multinomial"},
        random_state=0,
    ).fit(X[~held], spam[~held], tasks[~held])
    p1 = model.predict_proba(X[held], tasks[held])[:, 1]
    assert roc_auc_score(spam[held], p1) > 0.9
    model.save(tmp_path / "docs.cnb")
    loaded = clusterednb.load(tmp_path / "docs.cnb")
    np.testing.assert_allclose(loaded.predict_proba(X[held], tasks[held])[:, 1], p1)
    with pytest.raises(CNBError, match="explains tables"):
        model.log_odds_by_feature(X[held], tasks[held])


def test_the_learners_read_only_the_columns_the_regressions_read(tmp_path, numbers_by_bins):
    pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    tasks = np.repeat(np.arange(40), 12)
    signal = rng.normal(size=tasks.size)
    noise = pd.DataFrame({f"noise{j}": rng.normal(size=tasks.size) for j in range(6)})
    y = rng.random(tasks.size) < 1 / (1 + np.exp(-np.where(tasks % 2, 2.0, -2.0) * signal))
    X = noise.assign(signal=signal)
    model = ClusteredLearner(
        "lightgbm", {"n_estimators": 10}, clustering_params={"relevance": True}, random_state=0
    ).fit(X, y.astype(int), tasks)
    left_out = list(model.clustering_.columns_left_out_)
    assert left_out and "signal" not in left_out, left_out
    frame = model._frame(model.clustering_, *model._encoded(X.head(3), tasks[:3], None)[:2])
    assert list(frame.columns) == [c for c in X.columns if c not in left_out]
    model.save(tmp_path / "learner.cnb")
    loaded = clusterednb.load(tmp_path / "learner.cnb")
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
