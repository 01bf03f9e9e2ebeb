"""Model files: files written by earlier releases load, damaged files are refused whole."""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterednb as cnb
from clusterednb.exceptions import ModelFileError

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED = json.loads((DATA / "v1-expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED["expected"]))
def test_a_format_1_file_from_release_0_1_loads_and_predicts_the_same(name):
    """Files saved by commit e4fdb96 (format version 1) give the numbers they gave then."""
    model = cnb.load(DATA / f"v1-{name}.cnb")
    X = np.array(EXPECTED["X"], dtype=object)
    tasks = np.array(EXPECTED["tasks"], dtype=object)
    expected = EXPECTED["expected"][name]
    np.testing.assert_allclose(model.predict_proba(X, tasks), expected["proba"], rtol=1e-12)
    assert model.log_evidence_ == pytest.approx(expected["log_evidence"], rel=1e-12, nan_ok=True)


EXPECTED_V2 = json.loads((DATA / "v2-expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED_V2["expected"]))
def test_a_file_saved_before_the_redesign_loads_and_predicts_the_same(name):
    """Files saved by commit dbabffc, before the package's folders were redesigned (issue 38),
    give the numbers they gave then: a saved model names its estimator, never a module path."""
    model = cnb.load(DATA / f"v2-{name}.cnb")
    X = np.array(EXPECTED_V2["X"], dtype=object)
    tasks = np.array(EXPECTED_V2["tasks"], dtype=object)
    expected = EXPECTED_V2["expected"][name]
    np.testing.assert_allclose(model.predict_proba(X, tasks), expected["proba"], rtol=1e-12)
    log_evidence = getattr(model, "log_evidence_", float("nan"))
    assert log_evidence == pytest.approx(expected["log_evidence"], rel=1e-12, nan_ok=True)


def _parts(path):
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("metadata.json")), archive.read("arrays.npz")


def _write(path, metadata, arrays):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        archive.writestr("arrays.npz", arrays)


@pytest.fixture
def fitted():
    rng = np.random.default_rng(0)
    X = rng.choice(["a", "b"], size=(36, 2)).astype(object)
    y = rng.choice([0, 1], size=36)
    tasks = np.repeat([f"t{i}" for i in range(6)], 6)
    return cnb.ClusteredNB(inference="bhc", progress=False).fit(X, y, tasks), X, tasks


def test_every_single_bit_flip_is_refused_or_harmless(fitted, tmp_path):
    model, X, tasks = fitted
    path = tmp_path / "m.cnb"
    model.save(path)
    data = path.read_bytes()
    expected = model.predict_proba(X, tasks)
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= 1 << (position % 8)
        path.write_bytes(bytes(flipped))
        try:
            loaded = cnb.load(path)
        except ModelFileError:
            continue
        np.testing.assert_array_equal(loaded.predict_proba(X, tasks), expected)


def test_edited_metadata_is_refused(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "m.cnb"
    model.save(path)
    metadata, arrays = _parts(path)
    metadata["task_ids"] = metadata["task_ids"][:2]
    _write(path, metadata, arrays)
    with pytest.raises(ModelFileError, match="checksum mismatch in the metadata"):
        cnb.load(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(task_ids=m["task_ids"][:2]), "expected .* for the 2 task ids"),
        (lambda m: m["params"].update(inference="magic"), "inference must be one of"),
        (lambda m: m["params"].update(handle_unknown="shrug"), "handle_unknown must be"),
        (lambda m: m["schema"]["categories"][0].pop(), "expected"),
    ],
)
def test_a_format_1_file_is_checked_against_its_arrays_and_constraints(tmp_path, edit, message):
    """Format 1 has no metadata checksum: the values themselves must be checked."""
    path = tmp_path / "m.cnb"
    metadata, arrays = _parts(DATA / "v1-clustered-bhc.cnb")
    edit(metadata)
    _write(path, metadata, arrays)
    with pytest.raises(ModelFileError, match=message):
        cnb.load(path)


def test_an_object_array_is_refused_without_suggesting_pickle(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "m.cnb"
    model.save(path)
    metadata, _ = _parts(path)
    buffer = io.BytesIO()
    np.savez(buffer, label_counts=np.array([{"a": 1}], dtype=object), allow_pickle=True)
    _write(path, metadata, buffer.getvalue())
    with pytest.raises(ModelFileError) as error:
        cnb.load(path)
    assert "pickle" not in str(error.value).lower()


def test_concurrent_saves_to_one_path_leave_one_whole_file(fitted, tmp_path):
    model, X, tasks = fitted
    path = tmp_path / "m.cnb"
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: model.save(path), range(40)))
    np.testing.assert_array_equal(
        cnb.load(path).predict_proba(X, tasks), model.predict_proba(X, tasks)
    )
    assert [p.name for p in tmp_path.iterdir()] == ["m.cnb"]


EXPECTED_V3 = json.loads((DATA / "v3-expected.json").read_text())
V3_MODELS = sorted(set(EXPECTED_V3["expected"]) - {"integer-array"})
MAKE_V3 = Path(__file__).resolve().parents[2] / "tools" / "make_v3_model_files.py"


def _v3_model(name):
    """The estimator the file ``v3-NAME.cnb`` holds, unfitted: the table the tool that made
    the files fitted (``tools/make_v3_model_files.v3_models``), with the defaults of then
    (no relevance: ``relevance="auto"`` became the default on 2026-11-27; the bins' prior as
    every weight's: ``bin_precision=4`` became the default on 2026-11-28)."""
    spec = importlib.util.spec_from_file_location("make_v3_model_files", MAKE_V3)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    model = tool.v3_models()[name]
    if "relevance" in model.get_params():
        model.set_params(relevance=False)
    if "bin_precision" in model.get_params():
        model.set_params(bin_precision=1.0)
    return model


@pytest.mark.parametrize("name", V3_MODELS)
def test_a_file_saved_before_the_second_step_loads_and_predicts_the_same(name):
    """Files saved by commit 2510d9c (tools/make_v3_model_files.py), before the estimators
    stood on one base and the engines on one interface (issue 48), give the same numbers."""
    model = cnb.load(DATA / f"v3-{name}.cnb")
    X = pd.DataFrame(EXPECTED_V3["X"])
    expected = EXPECTED_V3["expected"][name]
    np.testing.assert_allclose(
        model.predict_proba(X, EXPECTED_V3["tasks"]), expected["proba"], rtol=1e-12
    )
    log_evidence = getattr(model, "log_evidence_", float("nan"))
    assert log_evidence == pytest.approx(expected["log_evidence"], rel=1e-12, nan_ok=True)


@pytest.mark.parametrize("name", V3_MODELS)
def test_fitting_today_gives_the_numbers_of_commit_2510d9c(name, numbers_by_bins):
    """The same rows and seed fitted by today's code give what 2510d9c's fit gave. The
    samplers (Gibbs, and the variational engine's collapsed finish) mix their samples' joints
    since 2026-11-28, where 2510d9c averaged each sample's ``P(y | x)``: read as then, their
    fit is the same to the last digits, and read as now it moves (by 5e-4 here). The
    clustered regression's partition score reads ``hour`` by its bins, as then
    (``numbers_by_bins``; by its slope since the sixth session of 2026-11-28)."""
    train = EXPECTED_V3["train"]
    frame = pd.DataFrame({"colour": train["colour"], "hour": train["hour"]})
    model = _v3_model(name).fit(frame, train["y"], train["tasks"])
    expected = EXPECTED_V3["expected"][name]
    if name in ("clustered-gibbs", "clustered-variational"):
        joint = model.predict_proba(pd.DataFrame(EXPECTED_V3["X"]), EXPECTED_V3["tasks"])
        assert not np.allclose(joint, expected["proba"], rtol=1e-6)
        model.posterior_ = replace(model.posterior_, mix_joint=False)
    proba = model.predict_proba(pd.DataFrame(EXPECTED_V3["X"]), EXPECTED_V3["tasks"])
    np.testing.assert_allclose(proba, expected["proba"], rtol=1e-9, atol=1e-12)


def test_an_integer_array_fits_as_it_did_at_commit_2510d9c():
    """An integer-coded array (read without building a DataFrame when no column is a number)
    gives the numbers it gave when it was read through one."""
    codes = EXPECTED_V3["codes"]
    X, y, tasks = np.array(codes["X"]), np.array(codes["y"]), np.array(codes["tasks"])
    model = cnb.CompleteSharingNB().fit(X, y, tasks)
    expected = EXPECTED_V3["expected"]["integer-array"]
    np.testing.assert_allclose(model.predict_proba(X[:6], tasks[:6]), expected["proba"], rtol=1e-12)
    assert model.log_evidence_ == pytest.approx(expected["log_evidence"], rel=1e-12)
    assert model.feature_names_in_.tolist() == [f"x{j}" for j in range(5)]
