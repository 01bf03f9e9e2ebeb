"""Per-task counts kept sparse: the same numbers as dense counts, from the rows to the engines,
through chunks, schema growth, transductive selection and the model file."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import clusterednb as cnb
from clusterednb.data import guards
from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError, ModelFileError
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts


def _random_counts(rng, n_groups=7, n_classes=3, n_values=5):
    labels = rng.integers(0, 4, size=(n_groups, n_classes))
    values = rng.integers(0, 3, size=(n_groups, n_classes, n_values)) * (
        rng.random((n_groups, n_classes, n_values)) < 0.4
    )
    return Counts(labels.astype(np.int64), values.astype(np.int64))


def _same(a: Counts, b: Counts) -> bool:
    return np.array_equal(a.label_counts, b.label_counts) and np.array_equal(
        a.value_counts, b.value_counts
    )


@pytest.mark.parametrize("seed", range(5))
def test_every_operation_matches_the_dense_counts(seed):
    rng = np.random.default_rng(seed)
    dense = _random_counts(rng)
    kept = SparseCounts.from_dense(dense)
    assert _same(kept.dense(), dense)
    index = rng.permutation(dense.n_groups)[:4]
    assert _same(kept.take(index), dense.take(index))
    assert _same(kept.total(index), dense.total(index))
    assert _same(kept.total(), dense.total())
    assignment = rng.integers(0, 3, size=dense.n_groups)
    assert _same(kept.group_by(assignment, 3), dense.group_by(assignment, 3))
    class_map, value_map = np.array([0, 2, 3]), np.array([1, 2, 4, 5, 7])
    assert _same(
        kept.remap(4, 8, class_map, value_map).dense(), dense.remap(4, 8, class_map, value_map)
    )
    assert _same(kept.pad_groups(10).dense(), dense.pad_groups(10))
    more = _random_counts(rng, n_groups=3)
    position = np.array([9, 0, 4])
    expected = dense.pad_groups(10)
    labels, values = expected.label_counts.copy(), expected.value_counts.copy()
    labels[position] += more.label_counts
    values[position] += more.value_counts
    assert _same(kept.pad_groups(10).add_at(position, more).dense(), Counts(labels, values))
    assert _same(
        kept.pad_groups(10).add_at(position, SparseCounts.from_dense(more)).dense(),
        Counts(labels, values),
    )


def test_counting_rows_matches_the_dense_count():
    rng = np.random.default_rng(3)
    schema = FeatureSchema(("a", "b", "c"), ((0, 1, 2), (0, 1), (0, 1, 2, 3)), ("n", "y", "m"))
    X = np.column_stack([rng.integers(-1, k, size=200) for k in (3, 2, 4)])
    y, task = rng.integers(-1, 3, size=200), rng.integers(0, 17, size=200)
    kept = SparseCounts.from_codes(X, y, task, 17, schema)
    dense = Counts.from_codes(X, y, task, n_tasks=17, n_classes=3, offsets=schema.offsets)
    assert _same(kept.dense(), dense)


def test_inconsistent_shapes_are_refused():
    with pytest.raises(cnb.DataError, match="inconsistent count shapes"):
        SparseCounts(np.zeros((2, 2), int), sparse.csr_matrix((3, 4), dtype=np.int64))
    with pytest.raises(cnb.DataError, match="do not split into 3 classes"):
        SparseCounts(np.zeros((2, 3), int), sparse.csr_matrix((2, 4), dtype=np.int64))


def _population(rng, n_tasks=24, rows=6):
    group = np.repeat(rng.integers(0, 3, size=n_tasks), rows)
    tasks = np.repeat([f"u{i}" for i in range(n_tasks)], rows)
    X = np.column_stack(
        [np.where(rng.random(group.size) < 0.8, group, rng.integers(0, 3, group.size))] * 2
    ).astype(object)
    y = np.where(rng.random(group.size) < 0.85, group % 2, 1 - group % 2)
    return pd.DataFrame(X, columns=["f", "g"]), y, tasks


@pytest.fixture
def always_sparse(monkeypatch):
    """Keep counts sparse from the first task on (the threshold is a module setting)."""
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)


def _fit_both(monkeypatch, make, X, y, tasks):
    dense = make().fit(X, y, tasks)
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    kept = make().fit(X, y, tasks)
    monkeypatch.undo()
    return dense, kept


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_a_sparse_fit_gives_the_dense_fit_numbers(monkeypatch, inference):
    X, y, tasks = _population(np.random.default_rng(0))

    def make():
        return cnb.ClusteredNB(
            inference=inference, n_sweeps=40, burn_in=10, random_state=0, progress=False
        )

    dense, kept = _fit_both(monkeypatch, make, X, y, tasks)
    assert isinstance(dense.counts_, Counts) and isinstance(kept.counts_, SparseCounts)
    assert _same(kept.counts_.dense(), dense.counts_)
    np.testing.assert_array_equal(kept.partition_, dense.partition_)
    np.testing.assert_allclose(kept.predict_proba(X, tasks), dense.predict_proba(X, tasks))
    assert kept.log_evidence_ == pytest.approx(dense.log_evidence_, rel=1e-12)


def test_sparse_gibbs_with_unlabelled_rows_and_selection_match_dense(monkeypatch):
    X, y, tasks = _population(np.random.default_rng(1))
    y = y.astype(float)
    y[np.random.default_rng(2).random(y.size) < 0.3] = np.nan
    for options in ({"semi_supervised": "gibbs"}, {"transductive": "select"}):

        def make(options=options):
            return cnb.ClusteredNB(
                n_sweeps=30, burn_in=5, random_state=1, progress=False, **options
            )

        dense, kept = _fit_both(monkeypatch, make, X, y, tasks)
        assert isinstance(kept.counts_, SparseCounts)
        np.testing.assert_allclose(kept.predict_proba(X, tasks), dense.predict_proba(X, tasks))


def test_chunks_with_a_growing_schema_add_up_as_dense_chunks_do(monkeypatch):
    X, y, tasks = _population(np.random.default_rng(4))
    X.loc[100:, "f"] = "new"  # a category only the second chunk has, and new tasks

    def chunked():
        model = cnb.ClusteredNB(inference="variational", random_state=0, progress=False)
        model.partial_fit(X[:100], y[:100], tasks[:100])
        return model.partial_fit(X[100:], y[100:], tasks[100:])

    dense = chunked()
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    kept = chunked()
    assert isinstance(kept.counts_, SparseCounts)
    assert kept.schema_ == dense.schema_ and "new" in kept.schema_.categories[0]
    np.testing.assert_array_equal(kept.task_ids_, dense.task_ids_)
    assert _same(kept.counts_.dense(), dense.counts_)
    np.testing.assert_allclose(kept.predict_proba(X, tasks), dense.predict_proba(X, tasks))


def test_a_sparse_model_file_is_format_3_and_predicts_the_same(always_sparse, tmp_path):
    X, y, tasks = _population(np.random.default_rng(5))
    model = cnb.ClusteredNB(n_sweeps=20, burn_in=5, random_state=0, progress=False)
    model.fit(X, y, tasks)
    path = tmp_path / "sparse.cnb"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        metadata = json.loads(archive.read("metadata.json"))
        names = set(np.load(archive.open("arrays.npz")).files)
    assert metadata["format_version"] == 3
    assert "value_counts" not in names and "value_cells_indptr" in names
    loaded = cnb.load(path)
    assert isinstance(loaded.counts_, SparseCounts)
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
    assert (loaded.counts_.cells != model.counts_.cells).nnz == 0


def test_damaged_sparse_counts_in_a_file_are_refused(always_sparse, tmp_path):
    X, y, tasks = _population(np.random.default_rng(6))
    model = cnb.ClusteredNB(inference="variational", random_state=0, progress=False)
    model.fit(X, y, tasks)
    model.counts_ = SparseCounts(
        model.counts_.label_counts,
        sparse.csr_matrix(
            (-model.counts_.cells.data, model.counts_.cells.indices, model.counts_.cells.indptr),
            shape=model.counts_.cells.shape,
        ),
    )
    path = tmp_path / "bad.cnb"
    model.save(path)  # checksums are of what was saved: only the content check can refuse it
    with pytest.raises(ModelFileError, match="sparse value counts do not fit"):
        cnb.load(path)


def test_an_engine_that_needs_dense_counts_says_so(always_sparse):
    X, y, tasks = _population(np.random.default_rng(7))
    model = cnb.ClusteredNB(inference="variational", random_state=0, progress=False)
    model.fit(X, y, tasks)
    model.set_params(inference="bhc")
    with pytest.raises(CNBError, match=r"counts sparse .* inference='bhc' cannot read"):
        model.partial_fit(X[:6], y[:6], tasks[:6])


def test_a_table_too_large_to_count_densely_is_fitted_sparse():
    """300 000 tasks × 2 classes × 500 values would be a 2.4 GB dense table, over the 2 GiB
    that a dense fit refuses: the Gibbs engine fits it from sparse counts instead."""
    rng = np.random.default_rng(8)
    n_tasks = 300_000
    codes = rng.integers(0, 500, size=n_tasks)
    codes[:500] = np.arange(500)  # every value seen
    X = codes.reshape(-1, 1)
    y = rng.integers(0, 2, size=n_tasks)
    tasks = np.arange(n_tasks)
    with pytest.raises(cnb.DataError, match=r"more than the 2\.1 GB allowed"):
        cnb.NoSharingNB(numeric=None).fit(X, y, tasks)  # 500 integer values as categories
    model = cnb.ClusteredNB(n_sweeps=2, burn_in=1, split_merge=False, random_state=0, numeric=None)
    model.set_params(progress=False).fit(X, y, tasks)
    assert isinstance(model.counts_, SparseCounts)
    assert model.counts_.cells.nnz == n_tasks
    proba = model.predict_proba(X[:3], tasks[:3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
