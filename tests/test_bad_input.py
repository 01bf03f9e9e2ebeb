"""Bad input gets a clear error naming the column, row or value."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from clusterednb import NoSharingNB, TaskDataset, UnknownCategoryWarning
from clusterednb.exceptions import DataError, SchemaError
from conftest import random_frame

FEATURES = ["f0", "f1", "f2"]


def test_wrong_column_names():
    frame = pd.DataFrame({"user": ["a"], "x": [1], "y": [0]})
    with pytest.raises(DataError, match=r"task column\(s\) \['person'\] not found"):
        TaskDataset.from_frame(frame, task="person", label="y")
    with pytest.raises(DataError, match=r"\['lbl'\] not found"):
        TaskDataset.from_frame(frame, task="user", label="lbl")
    with pytest.raises(DataError, match=r"feature column\(s\) \['z'\]"):
        TaskDataset.from_frame(frame, task="user", label="y", features=["z"])


def test_label_column_with_one_class(rng):
    frame = random_frame(rng).assign(label=1)
    with pytest.raises(SchemaError, match=r"only one class \[1\]"):
        NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])
    model = NoSharingNB(classes=[0, 1]).fit(frame[FEATURES], frame["label"], frame["task"])
    assert model.classes_.tolist() == [0, 1]


def test_nan_labels(rng):
    frame = random_frame(rng).assign(label=np.nan)
    with pytest.raises(SchemaError, match="every label is missing"):
        NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])


def test_unknown_label_against_given_classes(rng):
    frame = random_frame(rng)
    frame.loc[7, "label"] = 5
    with pytest.raises(SchemaError, match=r"label value 5 in row 7 is not one of the classes"):
        TaskDataset.from_frame(
            frame,
            task="task",
            label="label",
            classes=None,
            schema=NoSharingNB()
            .fit(frame[FEATURES].iloc[:5], frame["label"].iloc[:5], frame["task"].iloc[:5])
            .schema_,
        )


def test_empty_data():
    empty = pd.DataFrame({"task": [], "f0": [], "label": []})
    with pytest.raises(DataError, match="no rows"):
        NoSharingNB().fit(empty[["f0"]], empty["label"], empty["task"])
    with pytest.raises(DataError, match="no rows"):
        TaskDataset.from_frame(empty, task="task", label="label")


def test_missing_task_id_names_the_row(rng):
    frame = random_frame(rng)
    frame.loc[3, "task"] = None
    with pytest.raises(DataError, match="task id is missing in row 3"):
        NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])


def test_shape_mismatches(rng):
    frame = random_frame(rng)
    with pytest.raises(DataError, match="tasks has shape"):
        NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"].iloc[:-1])
    with pytest.raises(DataError, match="2-D"):
        NoSharingNB().fit(np.array([1, 2, 3]), [0, 1, 0], ["a", "a", "b"])


def test_mismatched_schema_at_predict_time(rng):
    frame = random_frame(rng)
    model = NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])
    with pytest.raises(SchemaError, match=r"missing feature columns \['f2'\]"):
        model.predict_proba(frame[["f0", "f1"]], frame["task"])
    with pytest.raises(SchemaError, match=r"unexpected columns \['extra'\]"):
        model.predict_proba(frame[FEATURES].assign(extra=1), frame["task"])
    with pytest.raises(DataError, match="3 features"):
        model.predict_proba(np.zeros((2, 4), dtype=int), ["t0", "t1"])


def test_unseen_category_is_missing_counted_and_warned(rng):
    frame = random_frame(rng)
    model = NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"])
    query = frame[FEATURES].iloc[:4].copy()
    as_missing = query.copy()
    query.iloc[:2, 1] = "never-seen"
    as_missing.iloc[:2, 1] = None
    with pytest.warns(UnknownCategoryWarning, match=r"'f1': 2 values such as \['never-seen'\]"):
        proba = model.predict_proba(query, frame["task"].iloc[:4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = model.predict_proba(as_missing, frame["task"].iloc[:4])
    np.testing.assert_allclose(proba, expected)
    strict = NoSharingNB(handle_unknown="error").fit(frame[FEATURES], frame["label"], frame["task"])
    with pytest.raises(SchemaError, match=r"column 'f1', row 0: value 'never-seen'"):
        strict.predict_proba(query, frame["task"].iloc[:4])


def test_bad_hyperparameters(rng):
    frame = random_frame(rng)
    with pytest.raises(ValueError, match="beta must be positive"):
        NoSharingNB(beta=-1).fit(frame[FEATURES], frame["label"], frame["task"])
    with pytest.raises(SchemaError, match="handle_unknown"):
        NoSharingNB(handle_unknown="drop").fit(frame[FEATURES], frame["label"], frame["task"])


def test_input_frame_is_not_modified(rng):
    frame = random_frame(rng)
    X = frame[FEATURES].copy()
    X.columns = [0, 1, 2]
    before = X.copy()
    NoSharingNB().fit(X, frame["label"], frame["task"])
    pd.testing.assert_frame_equal(X, before)
