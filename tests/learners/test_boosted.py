"""ClusteredBoosting: one LightGBM booster started from the clustered regressions' log-odds
(issue 49, "the project's best model" at the cost of a LightGBM fit)."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import clusterednb
from clusterednb import ClusteredBoosting, ClusteredLogisticRegression
from clusterednb.cli.output import FIRST_FIT_NOTE, PAIRED_NOTE, judgement_lines
from clusterednb.exceptions import CNBError, MissingExtraError
from clusterednb.learners.boosted import regression_log_odds
from conftest import spam_word_counts

pytest.importorskip("lightgbm")

FEW_TREES = {"n_estimators": 20}
NO_STEP = {"n_estimators": 1, "learning_rate": 1e-12}
"""A booster that adds nothing: the model is its regressions."""


@pytest.fixture(scope="module")
def mixed_rows():
    """Eight tasks in two groups, a categorical and a numeric column, some values missing."""
    rng = np.random.default_rng(11)
    tasks = np.repeat([f"u{t}" for t in range(8)], 30)
    group = np.repeat(np.arange(8) // 4, 30)
    colour = rng.choice(["red", "blue", "green"], tasks.size).astype(object)
    colour[rng.random(tasks.size) < 0.1] = None
    hour = rng.normal(12.0, 3.0, tasks.size)
    hour[rng.random(tasks.size) < 0.1] = np.nan
    score = np.where(group == 0, 1.5, -1.5) * (colour == "red") + 0.3 * (np.nan_to_num(hour) - 12)
    y = (rng.random(tasks.size) < expit(score)).astype(int)
    X = pd.DataFrame({"colour": colour, "hour": hour})
    return X, y, tasks


CLUSTERING = {"numeric": ["hour"], "n_bins": 4}


@pytest.fixture(scope="module")
def fitted(mixed_rows):
    X, y, tasks = mixed_rows
    return ClusteredBoosting(FEW_TREES, clustering_params=CLUSTERING, random_state=0).fit(
        X, y, tasks
    )


def test_the_booster_starts_from_the_regressions_log_odds_of_the_rows_as_read(fitted, mixed_rows):
    """The kept rows, read back to values (missing ones too), are predicted by the clustering
    exactly as the raw rows are."""
    X, _, tasks = mixed_rows
    matrix, row_task, _ = fitted.rows_
    start = regression_log_odds(fitted.clustering_, matrix, row_task)
    direct = logit(fitted.clustering_.predict_proba(X, tasks)[:, 1])
    np.testing.assert_allclose(start, direct, rtol=0, atol=1e-12)


def test_the_prediction_is_the_regressions_plus_the_boosters_raw_score(fitted, mixed_rows):
    X, _, tasks = mixed_rows
    frame = fitted._frame(fitted.clustering_, *fitted._encoded(X, tasks, None)[:2])
    raw = fitted.booster_.predict(frame, raw_score=True)
    regressions = fitted.clustering_.predict_proba(X, tasks)[:, 1]
    expected = expit(logit(regressions) + raw)
    np.testing.assert_allclose(fitted.predict_proba(X, tasks)[:, 1], expected, atol=1e-12)
    assert np.abs(raw).max() > 0.01  # the booster did add something


def test_a_booster_that_adds_nothing_leaves_the_clustered_regression(mixed_rows):
    """With one step of length 1e-12 the model is the clustered logistic regression fitted
    from the same generator (under the bins' prior of the clusterings beside trees, 4, and
    the booster's floor, 0.05: only ``effective_rows`` is walked)."""
    X, y, tasks = mixed_rows
    boosted = ClusteredBoosting(NO_STEP, clustering_params=CLUSTERING, random_state=4)
    boosted.fit(X, y, tasks)
    assert boosted.clustering_.bin_precision_ == 4.0
    assert boosted.clustering_.floor_ == 0.05 and boosted.clustering_.floor == 0.05
    assert set(boosted.clustering_.tuning_["floor"]) == {0.05}  # no floor was walked
    alone = ClusteredLogisticRegression(
        **CLUSTERING, bin_precision=4.0, floor=0.05, random_state=np.random.default_rng(4)
    )
    alone.fit(X, y, tasks)
    new = np.array(["u1"] * 10 + ["stranger"] * 10)
    np.testing.assert_allclose(
        boosted.predict_proba(X.head(20), new), alone.predict_proba(X.head(20), new), atol=1e-9
    )


def test_a_floor_given_to_the_booster_is_walked_no_further(mixed_rows):
    X, y, tasks = mixed_rows
    given = ClusteredBoosting(NO_STEP, clustering_params={**CLUSTERING, "floor": 0.5})
    assert given.fit(X, y, tasks).clustering_.floor_ == 0.5
    walked = ClusteredBoosting(NO_STEP, clustering_params={**CLUSTERING, "floor": "auto"})
    assert set(walked.fit(X, y, tasks).clustering_.tuning_["floor"]) > {0.05}


def test_it_learns_what_the_regressions_cannot():
    """A label that is the XOR of two columns in every task: additive regressions rank it no
    better than chance, the booster from them ranks it well."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(2)
    tasks = np.repeat([f"u{t}" for t in range(6)], 60)
    a, b = rng.integers(0, 2, tasks.size), rng.integers(0, 2, tasks.size)
    y = ((a ^ b) ^ (rng.random(tasks.size) < 0.1)).astype(int)
    X = pd.DataFrame({"a": a.astype(str), "b": b.astype(str)})
    held = np.arange(tasks.size) % 3 == 0
    model = ClusteredBoosting(random_state=0).fit(X[~held], y[~held], tasks[~held])
    boosted = roc_auc_score(y[held], model.predict_proba(X[held], tasks[held])[:, 1])
    alone = roc_auc_score(y[held], model.clustering_.predict_proba(X[held], tasks[held])[:, 1])
    assert boosted > 0.85 and alone < 0.65, (boosted, alone)


def test_same_seed_same_numbers(mixed_rows):
    X, y, tasks = mixed_rows
    first, second = (
        ClusteredBoosting(FEW_TREES, clustering_params=CLUSTERING, random_state=7).fit(X, y, tasks)
        for _ in range(2)
    )
    np.testing.assert_array_equal(first.predict_proba(X, tasks), second.predict_proba(X, tasks))


def test_partial_fit_starts_the_booster_from_the_updated_regressions(mixed_rows):
    X, y, tasks = mixed_rows
    model = ClusteredBoosting(NO_STEP, clustering_params=CLUSTERING, random_state=0)
    model.fit(X.iloc[30:], y[30:], tasks[30:])
    model.partial_fit(X.iloc[:30], y[:30], tasks[:30])
    assert model.rows_y_.size == len(y) and "u0" in model.task_ids_
    np.testing.assert_allclose(
        model.predict_proba(X, tasks), model.clustering_.predict_proba(X, tasks), atol=1e-9
    )


def test_explanations_add_the_boosters_exact_shares_to_the_regressions(fitted, mixed_rows):
    X, _, tasks = mixed_rows
    rows, row_tasks = X.head(12), tasks[:12]
    shares = fitted.booster_contributions(rows, row_tasks)
    frame = fitted._frame(fitted.clustering_, *fitted._encoded(rows, row_tasks, None)[:2])
    contributions = fitted.booster_.predict(frame, pred_contrib=True)
    raw = fitted.booster_.predict(frame, raw_score=True)
    np.testing.assert_allclose(shares.sum(axis=1) + contributions[:, -1], raw, atol=1e-9)
    explained = fitted.log_odds_by_feature(rows, row_tasks)
    regressions = fitted.clustering_.log_odds_by_feature(rows, row_tasks)
    np.testing.assert_allclose(explained.to_numpy(), (regressions + shares).to_numpy())
    assert list(explained.columns) == ["colour", "hour"]


def test_it_survives_its_file_and_holds_no_pickle(fitted, mixed_rows, tmp_path):
    X, y, tasks = mixed_rows
    path = tmp_path / "boosted.cnb"
    fitted.save(path)
    assert sorted(zipfile.ZipFile(path).namelist()) == ["arrays.npz", "metadata.json"]
    loaded = clusterednb.load(path)
    assert type(loaded) is ClusteredBoosting
    new = np.array(["stranger"] * len(tasks))
    for who in (tasks, new):
        np.testing.assert_array_equal(loaded.predict_proba(X, who), fitted.predict_proba(X, who))
    assert loaded.fit_summary() == fitted.fit_summary()
    loaded.partial_fit(X.head(10), y[:10], tasks[:10])
    assert loaded.rows_y_.size == len(y) + 10


def test_a_file_with_a_learner_per_cluster_is_refused(fitted, mixed_rows, tmp_path):
    from clusterednb.persistence.state import ModelRecord

    _, arrays = fitted._state()
    meta, _ = fitted._state()
    meta = meta | {"learners": meta["learners"] * 2}
    record = ModelRecord(fitted.schema_, fitted.task_ids_, meta, arrays)
    with pytest.raises(CNBError, match="holds one LightGBM booster"):
        ClusteredBoosting()._restore(record)


def test_with_task_reads_the_task_as_a_category(mixed_rows):
    X, y, tasks = mixed_rows
    model = ClusteredBoosting(FEW_TREES, with_task=True, clustering_params=CLUSTERING)
    model.fit(X, y, tasks)
    assert "task" in " ".join(model.booster_.feature_name()).lower()
    assert model.log_odds_by_feature(X.head(3), tasks[:3]).shape == (3, 2)


def test_lightgbm_missing_names_the_extra(mixed_rows, monkeypatch):
    import sys

    X, y, tasks = mixed_rows
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with pytest.raises(MissingExtraError, match="trees"):
        ClusteredBoosting().fit(X, y, tasks)


def test_it_reads_documents_word_counts():
    from sklearn.metrics import roc_auc_score

    n = 600
    X, spam, tasks = spam_word_counts(n)
    held = np.arange(n) % 4 == 0
    model = ClusteredBoosting(
        FEW_TREES, clustering_params={"observation": "multinomial"}, random_state=0
    ).fit(X[~held], spam[~held], tasks[~held])
    assert roc_auc_score(spam[held], model.predict_proba(X[held], tasks[held])[:, 1]) > 0.9
    with pytest.raises(CNBError, match="explains tables"):
        model.log_odds_by_feature(X[held], tasks[held])


def _additive_and_xor_rows(seed: int):
    """Rows whose label follows one column additively (the regressions' own form), and rows
    whose label is the XOR of two columns."""
    rng = np.random.default_rng(seed)
    tasks = np.repeat([f"u{t}" for t in range(6)], 80)
    a, b = rng.integers(0, 2, tasks.size), rng.integers(0, 2, tasks.size)
    X = pd.DataFrame({"a": a.astype(str), "b": b.astype(str)})
    additive = (rng.random(tasks.size) < expit(1.5 * a - 0.75)).astype(int)
    xor = ((a ^ b) ^ (rng.random(tasks.size) < 0.1)).astype(int)
    return X, tasks, additive, xor


def test_stopping_keeps_few_trees_where_the_regressions_say_it_all_and_many_where_not():
    X, tasks, additive, xor = _additive_and_xor_rows(3)
    params = {"n_estimators": 200}
    few = ClusteredBoosting(params, stop_share=0.25, random_state=0).fit(X, additive, tasks)
    many = ClusteredBoosting(params, stop_share=0.25, random_state=0).fit(X, xor, tasks)
    assert few.fit_summary()["trees"] < 5 and many.fit_summary()["trees"] > 10


@pytest.mark.parametrize("share", [-0.1, 1.0])
def test_a_stop_share_outside_its_range_is_refused_before_fitting(mixed_rows, share):
    X, y, tasks = mixed_rows
    with pytest.raises(CNBError, match="stop_share must be in"):
        ClusteredBoosting(stop_share=share).fit(X, y, tasks)


def test_auto_start_keeps_the_regressions_where_they_predict_held_rows_better():
    """Two groups of tasks with opposite colour effects: trees pooled over every task cannot
    tell them apart, the clusters' regressions can, on the rows the tuning held out."""
    rng = np.random.default_rng(5)
    tasks = np.repeat([f"u{t}" for t in range(12)], 40)
    group = np.repeat(np.arange(12) % 2, 40)
    colour = rng.choice(["red", "blue"], tasks.size)
    y = ((colour == "red") ^ (group == 1) ^ (rng.random(tasks.size) < 0.1)).astype(int)
    X = pd.DataFrame({"colour": colour})
    model = ClusteredBoosting(FEW_TREES, start="auto", random_state=0).fit(X, y, tasks)
    held = model.clustering_.validation_rows_
    assert held.size > 0 and np.isfinite(model.clustering_.validation_log_loss_)
    assert model.start_ == "regressions"
    fixed = ClusteredBoosting(FEW_TREES, random_state=0).fit(X, y, tasks)
    np.testing.assert_allclose(model.predict_proba(X, tasks), fixed.predict_proba(X, tasks))


def test_auto_start_starts_from_nothing_where_trees_alone_predict_better(tmp_path):
    """An XOR of two columns: additive regressions cannot rank it, trees can; the booster
    then starts from nothing, predicts with its own score alone, and keeps that in its file."""
    X, tasks, _, xor = _additive_and_xor_rows(3)
    model = ClusteredBoosting(FEW_TREES, start="auto", random_state=0).fit(X, xor, tasks)
    assert model.start_ == "none"
    assert model.fit_summary()["learner"] == "lightgbm from nothing"
    raw = model.booster_.predict(model._frame(model.clustering_, *model.rows_[:2]), raw_score=True)
    np.testing.assert_allclose(model.predict_proba(X, tasks)[:, 1], expit(raw), atol=1e-12)
    model.save(tmp_path / "boost.cnb")
    loaded = clusterednb.load(tmp_path / "boost.cnb")
    assert loaded.start_ == "none"
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_a_start_that_is_not_offered_is_refused_before_fitting(mixed_rows):
    X, y, tasks = mixed_rows
    with pytest.raises(CNBError, match="start must be one of"):
        ClusteredBoosting(start="trees").fit(X, y, tasks)


def test_the_booster_reads_only_the_columns_the_regressions_read(tmp_path, numbers_by_bins):
    rng = np.random.default_rng(3)
    tasks = np.repeat(np.arange(40), 12)
    signal = rng.normal(size=tasks.size)
    noise = pd.DataFrame({f"noise{j}": rng.normal(size=tasks.size) for j in range(6)})
    sign = np.where(tasks % 2, 2.0, -2.0)
    y = (rng.random(tasks.size) < expit(sign * signal)).astype(int)
    X = noise.assign(signal=signal)
    model = ClusteredBoosting(FEW_TREES, clustering_params={"relevance": True}, random_state=0).fit(
        X, y, tasks
    )
    left_out = list(model.clustering_.columns_left_out_)
    assert left_out and "signal" not in left_out, left_out
    assert not set(left_out) & set(model.booster_.feature_name())
    shares = model.booster_contributions(X.head(5), tasks[:5])
    assert list(shares.columns) == list(X.columns) and (shares[left_out] == 0).all().all()
    model.save(tmp_path / "boosted.cnb")
    loaded = clusterednb.load(tmp_path / "boosted.cnb")
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_the_trees_read_what_the_first_fit_read_where_the_evidence_left_a_column_out(tmp_path):
    """An XOR of two columns: the label evidence of additive regressions leaves one of them
    out of the regressions' second fit (``columns_left_out_``), which the first fit read
    (``columns_first_left_out_`` empty); its cells with the kept one earn the evidence
    (``paired_columns_``), so the trees read both, and the file keeps that."""
    X, tasks, _, xor = _additive_and_xor_rows(3)
    model = ClusteredBoosting(random_state=0).fit(X, xor, tasks)
    clustering = model.clustering_
    assert list(clustering.columns_left_out_) == ["b"]
    assert list(clustering.columns_first_left_out_) == []
    assert model.booster_.feature_name() == ["a", "b"]
    summary = model.fit_summary()  # what cnb fit prints
    assert summary["columns_left_out"] == ["b"] and summary["columns_first_left_out"] == []
    assert summary["columns_paired"] == ["b"] and model.paired_columns_ == ["b"]
    assert judgement_lines(summary)[-2:] == [f"{FIRST_FIT_NOTE}: none", f"{PAIRED_NOTE}: b"]
    model.save(tmp_path / "xor.cnb")
    loaded = clusterednb.load(tmp_path / "xor.cnb")
    assert list(loaded.clustering_.columns_first_left_out_) == []
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_kept_rows_codes_are_the_schemas_codes_of_their_values():
    """``matrix_codes`` inverts ``encoded_matrix``: the codes the schema gives the values
    (a number: its bin, however large; a missing value: -1), without a cast warning."""
    import warnings

    from clusterednb.data.numeric import binned_schema
    from clusterednb.learners.tables import encoded_matrix, matrix_codes

    frame = pd.DataFrame(
        {"colour": ["red", None, "blue", "red"], "amount": [1.0, 5e12, np.nan, -3e11]}
    )
    schema = binned_schema(frame, [0, 1, 0, 1], ["amount"], n_bins=2)
    codes = schema.encode_features(frame)
    matrix = encoded_matrix(codes, frame, schema, ("amount",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back, numbers = matrix_codes(matrix, schema, ("amount",))
    np.testing.assert_array_equal(back, codes)
    np.testing.assert_array_equal(numbers["amount"].to_numpy(), frame["amount"].to_numpy())
