"""Sharded Gibbs sweeps against the sequential sampler on a mid-size planted problem.

Prints, per configuration: adjusted Rand index of the MAP partition against the planted
groups, the best log joint found (the evidence lower bound), and the wall time. No
split–merge moves on either side, so the table shows what sharding itself (with the
driver's merge offer for clusters opened twice in one sweep) does to the chain. Shards run
one after another in this process (the parallel speed is in ``bench_parallel.py``).

    .venv/bin/python benchmarks/bench_sharded.py
"""

from __future__ import annotations

import platform
import time
from datetime import date

import numpy as np
from sklearn.metrics import adjusted_rand_score

from clusterednb import ClusteredNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.inference.gibbs.engine import fit_gibbs
from clusterednb.inference.gibbs.sharded import ShardedSweep
from clusterednb.inference.gibbs.state import GibbsSettings


def main() -> None:
    print(f"{date.today()} {platform.processor() or platform.machine()}; 400 users, 8 groups")
    for rows, concentration in ((4, 1.0), (3, 2.0), (2, 3.0)):
        print(f"\n{rows} rows per user, feature concentration {concentration}:")
        run(rows, concentration)


def run(rows: int, concentration: float) -> None:
    population = make_planted_population(
        np.random.default_rng(0),
        group_sizes=(50,) * 8,
        rows_per_task=rows,
        n_features=8,
        n_values=4,
        feature_concentration=concentration,
    )
    frame = population.frame
    X, y, tasks = frame[population.feature_names], frame["label"], frame["task"]
    sweeps, burn_in = 100, 30
    start = time.perf_counter()
    sequential = ClusteredNB(
        n_sweeps=sweeps, burn_in=burn_in, split_merge=False, random_state=0, progress=False
    ).fit(X, y, tasks)
    truth = population.labels_for(sequential.task_ids_)
    rows = [("sequential", sequential.result_, time.perf_counter() - start)]
    for shards in (1, 2, 4, 8, 16):
        start = time.perf_counter()
        result = fit_gibbs(
            sequential.observation_,
            sequential.counts_,
            np.zeros((0, 8), dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            1.0,
            GibbsSettings(n_sweeps=sweeps, burn_in=burn_in, split_merge_moves=0),
            np.random.default_rng(0),
            sweep=ShardedSweep(shards),
        )
        rows.append((f"{shards} shards (in process)", result, time.perf_counter() - start))
    for name, result, seconds in rows:
        print(
            f"{name:<26} ARI {adjusted_rand_score(truth, result.partition):.3f}  "
            f"clusters {int(result.partition.max()) + 1:>3}  "
            f"log bound {result.log_evidence:.1f}  {seconds:.2f} s"
        )


if __name__ == "__main__":
    main()
