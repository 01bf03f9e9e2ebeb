"""The tree baselines of the protocols: what they read, that they use the task when told to,
that a missing LightGBM is named, and that ``cnb evaluate`` runs them."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from clusterednb.cli import main
from clusterednb.evaluation.models.registry import fit_predict
from clusterednb.evaluation.models.trees import TREE_MODELS, tree_inputs
from clusterednb.exceptions import MissingExtraError


def opposite_tasks(rng: np.random.Generator, n_rows: int) -> pd.DataFrame:
    """Two groups of tasks whose label follows one number in opposite directions."""
    tasks = rng.integers(0, 6, n_rows)
    x = rng.normal(size=n_rows)
    sign = np.where(tasks < 3, 1.0, -1.0)
    label = (rng.random(n_rows) < 1 / (1 + np.exp(-3 * sign * x))).astype(int)
    return pd.DataFrame(
        {"task": [f"t{t}" for t in tasks], "label": label, "x": pd.cut(x, 5).astype(str),
         "x__raw": x, "noise": rng.choice(["a", "b", "c"], n_rows)}
    )  # fmt: skip


def test_inputs_are_raw_numbers_and_categories_coded_on_the_training_rows():
    train = pd.DataFrame({"task": ["a", "b"], "label": [1, 0], "f": ["x", None], "g": ["1", "2"],
                          "g__raw": [1.5, 2.5]})  # fmt: skip
    test = pd.DataFrame({"task": ["b", "z"], "f": ["x", "y"], "g": ["1", "1"],
                         "g__raw": [9.0, np.nan]})  # fmt: skip
    X, X_test, categorical = tree_inputs(train, test, ["f", "g"], with_task=False)
    assert categorical == ["f"] and list(X.columns) == ["f", "g"]
    assert np.isnan(X["f"][1]) and X_test["f"][0] == 0 and np.isnan(X_test["f"][1])
    assert X_test["g"].tolist()[0] == 9.0  # the raw number, not its bin


@pytest.mark.parametrize("family", ["hgb", "lgbm"])
def test_the_task_id_lets_the_trees_tell_opposite_tasks_apart(family):
    pytest.importorskip("lightgbm") if family == "lgbm" else None
    rng = np.random.default_rng(0)
    train, test = opposite_tasks(rng, 1200), opposite_tasks(rng, 600)
    auc = {
        name: roc_auc_score(test["label"], fit_predict(name, train, test, ["x", "noise"], 0))
        for name in (f"{family}-pooled", f"{family}-task")
    }
    assert auc[f"{family}-task"] > 0.8 > auc[f"{family}-pooled"] + 0.1, auc


def test_one_class_gives_its_frequency():
    train = pd.DataFrame({"task": ["a", "a"], "label": [1, 1], "f": ["x", "y"]})
    test = pd.DataFrame({"task": ["a"], "f": ["x"]})
    for name in TREE_MODELS:
        assert fit_predict(name, train, test, ["f"], 0).tolist() == [0.75]


def test_a_missing_lightgbm_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    rng = np.random.default_rng(1)
    train, test = opposite_tasks(rng, 50), opposite_tasks(rng, 10)
    with pytest.raises(MissingExtraError, match=r"optional extra \[trees\]"):
        fit_predict("lgbm-pooled", train, test, ["x"], 0)


def test_cnb_evaluate_runs_the_trees(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = opposite_tasks(rng, 400).drop(columns=["x__raw"])
    data = tmp_path / "tasks.csv"
    frame.to_csv(data, index=False)
    kinds = "hgb-pooled,hgb-task,lr-pooled"
    args = ["evaluate", str(data), "--task", "task", "--label", "label", "--kind", kinds,
            "--k", "4,16", "--repeats", "1", "--targets", "3", "-o", str(tmp_path / "out"),
            "--json"]  # fmt: skip
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert {row["model"] for row in summary} == set(kinds.split(","))


def test_on_documents_lightgbm_reads_the_word_counts_and_scikit_learns_trees_refuse():
    """Two groups of users who call opposite words spam: LightGBM with the user tells them apart
    from the sparse word counts; ``hgb-*`` refuse documents by name."""
    pytest.importorskip("lightgbm")
    from clusterednb.evaluation.models.documents import fit_predict_documents
    from clusterednb.exceptions import CNBError

    rng = np.random.default_rng(3)

    def documents(n_rows: int) -> pd.DataFrame:
        user = rng.integers(0, 4, n_rows)
        word = rng.choice(["cheap", "meeting"], n_rows)
        spam = (word == "cheap") == (user < 2)
        noise = rng.choice(["hello", "today", "note"], n_rows)
        text = [f"{w} {n}" for w, n in zip(word, noise, strict=True)]
        return pd.DataFrame(
            {"task": [f"u{u}" for u in user], "label": spam.astype(int), "text": text}
        )

    train, test = documents(800), documents(200)
    auc = {
        name: roc_auc_score(test["label"], fit_predict_documents(name, train, test, "text", 0))
        for name in ("lgbm-pooled", "lgbm-task")
    }
    assert auc["lgbm-task"] > 0.9 > auc["lgbm-pooled"] + 0.2, auc
    with pytest.raises(CNBError, match="hgb-pooled reads tables"):
        fit_predict_documents("hgb-pooled", train, test, "text", 0)
