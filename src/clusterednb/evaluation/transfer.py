"""Protocol T, transfer (IJCAI paper Fig. 3 and 5; ``../shared/docs/protocols.md``).

For a target task ``v``: train on ``k`` of its labelled rows drawn at random plus every
labelled row of every other task; test on the rest of ``v``'s rows. ``k`` runs over a list.
A ``k`` that would leave fewer than ``min_test`` test rows, and a split whose test rows hold
one class only, are skipped and counted in ``n_skipped``. Every repetition draws its rows
from a generator seeded by ``(seed, repetition, target position)``, so all models see the
same splits and a run is reproducible. One *cell* is one (target, repetition): every ``k``
and every model. Finished cells are appended to ``transfer_splits.csv`` as they complete,
so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from clusterednb.data.discretize import discretize
from clusterednb.data.schema import FeatureSchema
from clusterednb.evaluation.calibration import COLUMNS as CALIBRATION_COLUMNS
from clusterednb.evaluation.calibration import bin_sums, reliability_table
from clusterednb.evaluation.datasets import EvalDataset
from clusterednb.evaluation.models.baselines import raw_column
from clusterednb.evaluation.models.registry import check_models, document_matrices, fit_predict
from clusterednb.evaluation.plots import plot_reliability, plot_transfer
from clusterednb.evaluation.result_store import CellStore
from clusterednb.evaluation.runner import run_cells
from clusterednb.exceptions import CNBError

SUMMARY_FILE = "transfer.csv"
RELIABILITY_FILE = "transfer_reliability.csv"
DEFAULT_KS = (1, 2, 4, 8, 16, 32, 64, 128)
SPLIT_COLUMNS = [
    "target",
    "repetition",
    "k",
    "n_test",
    "model",
    "skipped",
    "auc",
    "logloss",
    "accuracy",
    *CALIBRATION_COLUMNS,
]


@dataclass(frozen=True)
class TransferSettings:
    """Settings of one transfer run.

    Attributes
    ----------
    models : tuple of str
        Model names (``ns``, ``cs``, ``cnb-bhc``, ``cnb-gibbs``, ``lr-task``, ``lr-pooled``).
    ks : tuple of int
        Numbers of the target's own labelled training rows.
    repeats : int
        Repetitions per target.
    n_targets : int or None
        Evaluate a seeded random sample of this many targets (None: all tasks).
    seed : int
    transductive : bool
        Generative models also see the target's test rows as unlabelled rows.
    min_test : int
        ``k`` is capped so that at least this many test rows remain.
    n_bins : int or None
        Quantile bins per continuous feature (None: the data set's default).

    Examples
    --------
    >>> settings = TransferSettings(models=("ns", "cs"), ks=(1, 4), repeats=2)
    >>> settings.n_targets, settings.min_test  # 50 sampled targets, 5 test rows at least
    (50, 5)
    """

    models: tuple[str, ...]
    ks: tuple[int, ...] = DEFAULT_KS
    repeats: int = 5
    n_targets: int | None = 50
    seed: int = 0
    transductive: bool = False
    min_test: int = 5
    n_bins: int | None = None


def choose_targets(dataset: EvalDataset, settings: TransferSettings) -> list:
    """The target tasks: all, or a seeded sample of ``n_targets`` (in task order).

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> dataset = toy.eval_dataset()
    >>> choose_targets(dataset, TransferSettings(models=("ns",), n_targets=None))
    ['u0', 'u1', 'u2', 'u3', 'u4', 'u5']
    >>> choose_targets(dataset, TransferSettings(models=("ns",), n_targets=2, seed=0))
    ['u3', 'u5']
    """
    tasks = sorted(dataset.frame["task"].unique().tolist())
    if settings.n_targets is None or settings.n_targets >= len(tasks):
        return tasks
    rng = np.random.default_rng([settings.seed, 2**31 - 1])
    chosen = rng.choice(len(tasks), size=settings.n_targets, replace=False)
    return [tasks[i] for i in sorted(chosen)]


def discretised(
    dataset: EvalDataset, train: pd.DataFrame, test: pd.DataFrame, n_bins: int | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bin the continuous features by quantiles of the TRAINING rows only (codes 0..bins-1);
    each raw value is kept beside its bin, in the column :func:`raw_column` names.

    Examples
    --------
    >>> from clusterednb.evaluation.datasets import from_frame
    >>> frame = pd.DataFrame({"task": ["a"] * 4 + ["b"], "label": [0, 1, 0, 1, 1],
    ...                       "size": [1.0, 2.0, 3.0, 4.0, 100.0]})
    >>> dataset = from_frame(frame, "task", "label", continuous=["size"])
    >>> train, test = discretised(dataset, frame[:4], frame[4:], n_bins=2)
    >>> train["size"].tolist(), test["size"].tolist(), test["size__raw"].tolist()
    ([0, 0, 1, 1], [1], [100.0])
    """
    if not dataset.continuous:
        return train, test
    base = FeatureSchema(tuple(dataset.continuous), tuple((0,) for _ in dataset.continuous), (0, 1))
    bins = n_bins or dataset.n_bins
    schema = discretize(base, train[dataset.continuous], dataset.continuous, bins)
    train, test = train.copy(), test.copy()
    for column in dataset.continuous:  # the raw values too, for ``lr-pooled+raw``
        train[raw_column(column)] = train[column]
        test[raw_column(column)] = test[column]
    train[dataset.continuous] = schema.encode_features(train[dataset.continuous])
    test[dataset.continuous] = schema.encode_features(test[dataset.continuous])
    return train, test


def run_cell(
    dataset: EvalDataset,
    settings: TransferSettings,
    target: object,
    target_position: int,
    repetition: int,
) -> list[dict]:
    """All ``k`` and all models for one (target, repetition); one result row each.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> settings = TransferSettings(models=("ns", "cs"), ks=(1, 4, 18), repeats=1)
    >>> rows = run_cell(toy.eval_dataset(), settings, "u3", 3, 0)
    >>> [(row["k"], row["model"]) for row in rows if row["skipped"]]  # 18 leaves 2 test rows
    [(18, 'ns'), (18, 'cs')]
    >>> rows[0]["n_test"], 0.0 <= rows[0]["auc"] <= 1.0
    (19, True)
    """
    frame = dataset.frame[dataset.frame["label"].notna()]
    own = frame[frame["task"] == target]
    others = frame[frame["task"] != target]
    rng = np.random.default_rng([settings.seed, repetition, target_position])
    order = own.index.to_numpy()[rng.permutation(len(own))]
    rows = []
    for k in settings.ks:
        if k > len(own) - settings.min_test:
            base = {"target": target, "repetition": repetition, "k": k, "n_test": 0}
            rows.extend({**base, "model": m, "skipped": True} for m in settings.models)
            continue
        train_own, test_index = order[:k], order[k:]
        if np.intersect1d(train_own, test_index).size or test_index.size < settings.min_test:
            raise CNBError("internal error: a test row leaked into training")
        test = frame.loc[test_index]
        base = {"target": target, "repetition": repetition, "k": k, "n_test": len(test)}
        if test["label"].nunique() < 2:
            rows.extend({**base, "model": m, "skipped": True} for m in settings.models)
            continue
        train = pd.concat([others, frame.loc[train_own]])
        train, test = discretised(dataset, train, test, settings.n_bins)
        y_test = test["label"].to_numpy(dtype=int)
        documents = document_matrices(train, test, dataset.text) if dataset.text else None
        for model in settings.models:
            p1 = fit_predict(
                model,
                train,
                test,
                dataset.features,
                seed=settings.seed + repetition,
                transductive=settings.transductive,
                text=dataset.text,
                documents=documents,
                n_bins=settings.n_bins or dataset.n_bins,
            )
            rows.append(
                {
                    **base,
                    "model": model,
                    "skipped": False,
                    "auc": roc_auc_score(y_test, p1),
                    "logloss": log_loss(y_test, np.column_stack([1 - p1, p1]), labels=[0, 1]),
                    "accuracy": accuracy_score(y_test, (p1 > 0.5).astype(int)),
                    **bin_sums(y_test, p1),
                }
            )
    return rows


def run_transfer(
    dataset: EvalDataset,
    settings: TransferSettings,
    out_dir: str | Path,
    jobs: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Run (or resume) protocol T; write per-split rows, the summary table and a figure.

    Parameters
    ----------
    dataset : EvalDataset
    settings : TransferSettings
    out_dir : path
        Receives ``transfer_splits.csv`` (one row per model, k, repetition and target),
        ``transfer.csv`` (the summary, see :func:`summarise_transfer`), ``transfer_auc.png``,
        ``transfer_reliability.csv`` and ``.png`` (calibration: mean prediction against
        observed frequency in ten bins, per model and k, with the expected calibration error)
        and ``transfer_settings.json``. Cells already in the splits file are not recomputed.
    jobs : int
        Worker processes (1: run in this process).

    Returns
    -------
    DataFrame
        The summary table.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> out = toy.scratch_file("transfer")
    >>> settings = TransferSettings(models=("ns", "cs"), ks=(1, 4), repeats=1, n_targets=2)
    >>> summary = run_transfer(eval_toy.eval_dataset(), settings, out, progress=False)
    >>> summary[["model", "k", "n_splits"]].values.tolist()
    [['cs', 1, 2], ['cs', 4, 2], ['ns', 1, 2], ['ns', 4, 2]]
    >>> sorted(p.name for p in out.glob("transfer*.csv"))
    ['transfer.csv', 'transfer_reliability.csv', 'transfer_splits.csv']
    """
    check_models(settings.models)
    out_dir = Path(out_dir)
    record = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(settings).items()}
    store = CellStore(out_dir, "transfer", record, SPLIT_COLUMNS)
    done = store.done(["target", "repetition"])
    targets = choose_targets(dataset, settings)
    cells = [
        (t, i, r)
        for i, t in enumerate(targets)
        for r in range(settings.repeats)
        if (str(t), str(r)) not in done
    ]
    run_cells(
        cells,
        lambda t, i, r: run_cell(dataset, settings, t, i, r),
        store,
        dataset,
        jobs,
        desc=f"transfer {dataset.name}",
        progress=progress,
        remote=lambda t, i, r: (run_cell, (settings, t, i, r)),
    )
    summary = summarise_transfer(store.rows())
    summary.to_csv(out_dir / SUMMARY_FILE, index=False)
    plot_transfer(summary, out_dir / "transfer_auc.png", title=dataset.name)
    reliability = reliability_table(store.rows())
    reliability.to_csv(out_dir / RELIABILITY_FILE, index=False)
    if not reliability.empty:
        plot_reliability(reliability, out_dir / "transfer_reliability.png", title=dataset.name)
    return summary


def summarise_transfer(splits: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, k): counts, mean AUC ± standard error, mean log-loss and accuracy.

    A target's repetitions are averaged first (they share rows); the standard error is over
    targets.

    Examples
    --------
    Target ``a``'s two repetitions average to 0.7, target ``b`` has 0.9: mean 0.8, standard
    error ``0.1 √2 / √2 = 0.1``:

    >>> splits = pd.DataFrame({"model": "ns", "k": 4, "target": ["a", "a", "b"],
    ...                        "repetition": [0, 1, 0], "skipped": False,
    ...                        "auc": [0.6, 0.8, 0.9], "logloss": 0.5, "accuracy": 0.7})
    >>> row = summarise_transfer(splits).iloc[0]
    >>> round(float(row["auc_mean"]), 6), round(float(row["auc_se"]), 6), int(row["n_splits"])
    (0.8, 0.1, 3)
    """
    columns = [
        "model",
        "k",
        "n_splits",
        "n_skipped",
        "auc_mean",
        "auc_se",
        "logloss_mean",
        "accuracy_mean",
    ]
    if splits.empty:
        return pd.DataFrame(columns=columns)
    skipped = splits["skipped"].astype(str).str.lower() == "true"
    used = splits[~skipped]
    per_target = used.groupby(["model", "k", "target"])[["auc", "logloss", "accuracy"]].mean()
    grouped = per_target.groupby(level=["model", "k"])
    summary = pd.DataFrame(
        {
            "auc_mean": grouped["auc"].mean(),
            "auc_se": grouped["auc"].std(ddof=1) / np.sqrt(grouped["auc"].count()),
            "logloss_mean": grouped["logloss"].mean(),
            "accuracy_mean": grouped["accuracy"].mean(),
        }
    )
    every_cell = splits.groupby(["model", "k"]).size().index
    summary = summary.reindex(every_cell)
    summary["n_splits"] = used.groupby(["model", "k"]).size()
    summary["n_skipped"] = splits[skipped].groupby(["model", "k"]).size()
    summary = summary.reset_index().fillna({"n_skipped": 0, "n_splits": 0})
    summary[["n_splits", "n_skipped"]] = summary[["n_splits", "n_skipped"]].astype(int)
    return summary[columns].sort_values(["model", "k"], ignore_index=True)
