"""Statistics from an event table of any size with Dask (local threads or a cluster).

Two passes over the Parquet data: the distinct values of every feature and of the label
(the schema, ordered as :meth:`FeatureSchema.infer` orders them), then one
:func:`~clusterednb.distributed.shards.shard_counts` per partition, tree-reduced with
:func:`~clusterednb.distributed.shards.combine_shards`. Only per-task counts travel.

Recipe for a real cluster: start a scheduler and workers (``dask scheduler``; ``dask worker
tcp://HOST:8786`` on each machine, all with ``clusterednb`` installed), then pass
``client=distributed.Client("tcp://HOST:8786")`` and a path every worker can read
(``s3://bucket/events/``, ``gs://...``, or a shared file system; any fsspec URL).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dask
import dask.dataframe as dd

from clusterednb.data.schema import FeatureSchema
from clusterednb.distributed.shards import (
    ShardCounts,
    combine_shards,
    schema_from_distinct,
    shard_counts,
)
from clusterednb.inference.gibbs.sharded import ShardedSweep


def _tree_reduce(parts: list[Any], fan_in: int = 8) -> Any:
    while len(parts) > 1:
        parts = [
            dask.delayed(combine_shards)(parts[i : i + fan_in])
            for i in range(0, len(parts), fan_in)
        ]
    return parts[0]


def counts_from_parquet(
    path: str,
    task: str,
    label: str,
    features: Sequence[str],
    client: Any = None,
    schema: FeatureSchema | None = None,
    storage_options: dict[str, Any] | None = None,
) -> tuple[ShardCounts, FeatureSchema]:
    """Per-task counts of a Parquet event table (local path or any fsspec URL).

    Parameters
    ----------
    path : str
        A Parquet file, a folder of them, or a glob.
    task, label : str
        Column names (a missing label marks an unlabelled event, which is not counted).
    features : sequence of str
        Categorical feature columns.
    client : dask.distributed.Client, optional
        Where to compute; by default Dask's local threaded scheduler.
    schema : FeatureSchema, optional
        A fixed schema; by default one pass computes it from the data.
    storage_options : dict, optional
        Passed to fsspec (credentials of a remote store).

    Returns
    -------
    (ShardCounts, FeatureSchema)
        Task ids (sorted when comparable), their counts and the number of events; the schema.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.examples import models as data_toy
    >>> X, y, tasks = toy.colour_rows()
    >>> path = data_toy.scratch_file("events.parquet")
    >>> X.assign(task=tasks, label=y).to_parquet(path)
    >>> shards, schema = counts_from_parquet(str(path), "task", "label", ["colour"])
    >>> single = NoSharingNB().fit(X, y, tasks)  # the same counts in one process
    >>> bool((shards.counts.value_counts == single.counts_.value_counts).all())
    True
    """
    columns = [task, label, *features]
    frame = dd.read_parquet(path, columns=columns, storage_options=storage_options)
    if schema is None:
        uniques = [frame[column].dropna().unique() for column in [label, *features]]
        values = (
            client.gather(client.compute(uniques)) if client is not None else dask.compute(*uniques)
        )
        schema = schema_from_distinct(features, values[0], values[1:])
    parts = [
        dask.delayed(shard_counts)(partition, task, label, schema)
        for partition in frame.to_delayed()
    ]
    total = _tree_reduce(parts)
    result = client.compute(total).result() if client is not None else total.compute()
    return result, schema


@contextmanager
def dask_sharded_sweep(n_shards: int | None = None) -> Iterator[ShardedSweep]:
    """The Gibbs sampler's assignment sweep with its shards on Dask workers.

    Pass it to :func:`~clusterednb.inference.gibbs.engine.fit_gibbs` as ``sweep``: the tasks are
    dealt
    to shards once (:class:`~clusterednb.inference.gibbs.sharded.ShardedSweep` with ``remote=True,
    fixed_shards=True``); each worker receives its shard's sparse counts once (scattered),
    and each sweep only the assignments and the clusters' statistics. Uses the
    current ``dask.distributed`` client, or a 2-worker ``LocalCluster`` started on entry and
    closed on exit when there is none. ``n_shards`` defaults to twice the number of workers.

    Examples
    --------
    With a client already running (here an in-process one), its workers run the shards:

    >>> import numpy as np
    >>> from dask.distributed import Client
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.data.synthetic import make_planted_population
    >>> from clusterednb.inference.gibbs.engine import fit_gibbs
    >>> from clusterednb.inference.gibbs.state import GibbsSettings
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(4, 4))
    >>> model = NoSharingNB().fit(population.frame[population.feature_names],
    ...                           population.frame["label"], population.frame["task"])
    >>> with Client(processes=False, n_workers=1, dashboard_address=None), dask_sharded_sweep(
    ...         n_shards=2) as sweep:
    ...     result = fit_gibbs(model.observation_, model.counts_, np.zeros((0, 8), int),
    ...                        np.zeros(0, int), 1.0, GibbsSettings(n_sweeps=30, burn_in=10),
    ...                        np.random.default_rng(0), sweep=sweep)
    >>> from sklearn.metrics import adjusted_rand_score
    >>> adjusted_rand_score(population.labels_for(model.task_ids_), result.partition) > 0.9
    True
    """
    from distributed import Client, LocalCluster, default_client

    owned = None
    try:
        client = default_client()
    except ValueError:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
        owned = (client, cluster)
    try:
        shards = n_shards or 2 * max(len(client.scheduler_info()["workers"]), 1)
        kept: dict[int, tuple[Any, Any]] = {}  # id(static) -> (static, its future)

        def map_shards(function: Any, jobs: Sequence[Any], statics: Sequence[Any]) -> list[Any]:
            for static in statics:
                if id(static) not in kept:  # sent once; later sweeps refer to the worker's copy
                    kept[id(static)] = (static, client.scatter(static))
            current = {id(static) for static in statics}
            for stale in set(kept) - current:  # the tasks' counts changed: dealt anew
                del kept[stale]
            futures = [kept[id(static)][1] for static in statics]
            return client.gather(client.map(function, jobs, futures, pure=False))

        yield ShardedSweep(shards, map_shards, remote=True, fixed_shards=True)
    finally:
        if owned is not None:
            owned[0].close()
