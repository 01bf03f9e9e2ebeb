"""Naive Bayes' default (``relevance="auto"``) against ``relevance=False`` on small planted
populations, where every column is a signal: what the screen costs when it has too few rows
to tell a signal column from noise.

Each population is :func:`~clusterednb.data.synthetic.make_planted_population` (groups of
tasks with their own class-conditional distributions of 4 columns of 4 values); half of each
task's rows train, the other half test. The score is the mean over tasks of the test AUC,
and the table gives both fits' means over the seeds, their paired difference (mean ± s.e.)
and the columns the screen held per fit.

Usage: python benchmarks/bench_planted_screen.py [--engines exact,gibbs,bhc,variational]
       [--seeds 10]
"""

from __future__ import annotations

import argparse
import platform
import warnings
from datetime import date

import numpy as np
from sklearn.metrics import roc_auc_score

from clusterednb import ClusteredNB
from clusterednb.data.synthetic import make_planted_population

POPULATIONS = [((3, 2, 2), 10), ((3, 2, 2), 20), ((4, 3, 3), 10), ((4, 3, 3), 40)]
"""(tasks in each group, rows a task)."""


def task_auc(frame, probability: np.ndarray) -> float:
    """The mean over tasks (with both classes among their test rows) of the AUC."""
    scores = [
        roc_auc_score(frame["label"].iloc[rows], probability[rows])
        for rows in frame.groupby("task").indices.values()
        if frame["label"].iloc[rows].nunique() == 2
    ]
    return float(np.mean(scores))


def one_population(engine: str, sizes: tuple, rows: int, seed: int) -> tuple[float, float, int]:
    """The default's and the plain fit's AUC on one population, and the columns held."""
    population = make_planted_population(
        np.random.default_rng(seed), group_sizes=sizes, rows_per_task=rows, n_features=4
    )
    frame, names = population.frame, population.feature_names
    rng = np.random.default_rng(100 + seed)
    test = np.zeros(len(frame), dtype=bool)
    for own in frame.groupby("task").indices.values():
        test[rng.permutation(own)[: own.size // 2]] = True
    train, held_out = frame[~test], frame[test]
    scores, n_held = [], 0
    for relevance in ("auto", False):
        model = ClusteredNB(inference=engine, relevance=relevance, random_state=0, progress=False)
        model.fit(train[names], train["label"], train["task"])
        if relevance == "auto":
            n_held = len(model.fit_summary().get("columns_held_shared", []))
        probability = model.predict_proba(held_out[names], held_out["task"])[:, 1]
        scores.append(task_auc(held_out, probability))
    return scores[0], scores[1], n_held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="exact,gibbs,bhc,variational")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    print(f"{platform.node()} · {platform.processor() or platform.machine()} · {date.today()}")
    print("| engine | groups | rows a task | auto | plain | auto − plain | held a fit |")
    print("|---|---|---|---|---|---|---|")
    for engine in args.engines.split(","):
        for sizes, rows in POPULATIONS:
            found = np.array([one_population(engine, sizes, rows, s) for s in range(args.seeds)])
            gap = found[:, 0] - found[:, 1]
            error = gap.std(ddof=1) / np.sqrt(gap.size)
            print(
                f"| {engine} | {sizes} | {rows} | {found[:, 0].mean():.3f} | "
                f"{found[:, 1].mean():.3f} | {gap.mean():+.4f} ± {error:.4f} | "
                f"{found[:, 2].mean():.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
