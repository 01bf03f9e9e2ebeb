"""The cost of one more answer: ``ClusteredLogisticRegression.partial_fit`` with one row
against a full ``fit`` of the same rows, on a synthetic population
(``make_logistic_population``: groups of 100 tasks, 20 rows a task, 10 features), or on a
table (``--csv``, e.g. ``cnb meeting simulate``'s ``requests.csv`` with ``--task user --label
accepted``: fitted on every row but the first, which is then the answer learnt).

Each figure is the median of ``--repeats`` runs in this process, BLAS and Numba on one
thread (as the evaluation workers). Prints the ratio partial / full.

Usage: python benchmarks/bench_logistic_partial_fit.py [--tasks 1000] [--repeats 3]
       [--csv FILE --task COLUMN --label COLUMN]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import clusterednb as cnb
from clusterednb.data.synthetic import make_logistic_population


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--csv", help="a table instead of the synthetic population")
    parser.add_argument("--task", default="task")
    parser.add_argument("--label", default="label")
    args = parser.parse_args()
    if args.csv:
        frame = pd.read_csv(args.csv)
        fitted = slice(1, None)  # the first row is the answer learnt
    else:
        rng = np.random.default_rng(0)
        groups = [100] * (args.tasks // 100)
        population = make_logistic_population(
            rng, group_sizes=groups, rows_per_task=20, n_features=10
        )
        frame = population.frame
        fitted = slice(None)
    features = [c for c in frame.columns if c not in (args.task, args.label)]
    X, y = frame[features], frame[args.label].to_numpy()
    tasks = frame[args.task].to_numpy()
    answer = X.iloc[[0]], y[[0]], tasks[[0]]
    X, y, tasks = X.iloc[fitted], y[fitted], tasks[fitted]
    full, partial = [], []
    with threadpool_limits(1):
        for _ in range(args.repeats):
            start = time.perf_counter()
            model = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
            full.append(time.perf_counter() - start)
            start = time.perf_counter()
            model.partial_fit(*answer)
            partial.append(time.perf_counter() - start)
    full_s, partial_s = statistics.median(full), statistics.median(partial)
    n_tasks = len(np.unique(tasks))
    print(f"{platform.processor() or platform.machine()}, {n_tasks} tasks, {len(y)} rows")
    print(f"full fit: {full_s:.2f} s (median of {args.repeats}: {[round(s, 2) for s in full]})")
    print(f"one answer (partial_fit): {partial_s:.2f} s ({[round(s, 2) for s in partial]})")
    print(f"ratio partial / full: {partial_s / full_s:.3f}")


if __name__ == "__main__":
    main()
