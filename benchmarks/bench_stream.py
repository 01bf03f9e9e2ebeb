"""The streamed variational engine on users read from Parquet: time, memory, recovery.

Writes a planted population (50 groups, 15 features x 7 values, 2 labels, 10 events per
user) as ``--files`` Parquet files of events, each holding whole users, into a temporary
folder; then fits it with :func:`clusterednb.inference.variational.stream.fit_variational_stream`
fed by :class:`clusterednb.distributed.stream.ParquetTaskBatches` (first pass: read and count
each file, caching the counts; later passes: the cache). Reports the time to write the data
(not part of the fit), the fit's time and passes, its own peak resident memory (the peak is
reset after the data are written) and the adjusted Rand index against the planted groups.

Usage: python benchmarks/bench_stream.py [--users 10000000] [--files 100]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

N_GROUPS, N_FEATURES, N_VALUES, ROWS = 50, 15, 7, 10


def write_events(folder: Path, n_users: int, n_files: int, rng: np.random.Generator) -> np.ndarray:
    """Parquet event files of a planted population; returns each user's group (int8)."""
    theta = rng.dirichlet(np.full(N_VALUES, 0.5), size=(N_GROUPS, 2, N_FEATURES))
    cumulative = theta.cumsum(axis=-1)
    group = rng.integers(0, N_GROUPS, size=n_users).astype(np.int8)
    for i, users in enumerate(np.array_split(np.arange(n_users), n_files)):
        user = np.repeat(users, ROWS)
        y = rng.integers(0, 2, size=user.size)
        draws = rng.random((user.size, N_FEATURES, 1))
        X = np.minimum((draws > cumulative[group[user], y]).sum(axis=-1), N_VALUES - 1)
        frame = pd.DataFrame(X.astype(np.int8), columns=[f"f{j}" for j in range(N_FEATURES)])
        frame.insert(0, "label", y.astype(np.int8))
        frame.insert(0, "user", user)
        frame.to_parquet(folder / f"part-{i:04d}.parquet", index=False)
    return group


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--components", type=int, default=100)
    args = parser.parse_args()
    from sklearn.metrics import adjusted_rand_score

    from bench_scale import peak_memory_gb, reset_peak_memory
    from clusterednb import DirichletNB
    from clusterednb.distributed.shards import schema_from_distinct
    from clusterednb.distributed.stream import ParquetTaskBatches
    from clusterednb.inference.variational.engine import VariationalSettings
    from clusterednb.inference.variational.stream import fit_variational_stream

    print(f"{date.today()} {platform.machine()}, Python {platform.python_version()}")
    folder = Path(tempfile.mkdtemp(prefix="cnb-stream-"))
    try:
        start = time.perf_counter()
        group = write_events(folder, args.users, args.files, np.random.default_rng(0))
        size = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 1e9
        print(
            f"wrote {args.users:,} users ({args.users * ROWS:,} events, {size:.2f} GB Parquet "
            f"in {args.files} files) in {time.perf_counter() - start:.1f} s"
        )
        features = [f"f{j}" for j in range(N_FEATURES)]
        schema = schema_from_distinct(features, [0, 1], [list(range(N_VALUES))] * N_FEATURES)
        batches = ParquetTaskBatches(
            sorted(folder.glob("*.parquet")), "user", "label", schema, folder / "cache"
        )
        reset_peak_memory()
        start = time.perf_counter()
        fit = fit_variational_stream(
            DirichletNB(schema),
            batches,
            1.0,
            np.random.default_rng(1),
            VariationalSettings(n_components=args.components),
        )
        seconds = time.perf_counter() - start
        memory = peak_memory_gb()
        truth = group[np.asarray(batches.task_ids, dtype=np.int64)]
        print(
            f"fit: {seconds:.1f} s, {fit.trace.size} passes, peak memory {memory:.2f} GB, "
            f"{int((fit.sizes > 0.5).sum())} clusters, "
            f"adjusted Rand {adjusted_rand_score(truth, fit.partition):.4f}, ELBO {fit.elbo:.6g}"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
