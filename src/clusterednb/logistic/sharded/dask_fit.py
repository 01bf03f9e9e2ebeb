"""``ClusteredLogisticRegression`` fitted from Parquet files by Dask: each partition is a shard
(:mod:`clusterednb.logistic.sharded.fit`), encoded once and kept in the workers' memory; only
per-task summaries and ``p × p`` sums travel to the driver.

Every task's rows must sit in one partition (files written sorted or partitioned by task);
otherwise the table is shuffled by task first (``frame.shuffle(on=task)``; said on the
progress stream). Tables of categorical columns only (bin numbers before writing them).

The same recipe as the naive-Bayes counts (:mod:`clusterednb.distributed.dask`) runs it on a
cluster: start a scheduler and workers, create a ``distributed.Client`` before calling, and
pass a path every worker can read (any fsspec URL).
"""

from __future__ import annotations

import operator
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np

from clusterednb.data.numeric import NumericColumns
from clusterednb.distributed.shards import schema_from_distinct
from clusterednb.exceptions import CNBError
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.logistic.inputs import check_design_size
from clusterednb.logistic.settings import resolved_chain
from clusterednb.logistic.sharded.fit import fit_sharded
from clusterednb.logistic.sharded.shards import EncodedShard, encode_shard
from clusterednb.seeding import as_generator


class DaskShards:
    """Shards held by Dask (persisted in the workers' memory, or this process's with the
    local schedulers); each map is one task per shard.

    Parameters
    ----------
    parts : list of dask.delayed
        Each evaluates to an :class:`~clusterednb.logistic.sharded.shards.EncodedShard`.
    """

    def __init__(self, parts: Sequence[Any]) -> None:
        self.parts = list(parts)

    def apply(self, function: Callable[..., EncodedShard], *args: Any) -> DaskShards:
        """Each shard replaced by ``function(shard, *args)`` (persisted)."""
        calls = [dask.delayed(function, pure=False)(part, *args) for part in self.parts]
        return DaskShards(dask.persist(*calls))

    def collect(self, function: Callable[..., Any], *args: Any) -> list[Any]:
        """``function(shard, *args)`` of every shard, computed."""
        calls = [dask.delayed(function, pure=False)(part, *args) for part in self.parts]
        return list(dask.compute(*calls))

    def apply_collect(
        self, function: Callable[..., tuple[EncodedShard, Any]], *args: Any
    ) -> tuple[DaskShards, list[Any]]:
        """New shards and a result each, from ``function(shard, *args) -> (shard, result)``
        computed once (these shards are left as they were)."""
        calls = dask.persist(
            *[dask.delayed(function, pure=False)(part, *args) for part in self.parts]
        )
        shards = [dask.delayed(operator.getitem)(call, 0) for call in calls]
        results = dask.compute(*[dask.delayed(operator.getitem)(call, 1) for call in calls])
        return DaskShards(shards), list(results)


def elapsed_printer(enabled: bool) -> Callable[[str], None]:
    """A progress line ``[mm:ss] message`` on standard error (nothing when disabled).

    Examples
    --------
    >>> elapsed_printer(False)("nothing printed")
    """
    start = time.perf_counter()

    def say(message: str) -> None:
        if enabled:
            minutes, seconds = divmod(int(time.perf_counter() - start), 60)
            print(f"[{minutes:02d}:{seconds:02d}] {message}", file=sys.stderr, flush=True)

    return say


def fit_logistic_from_parquet(
    path: str,
    task: str,
    label: str,
    features: Sequence[str],
    storage_options: dict[str, Any] | None = None,
    progress: bool = True,
    **params: Any,
) -> ClusteredLogisticRegression:
    """A :class:`~clusterednb.ClusteredLogisticRegression` fitted on a Parquet table by Dask
    (the current ``distributed`` client if there is one, else Dask's local scheduler).

    Parameters
    ----------
    path : str
        A Parquet file, a folder of them, or a glob (local or any fsspec URL).
    task, label : str
        Column names (a missing label marks an unlabelled row).
    features : sequence of str
        Categorical feature columns.
    storage_options : dict, optional
        Passed to fsspec.
    progress : bool, default=True
        A line on standard error at each step.
    **params
        ``ClusteredLogisticRegression`` parameters (``random_state``, ``gamma``,
        ``effective_rows``, ``floor``, ``C`` …); not ``relevance``, ``deviation_scale``,
        ``numeric`` or documents.

    Returns
    -------
    ClusteredLogisticRegression
        Fitted; it predicts, explains and saves as one fitted in memory, but holds no
        training rows (``partial_fit`` refuses: fit again).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> from clusterednb.examples import models as data_toy
    >>> path = data_toy.scratch_file("toy-shards.parquet")
    >>> toy.toy_shards_frame().to_parquet(path)
    >>> model = fit_logistic_from_parquet(str(path), "user", "label", ["f"], progress=False,
    ...                                   random_state=0)
    >>> model.task_ids_.size, model.predict_proba([["a"]], ["u0"]).shape
    (6, (1, 2))
    """
    for refused in ("relevance", "deviation_scale", "numeric", "observation", "schema"):
        if refused in params:
            raise CNBError(f"{refused}: not for a fit from Parquet (categorical tables only)")
    model = ClusteredLogisticRegression(numeric=None, **params)
    settings = resolved_chain(model._settings())  # the default chain: rows not yet read
    settings.check()
    say = elapsed_printer(progress)
    frame = dd.read_parquet(path, columns=[task, label, *features], storage_options=storage_options)
    columns = [label, *features]
    values = dask.compute(*[frame[column].dropna().unique() for column in columns])
    schema = schema_from_distinct(list(features), values[0], values[1:])
    if schema.n_classes != 2:
        raise CNBError(f"a binary classifier; the labels have {schema.n_classes} classes")
    check_design_size(schema, 0, 0)
    say(f"{frame.npartitions} partitions; schema of {schema.n_values_total} values")
    shards = _encoded(frame, task, label, schema)
    ids = np.concatenate(shards.collect(lambda shard: shard.task_ids))
    if np.unique(ids).size < ids.size:
        say("a task's rows span partitions: shuffling the table by task")
        shards = _encoded(frame.shuffle(on=task), task, label, schema)
    rng = as_generator(model.random_state)
    task_ids, clusters, chosen = fit_sharded(shards, schema, settings, rng, say)
    numeric = NumericColumns((), np.zeros(0), np.ones(0))
    model._set_fitted(schema, task_ids, clusters, chosen, numeric)
    model.rows_ = None
    say("fitted")
    return model


def _encoded(frame: Any, task: str, label: str, schema: Any) -> DaskShards:
    """Each partition encoded once and persisted."""
    parts = [dask.delayed(encode_shard)(part, task, label, schema) for part in frame.to_delayed()]
    return DaskShards(dask.persist(*parts))
