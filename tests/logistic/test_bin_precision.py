"""The prior on a numeric column's bins (``bin_precision``): the regressions read a number raw
and as its bins, and the bins' weights are held closer to 0 than the slope's."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.exceptions import CNBError
from clusterednb.persistence import model_file

FIXED = {"effective_rows": 10.0, "floor": 0.2, "relevance": False}


def numeric_rows(seed: int = 0):
    """Twelve tasks of 30 rows: a label that follows one number's slope, and a colour."""
    rng = np.random.default_rng(seed)
    tasks = np.repeat([f"u{t}" for t in range(12)], 30)
    number = rng.normal(size=tasks.size)
    colour = rng.choice(["red", "blue"], tasks.size)
    y = (rng.random(tasks.size) < expit(1.5 * number + 0.5 * (colour == "red"))).astype(int)
    return pd.DataFrame({"number": number, "colour": colour}), y, tasks


def bin_weights(model: ClusteredLogisticRegression) -> np.ndarray:
    """The regressions' weights on the number's bins, shape (K + 1, n_bins)."""
    position = list(model.schema_.feature_names).index("number")
    start, stop = model.schema_.offsets[position], model.schema_.offsets[position + 1]
    return model.clusters_.coef[:, start:stop]


def test_a_tighter_prior_holds_the_bins_closer_to_zero_and_not_the_colour():
    X, y, tasks = numeric_rows()
    loose, tight = (
        ClusteredLogisticRegression(bin_precision=p, random_state=0, **FIXED).fit(X, y, tasks)
        for p in (1.0, 16.0)
    )
    assert np.abs(bin_weights(tight)).sum() < 0.5 * np.abs(bin_weights(loose)).sum()
    colour = list(loose.schema_.feature_names).index("colour")
    values = slice(loose.schema_.offsets[colour], loose.schema_.offsets[colour + 1])
    np.testing.assert_allclose(
        tight.clusters_.coef[:, values], loose.clusters_.coef[:, values], atol=0.1
    )


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), True, "4"])
def test_a_bin_precision_that_is_not_a_positive_finite_number_is_refused_by_name(value):
    X, y, tasks = numeric_rows()
    with pytest.raises(CNBError, match="bin_precision must be"):
        ClusteredLogisticRegression(bin_precision=value, **FIXED).fit(X, y, tasks)


def test_the_file_keeps_the_prior_and_a_file_from_before_it_reads_as_one(tmp_path):
    X, y, tasks = numeric_rows()
    model = ClusteredLogisticRegression(bin_precision=3.0, random_state=0, **FIXED)
    path = tmp_path / "model.cnb"
    model.fit(X, y, tasks).save(path)
    assert clusterednb.load(path).bin_precision == 3.0
    old = tmp_path / "old.cnb"
    with zipfile.ZipFile(path) as archive:
        metadata = json.loads(archive.read("metadata.json"))
        arrays = archive.read("arrays.npz")
    del metadata["params"]["bin_precision"], metadata["state"]["bin_precision"]
    metadata["metadata_checksum"] = model_file._metadata_checksum(metadata)
    with zipfile.ZipFile(old, "w") as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        archive.writestr("arrays.npz", arrays)
    loaded = clusterednb.load(old)
    assert loaded.bin_precision_ == 1.0  # what its regressions were fitted under
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def curve_rows(seed: int = 0):
    """Twelve tasks of 40 rows whose label is 1 where the number is near 0: a bump that no
    slope draws and the number's middle bins do."""
    rng = np.random.default_rng(seed)
    tasks = np.repeat([f"u{t}" for t in range(12)], 40)
    number = rng.normal(size=tasks.size)
    y = (rng.random(tasks.size) < expit(8.0 * (0.7 - np.abs(number)))).astype(int)
    return pd.DataFrame({"number": number}), y, tasks


def walked(model: ClusteredLogisticRegression) -> pd.DataFrame:
    """The tuning's rows of the bins' walk (a precision other than the walk's 4)."""
    table = model.tuning_
    return table[table["bin_precision"].notna() & (table["bin_precision"] != 4.0)]


def test_auto_holds_a_slope_s_bins_tighter_and_frees_a_bump_s():
    slope = ClusteredLogisticRegression(random_state=0).fit(*numeric_rows())
    bump = ClusteredLogisticRegression(random_state=0).fit(*curve_rows())
    assert slope.bin_precision_ > 4.0, slope.tuning_
    assert bump.bin_precision_ < 4.0, bump.tuning_
    for model in (slope, bump):
        table = model.tuning_
        at_best = table[
            (table["effective_rows"] == model.effective_rows_) & (table["floor"] == model.floor_)
        ]
        chosen = at_best[at_best["bin_precision"] == model.bin_precision_]
        assert chosen["log_loss"].min() == at_best["log_loss"].min()  # the held rows' best
        assert model.validation_log_loss_ == pytest.approx(chosen["log_loss"].min(), rel=1e-12)
        assert len(walked(model)) >= 1


def test_auto_without_numbers_walks_nothing_and_keeps_four():
    X, y, tasks = numeric_rows()
    model = ClusteredLogisticRegression(random_state=0).fit(X[["colour"]], y, tasks)
    assert model.bin_precision_ == 4.0
    assert walked(model).empty


def test_settings_given_keep_four_and_the_chosen_prior_is_saved(tmp_path):
    X, y, tasks = numeric_rows()
    given = ClusteredLogisticRegression(random_state=0, **FIXED).fit(X, y, tasks)
    assert given.bin_precision_ == 4.0 and given.bin_precision == "auto"
    model = ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    path = tmp_path / "model.cnb"
    model.save(path)
    loaded = clusterednb.load(path)
    assert loaded.bin_precision_ == model.bin_precision_
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
    assert model.fit_summary()["bin_precision"] == model.bin_precision_
