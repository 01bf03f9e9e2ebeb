"""CompleteSharingNB fit + predict against scikit-learn's CategoricalNB, same data, same run.

200 000 rows × 15 features × 7 values, 2 classes, 50 tasks; integer-coded numpy input read
with the default ``numeric="auto"`` (the detection of numeric columns included). The two
are timed alternately in one interpreter; prints the best and the median of the repetitions
for each and their ratios. ``PYTHONPATH=WORKTREE/src`` times an earlier commit's code.

Usage: python benchmarks/bench_naive_bayes.py [--rows N] [--repeats R]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from sklearn.naive_bayes import CategoricalNB

from clusterednb import CompleteSharingNB


def _alternated_times(runs, repeats: int) -> list[list[float]]:
    """Seconds of each of ``runs``, timed in turn ``repeats`` times."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, seen in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            seen.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=15)
    parser.add_argument("--values", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=7)
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
    t_ours, t_sklearn = _alternated_times([ours, sklearn], args.repeats)
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )
    print(f"data: {args.rows} rows x {args.features} features x {args.values} values")
    for name, seen in (("CompleteSharingNB", t_ours), ("sklearn CategoricalNB", t_sklearn)):
        print(f"{name} fit+predict_proba: best {min(seen):.3f} s, median {np.median(seen):.3f} s")
    print(
        f"speed-up (sklearn / ours): best {min(t_sklearn) / min(t_ours):.2f}x, "
        f"median {np.median(t_sklearn) / np.median(t_ours):.2f}x"
    )


if __name__ == "__main__":
    main()
