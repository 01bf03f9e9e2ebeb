"""scikit-learn compatibility: the common estimator checks, Pipeline, GridSearchCV, clone.

The common checks call ``fit(X, y)`` without task ids, which a multi-task estimator needs;
they run on a test-only adapter that puts every row in one task (``_OneTask``), so that
everything else in the contract is checked: parameters, cloning, idempotence, pickling,
invariance to row order and subsets, ``n_features_in_``, error types. The checks that cannot
apply are listed with the reason in ``NOT_APPLICABLE``; a new failure fails the test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import check_estimator

from clusterednb import ClusteredNB, CompleteSharingNB, NoSharingNB, PrototypeNB


class _OneTaskMixin:
    """Every row in task 0 when no tasks are passed (for the common checks only)."""

    @staticmethod
    def _one(X, tasks):
        return np.zeros(np.asarray(X).shape[0], dtype=int) if tasks is None else tasks

    def fit(self, X, y, tasks=None):
        return super().fit(X, y, self._one(X, tasks))

    def partial_fit(self, X, y, tasks=None, classes=None):
        return super().partial_fit(X, y, self._one(X, tasks), classes)

    def predict_log_proba(self, X, tasks=None):
        return super().predict_log_proba(X, self._one(X, tasks))


class OneTaskNoSharingNB(_OneTaskMixin, NoSharingNB):
    pass


class OneTaskCompleteSharingNB(_OneTaskMixin, CompleteSharingNB):
    pass


class OneTaskClusteredNB(_OneTaskMixin, ClusteredNB):
    pass


class OneTaskPrototypeNB(_OneTaskMixin, PrototypeNB):
    pass


NOT_APPLICABLE = {
    # Features are categories of any hashable type, so these inputs are valid categories:
    "check_estimators_nan_inf": "NaN is a missing value (marginalised out); inf is a category",
    "check_complex_data": "complex numbers are hashable, hence valid categories",
    "check_classifiers_regression_target": "labels are categories of any type, floats too",
    # Messages are the library's own (they name the problem) and sklearn matches its wording:
    "check_estimators_empty_data_messages": "message says 'a schema needs at least one feature'",
    "check_classifiers_one_label": "one class raises SchemaError asking to declare classes=",
    "check_dtype_object": "dict values raise SchemaError 'values must be hashable categories'",
    "check_fit2d_1sample": "one row means one class: SchemaError asking to declare classes=",
    # The library reads any 2-D input as categories, so it has no sparse tag to honour; sparse
    # input raises DataError('sparse input is not supported ...') which sklearn does not match:
    "check_estimator_sparse_tag": "categorical features: sparse input refused with a message",
    "check_estimator_sparse_array": "as above",
    "check_estimator_sparse_matrix": "as above",
    # The test-only adapter subclasses; pickling is not the library's format (JSON + NPZ):
    "check_estimators_pickle": "the adapter is a test class; models are saved as JSON + NPZ",
    "check_requires_y_none": "y=None raises DataError('expected a 1-D sequence, got None')",
    "check_supervised_y_2d": "2-D y raises DataError: labels are one column",
}


@pytest.mark.parametrize(
    "estimator",
    [
        OneTaskNoSharingNB(),
        OneTaskCompleteSharingNB(),
        OneTaskClusteredNB(inference="bhc"),
        # 8 minutes: one optimisation per (class, feature) pair on the checks' wide data.
        pytest.param(OneTaskPrototypeNB(inference="empirical-bayes"), marks=pytest.mark.slow),
    ],
    ids=lambda e: type(e).__name__,
)
def test_common_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {
        r["check_name"]: str(r["exception"])[:300] for r in results if r["status"] == "failed"
    }
    unexpected = {name: why for name, why in failed.items() if name not in NOT_APPLICABLE}
    assert not unexpected
    assert sum(r["status"] == "passed" for r in results) >= 25


def test_pipeline_grid_search_with_a_group_aware_splitter_and_clone():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "user": np.repeat([f"u{i}" for i in range(6)], 30),
            "f0": rng.integers(0, 3, 180),
            "f1": rng.integers(0, 2, 180),
        }
    )
    y = ((frame["f0"] == 1) ^ (rng.random(180) < 0.2)).astype(int).to_numpy()
    pipeline = Pipeline(
        [
            ("identity", FunctionTransformer(lambda x: x)),
            ("model", ClusteredNB(inference="bhc", task_column="user")),
        ]
    )
    search = GridSearchCV(
        pipeline,
        {"model__beta": [0.5, 2.0], "model__gamma": [0.5, 2.0]},
        cv=GroupKFold(n_splits=3),
    )
    search.fit(frame, y, groups=frame["user"])
    assert set(search.best_params_) == {"model__beta", "model__gamma"}
    assert 0.5 < search.best_score_ <= 1.0
    twin = clone(search.best_estimator_)
    assert twin.get_params()["model__beta"] == search.best_params_["model__beta"]
    assert not hasattr(twin.named_steps["model"], "posterior_")


def _population_frame():
    from clusterednb.data.synthetic import make_planted_population

    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=30, n_features=4
    )
    frame = population.frame
    return frame[[*population.feature_names, "task"]], frame["label"].to_numpy()


def test_tags_say_what_the_estimators_accept():
    tags = ClusteredNB().__sklearn_tags__()
    assert tags.input_tags.allow_nan and tags.input_tags.string and tags.input_tags.categorical
    assert not tags.input_tags.sparse
    assert NoSharingNB(observation="multinomial").__sklearn_tags__().input_tags.sparse


@pytest.mark.parametrize("scoring", ["neg_log_loss", "roc_auc", "accuracy"])
def test_probability_scorers_in_cross_val_score_give_numbers(scoring):
    """The recipe: scorers call predict_proba(X) without metadata, so the task ids travel in
    X (``task_column``); metadata routing cannot reach a scorer's predict_proba."""
    from sklearn.model_selection import cross_val_score

    from clusterednb.model_selection import WithinTaskKFold

    X, y = _population_frame()
    model = ClusteredNB(inference="bhc", task_column="task")
    for cv in (GroupKFold(3), WithinTaskKFold(3, random_state=0)):
        scores = cross_val_score(
            model, X, y, groups=X["task"], scoring=scoring, cv=cv, error_score="raise"
        )
        assert np.isfinite(scores).all()
    within = cross_val_score(
        model, X, y, groups=X["task"], scoring="roc_auc", cv=WithinTaskKFold(3, random_state=0)
    )
    cold = cross_val_score(model, X, y, groups=X["task"], scoring="roc_auc", cv=GroupKFold(3))
    assert within.mean() > cold.mean()  # known users predict better than unseen ones


def test_within_task_folds_keep_every_task_on_both_sides_and_balance_labels():
    from clusterednb.model_selection import WithinTaskKFold

    X, y = _population_frame()
    tasks = X["task"].to_numpy()
    seen = np.zeros(len(y), dtype=int)
    for train, test in WithinTaskKFold(5, random_state=1).split(X, y, groups=tasks):
        assert set(tasks[train]) == set(tasks[test]) == set(tasks)
        seen[test] += 1
    assert (seen == 1).all()


def test_sample_weight_is_refused_not_ignored():
    from clusterednb.exceptions import CNBError

    X, y = _population_frame()
    model = NoSharingNB(task_column="task").fit(X, y)
    with pytest.raises(CNBError, match="sample_weight is not supported"):
        model.score(X, y, sample_weight=np.ones(len(y)))
