"""``ClusteredLogisticRegression`` fitted from Parquet by Dask (``fit_logistic_from_parquet``)
on issue 50's population at 10⁵ to 10⁷ tasks: seconds, peak memory, ARI of the planted groups,
and, where it fits, the in-memory fit beside it (same seed).

The population is ``make_logistic_population``'s (8 rows a task, 8 features of 3 values, 10
planted groups of equal size, the groups drawn by seed 0), written in Parquet files of
``--partition-tasks`` whole tasks each (each file's rows drawn by its own seed, so any size is
written without holding it in memory). Each fit runs in its own interpreter (BLAS on one
thread, Dask's local threaded scheduler on the machine's cores); its peak memory is that
process's.

Usage: python benchmarks/bench_logistic_dask.py --tasks 100000,1000000 --folder /tmp/parquet
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
from pathlib import Path

import numpy as np

N_GROUPS = 10
ROWS_PER_TASK = 8
N_FEATURES = 8


def group_of(tasks: np.ndarray, n_tasks: int) -> np.ndarray:
    """The planted group of task numbers (equal groups of consecutive tasks)."""
    return tasks // (n_tasks // N_GROUPS)


def write_population(n_tasks: int, partition_tasks: int, folder: Path) -> Path:
    """Parquet files of the population (kept: written once per size)."""
    from clusterednb.data.synthetic import LogisticGroups

    target = folder / f"tasks-{n_tasks}"
    done = target / "_done"
    if done.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    groups = LogisticGroups.draw(np.random.default_rng(0), N_GROUPS, N_FEATURES, 3, 1.0, 2.0)
    width = len(str(n_tasks - 1))
    for number, start in enumerate(range(0, n_tasks, partition_tasks)):
        tasks = np.arange(start, min(start + partition_tasks, n_tasks))
        ids = [f"u{t:0{width}d}" for t in tasks]
        rng = np.random.default_rng(1000 + number)
        frame = groups.rows(rng, group_of(tasks, n_tasks), ids, ROWS_PER_TASK)
        frame.to_parquet(target / f"part-{number:05d}.parquet", index=False)
    done.touch()
    return target


def run_one(how: str, n_tasks: int, folder: Path) -> dict:
    """Fit from the Parquet files (``dask``) or from them read into memory (``memory``)."""
    from sklearn.metrics import adjusted_rand_score

    features = [f"f{j}" for j in range(N_FEATURES)]
    start = time.perf_counter()
    if how == "dask":
        from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

        model = fit_logistic_from_parquet(str(folder), "task", "label", features, random_state=0)
    else:
        import pandas as pd

        import clusterednb as cnb

        frame = pd.read_parquet(folder)
        model = cnb.ClusteredLogisticRegression(random_state=0).fit(
            frame[features], frame["label"].to_numpy(), frame["task"].to_numpy()
        )
    seconds = time.perf_counter() - start
    numbers = np.array([int(t[1:]) for t in model.task_ids_])
    ari = adjusted_rand_score(group_of(numbers, n_tasks), model.partition_)
    return {
        "how": how,
        "tasks": n_tasks,
        "seconds": seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "ari": ari,
        "clusters": int(model.partition_.max()) + 1,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="100000,1000000")
    parser.add_argument("--partition-tasks", type=int, default=100_000)
    parser.add_argument("--folder", default="/tmp/cnb-logistic-parquet")
    parser.add_argument("--memory-up-to", type=int, default=1_000_000)
    args = parser.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print("| tasks | rows | how | seconds | peak MB | ARI | clusters |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for n_tasks in [int(n) for n in args.tasks.split(",")]:
        folder = write_population(n_tasks, args.partition_tasks, Path(args.folder))
        for how in ("dask", "memory"):
            if how == "memory" and n_tasks > args.memory_up_to:
                continue
            command = [sys.executable, __file__, "--one", how, str(n_tasks), str(folder)]
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            sys.stderr.write(done.stderr)
            if done.returncode:
                print(f"| {n_tasks} | {n_tasks * ROWS_PER_TASK} | {how} | failed | | | |")
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"| {n_tasks} | {n_tasks * ROWS_PER_TASK} | {how} | {result['seconds']:.1f} | "
                f"{result['peak_mb']:.0f} | {result['ari']:.3f} | {result['clusters']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
