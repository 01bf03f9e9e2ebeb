"""Estimator behaviour: oracle, invariances, cold start, scikit-learn conventions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.naive_bayes import CategoricalNB

from clusterednb import CompleteSharingNB, LossMatrix, NoSharingNB
from clusterednb.exceptions import NotFittedError
from conftest import random_frame

FEATURES = ["f0", "f1", "f2"]
ESTIMATORS = [NoSharingNB, CompleteSharingNB]


@pytest.mark.parametrize("beta", [1.0, 0.3, 2.5])
def test_complete_sharing_matches_sklearn_categorical_nb(rng, beta):
    frame = random_frame(rng, n_rows=200, n_tasks=5, n_values=4, n_classes=3)
    X = frame[FEATURES].to_numpy(dtype=np.int64)
    ours = CompleteSharingNB(beta=beta).fit(X, frame["label"], frame["task"])
    oracle = CategoricalNB(alpha=beta).fit(X, frame["label"])
    for f in range(3):
        np.testing.assert_allclose(
            ours.feature_log_prob_[f], oracle.feature_log_prob_[f], rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_fit_equals_partial_fit_in_chunks(rng, estimator):
    frame = random_frame(rng, n_rows=60, n_tasks=4, n_values=4, n_classes=3, missing=0.1)
    frame = frame.sort_values("f0", kind="stable")  # later chunks bring new categories
    whole = estimator().fit(frame[FEATURES], frame["label"], frame["task"])
    chunked = estimator()
    for rows in np.array_split(np.arange(len(frame)), 4):
        chunk = frame.iloc[rows]
        chunked.partial_fit(chunk[FEATURES], chunk["label"], chunk["task"])
    assert chunked.schema_ == whole.schema_
    assert chunked.log_evidence_ == pytest.approx(whole.log_evidence_, abs=1e-10)
    query = random_frame(rng, n_rows=25, n_tasks=6, n_values=4, n_classes=3)
    np.testing.assert_allclose(
        chunked.predict_proba(query[FEATURES], query["task"]),
        whole.predict_proba(query[FEATURES], query["task"]),
        atol=1e-13,
    )


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_row_order_and_task_names_change_nothing(rng, estimator):
    frame = random_frame(rng, n_rows=50, n_tasks=4)
    base = estimator().fit(frame[FEATURES], frame["label"], frame["task"])
    permuted = frame.sample(frac=1.0, random_state=1)
    renamed_ids = {f"t{i}": (99 - i, "x") for i in range(4)}  # tuples are hashable ids too
    other = estimator().fit(
        permuted[FEATURES], permuted["label"], permuted["task"].map(renamed_ids).tolist()
    )
    assert other.log_evidence_ == pytest.approx(base.log_evidence_, abs=1e-10)
    np.testing.assert_allclose(
        other.predict_proba(frame[FEATURES], frame["task"].map(renamed_ids).tolist()),
        base.predict_proba(frame[FEATURES], frame["task"]),
        atol=1e-13,
    )


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_probabilities_sum_to_one_and_unlabelled_rows_are_ignored(rng, estimator):
    frame = random_frame(rng, n_rows=40, n_tasks=3, n_classes=3, missing=0.2)
    model = estimator().fit(frame[FEATURES], frame["label"], frame["task"])
    with_unlabelled = pd.concat([frame, frame.assign(label=np.nan)], ignore_index=True)
    other = estimator().fit(
        with_unlabelled[FEATURES], with_unlabelled["label"], with_unlabelled["task"]
    )
    assert other.log_evidence_ == pytest.approx(model.log_evidence_, abs=1e-12)
    proba = model.predict_proba(frame[FEATURES], frame["task"])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-13)
    assert proba.shape == (40, 3)


def test_unseen_task_gets_prior_under_no_sharing_and_pooled_under_complete_sharing(rng):
    frame = random_frame(rng, n_rows=40, n_tasks=3)
    X = frame[FEATURES]
    ns = NoSharingNB().fit(X, frame["label"], frame["task"])
    cs = CompleteSharingNB().fit(X, frame["label"], frame["task"])
    np.testing.assert_allclose(ns.predict_proba(X.iloc[:5], ["new"] * 5), 0.5, atol=1e-13)
    np.testing.assert_allclose(
        cs.predict_proba(X.iloc[:5], ["new"] * 5),
        cs.predict_proba(X.iloc[:5], ["t0"] * 5),
        atol=1e-13,
    )


def test_predict_under_loss_follows_threshold(rng):
    frame = random_frame(rng, n_rows=60, n_tasks=3)
    model = NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])
    p = model.predict_proba(frame[FEATURES], frame["task"])[:, 1]
    for n in (-3, 0, 2, 5):
        decided = model.predict(frame[FEATURES], frame["task"], loss=LossMatrix.asymmetric(n))
        np.testing.assert_array_equal(decided, (p > 1 / (1 + 2.0**n)).astype(int))


def test_string_labels_and_categories_multiclass():
    frame = pd.DataFrame(
        {
            "user": ["ann", "ann", "bob", "bob", "bob", "cy"],
            "colour": ["red", "blue", "red", "green", None, "blue"],
            "size": [1, 2, 2, 3, 1, 1],
            "verdict": ["yes", "no", "maybe", "yes", "no", np.nan],
        }
    )
    model = NoSharingNB().fit(frame[["colour", "size"]], frame["verdict"], frame["user"])
    assert model.classes_.tolist() == ["maybe", "no", "yes"]
    assert model.predict(frame[["colour", "size"]], frame["user"]).shape == (6,)


def test_clone_get_params_and_set_params(rng):
    model = CompleteSharingNB(alpha=2.0, beta=0.5)
    assert clone(model).get_params() == model.get_params()
    model.set_params(beta=0.25)
    assert model.beta == 0.25
    frame = random_frame(rng)
    fitted = model.fit(frame[FEATURES], frame["label"], frame["task"])
    assert not hasattr(clone(fitted), "posterior_")


def test_task_column_lets_estimator_live_in_a_pipeline(rng):
    frame = random_frame(rng)
    model = NoSharingNB(task_column="task").fit(frame[["task", *FEATURES]], frame["label"])
    explicit = NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])
    np.testing.assert_allclose(
        model.predict_proba(frame[["task", *FEATURES]]),
        explicit.predict_proba(frame[FEATURES], frame["task"]),
    )
    assert 0.0 <= model.score(frame[["task", *FEATURES]], frame["label"]) <= 1.0


def test_unfitted_model_raises():
    with pytest.raises(NotFittedError, match="not fitted"):
        NoSharingNB().predict_proba([[1]], ["a"])
