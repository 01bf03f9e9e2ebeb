"""Parallel shards (``ClusteredNB(n_jobs=2)``) against the sequential Gibbs sampler.

1. Speed: one Gibbs step (the assignment sweep; then with 3 split–merge moves) over
   100 000 users in 50 planted clusters, 15 features x 7 values, 10 rows per user, started
   at the planted partition; sequential vs two shards in two threads [target >= 1.7x].
2. Quality: whole fits from scratch (40 sweeps, 10 burn-in) on planted populations, a well
   and a weakly identified one: adjusted Rand index of the MAP partition, number of
   clusters, best log joint and time, sequential vs ``n_jobs=2``.

Usage: python benchmarks/bench_parallel.py [--users N] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import numpy as np
from numba import njit
from sklearn.metrics import adjusted_rand_score

sys.path.insert(0, str(Path(__file__).parent))

from bench_clustered import planted_counts
from clusterednb.inference.gibbs.engine import fit_gibbs
from clusterednb.inference.gibbs.moves import gibbs_step, sequential_sweep
from clusterednb.inference.gibbs.sharded import ShardedSweep
from clusterednb.inference.gibbs.state import GibbsSettings, initial_state, prepare

NO_ROWS = np.zeros((0, 15), dtype=np.int64)
NO_TASKS = np.zeros(0, dtype=np.int64)


@njit(nogil=True)
def _spin(n: int) -> float:  # pragma: no cover
    total = 0.0
    for i in range(n):
        total += math.log(i + 1.0)
    return total


def machine_ceiling(pool: ThreadPoolExecutor, repeats: int = 5) -> float:
    """Median speed-up of a pure-compute kernel in two threads (what the cores deliver)."""
    _spin(10)
    ratios = []
    for _ in range(repeats):
        start = time.perf_counter()
        _spin(30_000_000)
        _spin(30_000_000)
        one = time.perf_counter() - start
        start = time.perf_counter()
        list(pool.map(_spin, [30_000_000, 30_000_000]))
        ratios.append(one / (time.perf_counter() - start))
    return float(np.median(ratios))


def step_seconds(n_users: int, sweeps: dict, split_merge_moves: int, repeats: int = 5) -> dict:
    """Median seconds of one Gibbs step per sweep kind, the kinds taking turns on one chain
    started at the planted partition."""
    rng = np.random.default_rng(0)
    model, counts, group = planted_counts(rng, n_users, 50, rows_per_user=10)
    data = prepare(model, counts, NO_ROWS, NO_TASKS)
    state = initial_state(rng, data, 1.0, group)
    settings = GibbsSettings(split_merge_moves=split_merge_moves)
    seconds: dict[str, list[float]] = {name: [] for name in sweeps}
    for _ in range(repeats):
        for name, sweep in sweeps.items():
            start = time.perf_counter()
            gibbs_step(rng, state, data, settings, np.zeros((0, 2)), sweep)
            seconds[name].append(time.perf_counter() - start)
    return {name: float(np.median(values)) for name, values in seconds.items()}


def fit_quality(n_users: int, n_groups: int, rows: int, n_jobs: int) -> str:
    rng = np.random.default_rng(7)
    model, counts, group = planted_counts(rng, n_users, n_groups, rows_per_user=rows)
    settings = GibbsSettings(n_sweeps=40, burn_in=10, n_jobs=n_jobs)
    start = time.perf_counter()
    result = fit_gibbs(model, counts, NO_ROWS, NO_TASKS, 1.0, settings, rng)
    seconds = time.perf_counter() - start
    return (
        f"ARI {adjusted_rand_score(group, result.partition):.3f}  "
        f"clusters {int(result.partition.max()) + 1:>4}  "
        f"log joint {result.log_evidence:.6g}  {seconds:6.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    users = 5_000 if args.quick else args.users
    print(
        f"{date.today()} {platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}"
    )
    with ThreadPoolExecutor(2) as pool:
        sweeps = {"sequential": sequential_sweep, "sharded": ShardedSweep(2, pool.map)}
        step_seconds(500, sweeps, 0, repeats=1)  # compile or load the kernels
        print(
            f"0. this machine: a pure-compute kernel in 2 threads runs "
            f"{machine_ceiling(pool):.2f}x faster than in one (median of 5)"
        )
        for moves in (0, 3):
            median = step_seconds(users, sweeps, moves)
            one, two = median["sequential"], median["sharded"]
            print(
                f"1. one step, {users} users x 50 clusters, {moves} split-merge moves "
                f"(median of 5): sequential {one:.3f} s, 2 shards in 2 threads {two:.3f} s, "
                f"speed-up {one / two:.2f}x"
            )
    quality_users = 2_000 if args.quick else 20_000
    for label, groups, rows in (("well identified", 50, 10), ("weakly identified", 50, 2)):
        for n_jobs in (1, 2):
            print(
                f"2. {label} ({quality_users} users, {groups} groups, {rows} rows each), "
                f"n_jobs={n_jobs}: {fit_quality(quality_users, groups, rows, n_jobs)}"
            )


if __name__ == "__main__":
    main()
