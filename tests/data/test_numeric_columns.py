"""Numeric columns: binned for the clustering, standardised numbers for the regressions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.data.numeric import NumericColumns, binned_schema
from clusterednb.exceptions import CNBError, DataError
from clusterednb.logistic.solvers.cluster_weighted import sparse_design
from clusterednb.persistence.state import ModelRecord


def hours_population(seed: int = 0, n_tasks: int = 6, rows: int = 60) -> pd.DataFrame:
    """Accept a meeting before a threshold hour that lies inside a quantile bin."""
    rng = np.random.default_rng(seed)
    n = n_tasks * rows
    hour = rng.uniform(8.0, 18.0, size=n)
    room = rng.choice(["a", "b", "c"], size=n)
    label = (rng.random(n) < 1.0 / (1.0 + np.exp(2.0 * (hour - 12.3)))).astype(int)
    tasks = np.repeat([f"u{t}" for t in range(n_tasks)], rows)
    return pd.DataFrame({"hour": hour, "room": room, "label": label, "task": tasks})


def test_standardisation_is_the_training_mean_and_deviation():
    frame = pd.DataFrame({"a": [1.0, 3.0, np.nan, 5.0], "b": [2.0, 2.0, 2.0, 2.0]})
    columns = NumericColumns.fit(frame, ["a", "b"])
    np.testing.assert_allclose(columns.centre, [3.0, 2.0])
    np.testing.assert_allclose(columns.scale, [np.sqrt(8.0 / 3.0), 1.0])  # constant: scale 1
    out = columns.transform(pd.DataFrame({"a": [3.0, np.nan, 7.0], "b": [4.0, 2.0, 2.0]}))
    np.testing.assert_allclose(out, [[0.0, 2.0], [0.0, 0.0], [4.0 / np.sqrt(8.0 / 3.0), 0.0]])


def test_bad_numbers_are_named_by_column_and_row():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "x"]})
    with pytest.raises(DataError, match=r"'b': row 0 holds 'x'"):
        NumericColumns.fit(frame, ["b"])
    with pytest.raises(DataError, match=r"'a': row 1 holds inf"):
        NumericColumns.fit(pd.DataFrame({"a": [1.0, np.inf]}), ["a"])
    with pytest.raises(DataError, match="no non-missing"):
        NumericColumns.fit(pd.DataFrame({"a": [np.nan, np.nan]}), ["a"])
    columns = NumericColumns.fit(frame, ["a"])
    with pytest.raises(DataError, match=r"\['a'\] are not columns"):
        columns.transform(frame[["b"]])
    with pytest.raises(DataError, match=r"'a': row 2 holds 'soon'"):
        columns.transform(pd.DataFrame({"a": [1.0, 2.0, "soon"]}))


def test_the_binned_schema_cuts_at_training_quantiles():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "k": list("abcabc")})
    schema = binned_schema(frame, [0, 1, 0, 1, 0, 1], ["x"], n_bins=3)
    assert schema.bin_edges["x"] == pytest.approx((2.0 + 2 / 3, 4.0 + 1 / 3))
    assert schema.categories[0] == (0, 1, 2)
    assert schema.categories[1] == ("a", "b", "c")


def test_numbers_enter_the_regression_exactly_as_in_scikit_learn():
    """With floor 1 every row weighs 1: the model is one pooled regression on
    [one-hot bins and categories, one-hot task, standardised hour], the hour's bins under a
    prior ``bin_precision`` times as tight: scikit-learn's regression on those columns
    divided by ``√bin_precision``."""
    frame = hours_population()
    test = frame.groupby("task").tail(20)
    train = frame.drop(test.index)
    features = ["hour", "room"]
    model = ClusteredLogisticRegression(effective_rows=1.0, floor=1.0, numeric=["hour"], n_bins=4)
    model.fit(train[features], train["label"], train["task"])
    assert len(model.schema_.bin_edges["hour"]) == 3
    tasks = pd.Index(model.task_ids_)

    hour_bins = np.ones(int(model.schema_.offsets[-1]) + tasks.size + 1)
    hour_bins[model.schema_.offsets[0] : model.schema_.offsets[1]] = model.bin_precision_

    def design(rows: pd.DataFrame):
        return sparse_design(
            model.schema_.encode_features(rows[features]),
            model.schema_.offsets,
            tasks.get_indexer(rows["task"]),
            tasks.size,
            ((rows[["hour"]] - train["hour"].mean()) / train["hour"].std(ddof=0)).to_numpy(),
        ) @ sparse.diags(1.0 / np.sqrt(hour_bins))

    reference = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000)
    reference.fit(design(train), train["label"])
    ours = model.predict_proba(test[features], test["task"])[:, 1]
    np.testing.assert_allclose(ours, reference.predict_proba(design(test))[:, 1], atol=1e-6)
    without = ClusteredLogisticRegression(effective_rows=1.0, floor=1.0, n_bins=4)
    binned = train.assign(hour=model.schema_.encode_features(train[features])[:, 0])
    without.fit(binned[features], binned["label"], binned["task"])
    binned_test = test.assign(hour=model.schema_.encode_features(test[features])[:, 0])
    plain = without.predict_proba(binned_test[features], binned_test["task"])[:, 1]
    assert roc_auc_score(test["label"], ours) > roc_auc_score(test["label"], plain)


def test_a_model_with_numbers_saves_and_loads(tmp_path):
    frame = hours_population(seed=1, n_tasks=4, rows=30)
    features = ["hour", "room"]
    model = ClusteredLogisticRegression(numeric=["hour"], random_state=0)
    model.fit(frame[features], frame["label"], frame["task"])
    path = tmp_path / "hours.cnb"
    model.save(path)
    again = clusterednb.load(path)
    assert again.numeric_.names == ("hour",)
    np.testing.assert_array_equal(
        again.predict_proba(frame[features], frame["task"]),
        model.predict_proba(frame[features], frame["task"]),
    )


def test_saved_numeric_arrays_must_agree_with_the_names():
    from clusterednb.logistic.model_state import restored_numeric

    def record(meta: dict, arrays: dict) -> ModelRecord:
        return ModelRecord(schema=None, task_ids=np.zeros(0), meta=meta, arrays=arrays)

    assert restored_numeric(record({}, {})).names == ()  # a file from before numeric columns
    good = {"numeric_centre": np.array([1.0]), "numeric_scale": np.array([2.0])}
    assert restored_numeric(record({"numeric": ["hour"]}, good)).names == ("hour",)
    with pytest.raises(CNBError, match="numeric_centre"):
        restored_numeric(record({"numeric": ["hour", "day"]}, good))
    with pytest.raises(CNBError, match="not positive"):
        bad_scale = {**good, "numeric_scale": np.array([0.0])}
        restored_numeric(record({"numeric": ["hour"]}, bad_scale))


def test_bad_numeric_settings_and_rows_are_refused_by_name():
    frame = hours_population(seed=2, n_tasks=3, rows=20)
    features = ["hour", "room"]
    for params, word in (
        ({"numeric": ["minute"]}, r"\['minute'\] are not columns"),
        ({"numeric": "hour"}, "list of column names"),
        ({"numeric": ["hour"], "n_bins": 1}, "n_bins"),
        ({"numeric": ["room"]}, r"'room': row 0 holds"),
    ):
        with pytest.raises(DataError, match=word):
            ClusteredLogisticRegression(**params).fit(
                frame[features], frame["label"], frame["task"]
            )
    with pytest.raises(DataError, match="DataFrame"):
        ClusteredLogisticRegression(numeric=["x0"]).fit(
            frame[["hour"]].to_numpy(), frame["label"], frame["task"]
        )
    model = ClusteredLogisticRegression(numeric=["hour"], random_state=0)
    model.fit(frame[features], frame["label"], frame["task"])
    late = frame[features].head(3).astype(object)
    late.loc[late.index[2], "hour"] = "late"
    with pytest.raises(CNBError, match=r"'hour', row 2: value 'late' is not a number"):
        model.predict_proba(late, frame["task"].head(3))
