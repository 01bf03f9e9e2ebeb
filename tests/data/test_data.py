"""Schema, data sets, counts and discretisation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusterednb import Counts, FeatureSchema, TaskDataset, discretize
from clusterednb.data.synthetic import make_planted_population
from clusterednb.exceptions import DataError, SchemaError
from clusterednb.stats.counts import sparse_value_counts
from conftest import random_frame


def test_counts_match_a_plain_loop(rng):
    frame = random_frame(rng, n_rows=80, n_tasks=4, n_classes=3, missing=0.2)
    frame.loc[::7, "label"] = np.nan
    data = TaskDataset.from_frame(frame, task="task", label="label")
    schema = data.schema
    counts = Counts.from_codes(
        data.X,
        data.y,
        data.task_index,
        n_tasks=data.n_tasks,
        n_classes=schema.n_classes,
        offsets=schema.offsets,
    )
    labels = np.zeros((data.n_tasks, schema.n_classes), dtype=int)
    values = np.zeros((data.n_tasks, schema.n_classes, schema.n_values_total), dtype=int)
    for x, y, t in zip(data.X, data.y, data.task_index, strict=True):
        if y < 0:
            continue
        labels[t, y] += 1
        for f, code in enumerate(x):
            if code >= 0:
                values[t, y, schema.offsets[f] + code] += 1
    np.testing.assert_array_equal(counts.label_counts, labels)
    np.testing.assert_array_equal(counts.value_counts, values)
    # The sparse counter (rows grouped by task, keys sorted) counts the same cells.
    shuffled = rng.permutation(len(data.y))
    cells = sparse_value_counts(
        data.X[shuffled], data.y[shuffled], data.task_index[shuffled], data.n_tasks, schema
    )
    assert cells.has_sorted_indices
    np.testing.assert_array_equal(cells.toarray(), values.reshape(data.n_tasks, -1))
    both = counts + counts
    np.testing.assert_array_equal((both - counts).value_counts, counts.value_counts)
    np.testing.assert_array_equal(counts.total().label_counts[0], labels.sum(axis=0))
    grouped = counts.group_by(np.array([0, 1, 0, 1]), 2)
    np.testing.assert_array_equal(grouped.take([0]).label_counts, counts.total([0, 2]).label_counts)
    with pytest.raises(DataError, match="negative"):
        counts - both


def test_schema_offsets_and_dict_round_trip():
    schema = FeatureSchema(("a", "b"), (("x", "y", "z"), (True, False)), ("no", "yes"))
    assert schema.offsets.tolist() == [0, 3, 5]
    assert schema.value_feature.tolist() == [0, 0, 0, 1, 1]
    assert FeatureSchema.from_dict(schema.to_dict()) == schema


def test_schema_validation():
    with pytest.raises(SchemaError, match="duplicate feature names"):
        FeatureSchema(("a", "a"), ((1,), (2,)), (0, 1))
    with pytest.raises(SchemaError, match="no categories"):
        FeatureSchema(("a",), ((),), (0, 1))
    with pytest.raises(SchemaError, match="no non-missing value"):
        FeatureSchema.infer(pd.DataFrame({"a": [None, None]}), [0, 1])


def test_integer_categories_and_nan_from_csv(tmp_path):
    frame = pd.DataFrame({"task": [1, 1, 2], "f": [3, np.nan, 5], "label": [0, 1, 1]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    data = TaskDataset.from_csv(tmp_path / "d.csv", task="task", label="label")
    assert data.schema.categories == ((3, 5),)  # integral floats become ints
    assert data.X[:, 0].tolist() == [0, -1, 1]
    assert data.task_ids.tolist() == [1, 2]


def test_parquet_and_csv_give_the_same_data(tmp_path, rng):
    frame = random_frame(rng, missing=0.1)
    frame["f0"] = frame["f0"].map({0: "lo", 1: "mid", 2: "hi"})
    frame.to_csv(tmp_path / "d.csv.gz", index=False)
    frame.astype({"f1": "float64", "f2": "float64"}).to_parquet(tmp_path / "d.parquet")
    from_csv = TaskDataset.from_file(tmp_path / "d.csv.gz", task="task", label="label")
    from_pq = TaskDataset.from_file(tmp_path / "d.parquet", task="task", label="label")
    assert from_csv.schema == from_pq.schema
    np.testing.assert_array_equal(from_csv.X, from_pq.X)
    (tmp_path / "d.json").write_text("{}")
    with pytest.raises(DataError, match=r"unknown file type 'd\.json'"):
        TaskDataset.from_file(tmp_path / "d.json", task="t")


def test_discretize_uses_training_rows_only(rng):
    train = pd.DataFrame({"v": np.arange(10.0), "w": ["a"] * 10})
    test = pd.DataFrame({"v": [1000.0, -50.0, np.nan, 4.5], "w": ["a"] * 4})
    base = FeatureSchema.infer(train, [0, 1] * 5)
    schema = discretize(base, train, ["v"], n_bins=2)
    assert schema.bin_edges["v"] == (4.5,)
    codes = schema.encode_features(test)
    assert codes[:, 0].tolist() == [1, 0, -1, 1]  # outside the range: outer bins; NaN missing
    with pytest.raises(SchemaError, match="row 0: value 'oops' is not a number"):
        schema.encode_features(pd.DataFrame({"v": ["oops"], "w": ["a"]}))
    with pytest.raises(DataError, match="not a feature"):
        discretize(base, train, ["nope"])


def test_planted_population_is_seeded():
    first = make_planted_population(np.random.default_rng(3), group_sizes=(2, 2))
    second = make_planted_population(np.random.default_rng(3), group_sizes=(2, 2))
    pd.testing.assert_frame_equal(first.frame, second.frame)
    assert first.labels_for(["u0", "u3"]).tolist() == [0, 1]
