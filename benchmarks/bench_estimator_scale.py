"""The estimator path at many users: ``ClusteredNB(...).fit(X, y, tasks)`` on raw rows, time
and peak memory, each size in its own process.

What is timed is the whole call a user makes: schema inference and encoding of the rows,
per-user counts (dense below 256 MiB of table, sparse above: ``clusterednb.stats.sparse_counts``),
the engine (Gibbs: one sweep without split–merge moves; variational: the default settings)
and the summary. The rows (10 per user, 15 features x 7 values, 50 planted groups, int8
codes) are drawn first; the peak resident memory is reset after drawing them, so it counts
the fit with its input resident.

``--baseline DIR`` runs the same in a second interpreter with ``PYTHONPATH=DIR`` (e.g. a
worktree of an earlier commit's ``src``) and prints the ratio.

Usage: python benchmarks/bench_estimator_scale.py [--users 100000,1000000]
       [--engines gibbs,variational] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_GROUPS, N_FEATURES, N_VALUES, ROWS = 50, 15, 7, 10


def planted_rows(rng: np.random.Generator, n_users: int):
    """Rows of a planted population: codes (n_users·ROWS, N_FEATURES) int8, labels int8,
    user ids int64, and each user's group (n_users,)."""
    theta = rng.dirichlet(np.full(N_VALUES, 0.5), size=(N_GROUPS, 2, N_FEATURES))
    cumulative = theta.cumsum(axis=-1)
    group = rng.integers(0, N_GROUPS, size=n_users)
    tasks = np.repeat(np.arange(n_users), ROWS)
    y = rng.integers(0, 2, size=tasks.size).astype(np.int8)
    X = np.empty((tasks.size, N_FEATURES), dtype=np.int8)
    for start in range(0, tasks.size, 1_000_000):
        rows = slice(start, start + 1_000_000)
        draws = rng.random((tasks[rows].size, N_FEATURES, 1))
        picked = (draws > cumulative[group[tasks[rows]], y[rows]]).sum(axis=-1)
        X[rows] = np.minimum(picked, N_VALUES - 1)
    return X, y, tasks, group


def run_one(engine: str, n_users: int) -> dict:
    """Draw the rows, fit once, return seconds, peak memory and recovery."""
    sys.path.insert(0, str(HERE))
    from sklearn.metrics import adjusted_rand_score

    from bench_scale import peak_memory_gb, reset_peak_memory
    from clusterednb import ClusteredNB

    X, y, tasks, group = planted_rows(np.random.default_rng(1), n_users)
    settings = {"n_sweeps": 1, "burn_in": 0, "split_merge": False} if engine == "gibbs" else {}
    model = ClusteredNB(inference=engine, random_state=0, progress=False, **settings)
    reset_peak_memory()
    start = time.perf_counter()
    model.fit(X, y, tasks)
    seconds = time.perf_counter() - start
    return {
        "engine": engine,
        "users": n_users,
        "seconds": round(seconds, 2),
        "peak_gb": round(peak_memory_gb(), 2),
        "counts": type(model.counts_).__name__,
        "ari": round(adjusted_rand_score(group, model.partition_), 3),
    }


def measure(engine: str, n_users: int, pythonpath: str | None, timeout: float) -> dict:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, __file__, "--one", engine, str(n_users)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"engine": engine, "users": n_users, "error": f"over {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"engine": engine, "users": n_users, "error": last[:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="100000,1000000")
    parser.add_argument("--engines", default="gibbs,variational")
    parser.add_argument("--baseline", help="PYTHONPATH of the code to compare with")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "USERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return
    for engine in args.engines.split(","):
        measure(engine, 2_000, None, args.timeout)  # compile or load the kernels first
        for n_users in (int(n) for n in args.users.split(",")):
            now = measure(engine, n_users, None, args.timeout)
            print("this code:", json.dumps(now), flush=True)
            if args.baseline:
                measure(engine, 2_000, args.baseline, args.timeout)
                before = measure(engine, n_users, args.baseline, args.timeout)
                print("baseline: ", json.dumps(before), flush=True)
                if "seconds" in now and "seconds" in before:
                    print(
                        f"  time {before['seconds'] / now['seconds']:.2f}x, "
                        f"peak memory {before['peak_gb'] / now['peak_gb']:.2f}x",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
