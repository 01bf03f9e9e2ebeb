"""Statistics on Spark (extra ``[spark]``): the same shard functions through ``applyInPandas``.

Events are grouped by ``hash(task) mod n_shards``; each group runs
:func:`~clusterednb.distributed.shards.shard_counts` in pandas and emits one row per task
(its label counts and the keys and counts of its non-zero value cells, as arrays); the driver
assembles them into sparse counts. Spark's SQL
``groupBy`` aggregations are avoided on purpose (a feasibility study found them 3–9 times
slower than ``applyInPandas`` with numpy inside). Recipe for a cluster: build the
``SparkSession`` with ``.master("spark://HOST:7077")`` (or YARN / Kubernetes) and read the
events with ``spark.read.parquet(URL)``; ``clusterednb`` must be installed on the executors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.data.dataset import factorize_tasks
from clusterednb.data.schema import FeatureSchema
from clusterednb.distributed.shards import ShardCounts, schema_from_distinct, shard_counts
from clusterednb.exceptions import require_extra


def _emit(frame: pd.DataFrame, task: str, label: str, schema: FeatureSchema) -> pd.DataFrame:
    """One shard's counts, one row per task: its label counts, the keys and counts of its
    non-zero value cells (CSR row), and the shard's number of events on its first row."""
    part = shard_counts(frame.drop(columns="__shard"), task, label, schema)
    cells = part.cells
    bounds = cells.indptr
    rows = pd.DataFrame(
        {
            # numpy-backed: PySpark's Arrow conversion does not take pandas 3's Arrow strings
            "task": part.task_ids.astype(object),
            "labels": list(part.label_counts),
            "keys": np.split(cells.indices.astype(np.int64), bounds[1:-1]),
            "counts": np.split(cells.data.astype(np.int64), bounds[1:-1]),
            "events": np.zeros(part.task_ids.size, dtype=np.int64),
        }
    )
    if len(rows):
        rows.loc[0, "events"] = part.n_events
    return rows


def spark_counts(
    events: Any,
    task: str,
    label: str,
    features: Sequence[str],
    schema: FeatureSchema | None = None,
    n_shards: int = 64,
) -> tuple[ShardCounts, FeatureSchema]:
    """Per-task counts of a Spark DataFrame of events; equal to the single-machine counts.

    Parameters
    ----------
    events : pyspark.sql.DataFrame
        Columns ``task``, ``label`` and the features (a null label: unlabelled, not counted).
    task, label : str
    features : sequence of str
    schema : FeatureSchema, optional
        Default: computed from the distinct values (one pass).
    n_shards : int
        Groups of tasks handled by one pandas call each.

    Returns
    -------
    (ShardCounts, FeatureSchema)

    Examples
    --------
    >>> import pytest
    >>> if not spark_available():  # the extra [spark] and Java; else this example is skipped
    ...     pytest.skip("needs pyspark and Java")
    >>> import os, sys
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> os.environ["PYSPARK_PYTHON"] = sys.executable  # executors import clusterednb
    >>> X, y, tasks = toy.colour_rows()
    >>> spark = local_session("clusterednb-example")
    >>> try:
    ...     shards, schema = spark_counts(spark.createDataFrame(X.assign(task=tasks, label=y)),
    ...                                   "task", "label", ["colour"], n_shards=2)
    ... finally:
    ...     spark.stop()
    >>> single = NoSharingNB().fit(X, y, tasks)
    >>> bool((shards.counts.value_counts == single.counts_.value_counts).all())
    True
    """
    require_extra("spark", "spark_counts")
    from pyspark.sql import functions as F

    frame = events.select(task, label, *features)
    if schema is None:
        distinct = [
            [row[0] for row in frame.select(c).where(F.col(c).isNotNull()).distinct().collect()]
            for c in [label, *features]
        ]
        schema = schema_from_distinct(features, distinct[0], distinct[1:])
    task_type = frame.schema[task].dataType.simpleString()
    output = (
        f"task {task_type}, labels array<long>, keys array<long>, counts array<long>, events long"
    )
    rows = (
        frame.withColumn("__shard", F.abs(F.hash(F.col(task))) % n_shards)
        .groupBy("__shard")
        .applyInPandas(lambda part: _emit(part, task, label, schema), schema=output)
        .toPandas()
    )
    n_events = int(rows["events"].sum())
    index, task_ids = factorize_tasks(rows["task"].to_numpy(dtype=object))
    width = schema.n_classes * schema.n_values_total
    lengths = rows["keys"].map(len).to_numpy()
    row_of_entry = np.repeat(index, lengths)
    keys = np.concatenate([np.zeros(0, np.int64), *rows["keys"]]).astype(np.int64)
    counts = np.concatenate([np.zeros(0, np.int64), *rows["counts"]]).astype(np.int64)
    cells = sparse.csr_matrix((counts, (row_of_entry, keys)), shape=(task_ids.size, width))
    cells.sum_duplicates()  # a task met in two shards (it cannot be, by the hash) adds up
    label_counts = np.zeros((task_ids.size, schema.n_classes), dtype=np.int64)
    if len(rows):
        np.add.at(label_counts, index, np.stack(rows["labels"].to_numpy()).astype(np.int64))
    return ShardCounts(task_ids, label_counts, cells, n_events), schema


def spark_available() -> bool:
    """Whether Spark can start here: ``pyspark`` importable (extra ``[spark]``) and ``java``
    on the ``PATH``.

    Examples
    --------
    >>> isinstance(spark_available(), bool)
    True
    """
    import importlib.util
    import shutil

    return importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


def local_session(app_name: str, shuffle_partitions: int = 4, driver_memory: str = "4g") -> Any:
    """A Spark session on this machine (``local[2]``, no web UI) whose Python workers run
    this interpreter, so they import ``clusterednb`` as the driver does. Stop it when done.

    For tests and benchmarks; on a cluster, build the session with your own master.
    ``driver_memory`` is the JVM heap of the (local) driver, which also executes the tasks
    and collects the counts; Spark's default of 1 GB runs out at a few million events.

    Examples
    --------
    >>> import pytest
    >>> if not spark_available():  # the extra [spark] and Java; else this example is skipped
    ...     pytest.skip("needs pyspark and Java")
    >>> spark = local_session("clusterednb-example", shuffle_partitions=2)
    >>> spark.conf.get("spark.sql.shuffle.partitions"), spark.range(4).count()
    ('2', 4)
    >>> spark.stop()
    """
    import os
    import sys

    require_extra("spark", "a Spark session")
    import pyspark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    return (
        pyspark.sql.SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.driver.memory", driver_memory)
        .getOrCreate()
    )
