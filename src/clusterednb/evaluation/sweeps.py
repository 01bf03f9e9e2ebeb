"""Protocols A (asymmetric losses, thesis Fig. 4-8) and L (learning curves, Fig. 4-1/4-3).

Both hold out rows of every task at once, fit every model on the rest, and score every
task's held-out rows: one fit per (repetition[, training fraction]) serves all tasks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.evaluation.datasets import EvalDataset
from clusterednb.evaluation.models.registry import check_models, fit_predict
from clusterednb.evaluation.plots import plot_learning_curves, plot_loss_ratio
from clusterednb.evaluation.result_store import CellStore
from clusterednb.evaluation.runner import run_cells
from clusterednb.evaluation.transfer import discretised

LOSS_COLUMNS = ["repetition", "model", "n", "loss", "n_test"]
CURVE_COLUMNS = ["repetition", "step", "fraction", "model", "task", "n_train", "n_test", "error"]
EXPONENTS = tuple(range(-8, 9))


def per_task_training_mask(
    tasks: np.ndarray, rng: np.random.Generator, fraction: float, min_test: int = 1
) -> np.ndarray:
    """Choose ``round(fraction · n_u)`` training rows of each task, within ``[1, n_u − min_test]``.

    Tasks are visited in sorted order, so the draw depends only on the generator's state.

    Returns
    -------
    ndarray of shape (n_rows,), dtype bool

    Examples
    --------
    >>> tasks = np.array(["a"] * 10 + ["b"] * 2)
    >>> mask = per_task_training_mask(tasks, np.random.default_rng(0), 0.5)
    >>> int(mask[:10].sum()), int(mask[10:].sum())  # b keeps one row to test on
    (5, 1)
    """
    mask = np.zeros(tasks.size, dtype=bool)
    for _, rows in sorted(pd.Series(tasks).groupby(tasks).indices.items()):
        n_train = int(np.clip(round(fraction * rows.size), 1, max(rows.size - min_test, 1)))
        mask[rng.choice(rows, size=n_train, replace=False)] = True
    return mask


def _predict(
    dataset: EvalDataset, model: str, train: pd.DataFrame, test: pd.DataFrame, seed: int
) -> np.ndarray:
    """``P(y = 1)`` of the test rows under ``model`` trained on ``train`` (a discretised split
    of ``dataset``)."""
    return fit_predict(
        model,
        train,
        test,
        dataset.features,
        seed=seed,
        text=dataset.text,
        n_bins=dataset.n_bins,
    )


def _labelled(dataset: EvalDataset) -> pd.DataFrame:
    return dataset.frame[dataset.frame["label"].notna()].reset_index(drop=True)


# ---------------------------------------------------------------------------- protocol A
def loss_cell(
    dataset: EvalDataset, models: tuple[str, ...], seed: int, holdout: float, repetition: int
) -> list[dict]:
    """Hold out ``holdout`` of every task's rows; realised ``L_n`` loss of each model and n.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> rows = loss_cell(toy.eval_dataset(), ("ns", "cs"), seed=0, holdout=0.25, repetition=0)
    >>> len(rows), sorted({row["n"] for row in rows}) == list(EXPONENTS), rows[0]["n_test"]
    (34, True, 30)
    """
    frame = _labelled(dataset)
    rng = np.random.default_rng([seed, repetition, 1])
    train_mask = per_task_training_mask(frame["task"].to_numpy(), rng, 1.0 - holdout)
    train, test = discretised(dataset, frame[train_mask], frame[~train_mask])
    y = test["label"].to_numpy(dtype=int)
    rows = []
    for model in models:
        p1 = _predict(dataset, model, train, test, seed + repetition)
        for n in EXPONENTS:
            decide = p1 > 1.0 / (1.0 + 2.0**n)  # the Bayes decision under L_n
            loss = np.where(decide & (y == 0), 1.0, 0.0) + np.where(~decide & (y == 1), 2.0**n, 0)
            rows.append(
                {
                    "repetition": repetition,
                    "model": model,
                    "n": n,
                    "loss": float(loss.mean()),
                    "n_test": int(y.size),
                }
            )
    return rows


def run_loss_sweep(
    dataset: EvalDataset,
    models: tuple[str, ...],
    out_dir: str | Path,
    repeats: int = 10,
    seed: int = 0,
    holdout: float = 0.05,
    jobs: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Protocol A: mean realised loss under ``L_n``, ``n = −8..8``, and its ratio to No-Sharing.

    Writes ``loss_splits.csv`` (per repetition), ``loss.csv`` (``model, n, loss_mean,
    loss_se, ratio_to_ns``) and ``loss_ratio.png``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> summary = run_loss_sweep(eval_toy.eval_dataset(), ("ns", "cs"), toy.scratch_file("loss"),
    ...                          repeats=2, holdout=0.25, progress=False)
    >>> summary[summary["model"] == "ns"]["ratio_to_ns"].unique().tolist()  # ns against itself
    [1.0]
    """
    check_models(models)
    settings = {"models": list(models), "repeats": repeats, "seed": seed, "holdout": holdout}
    store = CellStore(out_dir, "loss", settings, LOSS_COLUMNS)
    done = store.done(["repetition"])
    cells = [(r,) for r in range(repeats) if (str(r),) not in done]
    run_cells(
        cells,
        lambda r: loss_cell(dataset, models, seed, holdout, r),
        store,
        dataset,
        jobs,
        desc=f"loss sweep {dataset.name}",
        progress=progress,
        remote=lambda r: (loss_cell, (models, seed, holdout, r)),
    )
    rows = store.rows()
    grouped = rows.groupby(["model", "n"])["loss"]
    summary = pd.DataFrame(
        {
            "loss_mean": grouped.mean(),
            "loss_se": grouped.std(ddof=1) / np.sqrt(grouped.count()),
        }
    ).reset_index()
    if "ns" in models:
        baseline = summary[summary["model"] == "ns"].set_index("n")["loss_mean"]
        summary["ratio_to_ns"] = summary["loss_mean"] / summary["n"].map(baseline)
    summary.to_csv(Path(out_dir) / "loss.csv", index=False)
    plot_loss_ratio(summary, Path(out_dir) / "loss_ratio.png", dataset.name)
    return summary


# ---------------------------------------------------------------------------- protocol L
def curve_cell(
    dataset: EvalDataset,
    models: tuple[str, ...],
    seed: int,
    fraction: float,
    repetition: int,
    step: int,
) -> list[dict]:
    """Train every model on ``fraction`` of every task's rows; 0-1 error per task.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> rows = curve_cell(toy.eval_dataset(), ("ns",), seed=0, fraction=0.5, repetition=0,
    ...                   step=3)
    >>> [(row["task"], row["n_train"], row["n_test"]) for row in rows][:2]
    [('u0', 10, 10), ('u1', 10, 10)]
    """
    frame = _labelled(dataset)
    rng = np.random.default_rng([seed, repetition, step, 2])
    train_mask = per_task_training_mask(frame["task"].to_numpy(), rng, fraction)
    train, test = discretised(dataset, frame[train_mask], frame[~train_mask])
    n_train = train.groupby("task").size()
    rows = []
    for model in models:
        p1 = _predict(dataset, model, train, test, seed + repetition)
        wrong = (p1 > 0.5).astype(int) != test["label"].to_numpy(dtype=int)
        for task, error in pd.Series(wrong).groupby(test["task"].to_numpy()).mean().items():
            rows.append(
                {
                    "repetition": repetition,
                    "step": step,
                    "fraction": fraction,
                    "model": model,
                    "task": task,
                    "n_train": int(n_train[task]),
                    "n_test": int((test["task"] == task).sum()),
                    "error": float(error),
                }
            )
    return rows


def run_learning_curves(
    dataset: EvalDataset,
    models: tuple[str, ...],
    out_dir: str | Path,
    repeats: int = 3,
    steps: int = 10,
    seed: int = 0,
    jobs: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Protocol L: 0-1 error against the fraction of every task's rows used for training.

    Fractions run from one row of a median task (the first point of the curve, where the
    models differ most) to 95 %, spaced evenly on a log scale; every task trains on at least
    one row and keeps at least one held out. Writes ``curves_splits.csv`` (per task),
    ``curves.csv`` (``model, fraction, error_mean, error_se`` over tasks),
    ``curves_mean.png`` and ``curves_per_task.png`` (a grid of per-task curves).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> summary = run_learning_curves(eval_toy.eval_dataset(), ("ns",), toy.scratch_file("curves"),
    ...                               repeats=1, steps=3, progress=False)
    >>> summary["fraction"].tolist()  # from one row of a median task (1/20) to 95 %
    [0.05, 0.2179, 0.95]
    """
    check_models(models)
    median_rows = float(_labelled(dataset).groupby("task").size().median())
    low = float(np.clip(1.0 / median_rows, 0.001, 0.5))
    fractions = [round(f, 4) for f in np.geomspace(low, 0.95, steps)]
    settings = {"models": list(models), "repeats": repeats, "steps": steps, "seed": seed}
    store = CellStore(out_dir, "curves", settings, CURVE_COLUMNS)
    done = store.done(["repetition", "step"])
    cells = [(r, s) for r in range(repeats) for s in range(steps) if (str(r), str(s)) not in done]
    run_cells(
        cells,
        lambda r, s: curve_cell(dataset, models, seed, fractions[s], r, s),
        store,
        dataset,
        jobs,
        desc=f"curves {dataset.name}",
        progress=progress,
        remote=lambda r, s: (curve_cell, (models, seed, fractions[s], r, s)),
    )
    rows = store.rows()
    per_task = rows.groupby(["model", "fraction", "task"])["error"].mean()
    grouped = per_task.groupby(level=["model", "fraction"])
    summary = pd.DataFrame(
        {
            "error_mean": grouped.mean(),
            "error_se": grouped.std(ddof=1) / np.sqrt(grouped.count()),
        }
    ).reset_index()
    summary.to_csv(Path(out_dir) / "curves.csv", index=False)
    plot_learning_curves(summary, per_task.reset_index(), Path(out_dir), dataset.name)
    return summary
