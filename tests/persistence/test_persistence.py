"""Saving and loading: identical predictions, plain data only, clear errors."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import clusterednb
from clusterednb import CompleteSharingNB, NoSharingNB, discretize
from clusterednb.exceptions import DataWarning, ModelFileError, NotFittedError, SchemaError
from conftest import random_frame

FEATURES = ["f0", "f1", "f2"]


@pytest.mark.parametrize("estimator", [NoSharingNB, CompleteSharingNB])
def test_save_load_gives_identical_predictions(tmp_path, rng, estimator):
    frame = random_frame(rng, n_rows=50, n_tasks=4, n_classes=3, missing=0.1)
    model = estimator(alpha=[1.0, 2.0, 0.5], beta=0.7).fit(
        frame[FEATURES], frame["label"], frame["task"]
    )
    model.save(tmp_path / "model.cnb")
    loaded = clusterednb.load(tmp_path / "model.cnb")
    assert type(loaded) is estimator
    assert loaded.get_params() == model.get_params()
    assert loaded.log_evidence_ == model.log_evidence_
    query_tasks = [*frame["task"].iloc[:10], "unseen"]
    query = frame[FEATURES].iloc[:11]
    np.testing.assert_array_equal(
        loaded.predict_proba(query, query_tasks), model.predict_proba(query, query_tasks)
    )
    loaded.partial_fit(frame[FEATURES], frame["label"], frame["task"])  # still usable


def test_archive_holds_only_json_and_npz(tmp_path, rng):
    frame = random_frame(rng)
    NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"]).save(tmp_path / "m.cnb")
    with zipfile.ZipFile(tmp_path / "m.cnb") as archive:
        assert sorted(archive.namelist()) == ["arrays.npz", "metadata.json"]
        meta = json.loads(archive.read("metadata.json"))
    assert meta["format_version"] == 2 and meta["estimator"] == "NoSharingNB"


def test_discretised_schema_round_trips(tmp_path, rng):
    frame = random_frame(rng, n_rows=40)
    frame["f2"] = rng.normal(size=40)
    model = NoSharingNB(numeric=None)  # numbers as categories: warned, then binned by hand
    with pytest.warns(DataWarning, match="'f2' holds 40 distinct decimal values"):
        model.fit(frame[FEATURES], frame["label"], frame["task"])
    schema = discretize(model.schema_, frame, ["f2"], n_bins=3)
    binned = NoSharingNB(schema=schema).fit(frame[FEATURES], frame["label"], frame["task"])
    binned.save(tmp_path / "b.cnb")
    loaded = clusterednb.load(tmp_path / "b.cnb")
    assert loaded.schema_ == schema
    np.testing.assert_array_equal(
        loaded.predict_proba(frame[FEATURES], frame["task"]),
        binned.predict_proba(frame[FEATURES], frame["task"]),
    )


def _rewrite(path, metadata=None, arrays=None):
    with zipfile.ZipFile(path) as archive:
        meta = json.loads(archive.read("metadata.json"))
        raw = archive.read("arrays.npz")
    if metadata:
        meta.update(metadata)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", json.dumps(meta))
        archive.writestr("arrays.npz", arrays if arrays is not None else raw)


@pytest.fixture
def saved(tmp_path, rng):
    frame = random_frame(rng)
    path = tmp_path / "m.cnb"
    NoSharingNB().fit(frame[FEATURES], frame["label"], frame["task"]).save(path)
    return path


def test_truncated_file(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="not a readable clusterednb model file"):
        clusterednb.load(saved)


def test_unknown_version(saved):
    _rewrite(saved, metadata={"format_version": 99})
    with pytest.raises(ModelFileError, match="format version 99"):
        clusterednb.load(saved)


def test_corrupted_arrays_fail_checksum(saved, tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, label_counts=np.zeros((3, 2), dtype=np.int64))
    _rewrite(saved, arrays=other.read_bytes())
    with pytest.raises(ModelFileError, match="arrays do not match"):
        clusterednb.load(saved)


def test_tampered_array_fails_checksum(saved, tmp_path):
    with zipfile.ZipFile(saved) as archive, archive.open("arrays.npz") as raw:
        arrays = dict(np.load(raw))
    arrays["label_counts"] = arrays["label_counts"] + 1
    other = tmp_path / "other.npz"
    np.savez(other, **arrays)
    _rewrite(saved, arrays=other.read_bytes())
    with pytest.raises(ModelFileError, match="checksum mismatch in array 'label_counts'"):
        clusterednb.load(saved)


def test_not_a_model_and_missing_file(tmp_path):
    (tmp_path / "x.cnb").write_text("hello")
    with pytest.raises(ModelFileError):
        clusterednb.load(tmp_path / "x.cnb")
    with pytest.raises(ModelFileError, match="no such model file"):
        clusterednb.load(tmp_path / "absent.cnb")


def test_unfitted_and_unsaveable(tmp_path, rng):
    with pytest.raises(NotFittedError):
        NoSharingNB().save(tmp_path / "m.cnb")
    frame = random_frame(rng)
    model = NoSharingNB().fit(frame[FEATURES], frame["label"], [(1, 2)] * len(frame))
    with pytest.raises(SchemaError, match="task ids"):
        model.save(tmp_path / "m.cnb")
    assert not (tmp_path / "m.cnb").exists()
