"""Numeric feature columns: binned for the models that count categories, and kept as
standardised numbers for the models that can also read a number.

:func:`binned_schema` infers a schema in which the named columns are quantile bins of the
training rows; :class:`NumericColumns` turns the same columns into standardised numbers
(centre and scale from the training rows; a missing value becomes the centre, 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.data.discretize import discretize
from clusterednb.data.guards import warn_numeric_identifiers
from clusterednb.data.kernels import column_ranges
from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError


def check_numeric_names(frame: Any, names: Sequence[str], n_bins: int) -> tuple[str, ...]:
    """The names as a tuple, after checking that each is a column of ``frame`` (a DataFrame)
    and that ``n_bins`` is an integer of at least 2; :class:`DataError` otherwise.

    Examples
    --------
    >>> frame = pd.DataFrame({"hour": [9.0], "room": ["a"]})
    >>> check_numeric_names(frame, ["hour"], n_bins=4)
    ('hour',)
    """
    if isinstance(names, str):
        raise DataError(f"numeric must be a list of column names, got the string {names!r}")
    names = tuple(names)
    if not isinstance(frame, pd.DataFrame):
        raise DataError("numeric columns are named, so X must be a DataFrame")
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise DataError(f"numeric column(s) {missing} are not columns of X")
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 2:
        raise DataError(f"n_bins must be an integer of at least 2, got {n_bins!r}")
    return names


MAX_INTEGER_CATEGORIES = 20
"""An integer column with more distinct training values than this is read as a number."""


def is_numeric_column(column: pd.Series) -> bool:
    """Whether ``numeric="auto"`` reads ``column`` as a number: a float column holding a
    value that is not a whole number, or a column of whole numbers (integers, or floats such
    as integer codes with missing values) with more than :data:`MAX_INTEGER_CATEGORIES`
    distinct values. Booleans, strings and categorical columns are categories.

    Examples
    --------
    >>> is_numeric_column(pd.Series([0.5, 1.25])), is_numeric_column(pd.Series([1, 2, 3]))
    (True, False)
    >>> is_numeric_column(pd.Series(range(100))), is_numeric_column(pd.Series(["a", "b"]))
    (True, False)
    >>> is_numeric_column(pd.Series([0.0, 1.0, None]))  # integer codes with a missing value
    False
    """
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return False
    if pd.api.types.is_float_dtype(dtype):
        values = column.dropna().to_numpy()
        if values.size == 0:
            return False
        if not np.all(np.mod(values[np.isfinite(values)], 1) == 0):
            return True
        return int(column.nunique()) > MAX_INTEGER_CATEGORIES
    if pd.api.types.is_integer_dtype(dtype):
        return int(column.nunique()) > MAX_INTEGER_CATEGORIES
    return False


def _any_numeric_column(array: np.ndarray) -> bool:
    """Whether :func:`is_numeric_column` reads some column of a 2-D array of numbers as a
    number; an integer column spanning at most :data:`MAX_INTEGER_CATEGORIES` values is
    settled from its range alone, without counting its distinct values.

    Examples
    --------
    >>> _any_numeric_column(np.array([[0, 3], [6, 1]])), _any_numeric_column(np.array([[0.5]]))
    (False, True)
    """
    narrow = np.zeros(array.shape[1], dtype=bool)
    if array.dtype.kind in "iu" and array.shape[0]:
        lowest, highest = column_ranges(np.ascontiguousarray(array))
        narrow = highest - lowest < MAX_INTEGER_CATEGORIES
    for j in np.flatnonzero(~narrow):
        if is_numeric_column(pd.Series(array[:, j])):
            return True
    return False


def numeric_columns(frame: Any, numeric: Any, n_bins: int) -> tuple[Any, tuple[str, ...]]:
    """The training rows (an array of numbers becomes a DataFrame with columns ``x0, x1,
    ...``) and the names of the columns read as numbers.

    ``numeric`` is "auto" (the rule of :func:`is_numeric_column`), None or an empty list (no
    column), or the columns' names.

    Examples
    --------
    >>> frame = pd.DataFrame({"hour": [9.5, 13.0], "room": ["a", "b"]})
    >>> numeric_columns(frame, "auto", 5)[1], numeric_columns(frame, None, 5)[1]
    (('hour',), ())
    >>> numeric_columns(np.array([[0.5, 1.0], [2.5, 2.0]]), "auto", 5)[1]  # x1: whole numbers
    ('x0',)
    """
    if numeric is None or (not isinstance(numeric, str) and len(numeric) == 0):
        return frame, ()
    if isinstance(numeric, str) and numeric == "auto":
        if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 2:
            raise DataError(f"n_bins must be an integer of at least 2, got {n_bins!r}")
        if isinstance(frame, np.ndarray):
            if frame.dtype.kind not in "fiu" or not _any_numeric_column(frame):
                return frame, ()  # read as it is: no DataFrame built for categories
            frame = pd.DataFrame(frame, columns=[f"x{j}" for j in range(frame.shape[1])])
        if not isinstance(frame, pd.DataFrame):
            return frame, ()
        names = tuple(str(n) for n in frame.columns if is_numeric_column(frame[n]))
        warn_numeric_identifiers(frame, names)
        return frame, names
    return frame, check_numeric_names(frame, numeric, n_bins)


def numbers_of(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` as float64, NaN where missing; :class:`DataError` naming the row of
    the first value that is not a number.

    Examples
    --------
    >>> numbers_of(pd.DataFrame({"hour": ["9", None, 13.5]}), "hour").tolist()
    [9.0, nan, 13.5]
    """
    numbers = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(numbers) & frame[name].notna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"numeric column {name!r}: row {row} holds {frame[name].iloc[row]!r}, not a number"
        )
    if np.isinf(numbers).any():
        row = int(np.flatnonzero(np.isinf(numbers))[0])
        raise DataError(f"numeric column {name!r}: row {row} holds {numbers[row]}, not finite")
    return numbers


def binned_schema(
    frame: pd.DataFrame,
    labels: Any,
    names: Sequence[str],
    n_bins: int,
    classes: Sequence[Any] | None = None,
) -> FeatureSchema:
    """The schema of ``frame`` with the columns ``names`` binned by training quantiles.

    Parameters
    ----------
    frame : DataFrame of shape (n_rows, n_features)
        Training rows.
    labels : array-like of shape (n_rows,)
    names : sequence of str
        Numeric columns (checked by :func:`check_numeric_names`).
    n_bins : int
        Bins per numeric column (fewer when quantiles tie).
    classes : sequence, optional
        Declared label values.

    Examples
    --------
    >>> frame = pd.DataFrame({"hour": [8.0, 9.5, 13.0, 17.0], "room": ["a", "b", "a", "a"]})
    >>> schema = binned_schema(frame, [1, 0, 1, 0], ["hour"], n_bins=2)
    >>> schema.bin_edges["hour"], schema.categories[1]
    ((11.25,), ('a', 'b'))
    """
    placeholders = frame.assign(**{name: 0 for name in names})
    schema = FeatureSchema.infer(placeholders, labels, classes=classes)
    for name in names:
        numbers_of(frame, name)
    return discretize(schema, frame, list(names), n_bins) if names else schema


@dataclass(frozen=True)
class NumericColumns:
    """Standardisation of numeric columns, fitted on training rows.

    Attributes
    ----------
    names : tuple of str
    centre : ndarray of shape (n_numeric,)
        Training means.
    scale : ndarray of shape (n_numeric,)
        Training standard deviations (1 for a constant column).

    Examples
    --------
    >>> columns = NumericColumns.fit(pd.DataFrame({"hour": [8.0, 12.0]}), ["hour"])
    >>> columns.centre.tolist(), columns.scale.tolist()
    ([10.0], [2.0])
    """

    names: tuple[str, ...]
    centre: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, frame: pd.DataFrame, names: Sequence[str]) -> NumericColumns:
        """Centre and scale of each named column over the rows of ``frame``.

        Examples
        --------
        >>> columns = NumericColumns.fit(pd.DataFrame({"hour": [8.0, 10.0, None]}), ["hour"])
        >>> columns.transform(pd.DataFrame({"hour": [12.0, None]})).tolist()
        [[3.0], [0.0]]
        """
        names = tuple(names)
        values = np.column_stack([numbers_of(frame, n) for n in names]) if names else None
        if values is None:
            return cls(names, np.zeros(0), np.ones(0))
        if np.isnan(values).all(axis=0).any():
            empty = names[int(np.flatnonzero(np.isnan(values).all(axis=0))[0])]
            raise DataError(f"numeric column {empty!r} has no non-missing value")
        centre = np.nanmean(values, axis=0)
        scale = np.nanstd(values, axis=0)
        scale[~(scale > 0)] = 1.0
        return cls(names, centre, scale)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Standardised values, shape (n_rows, n_numeric); a missing value becomes 0.

        Examples
        --------
        >>> columns = NumericColumns.fit(pd.DataFrame({"hour": [8.0, 12.0]}), ["hour"])
        >>> columns.transform(pd.DataFrame({"hour": [14.0, None]})).tolist()
        [[2.0], [0.0]]
        """
        if not self.names:
            return np.zeros((len(frame), 0))
        if not isinstance(frame, pd.DataFrame):
            raise DataError("numeric columns are named, so X must be a DataFrame")
        missing = [name for name in self.names if name not in frame.columns]
        if missing:
            raise DataError(f"numeric column(s) {missing} are not columns of X")
        values = np.column_stack([numbers_of(frame, n) for n in self.names])
        return np.nan_to_num((values - self.centre) / self.scale)
