"""The streamed (memoized) variational engine: the in-memory engine on one batch, a bound that
never falls over several, below the exact evidence, planted groups found, and Parquet files
streamed to the same numbers as arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.metrics import adjusted_rand_score

from clusterednb import ClusteredNB, TaskDataset
from clusterednb.data.synthetic import make_planted_population
from clusterednb.distributed.shards import shard_counts
from clusterednb.distributed.stream import ParquetTaskBatches
from clusterednb.exceptions import DataError
from clusterednb.inference.variational.engine import VariationalSettings, fit_variational_sparse
from clusterednb.inference.variational.stream import fit_variational_stream


def _counts(population):
    """The population's sparse counts and its observation model."""
    frame = population.frame
    fitted = ClusteredNB(inference="bhc").fit(
        frame[population.feature_names], frame["label"], frame["task"]
    )
    return shard_counts(frame, "task", "label", fitted.schema_), fitted.observation_


def _batches(part, n_batches):
    bounds = np.linspace(0, part.cells.shape[0], n_batches + 1).astype(int)
    pieces = [(part.cells[a:b], part.label_counts[a:b]) for a, b in itertools.pairwise(bounds)]
    return lambda: iter(pieces)


def test_one_batch_is_the_in_memory_engine():
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(20, 20, 20), rows_per_task=12, n_features=5
    )
    part, model = _counts(population)
    settings = VariationalSettings(
        n_components=10, n_init=1, merge_pairs=0, sequential_start_tasks=0
    )
    in_memory = fit_variational_sparse(
        model, part.cells, part.label_counts, 1.0, np.random.default_rng(3), settings
    )
    streamed = fit_variational_stream(
        model, _batches(part, 1), 1.0, np.random.default_rng(3), settings, max_passes=201
    )
    np.testing.assert_allclose(streamed.trace, in_memory.extras["elbo_trace"], rtol=1e-12)
    assert adjusted_rand_score(streamed.partition, in_memory.partition) == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_several_batches_never_lower_the_bound_and_stay_below_the_exact_evidence(seed):
    population = make_planted_population(
        np.random.default_rng(seed), group_sizes=(3, 2, 2), rows_per_task=10, n_features=4
    )
    frame = population.frame
    exact = ClusteredNB(inference="exact", relevance=False).fit(  # the model streamed
        frame[population.feature_names], frame["label"], frame["task"]
    )
    part = shard_counts(frame, "task", "label", exact.schema_)
    streamed = fit_variational_stream(
        exact.observation_, _batches(part, 3), 1.0, np.random.default_rng(seed)
    )
    assert streamed.elbo <= exact.log_evidence_
    assert np.all(np.diff(streamed.trace) >= -1e-9 * abs(streamed.trace[-1]))


def test_planted_groups_are_found_across_batches():
    population = make_planted_population(
        np.random.default_rng(5),
        group_sizes=(150,) * 6,
        rows_per_task=10,
        n_features=8,
        feature_concentration=0.3,
    )
    part, model = _counts(population)
    settings = VariationalSettings(n_components=30)
    streamed = fit_variational_stream(
        model, _batches(part, 7), 1.0, np.random.default_rng(0), settings
    )
    truth = [population.true_group[task] for task in part.task_ids]
    assert adjusted_rand_score(truth, streamed.partition) >= 0.95
    assert np.all(np.diff(streamed.trace) >= -1e-9 * abs(streamed.trace[-1]))
    assert np.all((streamed.top_weight > 0) & (streamed.top_weight <= 1))


def test_parquet_files_stream_to_the_same_fit(tmp_path):
    population = make_planted_population(
        np.random.default_rng(2), group_sizes=(30, 30), rows_per_task=8, n_features=4
    )
    frame = population.frame
    model = ClusteredNB(inference="bhc").fit(
        frame[population.feature_names], frame["label"], frame["task"]
    )
    schema = model.schema_
    task_codes = pd.factorize(frame["task"])[0]
    paths = []
    for i, tasks in enumerate(np.array_split(np.unique(task_codes), 3)):
        paths.append(tmp_path / f"part-{i}.parquet")
        frame[np.isin(task_codes, tasks)].to_parquet(paths[-1], index=False)
    batches = ParquetTaskBatches(paths, "task", "label", schema, tmp_path / "cache")
    from_files = fit_variational_stream(model.observation_, batches, 1.0, np.random.default_rng(1))
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 3  # later passes read the cache
    pieces = [
        (lambda p: (p.cells, p.label_counts))(
            shard_counts(pd.read_parquet(path), "task", "label", schema)
        )
        for path in paths
    ]
    from_arrays = fit_variational_stream(
        model.observation_, lambda: iter(pieces), 1.0, np.random.default_rng(1)
    )
    np.testing.assert_allclose(from_files.trace, from_arrays.trace, rtol=1e-12)
    assert batches.task_ids.size == from_files.partition.size == 60


def test_a_task_in_two_files_or_a_bad_file_is_refused(tmp_path):
    population = make_planted_population(
        np.random.default_rng(2), group_sizes=(4,), rows_per_task=6, n_features=3
    )
    frame = population.frame
    schema = (
        ClusteredNB(inference="exact")
        .fit(frame[population.feature_names], frame["label"], frame["task"])
        .schema_
    )
    frame.iloc[::2].to_parquet(tmp_path / "a.parquet", index=False)
    frame.iloc[1::2].to_parquet(tmp_path / "b.parquet", index=False)
    batches = ParquetTaskBatches(
        [tmp_path / "a.parquet", tmp_path / "b.parquet"], "task", "label", schema, tmp_path / "c"
    )
    with pytest.raises(DataError, match="more than one file"):
        list(batches())
    (tmp_path / "bad.parquet").write_text("not parquet")
    bad = ParquetTaskBatches([tmp_path / "bad.parquet"], "task", "label", schema, tmp_path / "d")
    with pytest.raises(DataError, match=r"bad\.parquet"):
        list(bad())
    assert sparse.issparse(
        next(
            iter(
                ParquetTaskBatches(
                    [tmp_path / "a.parquet"], "task", "label", schema, tmp_path / "e"
                )()
            )
        )[0]
    )


def test_bad_batches_are_refused_by_batch():
    population = make_planted_population(
        np.random.default_rng(1), group_sizes=(3,), rows_per_task=5, n_features=3
    )
    part, model = _counts(population)
    rng = np.random.default_rng(0)
    with pytest.raises(DataError, match="no task"):
        fit_variational_stream(model, lambda: iter([]), 1.0, rng)
    narrow = (part.cells[:, :-1], part.label_counts)
    with pytest.raises(DataError, match="batch 1: value counts have"):
        fit_variational_stream(
            model, lambda: iter([(part.cells, part.label_counts), narrow]), 1.0, rng
        )
    with pytest.raises(DataError, match="batch 0: 3 tasks"):
        fit_variational_stream(model, lambda: iter([(part.cells, part.label_counts[:2])]), 1.0, rng)


def test_a_group_absent_from_the_first_batch_is_born_later():
    """The start seeds from the first batch only; empty components stay open, so the tasks
    of a group the first batch does not show get a cluster of their own."""
    population = make_planted_population(
        np.random.default_rng(6),
        group_sizes=(10, 10),
        rows_per_task=20,
        n_features=6,
        feature_concentration=0.2,
    )
    part, model = _counts(population)
    truth = np.array([population.true_group[task] for task in part.task_ids])
    order = np.argsort(truth, kind="stable")  # the first batch: one task of group 0
    cells, labels = part.cells[order], part.label_counts[order]
    pieces = [(cells[:1], labels[:1]), (cells[1:], labels[1:])]
    streamed = fit_variational_stream(model, lambda: iter(pieces), 1.0, np.random.default_rng(0))
    assert adjusted_rand_score(truth[order], streamed.partition) == 1.0


def test_the_streamed_posterior_predicts_like_the_in_memory_one():
    """On one batch and well-separated groups (every responsibility 0 or 1) the streamed
    fit's posterior, each task in its most probable component, predicts what the in-memory
    engine's soft posterior predicts — for known tasks and for a task never seen."""
    population = make_planted_population(
        np.random.default_rng(3),
        group_sizes=(15, 15, 15),
        rows_per_task=30,
        n_features=6,
        feature_concentration=0.2,
    )
    part, model = _counts(population)
    frame = population.frame
    data = TaskDataset.from_frame(frame, task="task", label="label", schema=model.schema)
    settings = VariationalSettings(
        n_components=10, n_init=1, merge_pairs=0, sequential_start_tasks=0
    )
    in_memory = fit_variational_sparse(
        model, part.cells, part.label_counts, 1.0, np.random.default_rng(3), settings
    )
    assert set(np.unique(in_memory.extras["responsibilities"])) <= {0.0, 1.0}
    streamed = fit_variational_stream(
        model, _batches(part, 1), 1.0, np.random.default_rng(3), settings, max_passes=201
    ).posterior(1.0)
    for cold in (None, np.ones(len(data.task_index), dtype=bool)):
        np.testing.assert_allclose(
            streamed.predict_log_proba(model, data.X, data.task_index, cold),
            in_memory.posterior.predict_log_proba(model, data.X, data.task_index, cold),
            atol=1e-9,
        )
