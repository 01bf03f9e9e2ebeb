"""What a model file holds of a fitted :class:`~clusterednb.ClusteredLogisticRegression`
(plain NPZ arrays and JSON values, never pickle), and reading it back, checked."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from clusterednb.data.numeric import NumericColumns
from clusterednb.exceptions import CNBError
from clusterednb.logistic.clusters import FEATURE_ARRAYS, LogisticClusters
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.settings import FitSettings
from clusterednb.persistence.state import ModelRecord

CLUSTER_ARRAYS = (
    "partition",
    "coclustering",
    "n_clusters_probability",
    "membership",
    "cluster_value_counts",
    "cluster_sizes",
    "coef",
    "intercept",
)
"""The arrays of the fitted clusters a model file holds (each when the fit made it)."""
OPTIONAL_CLUSTER_ARRAYS = ("deviations", "cluster_weights", *FEATURE_ARRAYS)
"""Arrays a fit makes only with some settings (and files written before them lack): the
judgements' arrays as :class:`~clusterednb.logistic.clusters.LogisticClusters` checks them."""


def saved_state(
    clusters: LogisticClusters,
    numeric: NumericColumns,
    rows: JointData | None,
    chosen: FitSettings,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The model file's values and arrays: the clusters, the numeric columns'
    standardisation, the training rows ``partial_fit`` learns on from (tables only) and the
    settings the fit chose (of ``chosen``: ``effective_rows``, ``floor``,
    ``deviation_scale``) and the bins' prior it fitted under (``bin_precision``)."""
    arrays = {n: np.asarray(v) for n in CLUSTER_ARRAYS if (v := getattr(clusters, n)) is not None}
    arrays["numeric_centre"] = numeric.centre
    arrays["numeric_scale"] = numeric.scale
    for name in OPTIONAL_CLUSTER_ARRAYS:
        if getattr(clusters, name) is not None:
            arrays[name] = getattr(clusters, name)
    if rows is not None and not rows.documents:
        arrays.update(
            rows_codes=rows.codes, rows_y=rows.y, rows_task=rows.task, rows_numeric=rows.numeric
        )
    meta = {
        "numeric": list(numeric.names),
        "effective_rows": float(chosen.effective_rows),
        "floor": float(chosen.floor),
        "deviation_scale": float(chosen.deviation_scale),
        "bin_precision": float(chosen.bin_precision),
        "log_joint": clusters.log_joint,
        "sampled_rows": clusters.sampled_rows,
        "fitted_rows": clusters.fitted_rows,
    }
    return meta, arrays


def restored_settings(record: ModelRecord, settings: FitSettings) -> FitSettings:
    """``settings`` (the estimator's) with what the file's fit chose: effective rows, floor,
    deviation scale (files before 2026-11-25: 0) and the bins' prior its regressions were
    fitted under (files before 2026-11-28: 1), checked."""
    meta = record.meta
    chosen = replace(
        settings.with_chosen(float(meta["effective_rows"]), meta["floor"]),
        deviation_scale=meta.get("deviation_scale", 0.0),
        bin_precision=meta.get("bin_precision", 1.0),
    )
    chosen.check()
    return chosen


def restored_clusters(record: ModelRecord, numeric: NumericColumns) -> LogisticClusters:
    """The fitted clusters of a model file, checked against its schema and tasks."""
    names = (*CLUSTER_ARRAYS, *OPTIONAL_CLUSTER_ARRAYS)
    return LogisticClusters.from_arrays(
        {name: record.arrays.get(name) for name in names},
        float(record.meta["log_joint"]),
        n_tasks=record.task_ids.size,
        schema=record.schema,
        n_numeric=len(numeric.names),
        sampled_rows=int(record.meta.get("sampled_rows", 0)),
        fitted_rows=int(record.meta.get("fitted_rows", 0)),
    )


NUMERIC_ARRAYS = ("numeric_centre", "numeric_scale")
"""The arrays of a model file that hold the numeric columns' standardisation."""


def restored_rows(record: ModelRecord, n_numeric: int) -> JointData | None:
    """The training rows a saved model keeps for ``partial_fit`` (None in files written
    before it existed, or of documents), checked against the schema and the tasks."""
    names = ("rows_codes", "rows_y", "rows_task", "rows_numeric")
    if not all(name in record.arrays for name in names):
        return None
    codes, y, task, numeric = (record.arrays[name] for name in names)
    n_rows = y.shape[0]
    schema = record.schema
    sizes = np.array([len(c) for c in schema.categories])
    shapes_fit = (
        codes.shape == (n_rows, schema.n_features)
        and task.shape == (n_rows,)
        and numeric.shape == (n_rows, n_numeric)
    )
    if not shapes_fit:
        raise CNBError("the training rows of the model file do not fit its schema")
    if n_rows and (
        ((codes < -1) | (codes >= sizes)).any()
        or ((y < -1) | (y > 1)).any()
        or ((task < 0) | (task >= record.task_ids.size)).any()
        or not np.isfinite(numeric).all()
    ):
        raise CNBError("the training rows of the model file hold values outside their range")
    names = schema.feature_names
    numbered = [names.index(str(name)) for name in record.meta.get("numeric", ()) if name in names]
    data = JointData.from_codes(
        codes,
        y,
        task,
        record.task_ids.size,
        schema.offsets,
        numeric,
        numbered if len(numbered) == n_numeric else None,
    )
    columns = record.arrays.get("label_columns")
    return data.reading(None if columns is None else columns > 0)


def restored_numeric(record: ModelRecord) -> NumericColumns:
    """The numeric columns of a saved model (none in files written before they existed)."""
    names = tuple(str(name) for name in record.meta.get("numeric", ()))
    arrays = [record.arrays.get(name, np.zeros(0)) for name in NUMERIC_ARRAYS]
    for name, array in zip(NUMERIC_ARRAYS, arrays, strict=True):
        if array.shape != (len(names),) or not np.isfinite(array).all():
            raise CNBError(
                f"array {name!r} has shape {array.shape} (or values that are not finite); "
                f"expected {len(names)} finite values, one per numeric column"
            )
    if len(names) and not (arrays[1] > 0).all():
        raise CNBError("array 'numeric_scale' holds a scale that is not positive")
    return NumericColumns(names, *arrays)
