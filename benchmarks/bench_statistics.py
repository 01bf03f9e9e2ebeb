"""Per-user statistics from an event table: numpy, Dask (1 and 2 workers) and Spark, one run.

An event table of ``--events`` rows (10 rows per user, 15 categorical features x 7 values,
a binary label) is written to Parquet in 8 files. Each engine turns it into per-user counts:

- ``numpy``: ``pandas.read_parquet`` then :func:`clusterednb.distributed.shard_counts` on
  the whole table in this process;
- ``dask, N workers``: :func:`clusterednb.distributed.dask.counts_from_parquet` on a
  ``LocalCluster`` of N single-threaded worker processes (started before the clock);
- ``spark local[2]``: :func:`clusterednb.distributed.spark.spark_counts` on a Parquet
  DataFrame (the session started before the clock; skipped without pyspark or Java).

Every result is checked equal to the numpy counts. Prints seconds and events per second.

Usage: python benchmarks/bench_statistics.py [--events 5000000]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.distributed import shard_counts
from clusterednb.distributed.shards import schema_from_distinct

N_FEATURES, N_VALUES, ROWS_PER_USER, FILES = 15, 7, 10, 8


def write_events(folder: Path, n_events: int, rng: np.random.Generator) -> list[str]:
    """The event table as Parquet files; returns the feature names."""
    features = [f"f{j}" for j in range(N_FEATURES)]
    n_users = n_events // ROWS_PER_USER
    for i, rows in enumerate(np.array_split(np.arange(n_events), FILES)):
        frame = pd.DataFrame(
            rng.integers(0, N_VALUES, size=(rows.size, N_FEATURES)), columns=features
        )
        frame.insert(0, "label", rng.integers(0, 2, size=rows.size))
        frame.insert(0, "user", (rows % n_users).astype(np.int64))
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    return features


def timed(run):
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--no-spark", dest="spark", action="store_false", help="skip the Spark run")
    args = parser.parse_args()
    print(f"{date.today()} {platform.machine()}, {os.cpu_count()} cores, {args.events:,} events")
    folder = Path(tempfile.mkdtemp(prefix="cnb-events-"))
    try:
        features = write_events(folder, args.events, np.random.default_rng(0))
        results = {}

        def numpy_counts():
            frame = pd.read_parquet(folder)
            schema = schema_from_distinct(
                features, frame["label"].unique(), [frame[f].unique() for f in features]
            )
            return shard_counts(frame, "user", "label", schema)

        seconds, reference = timed(numpy_counts)
        results["numpy (one process)"] = seconds
        from clusterednb.distributed.dask import counts_from_parquet
        from distributed import Client, LocalCluster

        for workers in (1, 2):
            try:
                with (
                    LocalCluster(
                        n_workers=workers, threads_per_worker=1, dashboard_address=None
                    ) as cluster,
                    Client(cluster) as client,
                ):
                    seconds, (counts, _) = timed(
                        lambda client=client: counts_from_parquet(
                            str(folder), "user", "label", features, client=client
                        )
                    )
            except Exception as error:  # a killed worker is a result to report, not a crash
                print(f"dask, {workers} worker(s): failed ({type(error).__name__}: {error})")
                continue
            _check(counts, reference)
            results[f"dask, {workers} worker(s)"] = seconds
        for name, seconds in results.items():  # before Spark, which may bring the run down
            print(f"{name:<22} {seconds:7.2f} s  {args.events / seconds / 1e6:6.2f} M events/s")
        if args.spark:
            try:
                spark_seconds = _spark(folder, features, reference)
            except Exception as error:  # e.g. the JVM's heap exhausted collecting the counts
                print(f"spark local[2]: failed ({type(error).__name__})")
                spark_seconds = None
            if spark_seconds is not None:
                results["spark local[2]"] = spark_seconds
        for name, seconds in results.items():
            print(f"{name:<22} {seconds:7.2f} s  {args.events / seconds / 1e6:6.2f} M events/s")
    finally:
        shutil.rmtree(folder)


def _check(counts, reference) -> None:
    order = np.argsort(np.asarray(counts.task_ids, dtype=np.int64))
    expected = np.argsort(np.asarray(reference.task_ids, dtype=np.int64))
    np.testing.assert_array_equal(counts.label_counts[order], reference.label_counts[expected])
    assert (counts.cells[order] != reference.cells[expected]).nnz == 0


def _spark(folder: Path, features: list[str], reference) -> float | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("spark: skipped (pyspark is not installed)")
        return None
    if shutil.which("java") is None:
        print("spark: skipped (no Java)")
        return None
    from clusterednb.distributed.spark import local_session, spark_counts

    spark = local_session("clusterednb-bench", shuffle_partitions=8)
    try:
        spark.range(1).count()  # the JVM and a Python worker are up before the clock
        seconds, (counts, _) = timed(
            lambda: spark_counts(spark.read.parquet(str(folder)), "user", "label", features)
        )
    finally:
        spark.stop()
    _check(counts, reference)
    return seconds


if __name__ == "__main__":
    main()
