"""Multi-task data sets: rows of (task, features, label) encoded against a schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.data.io import check_columns_exist, read_table
from clusterednb.data.schema import FeatureSchema, HandleUnknown
from clusterednb.data.values import as_feature_input, as_vector, is_missing
from clusterednb.exceptions import DataError


def factorize_tasks(tasks: Any) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes for task ids of any hashable type.

    Returns
    -------
    task_index : ndarray of shape (n_rows,), dtype int64
        Position of each row's task in ``task_ids``.
    task_ids : ndarray of shape (n_tasks,), dtype object
        Distinct task ids, sorted when they are comparable.

    Examples
    --------
    >>> task_index, task_ids = factorize_tasks(["b", "a", "b"])
    >>> task_index.tolist(), task_ids.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    values = as_vector(tasks)
    if values.ndim != 1:
        raise DataError(f"tasks must be 1-D, got shape {values.shape}")
    missing = is_missing(values)
    if missing.any():
        raise DataError(f"task id is missing in row {int(np.flatnonzero(missing)[0])}")
    codes, uniques = _task_index(values).factorize(sort=False)
    distinct = uniques.tolist()
    if uniques.dtype != object:
        order = np.argsort(uniques.to_numpy(), kind="stable")
    else:
        try:
            order = sorted(range(len(distinct)), key=distinct.__getitem__)
        except TypeError:  # ids of mutually incomparable types: order of first appearance
            order = list(range(len(distinct)))
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[order] = np.arange(len(distinct))
    task_ids = np.empty(len(distinct), dtype=object)
    task_ids[:] = [distinct[i] for i in order]
    return rank[codes], task_ids


def index_tasks(tasks: Any, task_ids: np.ndarray) -> np.ndarray:
    """Positions of ``tasks`` in known ``task_ids``; -1 for a task not seen before.

    Examples
    --------
    >>> index_tasks(["a", "c"], np.array(["a", "b"], dtype=object)).tolist()
    [0, -1]
    """
    values = as_vector(tasks)
    missing = is_missing(values)
    if missing.any():
        raise DataError(f"task id is missing in row {int(np.flatnonzero(missing)[0])}")
    known = _known_index(np.asarray(task_ids, dtype=object), values)
    if values.dtype == object:
        return known.get_indexer(_task_index(values))
    return known.get_indexer(values)


def _known_index(task_ids: np.ndarray, values: np.ndarray) -> pd.Index:
    """The fitted ids as an index to look ``values`` up in: integer ids looked up by integer
    values are hashed as integers, not as objects (the same matches, several times faster)."""
    if values.dtype.kind in "iu":
        ids = task_ids.tolist()
        if all(type(i) is int for i in ids):
            try:
                return pd.Index(np.array(ids, dtype=np.int64))
            except OverflowError:  # ids beyond 64 bits stay objects
                pass
    return _task_index(task_ids)


def _task_index(values: np.ndarray) -> pd.Index:
    """A flat index of task ids (tuples stay single ids, never a MultiIndex)."""
    if values.dtype == object:
        return pd.Index(values, dtype=object, tupleize_cols=False)
    return pd.Index(values)


@dataclass
class TaskDataset:
    """Rows of many tasks, encoded as integer codes against a :class:`FeatureSchema`.

    Attributes
    ----------
    schema : FeatureSchema
    X : ndarray of shape (n_rows, n_features), dtype int32
        Category codes; -1 marks a missing value.
    y : ndarray of shape (n_rows,), dtype int64
        Class codes; -1 marks an unlabelled row.
    task_index : ndarray of shape (n_rows,), dtype int64
        Position of each row's task in ``task_ids``.
    task_ids : ndarray of shape (n_tasks,), dtype object
        The distinct task ids (any hashable type).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"user": ["a", "a", "b"], "colour": ["red", "blue", "red"],
    ...                       "liked": [1, 0, 1]})
    >>> data = TaskDataset.from_frame(frame, task="user", label="liked")
    >>> data.X.ravel().tolist(), data.y.tolist(), data.task_ids.tolist()
    ([1, 0, 1], [1, 0, 1], ['a', 'b'])
    """

    schema: FeatureSchema
    X: np.ndarray
    y: np.ndarray
    task_index: np.ndarray
    task_ids: np.ndarray

    def __post_init__(self) -> None:
        n_rows = self.X.shape[0]
        if self.X.ndim != 2 or self.X.shape[1] != self.schema.n_features:
            raise DataError(
                f"X has shape {self.X.shape}; the schema has {self.schema.n_features} features"
            )
        if self.y.shape != (n_rows,) or self.task_index.shape != (n_rows,):
            raise DataError(
                f"X has {n_rows} rows but y has shape {self.y.shape} and tasks "
                f"{self.task_index.shape}"
            )

    @property
    def n_rows(self) -> int:
        """Number of rows.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> TaskDataset.from_arrays(*toy.colour_rows()).n_rows
        9
        """
        return int(self.X.shape[0])

    @property
    def n_tasks(self) -> int:
        """Number of distinct tasks.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> TaskDataset.from_arrays(*toy.colour_rows()).n_tasks
        3
        """
        return int(self.task_ids.shape[0])

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        task: str,
        label: str | None = None,
        features: Sequence[str] | None = None,
        schema: FeatureSchema | None = None,
        classes: Sequence[Any] | None = None,
        handle_unknown: HandleUnknown = "warn",
    ) -> TaskDataset:
        """Build from a long-format DataFrame: one row per example.

        Parameters
        ----------
        frame : DataFrame
            Holds a task column, optionally a label column, and feature columns.
        task : str
            Name of the task (user) column.
        label : str, optional
            Name of the label column; missing labels mark unlabelled rows. Without it every
            row is unlabelled (prediction time).
        features : sequence of str, optional
            Feature columns; default every column but ``task`` and ``label`` (or the
            schema's features when a schema is given).
        schema : FeatureSchema, optional
            Encode against this schema instead of inferring one from the data.
        classes : sequence, optional
            Declared label values when the schema is inferred.
        handle_unknown : {"warn", "error", "ignore"}
            What to do with a category the given schema does not know (treated as missing).

        Examples
        --------
        >>> frame = pd.DataFrame({"user": ["ann", "ann", "bob"], "colour": ["red", "blue", None],
        ...                       "liked": ["yes", "no", None]})  # bob's row: unlabelled
        >>> data = TaskDataset.from_frame(frame, task="user", label="liked")
        >>> data.X.tolist(), data.y.tolist(), data.task_ids.tolist()
        ([[1], [0], [-1]], [1, 0, -1], ['ann', 'bob'])
        """
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"expected a pandas DataFrame, got {type(frame).__name__}")
        if len(frame) == 0:
            raise DataError("the data have no rows")
        check_columns_exist(frame, [task], "task")
        if label is not None:
            check_columns_exist(frame, [label], "label")
        if features is None:
            features = (
                list(schema.feature_names)
                if schema is not None
                else [c for c in frame.columns if c not in (task, label)]
            )
        features = [str(f) for f in features]
        if not features:
            raise DataError("no feature columns: the data hold only the task and label columns")
        check_columns_exist(frame, features, "feature")
        overlap = {task, label} & set(features)
        if overlap:
            raise DataError(f"column(s) {sorted(overlap)} cannot be both a feature and task/label")
        labels = frame[label].to_numpy() if label is not None else None
        return cls.from_arrays(
            frame[features],
            labels,
            frame[task].to_numpy(),
            schema=schema,
            classes=classes,
            handle_unknown=handle_unknown,
            label_name=label or "label",
        )

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> TaskDataset:
        """Build from a CSV or Parquet file; keyword arguments as :meth:`from_frame`.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> path = Path(tempfile.mkdtemp()) / "likes.csv"
        >>> pd.DataFrame({"user": ["ann", "bob"], "colour": ["red", "blue"],
        ...               "liked": ["yes", "no"]}).to_csv(path, index=False)
        >>> TaskDataset.from_file(path, task="user", label="liked").schema.feature_names
        ('colour',)
        """
        return cls.from_frame(read_table(path), **kwargs)

    from_csv = from_file
    from_parquet = from_file

    @classmethod
    def from_arrays(
        cls,
        X: Any,
        y: Any,
        tasks: Any,
        *,
        schema: FeatureSchema | None = None,
        feature_names: Sequence[str] | None = None,
        classes: Sequence[Any] | None = None,
        handle_unknown: HandleUnknown = "warn",
        label_name: str = "label",
    ) -> TaskDataset:
        """Build from feature values, labels and task ids.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
            Raw feature values (strings, integers, ...); NaN or None is missing.
        y : array-like of shape (n_rows,) or None
            Raw labels; NaN or None marks an unlabelled row. None: all unlabelled.
        tasks : array-like of shape (n_rows,)
            Task ids of any hashable type.
        schema : FeatureSchema, optional
            Encode against this schema instead of inferring one.
        feature_names : sequence of str, optional
            Names for the columns of an array ``X``.

        Examples
        --------
        >>> data = TaskDataset.from_arrays([["red"], ["blue"]], ["yes", None], ["ann", "ann"],
        ...                                feature_names=["colour"])
        >>> data.schema.classes, data.y.tolist()  # the second row is unlabelled
        (('yes',), [0, -1])
        """
        frame = as_feature_input(X, schema.n_features if schema is not None else None)
        if feature_names is not None and isinstance(frame, np.ndarray):
            frame = pd.DataFrame(frame, columns=list(feature_names))
        n_rows = len(frame)
        if n_rows == 0:
            raise DataError("the data have no rows")
        task_values = as_vector(tasks)
        if task_values.shape != (n_rows,):
            raise DataError(f"X has {n_rows} rows but tasks has shape {task_values.shape}")
        if y is not None:
            y = as_vector(y)
            if y.shape != (n_rows,):
                raise DataError(f"X has {n_rows} rows but y has shape {y.shape}")
        if schema is None:
            schema = FeatureSchema.infer(frame, y, classes=classes)
        X_codes = schema.encode_features(frame, handle_unknown=handle_unknown)
        y_codes = (
            schema.encode_labels(y, column=label_name)
            if y is not None
            else np.full(n_rows, -1, dtype=np.int64)
        )
        task_index, task_ids = factorize_tasks(task_values)
        return cls(schema, X_codes, y_codes, task_index, task_ids)
