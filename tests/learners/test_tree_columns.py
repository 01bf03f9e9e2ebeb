"""Which left-out columns the trees inside the clusters still read (learners/tree_columns.py):
those whose cells crossed with a kept column earn the label evidence."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

import clusterednb
from clusterednb import ClusteredBoosting
from clusterednb.exceptions import CNBError
from clusterednb.learners.tree_columns import restored_paired
from clusterednb.logistic.clustering.column_evidence import LabelledRows, pairing_columns
from model_helpers import same_rows_population

pytest.importorskip("lightgbm")


def _bent_signal_rows(seed: int) -> tuple[LabelledRows, np.ndarray]:
    """Four tasks; the label bends with a number (high in its middle bins, read by its
    slope), and a categorical column drawn at random."""
    rng = np.random.default_rng(seed)
    number = rng.normal(size=400)
    bins = np.digitize(number, [-1.0, -0.3, 0.3, 1.0])
    noise = rng.integers(0, 3, 400)
    y = rng.random(400) < expit(2.5 - 2.0 * number**2)
    codes = np.column_stack([bins, noise])
    rows = LabelledRows(
        codes, y.astype(np.float64), np.arange(0, 401, 100), np.array([0, 5, 8]),
        number[:, None], np.array([0]),
    )  # fmt: skip
    return rows, np.zeros(4, dtype=int)


@pytest.mark.parametrize("seed", range(3))
def test_a_noise_column_is_not_credited_with_a_kept_numbers_bend(seed):
    """Crossed with a number whose effect bends, a noise column's cells would earn what the
    number's own bins earn; the bar of the kept columns with those bins again holds it out."""
    rows, partition = _bent_signal_rows(seed)
    kept, left = np.array([True, False]), np.array([False, True])
    assert not pairing_columns(rows, kept, left, partition, 1.0).any()


def test_nothing_to_pair_is_nothing_paired():
    rows, partition = _bent_signal_rows(0)
    none = np.zeros(2, dtype=bool)
    assert pairing_columns(rows, np.array([True, False]), none, partition, 1.0).tolist() == [
        False,
        False,
    ]


def test_six_rows_a_user_keep_the_first_fits_noise_numbers_out_of_the_trees(tmp_path):
    """Six rows a user, 20 noise columns, seed 1: the first fit read the ten noise numbers,
    the evidence left them out, and none pairs with a signal, so the booster's trees read
    x0..x3 alone (before 2026-12-02 they read all ten). A file keeps that; a file without
    ``paired_columns`` (older) reads every column the first fit read, as then."""
    frame = same_rows_population(seed=1, n_noise=20, n_rows=36, n_train=6)
    features = [c for c in frame.columns if c not in ("task", "y", "train")]
    train = frame[frame.train]
    model = ClusteredBoosting(random_state=1).fit(train[features], train.y, train.task)
    clustering = model.clustering_
    first_read = set(features) - set(clustering.columns_first_left_out_)
    assert {f"noise{j}" for j in range(0, 20, 2)} <= first_read
    assert model.paired_columns_ == []
    assert model.booster_.feature_name() == ["x0", "x1", "x2", "x3"]
    model.save(tmp_path / "boosted.cnb")
    loaded = clusterednb.load(tmp_path / "boosted.cnb")
    assert loaded.paired_columns_ == []
    np.testing.assert_array_equal(
        loaded.predict_proba(train[features], train.task),
        model.predict_proba(train[features], train.task),
    )
    loaded.paired_columns_ = None  # as a file written before the pairing was judged
    older = loaded._frame(clustering, model.rows_[0][:3], model.rows_[1][:3])
    both_left = set(clustering.columns_left_out_) & set(clustering.columns_first_left_out_)
    assert list(older.columns) == [name for name in features if name not in both_left]
    assert len(older.columns) > 4


@pytest.mark.parametrize("saved", [["a", 3], "a", {"a": 1}])
def test_a_files_paired_columns_must_be_names(saved):
    with pytest.raises(CNBError, match="paired_columns must be a list"):
        restored_paired(saved)
