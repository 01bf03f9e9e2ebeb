"""Irrelevant columns against the clustered models (issue 49).

A population of tasks in three groups that differ only in how the label follows four numeric
features (drawn alike in every group); 0, 1, 5 and 20 irrelevant columns are added (numeric
N(0, 1) and five-colour categorical, alternately). Ten rows of each task train, the other
thirty test; the score is the test AUC averaged over tasks (tasks with one class skipped),
then over seeds. Variants: more tasks, fewer rows, and correlated noise (the noise columns
share one latent factor). Prints a Markdown table with each model's mean AUC (± s.e. over
seeds) and mean fit time.

Run: ``python benchmarks/bench_irrelevant_columns.py [--seeds 3] [--variants base,...]
[--same-rows]``
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from datetime import date

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.metrics import roc_auc_score

from clusterednb import (
    ClusteredBoosting,
    ClusteredLearner,
    ClusteredLogisticRegression,
    ClusteredNB,
)

COLOURS = np.array(list("rgbyk"))
CUTS = [-1, -0.3, 0.3, 1]
WEIGHTS = 1.5 * np.array([[2, -2, 1, 0], [-2, 2, 0, 1], [0, 1, -2, 2]], dtype=float)
VARIANTS = {
    "base": {"n_tasks": 60, "n_train": 10, "correlated": False},
    "more-tasks": {"n_tasks": 120, "n_train": 10, "correlated": False},
    "fewer-rows": {"n_tasks": 60, "n_train": 6, "correlated": False},
    "correlated-noise": {"n_tasks": 60, "n_train": 10, "correlated": True},
}


def population(
    rng: np.random.Generator,
    n_tasks: int,
    n_train: int,
    n_noise: int,
    correlated: bool,
    noise_rng: np.random.Generator | None = None,
) -> pd.DataFrame:
    """Rows of every task, with columns x0..x3, the noise columns, task, y and split.
    ``noise_rng`` (default ``rng``) draws the noise columns' own values: given, the other
    columns and the labels are the same rows whatever the number of noise columns."""
    noise_rng = rng if noise_rng is None else noise_rng
    n_rows = n_train + 30
    frames = []
    for task in range(n_tasks):
        x = rng.normal(size=(n_rows, 4))
        y = (rng.random(n_rows) < 1 / (1 + np.exp(-x @ WEIGHTS[task % 3]))).astype(int)
        frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(4)])
        latent = rng.normal(size=n_rows)
        for j in range(n_noise):
            values = noise_rng.normal(size=n_rows)
            if correlated:
                values = 0.8 * latent + 0.6 * values
            if j % 2:
                frame[f"noise{j}"] = np.array(list("rgbyk"))[
                    np.digitize(values, [-1, -0.3, 0.3, 1])
                ]
            else:
                frame[f"noise{j}"] = values
        frame["task"], frame["y"] = task, y
        frame["split"] = np.where(np.arange(n_rows) < n_train, "train", "test")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def task_auc(test: pd.DataFrame, probability: np.ndarray) -> float:
    """Test AUC averaged over tasks with both classes."""
    scored = test.assign(p=probability)
    values = [
        roc_auc_score(rows.y, rows.p) for _, rows in scored.groupby("task") if rows.y.nunique() == 2
    ]
    return float(np.mean(values))


def pooled_lr(train, test, features, seed):
    columns = [*features, "task"]
    both = pd.get_dummies(pd.concat([train, test])[columns].astype({"task": str}), dtype=float)
    model = LogisticRegression(max_iter=3000).fit(both.iloc[: len(train)], train.y)
    return model.predict_proba(both.iloc[len(train) :])[:, 1]


def oracle_groups(penalty: str):
    """Diagnostic, not a model a user could fit: one logistic regression per true group
    (``task % 3``), its L2 or L1 penalty chosen by 5-fold cross-validation on the group's
    training rows, reading every column (a colour one-hot). It is told the partition the
    clustered models must find, so its fall from the clean table is what the noise columns
    cost a learner that has the partition for free."""

    def run(train, test, features, seed):
        both = pd.get_dummies(pd.concat([train, test])[features], dtype=float)
        train_x, test_x = both.iloc[: len(train)], both.iloc[len(train) :]
        probability = np.zeros(len(test))
        for group in range(3):
            fit_rows = (train.task % 3 == group).to_numpy()
            test_rows = (test.task % 3 == group).to_numpy()
            model = LogisticRegressionCV(
                Cs=10,
                cv=5,
                penalty=penalty,
                solver="liblinear" if penalty == "l1" else "lbfgs",
                scoring="neg_log_loss",
                max_iter=3000,
                random_state=seed,
            ).fit(train_x[fit_rows], train.y[fit_rows])
            probability[test_rows] = model.predict_proba(test_x[test_rows])[:, 1]
        return probability

    return run


def clustered(estimator: Callable[[int], object]):
    def run(train, test, features, seed):
        model = estimator(seed).fit(train[features], train.y, train.task)
        return model.predict_proba(test[features], test.task)[:, 1]

    return run


MODELS = {
    "lr-pooled": pooled_lr,
    # diagnostics told the true groups (see oracle_groups)
    "oracle-groups-l2": oracle_groups("l2"),
    "oracle-groups-l1": oracle_groups("l1"),
    "cnb-gibbs": clustered(lambda s: ClusteredNB(random_state=s, progress=False)),
    "cnb-gibbs-plain": clustered(
        lambda s: ClusteredNB(relevance=False, random_state=s, progress=False)
    ),
    "cnb-gibbs+relevance": clustered(
        lambda s: ClusteredNB(relevance=True, random_state=s, progress=False)
    ),
    "cnb-variational": clustered(lambda s: ClusteredNB(inference="variational", random_state=s)),
    "cnb-variational-plain": clustered(
        lambda s: ClusteredNB(inference="variational", relevance=False, random_state=s)
    ),
    "cnb-variational+relevance": clustered(
        lambda s: ClusteredNB(inference="variational", relevance=True, random_state=s)
    ),
    "cnb-bhc": clustered(lambda s: ClusteredNB(inference="bhc", random_state=s)),
    "cnb-bhc-plain": clustered(
        lambda s: ClusteredNB(inference="bhc", relevance=False, random_state=s)
    ),
    "cnb-logistic": clustered(lambda s: ClusteredLogisticRegression(random_state=s)),
    "cnb-logistic-plain": clustered(
        lambda s: ClusteredLogisticRegression(relevance=False, random_state=s)
    ),
    "cnb-logistic+relevance": clustered(
        lambda s: ClusteredLogisticRegression(relevance=True, random_state=s)
    ),
    # LightGBM started from the regressions (the [trees] extra): the booster of issue 49
    "cnb-boost": clustered(lambda s: ClusteredBoosting(random_state=s)),
    "cnb-boost+relevance": clustered(
        lambda s: ClusteredBoosting(clustering_params={"relevance": True}, random_state=s)
    ),
    # LightGBM inside the clusters of the regressions (the [trees] extra)
    "cnb-lgbm": clustered(lambda s: ClusteredLearner("lightgbm", random_state=s)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument(
        "--same-rows",
        action="store_true",
        help="draw the noise columns from their own stream, so that every number of noise "
        "columns is added to the same rows and labels (without it, as in the issue, the noise "
        "draws shift every later task's rows: each column of the table is another population)",
    )
    args = parser.parse_args()
    print(f"{platform.node()} · {platform.processor() or platform.machine()} · {date.today()}")
    print("| variant | model | 0 | 1 | 5 | 20 | fit s (20) |")
    print("|---|---|---|---|---|---|---|")
    for variant in args.variants.split(","):
        settings = VARIANTS[variant]
        for name in args.models.split(","):
            cells, seconds = [], 0.0
            for n_noise in (0, 1, 5, 20):
                scores = []
                for seed in range(args.seeds):
                    noise_rng = np.random.default_rng([seed, 49]) if args.same_rows else None
                    frame = population(
                        np.random.default_rng(seed),
                        n_noise=n_noise,
                        noise_rng=noise_rng,
                        **settings,
                    )
                    features = [c for c in frame.columns if c not in ("task", "y", "split")]
                    train = frame[frame.split == "train"]
                    test = frame[frame.split == "test"]
                    start = time.perf_counter()
                    probability = MODELS[name](train, test, features, seed)
                    if n_noise == 20:
                        seconds += (time.perf_counter() - start) / args.seeds
                    scores.append(task_auc(test, probability))
                error = np.std(scores, ddof=1) / np.sqrt(len(scores)) if len(scores) > 1 else 0
                cells.append(f"{np.mean(scores):.3f} ± {error:.3f}")
            print(f"| {variant} | {name} | {' | '.join(cells)} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
