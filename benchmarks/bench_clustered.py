"""Speed of the Clustered Naive Bayes engines (issue targets in brackets).

1. One Gibbs sweep over 100 000 users in 50 clusters, 15 features x 7 values, 2 labels [<= 0.4 s].
2. Greedy BHC over 1 000 users [<= 2 s].
3. Randomised BHC over 100 000 users [<= 60 s].
4. A full fit on a thesis-sized problem: 21 users, 4 000 rows [<= 0.2 s].

Times are whole runs after a JIT warm-up on a small problem (reported separately as the
first-call time; compiled kernels are cached on disk, so later processes skip most of it).
Usage: python benchmarks/bench_clustered.py [--users N] [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from clusterednb import ClusteredNB, Counts, DirichletNB, FeatureSchema
from clusterednb.inference.bhc.engine import fit_bhc, fit_bhc_randomized
from clusterednb.inference.gibbs.moves import gibbs_step
from clusterednb.inference.gibbs.state import GibbsSettings, initial_state, prepare


def planted_counts(
    rng: np.random.Generator,
    n_users: int,
    n_groups: int,
    rows_per_user: int,
    n_features: int = 15,
    n_values: int = 7,
    chunk: int = 100_000,
) -> tuple[DirichletNB, Counts, np.ndarray]:
    """Per-user counts of a planted population (drawn directly as codes, no DataFrame), in
    chunks of ``chunk`` users so that drawing 10^6 users does not take more memory than
    fitting them (up to ``chunk`` users the draws are those of one pass)."""
    theta = rng.dirichlet(np.full(n_values, 0.5), size=(n_groups, 2, n_features))
    group = rng.integers(0, n_groups, size=n_users)
    schema = FeatureSchema(
        tuple(f"f{j}" for j in range(n_features)),
        tuple(tuple(range(n_values)) for _ in range(n_features)),
        (0, 1),
    )
    parts = []
    for start in range(0, n_users, chunk):
        users = np.arange(start, min(start + chunk, n_users))
        task = np.repeat(users - start, rows_per_user)
        y = rng.integers(0, 2, size=task.size)
        cumulative = theta[group[users][task], y].cumsum(axis=-1)  # (rows, F, V)
        X = (rng.random((task.size, n_features, 1)) > cumulative).sum(axis=-1)
        X = np.minimum(X, n_values - 1)
        parts.append(
            Counts.from_codes(X, y, task, n_tasks=users.size, n_classes=2, offsets=schema.offsets)
        )
    counts = Counts(
        np.concatenate([part.label_counts for part in parts]),
        np.concatenate([part.value_counts for part in parts]),
    )
    return DirichletNB(schema), counts, group


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def bench_gibbs_sweep(n_users: int, n_clusters: int, repeats: int = 5) -> float:
    """Median time of ``repeats`` successive sweeps of one chain started at the planted groups."""
    rng = np.random.default_rng(0)
    model, counts, group = planted_counts(rng, n_users, n_clusters, rows_per_user=10)
    data = prepare(model, counts, np.zeros((0, 15), dtype=np.int64), np.zeros(0, np.int64))
    state = initial_state(rng, data, 1.0, group)
    settings = GibbsSettings(split_merge_moves=0)
    scratch = np.zeros((0, 2))
    seconds = [
        timed(lambda: gibbs_step(rng, state, data, settings, scratch)) for _ in range(repeats)
    ]
    print(
        f"  clusters after the sweeps: {state.n_clusters}; each sweep (s): {np.round(seconds, 3)}"
    )
    return float(np.median(seconds))


def bench_bhc(n_users: int, randomized: bool) -> float:
    rng = np.random.default_rng(1)
    model, counts, _ = planted_counts(rng, n_users, 20, rows_per_user=10)
    if randomized:
        return timed(lambda: fit_bhc_randomized(model, counts, 1.0, rng))
    return timed(lambda: fit_bhc(model, counts, 1.0))


def bench_thesis_fit() -> dict[str, float]:
    rng = np.random.default_rng(2)
    model, counts, _ = planted_counts(rng, 21, 9, rows_per_user=190)  # 3 990 rows
    schema = model.schema
    # Rebuild rows from the counts' generator: fit through the public estimator.
    rows = []
    for task in range(21):
        cells = counts.value_counts[task]
        for label in (0, 1):
            n_rows = counts.label_counts[task, label]
            columns = [
                np.repeat(np.arange(7), cells[label, schema.offsets[f] : schema.offsets[f + 1]])
                for f in range(15)
            ]
            rows.append((np.column_stack(columns), np.full(n_rows, label), np.full(n_rows, task)))
    X = np.concatenate([r[0] for r in rows])
    y = np.concatenate([r[1] for r in rows])
    tasks = np.concatenate([r[2] for r in rows])
    out = {}
    for engine in ("gibbs", "bhc"):
        model = ClusteredNB(inference=engine, random_state=0, progress=False)
        out[engine] = timed(lambda model=model: model.fit(X, y, tasks))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000, help="users for 1 and 3")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    users = 2_000 if args.quick else args.users
    print(
        f"machine: {platform.machine()}, python {platform.python_version()}, numpy {np.__version__}"
    )
    warm = time.perf_counter()
    bench_gibbs_sweep(200, 5, repeats=1)
    bench_bhc(50, randomized=False)
    bench_bhc(200, randomized=True)
    bench_thesis_fit()
    print(f"JIT warm-up (first calls, cache loads or compiles): {time.perf_counter() - warm:.2f} s")
    sweep = bench_gibbs_sweep(users, 50)
    print(f"1. Gibbs sweep, {users} users x 50 clusters (median of 5): {sweep:.3f} s")
    bhc_users = 200 if args.quick else 1_000
    print(f"2. greedy BHC, {bhc_users} users: {bench_bhc(bhc_users, randomized=False):.3f} s")
    print(f"3. randomised BHC, {users} users: {bench_bhc(users, randomized=True):.3f} s")
    for engine, seconds in bench_thesis_fit().items():
        print(f"4. full fit, 21 users x ~190 rows, {engine}: {seconds:.3f} s")


if __name__ == "__main__":
    main()
