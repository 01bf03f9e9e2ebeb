"""Distributed statistics equal single-machine statistics exactly (Dask LocalCluster)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from clusterednb import NoSharingNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.distributed import combine_shards, shard_counts

distributed = pytest.importorskip("distributed")


def _split(frame: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    return [frame.iloc[rows] for rows in np.array_split(np.arange(len(frame)), n)]


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    population = make_planted_population(
        np.random.default_rng(3), group_sizes=(4, 3, 5), rows_per_task=25, n_features=5
    )
    frame = population.frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    frame["label"] = frame["label"].astype(float)
    frame.loc[frame.index % 11 == 0, "label"] = np.nan  # unlabelled events are not counted
    frame.loc[frame.index % 7 == 0, "f2"] = np.nan  # missing values are not counted
    folder = tmp_path_factory.mktemp("events")
    for i, part in enumerate(_split(frame, 4)):  # every task spans several files
        part.to_parquet(folder / f"part-{i}.parquet", index=False)
    return frame, folder, population.feature_names


def test_shards_add_up_to_one_pass(events):
    frame, _, features = events
    single = NoSharingNB(numeric=None).fit(frame[features], frame["label"], frame["task"])
    parts = [shard_counts(part, "task", "label", single.schema_) for part in _split(frame, 5)]
    combined = combine_shards(parts[::-1])  # order does not matter
    assert list(combined.task_ids) == list(single.task_ids_)
    np.testing.assert_array_equal(combined.counts.label_counts, single.counts_.label_counts)
    np.testing.assert_array_equal(combined.counts.value_counts, single.counts_.value_counts)
    assert combined.n_events == len(frame)


def test_counts_from_parquet_on_a_local_cluster_equal_single_machine(events):
    from clusterednb.distributed.dask import counts_from_parquet

    frame, folder, features = events
    single = NoSharingNB(numeric=None).fit(frame[features], frame["label"], frame["task"])
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        result, schema = counts_from_parquet(str(folder), "task", "label", features, client=client)
    assert schema == single.schema_
    assert list(result.task_ids) == list(single.task_ids_)
    np.testing.assert_array_equal(result.counts.label_counts, single.counts_.label_counts)
    np.testing.assert_array_equal(result.counts.value_counts, single.counts_.value_counts)
    assert result.n_events == len(frame)
    refit = NoSharingNB().fit_counts(result.counts, result.task_ids, schema)
    assert refit.log_evidence_ == single.log_evidence_
    np.testing.assert_array_equal(
        refit.predict_proba(frame[features], frame["task"]),
        single.predict_proba(frame[features], frame["task"]),
    )
    threaded, _ = counts_from_parquet(str(folder / "*.parquet"), "task", "label", features)
    np.testing.assert_array_equal(threaded.counts.value_counts, result.counts.value_counts)


def test_unknown_category_in_a_shard_is_an_error(events):
    from clusterednb.exceptions import SchemaError

    frame, _, features = events
    single = NoSharingNB(numeric=None).fit(frame[features], frame["label"], frame["task"])
    bad = frame.head(3).copy()
    bad["f0"] = 99
    with pytest.raises(SchemaError, match="99"):
        shard_counts(bad, "task", "label", single.schema_)


# ---------------------------------------------------------------------------- sharded Gibbs
def test_clustered_with_the_dask_backend_recovers_a_planted_partition():
    from sklearn.metrics import adjusted_rand_score

    from clusterednb import ClusteredNB

    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(15, 15, 15), rows_per_task=15, n_features=8
    )
    frame = population.frame
    X, y, tasks = frame[population.feature_names], frame["label"], frame["task"]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        model = ClusteredNB(
            backend="dask", n_sweeps=30, burn_in=10, n_shards=4, random_state=0, progress=False
        ).fit(X, y, tasks)
        proba = model.predict_proba(X, tasks)
    truth = population.labels_for(model.task_ids_)
    assert adjusted_rand_score(truth, model.partition_) >= 0.9
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(Exception, match="inference='gibbs'"):
        ClusteredNB(backend="dask", inference="bhc").fit(X, y, tasks)


# ---------------------------------------------------------------------------- Spark
def test_spark_counts_equal_single_machine(events, monkeypatch):
    """Runs when pyspark and Java are present (JVM start-up 6–17 s); skipped otherwise."""
    import shutil

    pytest.importorskip("pyspark", reason="pyspark is not installed (extra [spark])")
    if shutil.which("java") is None:
        pytest.skip("no Java on this machine: the Spark adapter needs a JVM")
    from clusterednb.distributed.spark import local_session, spark_counts

    frame, _, features = events
    single = NoSharingNB(numeric=None).fit(frame[features], frame["label"], frame["task"])
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # executors import clusterednb
    spark = local_session("clusterednb-test")
    try:
        result, schema = spark_counts(
            spark.createDataFrame(frame), "task", "label", features, n_shards=3
        )
    finally:
        spark.stop()
    assert schema == single.schema_
    assert list(result.task_ids) == list(single.task_ids_)
    np.testing.assert_array_equal(result.counts.label_counts, single.counts_.label_counts)
    np.testing.assert_array_equal(result.counts.value_counts, single.counts_.value_counts)
    assert result.n_events == len(frame)


def test_dask_shards_are_the_in_process_fixed_shards():
    """On Dask the same chain as fixed remote shards in this process (each shard's counts
    scattered once)."""
    from clusterednb import ClusteredNB
    from clusterednb.distributed.dask import dask_sharded_sweep
    from clusterednb.inference.gibbs.engine import fit_gibbs
    from clusterednb.inference.gibbs.sharded import ShardedSweep
    from clusterednb.inference.gibbs.state import GibbsSettings

    population = make_planted_population(
        np.random.default_rng(4), group_sizes=(8, 8), rows_per_task=6, n_features=4
    )
    frame = population.frame
    fitted = ClusteredNB(inference="bhc").fit(
        frame[population.feature_names], frame["label"], frame["task"]
    )
    settings = GibbsSettings(n_sweeps=12, burn_in=2)
    no_rows = np.zeros((0, 4), dtype=np.int64)

    def run(sweep):
        return fit_gibbs(
            fitted.observation_,
            fitted.counts_,
            no_rows,
            np.zeros(0, np.int64),
            1.0,
            settings,
            np.random.default_rng(0),
            sweep=sweep,
        )

    local = run(ShardedSweep(3, remote=True, fixed_shards=True))
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
        dask_sharded_sweep(3) as sweep,
    ):
        on_dask = run(sweep)
    np.testing.assert_array_equal(on_dask.partitions, local.partitions)
    np.testing.assert_array_equal(on_dask.partition_weights, local.partition_weights)
