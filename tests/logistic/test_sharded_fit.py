"""The clustered logistic regression fitted shard by shard, in this process and by Dask from
Parquet (issue 50): the same model as the in-memory fit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import clusterednb
from clusterednb import ClusteredLogisticRegression
from clusterednb.data.synthetic import make_logistic_population
from clusterednb.exceptions import CNBError
from clusterednb.logistic.fit import FitSettings
from clusterednb.logistic.sharded.fit import LocalShards, fit_sharded
from clusterednb.logistic.sharded.shards import encode_shard

N_TASKS = 1000


@pytest.fixture(scope="module")
def population():
    planted = make_logistic_population(
        np.random.default_rng(0), group_sizes=[N_TASKS // 10] * 10, rows_per_task=8, n_features=8
    )
    return planted.frame, planted.feature_names


@pytest.fixture(scope="module")
def in_memory(population):
    frame, features = population
    return ClusteredLogisticRegression(random_state=0).fit(
        frame[features], frame["label"].to_numpy(), frame["task"].to_numpy()
    )


def _task_blocks(frame, n_shards):
    """Row positions of ``n_shards`` shards, each a run of whole tasks (8 rows each)."""
    return [part.ravel() for part in np.array_split(np.arange(len(frame)).reshape(-1, 8), n_shards)]


def _as_model(in_memory, task_ids, clusters, chosen):
    model = ClusteredLogisticRegression(random_state=0)
    model._set_fitted(in_memory.schema_, task_ids, clusters, chosen, in_memory.numeric_)
    return model


def test_shards_in_this_process_give_the_in_memory_model(population, in_memory):
    """Same settings, partition and task weights; every regression's minimum within Newton's
    tolerance, so predictions agree to 1e-6."""
    frame, features = population
    schema = in_memory.schema_
    shards = [
        encode_shard(frame.iloc[rows], "task", "label", schema) for rows in _task_blocks(frame, 3)
    ]
    task_ids, clusters, chosen = fit_sharded(
        LocalShards(shards), schema, FitSettings(), np.random.default_rng(0)
    )
    expected = in_memory.clusters_
    np.testing.assert_array_equal(task_ids, in_memory.task_ids_)
    assert (chosen.effective_rows, chosen.floor) == (in_memory.effective_rows_, in_memory.floor_)
    np.testing.assert_array_equal(clusters.partition, expected.partition)
    np.testing.assert_allclose(clusters.cluster_weights, expected.cluster_weights, atol=1e-9)
    np.testing.assert_allclose(
        clusters.cluster_value_counts, expected.cluster_value_counts, rtol=1e-12
    )
    np.testing.assert_allclose(clusters.coef, expected.coef, atol=1e-6)
    model = _as_model(in_memory, task_ids, clusters, chosen)
    X, tasks = frame[features], frame["task"]
    np.testing.assert_allclose(
        model.predict_proba(X, tasks), in_memory.predict_proba(X, tasks), atol=1e-6
    )


def test_a_task_split_between_shards_is_refused_by_name(population, in_memory):
    frame, _ = population
    schema = in_memory.schema_
    halves = np.array_split(np.arange(len(frame)), 2)  # cuts through task u499's rows? any
    shards = [encode_shard(frame.iloc[rows], "task", "label", schema) for rows in halves]
    shards[1] = encode_shard(frame.iloc[np.r_[halves[1], 0]], "task", "label", schema)
    with pytest.raises(CNBError, match="task 'u000' has rows in two shards"):
        fit_sharded(LocalShards(shards), schema, FitSettings(), np.random.default_rng(0))


@pytest.fixture(scope="module")
def parquet_folder(population, tmp_path_factory):
    frame, _ = population
    folder = tmp_path_factory.mktemp("events")
    for number, rows in enumerate(_task_blocks(frame, 4)):  # files of whole tasks
        frame.iloc[rows].to_parquet(folder / f"part-{number}.parquet")
    return folder


def test_dask_from_parquet_gives_the_in_memory_model(population, in_memory, parquet_folder, capsys):
    pytest.importorskip("dask.dataframe")
    from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

    frame, features = population
    model = fit_logistic_from_parquet(
        str(parquet_folder), "task", "label", features, random_state=0
    )
    X, tasks = frame[features], frame["task"]
    np.testing.assert_array_equal(model.partition_, in_memory.partition_)
    np.testing.assert_allclose(
        model.predict_proba(X, tasks), in_memory.predict_proba(X, tasks), atol=1e-6
    )
    said = capsys.readouterr().err
    assert "4 partitions" in said and "placing the others" in said and "fitted" in said
    with pytest.raises(CNBError, match="no training rows kept"):
        model.partial_fit(X.head(1), frame["label"].head(1), tasks.head(1))


def test_a_dask_fit_saves_and_loads_without_rows(population, parquet_folder, tmp_path):
    pytest.importorskip("dask.dataframe")
    from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

    frame, features = population
    model = fit_logistic_from_parquet(
        str(parquet_folder), "task", "label", features, progress=False, random_state=0
    )
    model.save(tmp_path / "m.cnb")
    loaded = clusterednb.load(tmp_path / "m.cnb")
    X, tasks = frame[features].head(50), frame["task"].head(50)
    np.testing.assert_allclose(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))


def test_a_dask_fit_with_its_settings_given_takes_the_bins_default(population, parquet_folder):
    """Settings given, nothing tuned: the default ``bin_precision="auto"`` becomes 4 (a
    Parquet fit reads categories only, so there are no bins to walk)."""
    pytest.importorskip("dask.dataframe")
    from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

    _, features = population
    model = fit_logistic_from_parquet(
        str(parquet_folder), "task", "label", features, progress=False, random_state=0,
        effective_rows=10.0, floor=0.2,
    )  # fmt: skip
    assert (model.effective_rows_, model.floor_, model.bin_precision_) == (10.0, 0.2, 4.0)


def test_tasks_spread_over_partitions_are_shuffled_first(population, in_memory, tmp_path, capsys):
    """Rows in any order across files: the table is shuffled by task, then fitted; the rows
    within a task may come in another order, so the tuning's draws differ: the model is
    within the sampler's noise of the in-memory one (test AUC on held-out rows)."""
    pytest.importorskip("dask.dataframe")
    from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

    frame, features = population
    mixed = frame.sample(frac=1.0, random_state=0)
    rows = np.arange(len(mixed))
    train = mixed.iloc[rows % 4 != 0]
    for number, part in enumerate(np.array_split(np.arange(len(train)), 3)):
        train.iloc[part].to_parquet(tmp_path / f"part-{number}.parquet")
    model = fit_logistic_from_parquet(str(tmp_path), "task", "label", features, random_state=0)
    assert "shuffling the table by task" in capsys.readouterr().err
    memory = ClusteredLogisticRegression(random_state=0).fit(
        train[features], train["label"], train["task"]
    )
    test = mixed.iloc[rows % 4 == 0]
    auc = [
        roc_auc_score(test["label"], m.predict_proba(test[features], test["task"])[:, 1])
        for m in (model, memory)
    ]
    assert abs(auc[0] - auc[1]) < 0.01


@pytest.mark.parametrize("param", ["relevance", "deviation_scale", "numeric"])
def test_what_a_parquet_fit_does_not_take_is_refused(param, parquet_folder):
    from clusterednb.logistic.sharded.dask_fit import fit_logistic_from_parquet

    with pytest.raises(CNBError, match=param):
        fit_logistic_from_parquet(str(parquet_folder), "task", "label", ["f0"], **{param: True})


def test_the_shard_functions_import_no_engine():
    """The map's functions are engine-agnostic (a Spark adapter calls them as they are)."""
    code = (
        "import sys, clusterednb.logistic.sharded.fit, clusterednb.logistic.sharded.shards; "
        "print(any(m.split('.')[0] in ('dask', 'distributed', 'pyspark') for m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
