"""CompleteSharingNB fit + predict against scikit-learn's CategoricalNB, same data, same run.

200 000 rows × 15 features × 7 values, 2 classes, 50 tasks; integer-coded numpy input.
Prints the median of several repetitions for each and their ratio.

Usage: python benchmarks/bench_naive_bayes.py [--rows N] [--repeats R]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from sklearn.naive_bayes import CategoricalNB

from clusterednb import CompleteSharingNB


def _median_time(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=15)
    parser.add_argument("--values", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.integers(0, args.values, size=(args.rows, args.features))
    y = rng.integers(0, 2, size=args.rows)
    tasks = rng.integers(0, 50, size=args.rows)

    def ours() -> np.ndarray:
        return CompleteSharingNB().fit(X, y, tasks).predict_proba(X, tasks)

    def sklearn() -> np.ndarray:
        return CategoricalNB(alpha=1.0).fit(X, y).predict_proba(X)

    ours(), sklearn()  # warm-up
    t_ours = _median_time(ours, args.repeats)
    t_sklearn = _median_time(sklearn, args.repeats)
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )
    print(f"data: {args.rows} rows x {args.features} features x {args.values} values")
    print(f"CompleteSharingNB fit+predict_proba: {t_ours:.3f} s")
    print(f"sklearn CategoricalNB fit+predict_proba: {t_sklearn:.3f} s")
    print(f"speed-up (sklearn / ours): {t_sklearn / t_ours:.2f}x")


if __name__ == "__main__":
    main()
