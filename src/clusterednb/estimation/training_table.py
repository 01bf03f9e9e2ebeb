"""A training table as every estimator reads it: the tasks split from ``X``, the rows read
once (:func:`read_table`) and the labels checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.data.dataset import TaskDataset
from clusterednb.data.guards import check_label_values, warn_suspicious_columns
from clusterednb.data.numeric import binned_schema, numeric_columns
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.values import as_feature_input, as_vector
from clusterednb.exceptions import DataError, SchemaError


def split_tasks(X: Any, tasks: Any, task_column: str | None) -> tuple[Any, Any]:
    """``(X, tasks)``, taking the tasks from ``X[task_column]`` when not passed.

    Examples
    --------
    >>> frame = pd.DataFrame({"room": ["a", "b"], "user": ["u", "v"]})
    >>> X, tasks = split_tasks(frame, None, "user")
    >>> list(X.columns), tasks.tolist()
    (['room'], ['u', 'v'])
    """
    if tasks is not None:
        return X, tasks
    if task_column is None:
        raise DataError("tasks are required: pass tasks=... or set task_column")
    if not isinstance(X, pd.DataFrame) or task_column not in X.columns:
        raise DataError(f"task column {task_column!r} not found in X")
    return X.drop(columns=[task_column]), X[task_column].to_numpy()


def check_labels(schema: FeatureSchema, codes: np.ndarray, fitted: bool) -> None:
    """At least two classes, and some labelled row in a first fit.

    Examples
    --------
    >>> from clusterednb.data.schema import FeatureSchema
    >>> try:
    ...     check_labels(FeatureSchema(("a",), ((0,),), ("yes",)), np.array([0]), fitted=False)
    ... except SchemaError as error:
    ...     print(error)
    the labels have only one class ['yes']; declare the others with classes=[...]
    """
    if schema.n_classes < 2:
        raise SchemaError(
            f"the labels have only one class {list(schema.classes)}; declare the others "
            "with classes=[...]"
        )
    if not fitted and not (codes >= 0).any():
        raise DataError("every label is missing: there is nothing to learn from")
    if not fitted:
        check_label_values(schema.classes, int((codes >= 0).sum()))


@dataclass(frozen=True)
class TableRows:
    """A training table read once: what both model families build their statistics from.

    Attributes
    ----------
    schema : FeatureSchema
        Inferred from the rows (numeric columns binned), grown from the held one, or fixed.
    frame : DataFrame or ndarray of shape (n_rows, n_features)
        ``X`` as read (a 2-D array's columns are ``x0, x1, ...``); the numeric columns'
        values are read from it.
    numeric : tuple of str
        The columns read as numbers (binned in ``schema``).
    rows : TaskDataset
        The rows' value codes, label codes (-1: unlabelled) and tasks.
    """

    schema: FeatureSchema
    frame: Any
    numeric: tuple[str, ...]
    rows: TaskDataset


def read_table(
    X: Any,
    y: Any,
    tasks: Any,
    who: str,
    *,
    classes: Any = None,
    fixed_schema: FeatureSchema | None = None,
    held_schema: FeatureSchema | None = None,
    numeric: Any = None,
    n_bins: int = 10,
    handle_unknown: str = "warn",
    check_size: Callable[[FeatureSchema, int, tuple[str, ...]], None] | None = None,
) -> TableRows:
    """Read a training table: ``X`` checked and converted once, the schema inferred (or grown
    from ``held_schema``, or ``fixed_schema``), the columns looked at against it, the size
    checked before anything is allocated, the rows encoded and the labels checked.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_rows, n_features)
    y : array-like of shape (n_rows,)
        Labels; missing marks an unlabelled row.
    tasks : array-like of shape (n_rows,)
    who : str
        The estimator's name, for messages.
    classes : sequence, optional
        Declared labels.
    fixed_schema, held_schema : FeatureSchema, optional
        The estimator's ``schema`` parameter; the schema of what it holds (``partial_fit``).
    numeric : "auto", sequence of str or None
        Columns read as numbers on a first fit
        (:func:`~clusterednb.data.numeric.numeric_columns`), cut into ``n_bins`` bins.
    n_bins : int
    handle_unknown : {"warn", "error", "ignore"}
    check_size : callable, optional
        ``check_size(schema, n_tasks, numeric)`` refuses a table too large for the model
        before its rows are encoded.

    Examples
    --------
    >>> frame = pd.DataFrame({"room": ["a", "b", "a"], "hour": [9.5, 13.25, 17.0]})
    >>> table = read_table(frame, [1, 0, None], ["u", "u", "v"], "demo", numeric="auto", n_bins=2)
    >>> table.numeric, table.schema.feature_names, table.rows.y.tolist()
    (('hour',), ('room', 'hour'), [1, 0, -1])
    """
    if fixed_schema is not None:
        frame, names, schema = as_feature_input(X, fixed_schema.n_features, who), (), fixed_schema
    else:
        frame = as_feature_input(X, held_schema.n_features if held_schema else None, who)
        if len(frame) == 0:
            raise DataError("the data have no rows")
        labels = as_vector(y)
        if held_schema is not None:
            names, schema = (), held_schema.extended(frame, labels, classes=classes)
        else:
            frame, names = numeric_columns(frame, numeric, n_bins)
            schema = (
                binned_schema(frame, labels, names, n_bins, classes)
                if names
                else FeatureSchema.infer(frame, labels, classes=classes)
            )
        warn_suspicious_columns(frame, schema)
    if check_size is not None:
        check_size(schema, int(pd.unique(as_vector(tasks)).size), names)
    rows = TaskDataset.from_arrays(frame, y, tasks, schema=schema, handle_unknown=handle_unknown)
    check_labels(schema, rows.y, fitted=held_schema is not None)
    return TableRows(schema, frame, names, rows)
