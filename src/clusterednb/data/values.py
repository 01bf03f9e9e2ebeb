"""Values as the library sees them: vectors, missing values, categories, feature columns.

The lowest room of :mod:`clusterednb.data`: every other data module reads raw input through
these functions, so a column is extracted and checked in one place.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.exceptions import DataError, SchemaError

FeatureInput = pd.DataFrame | np.ndarray


def as_feature_input(
    X: Any, n_features: int | None = None, owner: str = "the schema"
) -> FeatureInput:
    """Check an estimator's ``X``: a DataFrame, or a 2-D array whose columns are the features.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_rows, n_features)
    n_features : int, optional
        Required number of columns of an array.
    owner : str
        Who expects them (named in the error, e.g. the estimator's class name).

    Returns
    -------
    DataFrame (columns renamed to str) or 2-D ndarray

    Examples
    --------
    >>> as_feature_input(pd.DataFrame({0: ["red"]})).columns.tolist()  # names become text
    ['0']
    >>> as_feature_input([["red", "small"]], n_features=1, owner="NoSharingNB")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: ...NoSharingNB...
    """
    if isinstance(X, pd.DataFrame):
        if all(isinstance(c, str) for c in X.columns):
            return X
        return X.rename(columns=str)
    if hasattr(X, "tocsr") or hasattr(X, "sparse"):  # scipy.sparse / pandas sparse
        raise DataError(
            "sparse input is not supported for categorical features; pass a dense array or "
            "a DataFrame"
        )
    array = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    if array.ndim != 2:
        raise DataError(
            f"X must be 2-D (n_rows, n_features), got an array of shape {array.shape}. "
            "Reshape your data to one row per example"
        )
    if n_features is not None and array.shape[1] != n_features:
        raise DataError(
            f"X has {array.shape[1]} features, but {owner} is expecting {n_features} features "
            "as input"
        )
    return array


def feature_names_of(features: FeatureInput) -> list[str]:
    """Column names of a DataFrame, or ``x0, x1, ...`` for an array.

    Examples
    --------
    >>> feature_names_of(pd.DataFrame({"colour": ["red"]})), feature_names_of(np.zeros((1, 2)))
    (['colour'], ['x0', 'x1'])
    """
    if isinstance(features, pd.DataFrame):
        return [str(c) for c in features.columns]
    return [f"x{j}" for j in range(features.shape[1])]


def feature_column(features: FeatureInput, index: int, name: str) -> np.ndarray:
    """The values of one feature: column ``name`` of a DataFrame or column ``index`` of an array.

    Examples
    --------
    >>> feature_column(pd.DataFrame({"colour": ["red"]}), 0, "colour").tolist()
    ['red']
    >>> feature_column(np.array([["red", "small"]]), 1, "x1").tolist()
    ['small']
    """
    if isinstance(features, pd.DataFrame):
        return features[name].to_numpy()
    return features[:, index]


def to_python_scalar(value: Any) -> Any:
    """Return a plain Python scalar for a numpy scalar; leave anything else unchanged.

    Integral floats become ``int`` so that a column read with NaNs (float) and one read
    without (int) give the same categories.

    Examples
    --------
    >>> to_python_scalar(np.float64(3.0)), to_python_scalar(np.str_("a"))
    (3, 'a')
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_vector(values: Any) -> np.ndarray:
    """A 1-D array of ``values`` in their own dtype; tuples and other containers stay elements.

    Numeric input keeps its numeric dtype (fast hashing and missing-value checks).

    Examples
    --------
    >>> as_vector([("a", 1), ("b", 2)]).tolist()  # two elements, not a 2 x 2 table
    [('a', 1), ('b', 2)]
    >>> as_vector([1, 2]).dtype
    dtype('int64')
    """
    if values is None:
        raise DataError("expected a 1-D sequence, got None")
    if isinstance(values, pd.Series | pd.Index):
        return values.to_numpy()
    if not isinstance(values, np.ndarray) and hasattr(values, "__array__"):
        values = np.asarray(values)  # array-likes that are not sequences
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise DataError(f"expected a 1-D array, got shape {values.shape}")
        return values
    if isinstance(values, pd.DataFrame):
        raise DataError(f"expected a 1-D sequence, got a DataFrame of shape {values.shape}")
    items = list(values)
    if any(isinstance(v, tuple | list) for v in items):
        vector = np.empty(len(items), dtype=object)
        vector[:] = items
        return vector
    return pd.Series(items, dtype=None if items else object).to_numpy()


def is_missing(values: np.ndarray) -> np.ndarray:
    """Boolean mask of missing entries (``None``, ``NaN``, ``pd.NA``, ``NaT``).

    Examples
    --------
    >>> is_missing(np.array([1.0, np.nan, None], dtype=object)).tolist()
    [False, True, True]
    """
    return np.asarray(pd.isna(values), dtype=bool)


def ordered_unique(values: Iterable[Hashable]) -> tuple[Any, ...]:
    """Distinct non-missing values as Python scalars, sorted when they are comparable.

    Values of mixed, incomparable types keep their order of first appearance.

    Examples
    --------
    >>> ordered_unique(["b", "a", None, "b"]), ordered_unique([3, 1, 3])
    (('a', 'b'), (1, 3))
    """
    array = values if isinstance(values, np.ndarray) else as_vector(values)
    if array.dtype.kind in "iub" and array.size:
        if array.dtype.kind == "b":
            return tuple(bool(v) for v in np.unique(array))
        low, high = int(array.min()), int(array.max())
        if low >= 0 and high < 1 << 20:
            return tuple(int(v) for v in np.flatnonzero(np.bincount(array)))
        return tuple(int(v) for v in np.unique(array))
    present = array[~is_missing(array)]
    try:
        unique = pd.unique(present.ravel()) if present.size else np.array([], dtype=object)
    except TypeError as error:
        raise SchemaError(f"values must be hashable categories: {error}") from error
    scalars: list[Any] = []
    seen: set[Any] = set()
    for value in unique:
        scalar = to_python_scalar(value)
        if scalar not in seen:
            seen.add(scalar)
            scalars.append(scalar)
    try:
        return tuple(sorted(scalars))
    except TypeError:
        return tuple(scalars)


_FEW_VALUES = 32  # below this many values a dictionary beats building a pandas index


def index_of(known: Sequence[Any], values: np.ndarray) -> np.ndarray:
    """Position of each value in ``known`` (-1 where absent); dtypes are inferred by pandas.

    A few values (one request to decide) are looked up in a dictionary of the categories,
    which equals pandas' answer for the hashable scalars categories are (``1 == 1.0``).

    Examples
    --------
    >>> index_of(("a", "b"), np.array(["b", "c", None], dtype=object)).tolist()
    [1, -1, -1]
    """
    if values.size < _FEW_VALUES and not (values.dtype.kind == "f" and np.isnan(values).any()):
        position = {value: i for i, value in enumerate(known)}
        return np.array(
            [
                -1 if is_missing(v) else position.get(to_python_scalar(v), -1)
                for v in values.tolist()
            ]
            if values.size
            else [],
            dtype=np.int64,
        )
    index = pd.Index(list(known)) if known else pd.Index([], dtype=object)
    if values.dtype == object:
        return index.get_indexer(pd.Index(values, dtype=object))
    return index.get_indexer(values)


def merge_ordered(first: tuple[Any, ...], second: tuple[Any, ...]) -> tuple[Any, ...]:
    """The categories of ``first`` and the new ones of ``second``, sorted when comparable
    (``first`` itself when ``second`` adds nothing).

    Examples
    --------
    >>> merge_ordered((1, 3), (2, 3))
    (1, 2, 3)
    """
    known = set(first)
    merged = list(first) + [c for c in second if c not in known]
    if len(merged) == len(first):
        return first
    try:
        return tuple(sorted(merged))
    except TypeError:
        return tuple(merged)


def preview(values: Sequence[Any], limit: int = 8) -> str:
    """The first ``limit`` values, for an error message.

    Examples
    --------
    >>> preview(list(range(10)), limit=3)
    '[0, 1, 2, ...]'
    """
    shown = ", ".join(repr(v) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


def check_json_scalars(values: Iterable[Any], what: str) -> None:
    """Refuse, with a :class:`~clusterednb.exceptions.SchemaError` naming ``what``, a value a
    model file cannot hold as plain JSON.

    Examples
    --------
    >>> check_json_scalars([1, float("nan")], "categories of 'f'")
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: categories of 'f': nan cannot be saved
    """
    for value in values:
        if isinstance(value, float) and not math.isfinite(value):
            raise SchemaError(f"{what}: {value!r} cannot be saved")
        if not isinstance(value, str | int | float | bool):
            raise SchemaError(
                f"{what}: value {value!r} of type {type(value).__name__} cannot be saved as "
                "plain data; use strings, integers, floats or booleans"
            )
