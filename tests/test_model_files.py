"""Model files: files written by earlier releases load, damaged files are refused whole."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import clusterednb as cnb

DATA = Path(__file__).parent / "data"
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
