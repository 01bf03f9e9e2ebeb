"""What the exact engine's ``relevance=True`` costs, and how near the relevance sampler comes
to it: ``ClusteredNB(inference="exact")`` with and without relevance, and the Gibbs relevance
engine (the harness's 200 sweeps), on every labelled row of a data set's first ``U`` tasks.

Fits alternate in one interpreter after one untimed fit of each; the medians and the ratios to
the plain exact fit are printed, with the largest difference between the sampler's and the
exact engine's ``feature_relevance_`` and predicted probabilities (on the fitted rows).

Usage: python benchmarks/bench_exact_relevance.py [--dataset landmine] [--tasks 6,7,8]
       [--repeats 5] [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import date

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="landmine")
    parser.add_argument("--tasks", default="6,7,8")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data-dir", default="../shared/data")
    args = parser.parse_args()

    from clusterednb.evaluation.datasets import load_dataset
    from clusterednb.evaluation.transfer import discretised

    dataset = load_dataset(args.dataset, args.data_dir)
    frame = dataset.frame[dataset.frame["label"].notna()]
    kinds = {
        "exact": {"inference": "exact", "relevance": False},
        "exact+relevance": {"inference": "exact", "relevance": True},
        "gibbs+relevance": {"inference": "gibbs", "relevance": True, "random_state": 0},
    }
    print(f"{platform.node()} · {platform.processor() or platform.machine()} · {date.today()}")
    for n_tasks in (int(n) for n in args.tasks.split(",")):
        first = sorted(frame["task"].unique())[:n_tasks]
        rows = frame[frame["task"].isin(first)]
        train, _ = discretised(dataset, rows, rows.iloc[:1])
        X, y, tasks = train[dataset.features], train["label"], train["task"]

        table = (X, y, tasks)
        fitted = {kind: _fit(kinds[kind], table)[1] for kind in kinds}  # kernels loaded
        seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(args.repeats):
            for kind in kinds:
                seconds[kind].append(_fit(kinds[kind], table)[0])
        medians = {kind: statistics.median(times) for kind, times in seconds.items()}
        exact, sampled = fitted["exact+relevance"], fitted["gibbs+relevance"]
        relevance_gap = np.abs(exact.feature_relevance_ - sampled.feature_relevance_).max()
        proba_gap = np.abs(exact.predict_proba(X, tasks) - sampled.predict_proba(X, tasks)).max()
        print(f"{args.dataset}, first {n_tasks} tasks, {len(train)} rows:")
        for kind, median in medians.items():
            print(f"  {kind:<16} {median * 1e3:9.1f} ms  {median / medians['exact']:6.2f}×")
        print(f"  sampler − exact: relevance {relevance_gap:.3f}, P(y | x) {proba_gap:.3f}")
        print(f"  exact relevance: {np.round(exact.feature_relevance_, 3).tolist()}")


def _fit(params: dict, table: tuple) -> tuple[float, object]:
    """Seconds of one ``ClusteredNB(**params)`` fit on ``table`` (X, y, tasks), and the model."""
    from clusterednb import ClusteredNB

    model = ClusteredNB(progress=False, **params)
    start = time.perf_counter()
    model.fit(*table)
    return time.perf_counter() - start, model


if __name__ == "__main__":
    main()
