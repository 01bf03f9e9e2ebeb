"""``ClusteredLogisticRegression`` on synthetic populations from 10² to 10⁵ tasks: seconds,
peak memory and the adjusted Rand index of the planted groups, beside scikit-learn's pooled
``LogisticRegression`` with a one-hot of the task on the same rows.

The population is ``make_logistic_population`` with 20 rows a task and 10 features of 3
values, in 10 planted groups of equal size (seed 0). Each size runs in its own interpreter with
BLAS and Numba on one thread; its peak memory is that process's (data included). The pooled
regression runs in a second interpreter on the same rows (``lbfgs``, ``C = 1``).

Usage: python benchmarks/bench_logistic_scale.py [--tasks 100,1000,10000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np


def population(n_tasks: int):
    from clusterednb.data.synthetic import make_logistic_population

    rng = np.random.default_rng(0)
    groups = [n_tasks // 10] * 10
    return make_logistic_population(rng, group_sizes=groups, rows_per_task=20, n_features=10)


def run_one(model: str, n_tasks: int) -> dict:
    """Fit one model on the population of ``n_tasks`` tasks; seconds, peak MB, ARI."""
    from sklearn.metrics import adjusted_rand_score

    planted = population(n_tasks)
    frame = planted.frame
    features = planted.feature_names
    y, tasks = frame["label"].to_numpy(), frame["task"].to_numpy()
    result: dict = {"model": model, "tasks": n_tasks, "rows": len(frame)}
    start = time.perf_counter()
    if model == "cnb-logistic":
        import clusterednb as cnb

        fitted = cnb.ClusteredLogisticRegression(random_state=0).fit(frame[features], y, tasks)
        result["seconds"] = time.perf_counter() - start
        truth = planted.labels_for(fitted.task_ids_.tolist())
        result["ari"] = adjusted_rand_score(truth, fitted.partition_)
        result["clusters"] = int(fitted.partition_.max()) + 1
    else:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import OneHotEncoder

        design = OneHotEncoder(handle_unknown="ignore").fit_transform(
            frame[[*features, "task"]].astype(str)
        )
        LogisticRegression(C=1.0, max_iter=1000).fit(design, y)
        result["seconds"] = time.perf_counter() - start
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2], int(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="100,1000,10000,100000")
    args = parser.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print("| tasks | rows | cnb-logistic s | peak MB | ARI | clusters | pooled LR s | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n_tasks in [int(n) for n in args.tasks.split(",")]:
        results = {}
        for model in ("cnb-logistic", "lr-pooled"):
            command = [sys.executable, __file__, "--one", model, str(n_tasks)]
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            if done.returncode:
                raise SystemExit(f"{model} at {n_tasks} tasks failed:\n{done.stderr}")
            results[model] = json.loads(done.stdout.strip().splitlines()[-1])
        ours, pooled = results["cnb-logistic"], results["lr-pooled"]
        print(
            f"| {n_tasks} | {ours['rows']} | {ours['seconds']:.2f} | {ours['peak_mb']:.0f} | "
            f"{ours['ari']:.3f} | {ours['clusters']} | {pooled['seconds']:.2f} | "
            f"{ours['seconds'] / pooled['seconds']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
