"""``ClusteredLogisticRegression`` on synthetic populations from 10² to 10⁶ tasks: seconds,
peak memory, the adjusted Rand index of the planted groups, one more answer by
``partial_fit`` and a prediction, beside scikit-learn's pooled ``LogisticRegression`` with a
one-hot of the task on the same rows.

The population is issue 50's: ``make_logistic_population`` with 8 rows a task and 8 features
of 3 values, in 10 planted groups of equal size (seed 0); ``--rows-per-task`` and
``--features`` change it (the first step's table used 20 and 10). Each size runs in its own
interpreter with BLAS and Numba on one thread; its peak memory is that process's (data
included). The pooled regression runs in a second interpreter on the same rows (``lbfgs``,
``C = 1``) up to ``--pooled-up-to`` tasks.

Usage: python benchmarks/bench_logistic_scale.py [--tasks 100,1000,10000,100000,1000000]
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


def population(n_tasks: int, rows_per_task: int, n_features: int):
    from clusterednb.data.synthetic import make_logistic_population

    rng = np.random.default_rng(0)
    groups = [n_tasks // 10] * 10
    return make_logistic_population(
        rng, group_sizes=groups, rows_per_task=rows_per_task, n_features=n_features
    )


def fit_ours(frame, features, planted, result: dict) -> None:
    """Fit, score the partition, time one answer by ``partial_fit`` and 1 000 predictions."""
    from sklearn.metrics import adjusted_rand_score

    import clusterednb as cnb

    X, y, tasks = frame[features], frame["label"].to_numpy(), frame["task"].to_numpy()
    start = time.perf_counter()
    fitted = cnb.ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    result["seconds"] = time.perf_counter() - start
    truth = planted.labels_for(fitted.task_ids_.tolist())
    result["ari"] = adjusted_rand_score(truth, fitted.partition_)
    result["clusters"] = int(fitted.partition_.max()) + 1
    start = time.perf_counter()
    fitted.predict_proba(X.iloc[:1000], tasks[:1000])
    result["predict_seconds"] = time.perf_counter() - start
    answers = []
    for row in (3, 11, 19):  # three answers of known tasks, one at a time
        start = time.perf_counter()
        fitted.partial_fit(X.iloc[[row]], 1 - y[[row]], tasks[[row]])
        answers.append(time.perf_counter() - start)
    result["answer_seconds"] = float(np.median(answers))


def run_one(model: str, n_tasks: int, rows_per_task: int, n_features: int) -> dict:
    """Fit one model on the population of ``n_tasks`` tasks."""
    planted = population(n_tasks, rows_per_task, n_features)
    frame, features = planted.frame, planted.feature_names
    result: dict = {"model": model, "tasks": n_tasks, "rows": len(frame)}
    if model == "cnb-logistic":
        fit_ours(frame, features, planted, result)
    else:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import OneHotEncoder

        start = time.perf_counter()
        design = OneHotEncoder(handle_unknown="ignore").fit_transform(
            frame[[*features, "task"]].astype(str)
        )
        LogisticRegression(C=1.0, max_iter=1000).fit(design, frame["label"].to_numpy())
        result["seconds"] = time.perf_counter() - start
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def measured(model: str, n_tasks: int, args, env: dict) -> dict:
    """:func:`run_one` in a fresh interpreter."""
    command = [sys.executable, __file__, "--one", model, str(n_tasks)]
    command += [str(args.rows_per_task), str(args.features)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(f"{model} at {n_tasks} tasks failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2], *(int(a) for a in sys.argv[3:6]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="100,1000,10000,100000,1000000")
    parser.add_argument("--rows-per-task", type=int, default=8)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--pooled-up-to", type=int, default=100_000)
    args = parser.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(
        "| tasks | rows | cnb-logistic s | peak MB | ARI | clusters | one answer s | "
        "1 000 predictions s | pooled LR s | ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n_tasks in [int(n) for n in args.tasks.split(",")]:
        ours = measured("cnb-logistic", n_tasks, args, env)
        pooled = None
        if n_tasks <= args.pooled_up_to:
            pooled = measured("lr-pooled", n_tasks, args, env)
        peer = "—" if pooled is None else f"{pooled['seconds']:.2f}"
        ratio = "—" if pooled is None else f"{ours['seconds'] / pooled['seconds']:.1f}"
        print(
            f"| {n_tasks} | {ours['rows']} | {ours['seconds']:.2f} | {ours['peak_mb']:.0f} | "
            f"{ours['ari']:.3f} | {ours['clusters']} | {ours['answer_seconds']:.3f} | "
            f"{ours['predict_seconds']:.3f} | {peer} | {ratio} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
