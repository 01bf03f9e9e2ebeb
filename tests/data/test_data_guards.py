"""Data that would fit badly get a clear answer: refused, or warned about, by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clusterednb as cnb
from clusterednb.cli import main
from clusterednb.data import guards
from clusterednb.exceptions import DataError, DataWarning


def frame_with(rng: np.random.Generator, n_rows: int = 120) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user": rng.choice(["ann", "bob", "cy"], size=n_rows),
            "colour": rng.choice(["red", "blue"], size=n_rows),
            "size": rng.normal(size=n_rows),
            "label": rng.choice(["no", "yes"], size=n_rows),
        }
    )


def test_a_count_table_over_the_limit_is_refused_naming_the_widest_column(monkeypatch):
    rng = np.random.default_rng(0)
    frame = frame_with(rng)
    frame["ticket"] = np.arange(len(frame))
    monkeypatch.setattr(guards, "MAX_COUNT_BYTES", 3 * 2 * 100 * 8)
    with (
        pytest.raises(DataError, match=r"column 'size' has 120 distinct values"),
        pytest.warns(DataWarning, match="decimal"),
    ):
        # numeric=None: numbers read as categories, one per distinct value (not the default)
        cnb.NoSharingNB(numeric=None).fit(frame[["colour", "size"]], frame["label"], frame["user"])


def test_identifier_and_decimal_columns_are_warned_about():
    rng = np.random.default_rng(1)
    frame = frame_with(rng)
    frame["ticket"] = [f"T{i}" for i in range(len(frame))]
    with pytest.warns(DataWarning) as caught:
        cnb.NoSharingNB(numeric=None).fit(
            frame[["colour", "size", "ticket"]], frame["label"], frame["user"]
        )
    messages = [str(w.message) for w in caught]
    assert any("'ticket' has a distinct value in nearly every row" in m for m in messages)
    assert any("'size' holds" in m and "--bins" in m for m in messages)


def test_cnb_fit_bins_decimal_columns_and_predict_names_unseen_tasks(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = frame_with(rng)
    frame.insert(0, "row", [f"r{i}" for i in range(len(frame))])
    data, model_path, out = tmp_path / "d.csv", tmp_path / "m.cnb", tmp_path / "p.csv"
    frame.to_csv(data, index=False)
    fit = ["fit", str(data), "--task", "user", "--label", "label", "--features", "colour", "size"]
    assert main([*fit, "-o", str(model_path)]) == 0  # numbers are numbers: binned by default
    assert "decimal" not in capsys.readouterr().err
    assert len(cnb.load(model_path).schema_.categories[1]) <= 10
    assert main([*fit, "--bins", "4", "-o", str(model_path)]) == 0
    assert "decimal" not in capsys.readouterr().err
    model = cnb.load(model_path)
    assert len(model.schema_.categories[1]) == 4 and "size" in model.schema_.bin_edges
    for kind in ("cnb-logistic", "cnb-lgbm"):  # the logistic kinds read the raw numbers too
        path = tmp_path / f"{kind}.cnb"
        assert main([*fit, "--bins", "4", "--kind", kind, "-o", str(path)]) == 0
        clustering = getattr(cnb.load(path), "clustering_", None) or cnb.load(path)
        assert clustering.numeric_.names == ("size",) and clustering.n_bins == 4
    query = frame.head(5).assign(user=["ann", "nobody", "nobody", "bob", "someone"])
    query.to_csv(data, index=False)
    assert (
        main(
            ["predict", str(model_path), str(data), "--task", "user", "--id", "row", "-o", str(out)]
        )
        == 0
    )
    assert "3 rows of 2 tasks the model never saw ('nobody', 'someone')" in capsys.readouterr().err
    written = pd.read_csv(out)
    assert list(written.columns[:2]) == ["row", "user"]
    assert written["row"].tolist() == [f"r{i}" for i in range(5)]


def test_messages_show_values_not_numpy_reprs():
    X = np.array([["a"], ["b"], ["a"], ["b"]])
    y, tasks = np.array(["accept", "decline", "accept", "decline"]), np.array(["u", "u", "v", "v"])
    model = cnb.NoSharingNB().fit(X, y, tasks)
    with pytest.warns(cnb.UnknownCategoryWarning) as caught:
        model.predict(np.array([["zzz"]]), np.array(["u"]))
    messages = [str(w.message) for w in caught]
    with pytest.raises(cnb.exceptions.SchemaError) as error:
        cnb.NoSharingNB(schema=model.schema_).fit(X, np.array(["accept", "maybe", "a", "b"]), tasks)
    messages.append(str(error.value))
    assert messages and not any("np." in m for m in messages), messages


def test_cnb_fit_notes_a_numeric_identifier_and_refuses_a_measurement_as_the_label(
    tmp_path, capsys
):
    from clusterednb.cli import main

    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"user": rng.integers(0, 10, n), "id": np.arange(n),
                          "x1": rng.normal(size=n), "x2": rng.normal(size=n)})  # fmt: skip
    frame["y"] = (frame["x1"] + rng.normal(size=n) > 0).astype(int)
    data = tmp_path / "rows.csv"
    frame.to_csv(data, index=False)
    model = str(tmp_path / "m.cnb")
    for kind in ("cnb-logistic", "cnb-bhc"):
        assert main(["fit", str(data), "--task", "user", "--label", "y", "--kind", kind,
                     "-o", model]) == 0  # fmt: skip
        assert "column 'id' has a distinct whole number in nearly every row" in (
            capsys.readouterr().err
        )
    assert main(["fit", str(data), "--task", "user", "--label", "x1", "-o", model]) == 1
    err = capsys.readouterr().err
    assert "the label column holds 300 distinct decimal values" in err
