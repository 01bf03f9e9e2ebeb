"""``ClusteredLogisticRegression.partial_fit``: new rows of known tasks and new tasks, as
accurate as a full refit on the same rows, saved and loaded mid-stream (issue 39)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import clusterednb as cnb
from clusterednb.exceptions import CNBError


def _population(seed=0, n_tasks=12, n_rows=80):
    rng = np.random.default_rng(seed)
    n = n_tasks * n_rows
    group = np.repeat(np.arange(n_tasks) % 3, n_rows)
    X = pd.DataFrame(
        {
            "room": rng.choice(["a", "b", "c"], n),
            "slot": rng.choice(["am", "pm"], n),
        }
    )
    like = np.array(["a", "b", "c"])[group]
    logit = 2.0 * (X["room"] == like) - 1.0 + 0.8 * (X["slot"] == "am") * (group == 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    tasks = np.repeat([f"u{i}" for i in range(n_tasks)], n_rows)
    order = rng.permutation(n)
    return X.iloc[order].reset_index(drop=True), y[order], tasks[order]


def _streamed_and_full_auc(X, y, tasks, train, test, n_chunks):
    """Test AUC of a model fitted on half the training rows then given the rest in chunks,
    and of one fitted on all of them at once."""
    first, rest = train[: len(train) // 2], np.array_split(train[len(train) // 2 :], n_chunks)
    streamed = cnb.ClusteredLogisticRegression(random_state=0).fit(
        X.iloc[first], y[first], tasks[first]
    )
    for chunk in rest:
        streamed.partial_fit(X.iloc[chunk], y[chunk], tasks[chunk])
    full = cnb.ClusteredLogisticRegression(random_state=0).fit(
        X.iloc[train], y[train], tasks[train]
    )
    assert streamed.rows_.y.size == full.rows_.y.size == train.size
    return tuple(
        roc_auc_score(y[test], model.predict_proba(X[test], tasks[test])[:, 1])
        for model in (streamed, full)
    )


def test_a_stream_of_chunks_predicts_as_well_as_a_full_refit():
    X, y, tasks = _population()
    test = np.arange(len(y)) % 4 == 0
    auc_streamed, auc_full = _streamed_and_full_auc(X, y, tasks, np.flatnonzero(~test), test, 6)
    assert auc_streamed >= auc_full - 0.005


def test_new_tasks_and_new_rows_are_learnt():
    X, y, tasks = _population()
    known = tasks != "u11"
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X[known], y[known], tasks[known])
    assert "u11" not in model.task_ids_
    model.partial_fit(X[~known], y[~known], tasks[~known])
    assert model.task_ids_.tolist()[-1] == "u11"
    assert model.clusters_.membership.shape[0] == 12
    proba = model.predict_proba(X[~known].iloc[:5], tasks[~known][:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_saved_and_loaded_mid_stream_continues_the_same(tmp_path):
    X, y, tasks = _population()
    half = len(y) // 2
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X[:half], y[:half], tasks[:half])
    model.save(tmp_path / "m.cnb")
    loaded = cnb.load(tmp_path / "m.cnb")
    np.testing.assert_array_equal(loaded.rows_.codes, model.rows_.codes)
    model.partial_fit(X[half:], y[half:], tasks[half:])
    loaded.partial_fit(X[half:], y[half:], tasks[half:])
    np.testing.assert_allclose(
        loaded.predict_proba(X, tasks), model.predict_proba(X, tasks), rtol=1e-10
    )


def _fitted_but_one_row():
    X, y, tasks = _population()
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X[1:], y[1:], tasks[1:])
    return model, (X[:1], y[:1], tasks[:1])


def test_one_answer_keeps_the_posterior_and_refits_the_regressions_to_their_minima():
    from clusterednb.inference.blocks.engine import BlockClustering
    from clusterednb.logistic.clusters import assemble

    model, answer = _fitted_but_one_row()
    before = model.clusters_
    model.partial_fit(*answer)
    after = model.clusters_
    np.testing.assert_array_equal(after.partition, before.partition)
    np.testing.assert_array_equal(after.cluster_weights, before.cluster_weights)
    assert after.sampled_rows == before.sampled_rows == model.rows_.y.size - 1
    assert not np.allclose(after.coef, before.coef)  # the answer moved the regressions
    kept = BlockClustering(
        before.partition,
        before.log_joint,
        before.coclustering,
        before.n_clusters_probability,
        before.cluster_weights,
    )
    from_pooled = assemble(model.rows_, kept, model._settings_used())
    np.testing.assert_allclose(after.coef, from_pooled.coef, atol=1e-6)
    np.testing.assert_allclose(after.intercept, from_pooled.intercept, atol=1e-6)


def test_a_new_task_or_rows_past_the_share_sample_the_posterior_again(monkeypatch):
    from clusterednb.logistic import online

    model, answer = _fitted_but_one_row()
    monkeypatch.setattr(online, "RESAMPLE_AFTER", 0.0)  # every row is past the share
    model.partial_fit(*answer)
    assert model.clusters_.sampled_rows == model.rows_.y.size
    monkeypatch.setattr(online, "RESAMPLE_AFTER", 0.05)
    X, y, _ = answer
    model.partial_fit(X, y, np.array(["someone new"]))
    assert model.clusters_.sampled_rows == model.rows_.y.size
    assert model.clusters_.partition.size == model.task_ids_.size == 13


def test_a_fit_without_the_task_weights_samples_the_posterior_again():
    from dataclasses import replace

    model, answer = _fitted_but_one_row()
    model.clusters_ = replace(model.clusters_, cluster_weights=None)  # a file from before
    model.partial_fit(*answer)
    assert model.clusters_.sampled_rows == model.rows_.y.size
    assert model.clusters_.cluster_weights is not None


def test_one_answer_to_a_loaded_model_is_the_same_update(tmp_path):
    model, answer = _fitted_but_one_row()
    model.save(tmp_path / "m.cnb")
    loaded = cnb.load(tmp_path / "m.cnb")
    np.testing.assert_array_equal(loaded.clusters_.cluster_weights, model.clusters_.cluster_weights)
    assert loaded.clusters_.sampled_rows == model.clusters_.sampled_rows
    model.partial_fit(*answer)
    loaded.partial_fit(*answer)
    assert loaded.clusters_.sampled_rows == model.clusters_.sampled_rows < model.rows_.y.size
    X, _, tasks = _population()
    np.testing.assert_allclose(
        loaded.predict_proba(X, tasks), model.predict_proba(X, tasks), rtol=1e-10
    )


def test_partial_fit_first_fits_and_a_model_without_rows_is_refused(tmp_path):
    X, y, tasks = _population()
    model = cnb.ClusteredLogisticRegression(random_state=0).partial_fit(X, y, tasks)
    assert hasattr(model, "clusters_")
    del model.rows_
    with pytest.raises(CNBError, match="no training rows kept"):
        model.partial_fit(X[:3], y[:3], tasks[:3])


LANDMINE = Path(__file__).resolve().parents[3] / "shared" / "data" / "landmine" / "landmine.csv.gz"


@pytest.mark.slow
@pytest.mark.skipif(not LANDMINE.exists(), reason=f"needs {LANDMINE}")
def test_on_landmine_a_stream_of_chunks_is_as_accurate_as_a_full_refit():
    frame = pd.read_csv(LANDMINE)
    X, y = frame[[f"f{i}" for i in range(1, 10)]], frame["label"].to_numpy()
    tasks = frame["task"].to_numpy()
    rng = np.random.default_rng(0)
    test = rng.random(len(y)) < 0.25
    train = rng.permutation(np.flatnonzero(~test))
    auc_streamed, auc_full = _streamed_and_full_auc(X, y, tasks, train, test, 5)
    assert auc_streamed >= auc_full - 0.005, (auc_streamed, auc_full)


def _many_small_tasks(n_tasks=2000):
    from clusterednb.data.synthetic import make_logistic_population

    population = make_logistic_population(
        np.random.default_rng(0), group_sizes=[n_tasks // 10] * 10, rows_per_task=8, n_features=8
    )
    frame = population.frame
    return frame[population.feature_names], frame["label"].to_numpy(), frame["task"].to_numpy()


def test_one_answer_among_many_refits_only_its_task_close_to_the_full_refit(monkeypatch):
    """The local refit (the answering task's own weights in every regression) against the
    full one (every regression from its minimum) under the same kept posterior."""
    import copy

    from clusterednb.logistic import online

    X, y, tasks = _many_small_tasks()
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    before = model.predict_proba(X, tasks)[:, 1]
    full = copy.deepcopy(model)
    answer, task = slice(3, 4), tasks[3]
    monkeypatch.setattr(online, "LOCAL_SHARE", 1e-4)  # 16 000 rows: one answer is 6e-5
    model.partial_fit(X.iloc[answer], 1 - y[answer], tasks[answer])
    assert model.clusters_.fitted_rows == full.clusters_.fitted_rows  # no full refit
    monkeypatch.setattr(online, "LOCAL_SHARE", 0.0)
    full.partial_fit(X.iloc[answer], 1 - y[answer], tasks[answer])
    assert full.clusters_.fitted_rows == model.clusters_.fitted_rows + 1
    local, refitted = model.predict_proba(X, tasks)[:, 1], full.predict_proba(X, tasks)[:, 1]
    own = tasks == task
    moved = np.abs(refitted - before)[own].max()
    assert moved > 0.03  # the answer moves its task
    # 16 000 rows: the shared weights the local refit keeps move the rows by < 0.005
    assert np.abs(local - refitted).max() < 0.005
    assert np.abs(local - refitted)[own].max() < 0.1 * moved
    np.testing.assert_allclose(
        model.clusters_.cluster_value_counts, full.clusters_.cluster_value_counts, atol=1e-9
    )
    np.testing.assert_array_equal(model.rows_.codes, full.rows_.codes)


def test_answers_past_the_local_share_refit_every_regression():
    from clusterednb.logistic import online

    X, y, tasks = _many_small_tasks()
    model = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    fitted_rows = model.clusters_.fitted_rows
    assert online.LOCAL_SHARE * fitted_rows < 1  # 16 000 rows: no answer is few enough
    model.partial_fit(X.iloc[:1], 1 - y[:1], tasks[:1])
    assert model.clusters_.fitted_rows == fitted_rows + 1
