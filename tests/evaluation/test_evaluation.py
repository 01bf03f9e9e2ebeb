"""The transfer protocol: splits, leakage, discretisation, resume, aggregation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import OneHotEncoder

from clusterednb import ClusteredLogisticRegression
from clusterednb.data.discretize import quantile_edges
from clusterednb.data.synthetic import make_planted_population
from clusterednb.evaluation import TransferSettings, run_transfer, summarise_transfer
from clusterednb.evaluation import transfer as transfer_module
from clusterednb.evaluation.datasets import EvalDataset, from_frame
from clusterednb.evaluation.models import baselines, partial_pooling
from clusterednb.evaluation.models import registry as models
from clusterednb.exceptions import CNBError

ALL_MODELS = (
    "ns",
    "cs",
    "prototype",
    "cnb-bhc",
    "cnb-gibbs",
    "cnb-variational",
    "lr-task",
    "lr-pooled",
    "lr-hier",
    "lr-hier-fixed",
    "lr-pooled+raw",
    "cnb-lr",
    "cnb-logistic",
)


@pytest.fixture(scope="module")
def dataset() -> EvalDataset:
    population = make_planted_population(
        np.random.default_rng(11), group_sizes=(4, 4), rows_per_task=30, n_features=4
    )
    frame = population.frame.copy()
    frame["f3"] = frame["f3"] + np.random.default_rng(0).normal(size=len(frame))  # continuous
    return EvalDataset("toy", frame, population.feature_names, continuous=["f3"], n_bins=3)


def settings(**kwargs) -> TransferSettings:
    base = {"models": ("ns", "cnb-bhc"), "ks": (1, 4, 16), "repeats": 2, "n_targets": 3}
    return TransferSettings(**{**base, **kwargs})


def test_summary_by_hand():
    splits = pd.DataFrame(
        {
            "target": ["a", "a", "b", "b", "c"],
            "repetition": [0, 1, 0, 1, 0],
            "k": [1] * 5,
            "n_test": [5] * 5,
            "model": ["m"] * 5,
            "skipped": [False, False, False, False, True],
            "auc": [0.6, 0.8, 0.9, 0.9, np.nan],
            "logloss": [0.5, 0.7, 0.2, 0.4, np.nan],
            "accuracy": [0.5, 0.5, 1.0, 1.0, np.nan],
        }
    )
    row = summarise_transfer(splits).iloc[0]
    # Per-target means 0.7 and 0.9; their mean 0.8; SE = std([0.7, 0.9]) / sqrt(2) = 0.1.
    assert row["auc_mean"] == pytest.approx(0.8)
    assert row["auc_se"] == pytest.approx(0.1)
    assert row["logloss_mean"] == pytest.approx(0.45)
    assert (row["n_splits"], row["n_skipped"]) == (4, 1)


def test_a_k_too_large_for_the_target_is_counted_as_skipped(dataset, tmp_path):
    chosen = settings(models=("ns",), ks=(4, 1000), repeats=1, n_targets=2)
    summary = run_transfer(dataset, chosen, tmp_path, progress=False).set_index("k")
    assert summary.loc[1000, "n_splits"] == 0
    assert summary.loc[1000, "n_skipped"] == 2  # two targets, one repetition
    assert summary.loc[4, "n_splits"] == 2


def test_no_test_row_reaches_training(dataset, monkeypatch):
    seen = []

    def spy(name, train, test, features, seed, transductive=False, **_):
        assert not set(train.index) & set(test.index)
        assert (test["task"] == "u0").all()
        seen.append(((train["task"] == "u0").sum(), len(test)))
        return np.full(len(test), 0.5)

    monkeypatch.setattr(transfer_module, "fit_predict", spy)
    rows = transfer_module.run_cell(dataset, settings(models=("ns",)), "u0", 0, 0)
    n_rows = (dataset.frame["task"] == "u0").sum()
    assert [k for k, _ in seen] == [r["k"] for r in rows if not r["skipped"]]
    assert all(k + n_test == n_rows for k, n_test in seen)


def test_discretisation_uses_training_rows_only(dataset):
    frame = dataset.frame
    train, test = frame.iloc[:100].copy(), frame.iloc[100:].copy()
    test.loc[test.index[0], "f3"] = 1e6  # an extreme test value must not move the edges
    binned_train, binned_test = transfer_module.discretised(dataset, train, test)
    edges = np.asarray(quantile_edges(train["f3"].to_numpy(dtype=float), 3))
    np.testing.assert_array_equal(
        binned_train["f3"], np.searchsorted(edges, train["f3"], side="right")
    )
    assert binned_test["f3"].iloc[0] == edges.size  # the top bin


def test_resume_gives_the_same_table_as_an_uninterrupted_run(dataset, tmp_path):
    full = run_transfer(dataset, settings(), tmp_path / "full", progress=False)
    partial_dir = tmp_path / "partial"
    run_transfer(dataset, settings(), partial_dir, progress=False)
    lines = (partial_dir / "transfer_splits.csv").read_text().splitlines(keepends=True)
    cut = 1 + len(lines[1:]) // 3  # keep the header and a third of the rows
    (partial_dir / "transfer_splits.csv").write_text("".join(lines[:cut]))
    kept = pd.read_csv(partial_dir / "transfer_splits.csv")
    last_cell = (kept["target"] == kept["target"].iloc[-1]) & (
        kept["repetition"] == kept["repetition"].iloc[-1]
    )
    kept[~last_cell].to_csv(partial_dir / "transfer_splits.csv", index=False)  # whole cells
    resumed = run_transfer(dataset, settings(), partial_dir, progress=False)
    pd.testing.assert_frame_equal(resumed, full)
    assert (partial_dir / "transfer_auc.png").stat().st_size > 0
    with pytest.raises(CNBError, match="other settings"):
        run_transfer(dataset, settings(repeats=3), partial_dir, progress=False)


def test_every_model_runs(dataset, tmp_path):
    chosen = settings(models=ALL_MODELS, ks=(2, 8), n_targets=2, repeats=1)
    one = run_transfer(dataset, chosen, tmp_path / "one", jobs=1, progress=False)
    assert set(one["model"]) == set(ALL_MODELS)
    assert one["auc_mean"].between(0, 1).all()
    cnb = one[one["model"] == "cnb-bhc"]["auc_mean"].to_numpy()
    ns = one[one["model"] == "ns"]["auc_mean"].to_numpy()
    assert cnb[0] >= ns[0]  # with 2 own rows, sharing helps on planted groups


@pytest.mark.slow
def test_workers_do_not_change_numbers(dataset, tmp_path):
    chosen = settings(models=ALL_MODELS, ks=(2, 8), n_targets=2, repeats=1)
    one = run_transfer(dataset, chosen, tmp_path / "one", jobs=1, progress=False)
    two = run_transfer(dataset, chosen, tmp_path / "two", jobs=2, progress=False)
    pd.testing.assert_frame_equal(one, two)


def test_transductive_runs(dataset, tmp_path):
    summary = run_transfer(
        dataset,
        settings(models=("cnb-gibbs",), transductive=True, n_targets=1, repeats=1),
        tmp_path,
        progress=False,
    )
    assert len(summary) == 3


def test_from_frame_requires_binary_label():
    frame = pd.DataFrame({"t": [1, 1, 2], "x": [0, 1, 0], "y": ["a", "b", "c"]})
    with pytest.raises(CNBError, match="binary label"):
        from_frame(frame, "t", "y")


def test_per_task_training_mask_keeps_held_out_rows():
    tasks = np.repeat(["a", "b", "c"], [3, 10, 40])
    mask = transfer_module_mask(tasks, 0.95)
    for task in ("a", "b", "c"):
        rows = tasks == task
        assert 1 <= mask[rows].sum() <= rows.sum() - 1
    assert mask[tasks == "c"].sum() == 38


def transfer_module_mask(tasks, fraction):
    from clusterednb.evaluation.sweeps import per_task_training_mask

    return per_task_training_mask(tasks, np.random.default_rng(0), fraction)


def test_every_protocol_and_the_report(dataset, tmp_path):
    from clusterednb import evaluation

    models = ("ns", "cs", "cnb-bhc", "lr-pooled")
    evaluation.run_transfer(dataset, settings(models=models), tmp_path, progress=False)
    loss = evaluation.run_loss_sweep(
        dataset, models, tmp_path, repeats=2, holdout=0.2, progress=False
    )
    assert set(loss["n"]) == set(range(-8, 9))
    np.testing.assert_allclose(loss[loss["model"] == "ns"]["ratio_to_ns"], 1.0)
    curves = evaluation.run_learning_curves(
        dataset, models, tmp_path, repeats=1, steps=3, progress=False
    )
    assert curves["error_mean"].between(0, 1).all()
    median_rows = dataset.frame.groupby("task").size().median()
    assert curves["fraction"].min() == pytest.approx(1 / median_rows, abs=1e-4)  # one row
    evidence = evaluation.run_evidence(
        dataset,
        ("ns", "cs", "cnb-bhc", "lr-pooled"),
        tmp_path,
        fractions=(0.5, 1.0),
        repeats=1,
        progress=False,
    )
    assert set(evidence["model"]) == {"ns", "cs", "cnb-bhc"}  # only generative models
    full = evidence[evidence["fraction"] == 1.0].set_index("model")
    assert full.loc["cnb-bhc", "log_bf_vs_ns"] > 0  # planted groups: clustering pays
    assert full.loc["cnb-bhc", "kind"] == "lower_bound"
    partitions = evaluation.run_partitions(dataset, tmp_path, ks=(8, 30), progress=False)
    assert set(partitions["model"]) == {"cnb-bhc", "cnb-gibbs"}
    relevance = pd.read_csv(tmp_path / "relevance.csv")
    assert relevance.columns.tolist() == ["feature", "k = 8", "k = 30"]
    assert sorted(relevance["feature"]) == sorted(dataset.features)
    assert relevance[["k = 8", "k = 30"]].stack().between(0, 1).all()
    label_relevance = pd.read_csv(tmp_path / "label_relevance.csv")
    assert label_relevance.columns.tolist() == ["feature", "k = 8", "k = 30"]
    assert sorted(label_relevance["feature"]) == sorted(dataset.features)
    assert label_relevance[["k = 8", "k = 30"]].stack().between(0, 1).all()
    report = evaluation.write_report(tmp_path).read_text()
    for heading in (
        "T. Transfer",
        "L. Learning curves",
        "A. Asymmetric losses",
        "E. Evidence",
        "P. Partitions",
        "P. Columns that separate the tasks",
        "P. Columns that tell the label within clusters",
    ):
        assert heading in report
    figures = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "curves_per_task.png" in figures and "partitions_tree_k30.png" in figures
    assert report.count("data:image/") == len(figures)
    assert report.count("data:image/svg+xml;base64,") >= 3  # matplotlib figures as SVG
    assert "Bands: ±1 standard error over targets" in report  # captions say what is shown
    assert "<figcaption>transfer_auc</figcaption>" not in report


def test_hierarchical_logistic_regression_design_and_limits():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "task": np.repeat(["a", "b", "c"], 40),
            "f0": rng.integers(0, 3, 120).astype(str),
            "f1": rng.integers(0, 2, 120).astype(str),
        }
    )
    rule = (frame["f0"] == "1") ^ (frame["task"] == "b") ^ (rng.random(120) < 0.1)
    frame["label"] = rule.astype(int)
    train, test = frame.iloc[::2], frame.iloc[1::2]
    # Without deviations it is the pooled logistic regression on the features alone.
    pooled = baselines.one_hot_logistic(
        train[["f0", "f1"]], train["label"].to_numpy(), test[["f0", "f1"]]
    )
    flat = partial_pooling.hierarchical_logistic(train, test, ["f0", "f1"], deviation_scale=0.0)
    encoder = OneHotEncoder().fit(train[["f0", "f1"]])
    exact = LogisticRegression(solver="newton-cg", tol=1e-10).fit(
        encoder.transform(train[["f0", "f1"]]), train["label"]
    )
    np.testing.assert_allclose(
        flat, exact.predict_proba(encoder.transform(test[["f0", "f1"]]))[:, 1], atol=1e-5
    )
    # With them it can learn that task b reverses the rule; a new task gets the shared part.
    partial = partial_pooling.hierarchical_logistic(train, test, ["f0", "f1"], C=10.0)
    accuracy = ((partial > 0.5) == test["label"].to_numpy()).mean()
    assert accuracy > 0.8 > ((pooled > 0.5) == test["label"].to_numpy()).mean()
    design = partial_pooling.augment(
        sparse.csr_matrix(np.eye(2)), np.array([1, -1]), 3, 2.0
    ).toarray()
    np.testing.assert_array_equal(
        design, [[1, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    )


def test_tuned_hierarchical_logistic_is_the_fixed_fit_at_the_pair_validation_chose(monkeypatch):
    """Each fit of the grid starts from the last one's weights; it must still reach the
    optimum a fit from zero reaches, so the tuned model is the fixed model at its choice."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "task": np.repeat(["a", "b", "c", "d"], 30),
            "f0": rng.integers(0, 3, 120).astype(str),
            "f1": rng.integers(0, 2, 120).astype(str),
        }
    )
    rule = (frame["f0"] == "1") ^ frame["task"].isin(["b", "d"]) ^ (rng.random(120) < 0.15)
    frame["label"] = rule.astype(int)
    train = pd.concat([frame[frame["task"] != "a"], frame[frame["task"] == "a"].iloc[:4]])
    test = frame[frame["task"] == "a"].iloc[4:]
    chosen = []
    fit = partial_pooling.PartialPooling.fit

    def recording(self, rows, C, scale, start=None):
        chosen.append((C, scale, start is not None))
        return fit(self, rows, C, scale, start)

    monkeypatch.setattr(partial_pooling.PartialPooling, "fit", recording)
    tuned = partial_pooling.tuned_hierarchical_logistic(train, test, ["f0", "f1"], seed=0)
    assert len(chosen) == len(partial_pooling.HIER_GRID) + 1 and chosen[-1][2]  # warm refit
    C, scale, _ = chosen[-1]
    assert (C, scale) != (1.0, 1.0)  # validation moved away from the default pair
    monkeypatch.setattr(partial_pooling.PartialPooling, "fit", fit)
    cold = partial_pooling.hierarchical_logistic(train, test, ["f0", "f1"], C, scale)
    np.testing.assert_allclose(tuned, cold, atol=1e-5)


def test_tuned_lr_hier_on_documents_learns_a_reversed_user():
    """On word counts, ``lr-hier`` is tuned like on tables: a user who calls the others'
    spam ham is learnt from their own mail, and the tuned fit predicts better than the fit
    at C = s = 1 does on that user's held-out mail."""
    from clusterednb.evaluation.models.documents import fit_predict_documents

    rng = np.random.default_rng(3)
    spam, ham = ["cheap pills offer", "win money now"], ["team meeting notes", "lunch plans today"]
    rows = []
    for user in ["ann", "bob", "cy", "dan", "eve"]:
        for _ in range(40):
            is_spam = int(rng.random() < 0.5)
            text = rng.choice(spam if is_spam else ham) + " " + rng.choice(["a", "b", "c"])
            label = 1 - is_spam if user == "eve" else is_spam
            rows.append({"task": user, "text": text, "label": label})
    frame = pd.DataFrame(rows)
    test = frame[frame["task"] == "eve"].iloc[20:]
    train = frame.drop(index=test.index)
    tuned = fit_predict_documents("lr-hier", train, test, "text", seed=0)
    fixed = fit_predict_documents("lr-hier-fixed", train, test, "text", seed=0)
    truth = test["label"].to_numpy()
    assert ((tuned > 0.5) == truth).mean() == 1.0  # eve's reversed rule is learnt
    assert log_loss(truth, tuned) < log_loss(truth, fixed)


def test_cluster_weighted_logistic_is_pooled_lr_when_every_task_counts_fully(dataset):
    from clusterednb.evaluation.models.registry import cluster_weighted_logistic, fit_predict

    frame = dataset.frame.copy()
    frame["f3"] = np.digitize(frame["f3"], [-1.0, 0.0, 1.0])
    test = frame[frame["task"] == "u0"].iloc[:10]
    train = frame.drop(index=test.index)
    features = dataset.features
    pooled = fit_predict("lr-pooled", train, test, features, seed=0)
    weighted = cluster_weighted_logistic(train, test, features, seed=0, floor=1.0)
    np.testing.assert_allclose(weighted, pooled, atol=1e-6)
    shrunk = cluster_weighted_logistic(train, test, features, seed=0, floor=0.0)
    assert not np.allclose(shrunk, pooled, atol=1e-6)  # the clusters do change the fit


def test_transductive_clustered_models_select_a_cluster_without_refitting(dataset):
    from clusterednb.evaluation.models.registry import fit_predict

    frame = dataset.frame.copy()
    frame["f3"] = np.digitize(frame["f3"], [-1.0, 0.0, 1.0])
    target = frame[frame["task"] == "u0"]
    train = pd.concat([frame[frame["task"] != "u0"], target.iloc[:3]])
    test = target.iloc[3:]
    selected = fit_predict("cnb-bhc", train, test, dataset.features, seed=0, transductive=True)
    inductive = fit_predict("cnb-bhc", train, test, dataset.features, seed=0)
    assert selected.shape == (len(test),) and ((selected > 0) & (selected < 1)).all()
    assert not np.allclose(selected, inductive)  # the unlabelled rows moved the choice
    y = test["label"].to_numpy(dtype=int)
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(y, selected) > 0.6  # a planted population: the right cluster is found


def test_raw_values_ride_beside_their_bins_and_only_the_models_that_take_them_read_them(dataset):
    frame = dataset.frame
    train, test = frame.iloc[:150], frame.iloc[150:200]
    binned_train, binned_test = transfer_module.discretised(dataset, train, test)
    raw = baselines.raw_column("f3")
    np.testing.assert_array_equal(binned_train[raw], train["f3"])
    assert set(np.unique(binned_train["f3"])) <= {0, 1, 2}
    features = dataset.features
    with_raw = models.fit_predict("lr-pooled+raw", binned_train, binned_test, features, 0)
    pooled = models.fit_predict("lr-pooled", binned_train, binned_test, features, 0)
    assert not np.allclose(with_raw, pooled)
    # Without continuous features there is nothing raw to add: it is lr-pooled.
    plain_train, plain_test = binned_train.drop(columns=[raw]), binned_test.drop(columns=[raw])
    np.testing.assert_allclose(
        models.fit_predict("lr-pooled+raw", plain_train, plain_test, features, 0),
        models.fit_predict("lr-pooled", plain_train, plain_test, features, 0),
    )
    # cnb-logistic re-bins the raw values into as many training quantiles (the same bins the
    # split has) and its regressions read the numbers too.
    bins = int(binned_train["f3"].max()) + 1
    logistic = {
        name: models.fit_predict("cnb-logistic", *frames, features, 0, n_bins=bins)
        for name, frames in (
            ("raw", (binned_train, binned_test)),
            ("bins", (plain_train, plain_test)),
        )
    }
    assert not np.allclose(logistic["raw"], logistic["bins"])
    model = ClusteredLogisticRegression(numeric=["f3"], n_bins=bins, random_state=0)
    model.fit(train[features], train["label"], train["task"])
    edges = quantile_edges(train["f3"].to_numpy(dtype=float), bins)
    assert model.schema_.bin_edges["f3"] == pytest.approx(edges)


def test_reliability_bins_by_hand_and_in_a_run(dataset, tmp_path):
    from clusterednb.evaluation.calibration import bin_sums, reliability_table

    sums = bin_sums(np.array([1, 0, 1]), np.array([0.05, 0.07, 0.95]))
    assert sums["cal_count"].split() == ["2", "0", "0", "0", "0", "0", "0", "0", "0", "1"]
    splits = pd.DataFrame([{"model": "m", "k": 1, **sums}, {"model": "m", "k": 1, **sums}])
    table = reliability_table(splits)
    assert table["n_rows"].tolist() == [4, 2]
    np.testing.assert_allclose(table["mean_p"], [0.06, 0.95])
    np.testing.assert_allclose(table["frequency"], [0.5, 1.0])
    # ECE = (4 · |0.06 − 0.5| + 2 · |0.95 − 1|) / 6
    assert table["ece"].iloc[0] == pytest.approx((4 * 0.44 + 2 * 0.05) / 6)
    run_transfer(dataset, settings(models=("ns", "lr-pooled"), repeats=1), tmp_path, progress=False)
    written = pd.read_csv(tmp_path / "transfer_reliability.csv")
    assert set(written["model"]) == {"ns", "lr-pooled"}
    assert (tmp_path / "transfer_reliability.png").exists()


def test_cluster_weighted_documents_reduce_to_the_pooled_regression_at_floor_one():
    """Weights of 1 everywhere (floor 1) give ``lr-pooled`` on documents exactly; a lower
    floor moves the target's predictions, and an unseen task keeps the pooled model."""
    from scipy import sparse

    from clusterednb import ClusteredNB
    from clusterednb.evaluation.models.cluster_weights import cluster_weighted_documents
    from clusterednb.evaluation.models.registry import fit_predict_documents

    rng = np.random.default_rng(0)
    tasks = np.repeat(["a", "b", "c", "d"], 12)
    y = rng.integers(0, 2, size=tasks.size)
    flip = np.isin(tasks, ["c", "d"])  # c and d use the words the other way round
    positive_word = ((y == 1) ^ flip)[:, None]  # w0 in a's and b's positives, w1 in c's, d's
    rate = np.where(positive_word, [3.0, 0.5, 1.0], [0.5, 3.0, 1.0])
    X = sparse.csr_matrix(rng.poisson(rate))
    text = [" ".join(f"w{j}" for j in range(3) for _ in range(row[j])) for row in X.toarray()]
    train = pd.DataFrame({"task": tasks, "label": y, "text": text})
    test = pd.DataFrame({"task": ["a", "a", "e"], "text": ["w0 w0", "w1 w1", "w0"]})
    clustered = ClusteredNB(inference="exact", observation="multinomial").fit(X, y, tasks)
    X_test = sparse.csr_matrix([[2, 0, 0], [0, 2, 0], [1, 0, 0]])
    pooled = fit_predict_documents("lr-pooled", train, test, "text", seed=0)
    clusters = (clustered.task_ids_, clustered.coclustering_)
    at_one = cluster_weighted_documents(
        X, y, tasks, X_test, test["task"].to_numpy(), *clusters, 1.0
    )
    np.testing.assert_allclose(at_one, pooled, rtol=1e-6)
    weighted = cluster_weighted_documents(X, y, tasks, X_test, test["task"].to_numpy(), *clusters)
    assert weighted[0] > pooled[0] and weighted[1] < pooled[1]  # c and d count for less
    assert weighted[2] == pytest.approx(pooled[2])
    harness = fit_predict_documents("cnb-lr", train, test, "text", seed=0)
    np.testing.assert_allclose(harness, weighted)


def test_transductive_documents_select_a_cluster_and_weigh_rows_by_the_selection():
    """On documents, ``--transductive`` lets the clustered models' target choose among the
    clusters of the labelled documents with its unlabelled test documents; ``cnb-lr`` weighs
    the pooled regression's rows by that choice; the others repeat their inductive numbers."""
    from sklearn.metrics import roc_auc_score

    from clusterednb.evaluation.models.registry import fit_predict

    rng = np.random.default_rng(2)
    tasks = np.repeat(["a", "b", "c", "d"], 30)
    y = rng.integers(0, 2, size=tasks.size)
    flip = np.isin(tasks, ["c", "d"])  # c and d use the words the other way round
    topic = np.isin(tasks, ["a", "b"])  # a and b also write w2 often, c and d w3
    positive_word = ((y == 1) ^ flip)[:, None]
    rate = np.where(positive_word, [3.0, 0.3, 0, 0], [0.3, 3.0, 0, 0])
    rate = rate + np.where(topic[:, None], [0, 0, 3.0, 0.2], [0, 0, 0.2, 3.0])
    counts = rng.poisson(rate)
    text = np.array(
        [" ".join(f"w{j}" for j in range(4) for _ in range(row[j])) or "w2" for row in counts]
    )
    own = np.flatnonzero(tasks == "a")
    text[own[0]] = "unseen"  # a's one labelled document says nothing (a word seen once)
    train_rows = np.concatenate([np.flatnonzero(tasks != "a"), own[:1]])
    frame = pd.DataFrame({"task": tasks, "label": y, "text": text})
    train, test = frame.iloc[train_rows], frame.iloc[own[1:]]
    args = (train, test, [], 0)
    for name in ("ns", "cs", "lr-pooled", "lr-hier"):
        np.testing.assert_array_equal(
            fit_predict(name, *args, text="text", transductive=True),
            fit_predict(name, *args, text="text"),
        )
    truth = test["label"].to_numpy()
    for name in ("cnb-exact", "cnb-lr"):
        inductive = fit_predict(name, *args, text="text")
        selected = fit_predict(name, *args, text="text", transductive=True)
        assert not np.allclose(selected, inductive)
        assert roc_auc_score(truth, selected) > 0.9  # a's unlabelled words chose a and b


def test_cells_computed_in_this_process_use_one_blas_thread_as_workers_do():
    """With jobs=1 the cells run under the workers' thread limits (so a run's numbers do not
    depend on --jobs), and the process's own limits come back afterwards."""
    import numba
    from threadpoolctl import threadpool_info

    from clusterednb.evaluation.result_store import CellStore
    from clusterednb.evaluation.runner import run_cells
    from clusterednb.examples import evaluation as toy
    from clusterednb.examples import models as data_toy

    def threads_seen(x):
        blas = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
        return [{"x": x, "blas": max(blas, default=1), "numba": numba.get_num_threads()}]

    before = numba.get_num_threads()
    store = CellStore(data_toy.scratch_file("threads"), "threads", {}, ["x", "blas", "numba"])
    run_cells(
        [(1,)],
        threads_seen,
        store,
        toy.eval_dataset(),
        jobs=1,
        desc="threads",
        progress=False,
        remote=lambda x: (threads_seen, (x,)),
    )
    row = store.rows().iloc[0]
    assert (row["blas"], row["numba"]) == (1, 1)
    assert numba.get_num_threads() == before
