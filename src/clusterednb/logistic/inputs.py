"""Reading the rows of :class:`~clusterednb.ClusteredLogisticRegression`: categorical (and
numeric) columns, or documents' word counts (``observation="multinomial"``), checked and
encoded into :class:`~clusterednb.logistic.fit.JointData` for fitting and into the
regressions' design for prediction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.data.dataset import factorize_tasks, index_tasks
from clusterednb.data.numeric import NumericColumns
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.text import as_document_term, document_schema
from clusterednb.data.values import as_vector, ordered_unique
from clusterednb.estimation.prediction_rows import prediction_rows
from clusterednb.estimation.training_table import check_labels, read_table
from clusterednb.exceptions import CNBError, DataError, check_choice
from clusterednb.inference.blocks.core_and_place import MAX_SAMPLED_TASKS
from clusterednb.logistic.documents import regression_design
from clusterednb.logistic.fit import JointData

OBSERVATIONS = ("categorical", "multinomial")


@dataclass(frozen=True)
class TrainingRows:
    """Encoded training rows and what encoding them learnt.

    Attributes
    ----------
    schema : FeatureSchema
        Of documents: one feature ``"tokens"`` whose values are the words.
    task_ids : ndarray of shape (n_tasks,)
    data : JointData
    numeric : NumericColumns
        Standardisation of the numeric columns (none for documents).
    source_rows : ndarray of shape (n_rows,)
        The row of ``X`` that each row of ``data`` (grouped by task) came from.
    """

    schema: FeatureSchema
    task_ids: np.ndarray
    data: JointData
    numeric: NumericColumns
    source_rows: np.ndarray


def training_rows(
    X: Any,
    y: Any,
    tasks: Any,
    observation: str,
    classes: Any,
    numeric: Any,
    n_bins: int,
    who: str,
    schema: FeatureSchema | None = None,
) -> TrainingRows:
    """Check and encode training rows (a missing label marks an unlabelled row), against
    ``schema`` when given (its categories, classes and bins), else one inferred from them.

    Examples
    --------
    >>> from scipy import sparse
    >>> rows = training_rows(sparse.csr_matrix([[2, 0], [0, 1], [1, 1]]), [1, None, 0],
    ...                      ["u", "v", "v"], "multinomial", None, None, 5, "demo")
    >>> rows.schema.categories, rows.data.y.tolist(), rows.data.documents
    ((('w0', 'w1'),), [1, -1, 0], True)
    """
    check_choice("observation", observation, OBSERVATIONS)
    if observation == "multinomial":
        if numeric is not None and not isinstance(numeric, str) and len(numeric):
            raise CNBError("numeric columns are for tables; documents are word counts only")
        schema, task_ids, data, source = _document_rows(X, y, tasks, classes)
        numbers = NumericColumns((), np.zeros(0), np.ones(0))
    else:
        schema, task_ids, data, numbers, source = _table_rows(
            X, y, tasks, classes, numeric, n_bins, who, schema
        )
    if schema.n_classes != 2:
        raise CNBError(
            f"{who} is a binary classifier; the labels have "
            f"{schema.n_classes} classes {list(schema.classes)}"
        )
    return TrainingRows(schema, task_ids, data, numbers, source)


def _table_rows(
    X: Any,
    y: Any,
    tasks: Any,
    classes: Any,
    numeric: Any,
    n_bins: int,
    who: str,
    fixed: FeatureSchema | None = None,
) -> tuple[FeatureSchema, np.ndarray, JointData, NumericColumns, np.ndarray]:
    """Categorical columns, and numeric ones binned for the clustering and standardised for
    the regressions (none with a fixed schema: its binned columns are categories)."""
    table = read_table(
        X,
        y,
        tasks,
        who,
        classes=classes,
        fixed_schema=fixed,
        numeric=numeric,
        n_bins=n_bins,
        handle_unknown="error",
        check_size=lambda schema, n_tasks, names: check_design_size(schema, n_tasks, len(names)),
    )
    schema, rows, frame = table.schema, table.rows, table.frame
    numbers = NumericColumns.fit(frame, table.numeric)
    data = JointData.from_codes(
        rows.X,
        rows.y,
        rows.task_index,
        rows.n_tasks,
        schema.offsets,
        numbers.transform(frame),
        [schema.feature_names.index(name) for name in numbers.names],
    )
    return schema, rows.task_ids, data, numbers, np.argsort(rows.task_index, kind="stable")


MAX_CURVATURE_BYTES = 2**31
"""Largest curvature (Hessian) matrix of the regressions a fit may allocate: 2 GiB."""


def check_design_size(schema: FeatureSchema, n_tasks: int, n_numeric: int) -> None:
    """Refuse, before anything is allocated, rows whose curvature matrices would pass
    :data:`MAX_CURVATURE_BYTES`, naming the column with the most categories: the regressions'
    (one row and column per one-hot value and number, and the intercept; the tasks' own
    columns are a diagonal block, solved without forming it) and the clustering's dense ones
    (over the one-hot values and the intercept, one per task of the sampled core: every other
    task keeps its rows' factor, :mod:`~clusterednb.logistic.clustering.task_hessians`, and is
    placed in batches sized to fit).

    Examples
    --------
    >>> schema = FeatureSchema(("id",), (tuple(range(20_000)),), (0, 1))
    >>> check_design_size(schema, n_tasks=10, n_numeric=0)
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: column 'id' has 20000 distinct values: ...
    >>> check_design_size(FeatureSchema(("f",), ((0, 1, 2),), (0, 1)), 100_000, 0)  # fits
    >>> narrow = FeatureSchema(tuple(f"f{i}" for i in range(8)), ((0, 1, 2),) * 8, (0, 1))
    >>> check_design_size(narrow, 10**7, 0)  # the tasks' number does not matter
    >>> check_design_size(FeatureSchema(("f",), (tuple(range(1000)),), (0, 1)), 10**6, 0)
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: column 'f' has 1000 distinct values: the clustering would ...
    """
    n_columns = schema.n_values_total + n_numeric + 1
    n_label = schema.n_values_total + 1
    regression_bytes = 8 * n_columns**2
    clustering_bytes = 8 * min(n_tasks, MAX_SAMPLED_TASKS) * n_label**2
    if max(regression_bytes, clustering_bytes) <= MAX_CURVATURE_BYTES:
        return
    sizes = [len(categories) for categories in schema.categories]
    widest = int(np.argmax(sizes))
    if regression_bytes > MAX_CURVATURE_BYTES:
        need = f"the regressions would need a {n_columns} x {n_columns} curvature matrix"
    else:
        sampled = min(n_tasks, MAX_SAMPLED_TASKS)
        need = f"the clustering would need {sampled} curvature matrices of {n_label} x {n_label}"
    n_bytes = max(regression_bytes, clustering_bytes)
    raise DataError(
        f"column {schema.feature_names[widest]!r} has {sizes[widest]} distinct values: {need} "
        f"({n_bytes / 2**30:.1f} GiB, more than {MAX_CURVATURE_BYTES / 2**30:.0f} GiB); read it "
        "as a number (numeric=[...]), bin it, or drop it"
    )


def _document_rows(
    X: Any, y: Any, tasks: Any, classes: Any
) -> tuple[FeatureSchema, np.ndarray, JointData, np.ndarray]:
    """Documents' word counts (columns of a DataFrame name the words)."""
    words = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    counts = as_document_term(X)
    labels, task_values = as_vector(y), as_vector(tasks)
    if labels.shape != (counts.shape[0],) or task_values.shape != (counts.shape[0],):
        raise DataError(
            f"X has {counts.shape[0]} documents but y has shape {labels.shape} and tasks "
            f"{task_values.shape}"
        )
    found = tuple(classes) if classes is not None else ordered_unique(labels)
    names = words or [f"w{j}" for j in range(counts.shape[1])]
    schema = document_schema(names, found, "multinomial")
    codes = schema.encode_labels(labels)
    check_labels(schema, codes, False)
    task_index, task_ids = factorize_tasks(task_values)
    data = JointData.from_codes(counts, codes, task_index, task_ids.size, schema.offsets)
    return schema, task_ids, data, np.argsort(task_index, kind="stable")


def check_observation(observation: str, schema: FeatureSchema, numeric: NumericColumns) -> None:
    """Refuse a saved model whose schema cannot be that of its ``observation`` (documents: one
    feature of words, no numeric columns).

    Examples
    --------
    >>> schema = FeatureSchema(("colour", "size"), (("blue", "red"), ("s", "l")), ("no", "yes"))
    >>> none = NumericColumns((), np.zeros(0), np.ones(0))
    >>> check_observation("multinomial", schema, none)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: a multinomial model reads one feature of words; ...
    """
    check_choice("observation", observation, OBSERVATIONS)
    if observation == "multinomial" and (schema.n_features != 1 or numeric.names):
        raise CNBError(
            "a multinomial model reads one feature of words; this file's schema has "
            f"{schema.n_features} features" + (" and numeric columns" if numeric.names else "")
        )


def prediction_design(
    features: Any,
    frame: pd.DataFrame | None,
    schema: FeatureSchema,
    task_index: np.ndarray,
    n_tasks: int,
    numeric: NumericColumns,
):
    """The regressions' design of encoded rows to predict (sparse, shape
    (n_rows, n_values_total + n_tasks + n_numeric)).

    Examples
    --------
    >>> schema = FeatureSchema(("colour",), (("blue", "red"),), ("no", "yes"))
    >>> none = NumericColumns((), np.zeros(0), np.ones(0))
    >>> prediction_design(np.array([[1]]), None, schema, np.array([0]), 2, none).toarray()
    array([[0., 1., 1., 0.]])
    """
    numbers = numeric.transform(frame) if frame is not None else np.zeros((features.shape[0], 0))
    return regression_design(features, schema.offsets, task_index, n_tasks, numbers)


def rows_added(
    held: JointData,
    X: Any,
    y: Any,
    tasks: Any,
    schema: FeatureSchema,
    task_ids: np.ndarray,
    numeric: NumericColumns,
    handle_unknown: str,
) -> tuple[JointData, np.ndarray]:
    """The training rows ``held`` with more rows (of known or new tasks) encoded against the
    fitted ``schema``, and the task ids with the new ones appended (``partial_fit``)."""
    rows = prediction_rows(X, tasks, schema, task_ids, "partial_fit", handle_unknown=handle_unknown)
    codes, frame = rows.codes, rows.frame
    labels, task_values = as_vector(y), as_vector(tasks)
    if labels.shape != (codes.shape[0],) or task_values.shape != (codes.shape[0],):
        raise CNBError(
            f"X has {codes.shape[0]} rows but y has shape {labels.shape} and tasks "
            f"{task_values.shape}"
        )
    y_codes = schema.encode_labels(labels)
    task_index = index_tasks(task_values, task_ids)
    unseen = task_index < 0
    if unseen.any():
        new_ids = pd.unique(task_values[unseen])
        task_ids = np.concatenate([task_ids, np.asarray(new_ids, dtype=object)])
        task_index = index_tasks(task_values, task_ids)
    data = held.with_rows(codes, y_codes, task_index, int(task_ids.size), numeric.transform(frame))
    return data, task_ids
