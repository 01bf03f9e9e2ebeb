"""The rows as a learner inside a cluster reads them, and the learners by name.

A categorical column is its value code as a pandas category (missing or unseen: missing), a
numeric column its raw number (missing: NaN), so that trees split categories as categories and
numbers at any threshold; scikit-learn's ``HistGradientBoostingClassifier`` and LightGBM both
read pandas categories as categorical features. A column of more categories than
scikit-learn's trees take (:data:`MAX_TREE_CATEGORIES`) is passed as its code, a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import clone

from clusterednb.data.encode import encode_column
from clusterednb.data.numeric import numbers_of
from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError, MissingExtraError

LEARNER_NAMES = ("hgb", "lightgbm")
"""The learners known by name: scikit-learn's ``HistGradientBoostingClassifier`` and
LightGBM's ``LGBMClassifier`` (the optional extra ``[trees]``)."""
MAX_TREE_CATEGORIES = 254
"""The most categories a categorical column may have (scikit-learn's trees' limit)."""
MAX_NUMBER_BINS = 255
"""The most bins a numeric column is read through by the learners named by a string."""
TASK_COLUMN = "__task__"
"""The column that holds each row's task, with ``with_task=True``."""


def encoded_matrix(
    codes: np.ndarray, frame: Any, schema: FeatureSchema, numeric_names: tuple[str, ...]
) -> np.ndarray:
    """The rows as numbers: a categorical column's value code (NaN: missing or unknown), a
    numeric column's raw value (NaN: missing). What a model keeps of its training rows.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes against ``schema`` (-1: missing or unknown).
    frame : DataFrame or ndarray of shape (n_rows, n_features)
        The rows as read (numeric columns' raw values are read from it).
    schema : FeatureSchema
    numeric_names : tuple of str

    Returns
    -------
    ndarray of shape (n_rows, n_features)

    Examples
    --------
    >>> schema = FeatureSchema.infer(pd.DataFrame({"colour": ["red", "blue"]}), [0, 1])
    >>> encoded_matrix(np.array([[1], [-1]]), None, schema, ()).tolist()
    [[1.0], [nan]]

    Documents' word counts (a sparse matrix) are read as they are, as float64 CSR.
    """
    if sparse.issparse(codes):
        return sparse.csr_matrix(codes, dtype=np.float64)
    matrix = np.where(codes >= 0, codes, np.nan).astype(np.float64)
    for position, name in enumerate(schema.feature_names):
        if name in numeric_names:
            matrix[:, position] = numbers_of(frame, name)
    return matrix


def matrix_codes(
    matrix: np.ndarray, schema: FeatureSchema, numeric_names: tuple[str, ...]
) -> tuple[np.ndarray, pd.DataFrame | None]:
    """Kept rows back as the clustering encodes them: the inverse of :func:`encoded_matrix`,
    without reading the values again.

    Parameters
    ----------
    matrix : ndarray of shape (n_rows, n_features)
        :func:`encoded_matrix` of the rows.
    schema : FeatureSchema
    numeric_names : tuple of str

    Returns
    -------
    codes : ndarray of shape (n_rows, n_features), int32
        Value codes (-1: missing); a numeric column's, its number's code under ``schema``
        (its bin's), as :meth:`FeatureSchema.encode_features` gives it.
    numbers : DataFrame of shape (n_rows, n_numeric), or None
        The numeric columns' raw values (None without numeric columns).

    Examples
    --------
    >>> schema = FeatureSchema(("colour",), (("blue", "red"),), (0, 1))
    >>> codes, numbers = matrix_codes(np.array([[1.0], [np.nan]]), schema, ())
    >>> codes.tolist(), numbers
    ([[1], [-1]], None)
    """
    numeric = [i for i, name in enumerate(schema.feature_names) if name in numeric_names]
    values = np.where(np.isnan(matrix), -1.0, matrix)
    values[:, numeric] = -1.0  # a raw number is no code: cast none (it may not fit int32)
    codes = values.astype(np.int32)
    numbers = {schema.feature_names[i]: matrix[:, i] for i in numeric}
    for position in numeric:
        codes[:, position] = encode_column(schema, position, matrix[:, position])[0]
    return codes, (pd.DataFrame(numbers) if numbers else None)


def learner_frame(
    matrix: np.ndarray,
    schema: FeatureSchema,
    numeric_names: tuple[str, ...],
    task_index: np.ndarray | None = None,
    n_tasks: int = 0,
) -> pd.DataFrame:
    """The rows as the learners read them: categorical columns as pandas categories.

    Parameters
    ----------
    matrix : ndarray of shape (n_rows, n_features)
        :func:`encoded_matrix`.
    schema : FeatureSchema
    numeric_names : tuple of str
    task_index : ndarray of shape (n_rows,), optional
        Each row's task position (-1: a task not seen in training, missing); None: no task
        column.
    n_tasks : int
        The number of training tasks (the task column's categories).

    Returns
    -------
    DataFrame of shape (n_rows, n_features [+ 1])

    Examples
    --------
    >>> schema = FeatureSchema.infer(pd.DataFrame({"colour": ["red", "blue"]}), [0, 1])
    >>> table = learner_frame(np.array([[1.0], [np.nan]]), schema, (), np.array([0, -1]), 2)
    >>> table["colour"].tolist(), str(table["colour"].dtype), table[TASK_COLUMN].tolist()
    ([1, nan], 'category', [0, nan])

    Documents stay a sparse matrix; the task, if asked for, is a one-hot block after the words.
    """
    if sparse.issparse(matrix):
        if task_index is None:
            return matrix
        known = task_index >= 0
        one_hot = sparse.csr_matrix(
            (np.ones(int(known.sum())), (np.flatnonzero(known), task_index[known])),
            shape=(matrix.shape[0], n_tasks),
        )
        return sparse.hstack([matrix, one_hot], format="csr")
    columns: dict[str, Any] = {}
    for position, name in enumerate(schema.feature_names):
        values = matrix[:, position]
        if name in numeric_names:
            columns[name] = values
        else:
            columns[name] = _category(
                np.where(np.isnan(values), -1, values), len(schema.categories[position])
            )
    if task_index is not None:
        columns[TASK_COLUMN] = _category(task_index, n_tasks)
    return pd.DataFrame(columns)


def _category(codes: np.ndarray, n_levels: int) -> Any:
    """Codes as a pandas category of ``n_levels`` levels (-1: missing), or as numbers above
    :data:`MAX_TREE_CATEGORIES` levels."""
    codes = np.asarray(codes, dtype=np.int64)
    if n_levels > MAX_TREE_CATEGORIES:
        return np.where(codes >= 0, codes, np.nan)
    return pd.Categorical.from_codes(np.where(codes < n_levels, codes, -1), range(n_levels))


def take_rows(table: Any, rows: np.ndarray) -> Any:
    """Rows ``rows`` of a learner's input (a DataFrame or a sparse matrix).

    Examples
    --------
    >>> take_rows(pd.DataFrame({"x": [1, 2, 3]}), np.array([2]))["x"].tolist()
    [3]
    >>> take_rows(sparse.eye(3, format="csr"), np.array([0])).toarray().tolist()
    [[1.0, 0.0, 0.0]]
    """
    return table.iloc[rows] if isinstance(table, pd.DataFrame) else table[rows]


def make_learner(learner: Any, params: dict[str, Any] | None, seed: int) -> Any:
    """A fresh, unfitted classifier: one of :data:`LEARNER_NAMES` with ``params`` (and
    ``random_state=seed`` unless they set it), or a clone of a scikit-learn classifier.

    Examples
    --------
    >>> type(make_learner("hgb", {"max_iter": 50}, seed=0)).__name__
    'HistGradientBoostingClassifier'
    >>> make_learner("forest", None, 0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: unknown learner 'forest'; ...
    """
    if not isinstance(learner, str):
        if params:
            raise CNBError("learner_params go with a learner named by a string; set them on it")
        if not hasattr(learner, "fit") or not hasattr(learner, "predict_proba"):
            raise CNBError(f"learner {learner!r} has no fit and predict_proba")
        return clone(learner)
    settings = {"random_state": seed, **(params or {})}
    if learner == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(categorical_features="from_dtype", **settings)
    if learner == "lightgbm":
        try:
            import lightgbm
        except ImportError as error:
            raise MissingExtraError("learner='lightgbm'", "trees", "lightgbm") from error
        return lightgbm.LGBMClassifier(**{"verbose": -1, "n_jobs": 1, **settings})
    raise CNBError(f"unknown learner {learner!r}; known: {list(LEARNER_NAMES)} or an estimator")


def number_thresholds(matrix: np.ndarray, numeric_positions: list[int]) -> dict[int, np.ndarray]:
    """Bin edges of each numeric column with more distinct values than
    :data:`MAX_NUMBER_BINS`: its unweighted quantiles, as scikit-learn's trees find them
    without row weights (with weights they find them one weighted percentile at a time, which
    took 1.5 of a 1.7 s fit on 14 000 rows; trees read numbers through such bins anyway).

    Parameters
    ----------
    matrix : ndarray of shape (n_rows, n_features)
        :func:`encoded_matrix` of the training rows.
    numeric_positions : list of int
        The numeric columns' positions.

    Returns
    -------
    dict of int to ndarray of shape (n_edges,)
        Only the columns to bin.

    Examples
    --------
    >>> matrix = np.column_stack([np.arange(1000.0), np.arange(1000.0) % 3])
    >>> edges = number_thresholds(matrix, [0, 1])
    >>> list(edges), edges[0].size
    ([0], 254)
    """
    percentiles = np.linspace(0, 100, MAX_NUMBER_BINS + 1)[1:-1]
    edges = {}
    for position in numeric_positions:
        values = matrix[:, position]
        values = values[~np.isnan(values)]
        if np.unique(values).size > MAX_NUMBER_BINS:
            cuts = np.percentile(values, percentiles, method="averaged_inverted_cdf")
            edges[position] = np.unique(cuts)
    return edges


def binned_numbers(matrix: np.ndarray, edges: dict[int, np.ndarray]) -> np.ndarray:
    """``matrix`` with each column of ``edges`` replaced by its bin (``i`` for
    ``edges[i - 1] < x <= edges[i]``; missing stays missing), shape of ``matrix``.

    Examples
    --------
    >>> binned_numbers(np.array([[0.5], [2.0], [np.nan], [9.0]]), {0: np.array([1.0, 2.0])})
    array([[ 0.],
           [ 1.],
           [nan],
           [ 2.]])
    """
    if not edges:
        return matrix
    out = matrix.copy()
    for position, cuts in edges.items():
        column = matrix[:, position]
        codes = np.searchsorted(cuts, column, side="left").astype(np.float64)
        out[:, position] = np.where(np.isnan(column), np.nan, codes)
    return out


def stacked(old: Any, new: Any) -> Any:
    """Kept rows and new rows, one below the other (dense or sparse).

    Examples
    --------
    >>> stacked(np.array([1]), np.array([2])).tolist()
    [1, 2]
    """
    if sparse.issparse(old):
        return sparse.vstack([old, new], format="csr")
    return np.concatenate([old, new])


def rows_of(frame: Any, kept: np.ndarray) -> Any:
    """The kept rows of a DataFrame, sparse matrix or array (None stays None).

    Examples
    --------
    >>> rows_of(pd.DataFrame({"a": [1, 2, 3]}), np.array([2]))["a"].tolist()
    [3]
    >>> rows_of(sparse.eye(2, format="csr"), np.array([1])).toarray().tolist()
    [[0.0, 1.0]]
    """
    if frame is None:
        return None
    if isinstance(frame, pd.DataFrame | pd.Series):
        return frame.iloc[kept]
    if sparse.issparse(frame):
        return sparse.csr_matrix(frame)[kept]
    return np.asarray(frame, dtype=object if isinstance(frame, list) else None)[kept]
