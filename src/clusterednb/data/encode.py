"""Encoding raw values with a schema, in one pass per column.

Each column is read once (:func:`~clusterednb.data.values.feature_column`), encoded, and its
unknown categories reported (or refused) in the same pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from clusterednb.data.kernels import integer_codes
from clusterednb.data.values import (
    FeatureInput,
    as_vector,
    feature_column,
    index_of,
    is_missing,
    ordered_unique,
    preview,
    to_python_scalar,
)
from clusterednb.exceptions import SchemaError, UnknownCategoryWarning, check_choice, warn_at_caller


class _SchemaView(Protocol):
    """What encoding reads of a :class:`clusterednb.data.schema.FeatureSchema`."""

    feature_names: tuple[str, ...]
    categories: tuple[tuple[Any, ...], ...]
    classes: tuple[Any, ...]
    bin_edges: Mapping[str, tuple[float, ...]]

    @property
    def n_features(self) -> int: ...

    @property
    def n_values(self) -> np.ndarray: ...

    def check_input(self, features: FeatureInput) -> None: ...


HANDLE_UNKNOWN = ("warn", "error", "ignore")


def _check_handle_unknown(handle_unknown: str) -> None:
    check_choice("handle_unknown", handle_unknown, HANDLE_UNKNOWN, SchemaError)


def _is_integer_range(schema: _SchemaView, features: FeatureInput) -> bool:
    """Whether ``features`` is an integer array whose categories are ``0 .. V_f - 1``."""
    return (
        isinstance(features, np.ndarray)
        and features.dtype.kind in "iu"
        and not schema.bin_edges
        and all(cats == tuple(range(len(cats))) for cats in schema.categories)
    )


def encode_column(schema: _SchemaView, f: int, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of feature ``f``'s values and the mask of values present but unknown.

    Parameters
    ----------
    schema : FeatureSchema
    f : int
        Feature index.
    column : ndarray of shape (n_rows,)

    Returns
    -------
    codes : ndarray of shape (n_rows,), int32
        -1 where the value is missing or unknown.
    unknown : ndarray of shape (n_rows,), bool

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> codes, unknown = encode_column(toy.colour_schema(), 0, np.array(["blue", None, "green"]))
    >>> codes.tolist(), unknown.tolist()  # missing and unknown are both -1; only green is unknown
    ([1, -1, -1], [False, False, True])
    """
    name, cats = schema.feature_names[f], schema.categories[f]
    if name in schema.bin_edges:
        numbers = pd.to_numeric(pd.Series(column), errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(numbers) & ~is_missing(column)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            value = to_python_scalar(column[row])
            raise SchemaError(
                f"column {name!r}, row {row}: value {value!r} is not a number "
                "(this feature is discretised)"
            )
        codes = np.searchsorted(np.asarray(schema.bin_edges[name]), numbers, side="right")
        codes = np.where(np.isnan(numbers), -1, codes).astype(np.int32)
        return codes, np.zeros(column.shape, dtype=bool)
    if column.dtype.kind in "iu" and cats == tuple(range(len(cats))):
        inside = (column >= 0) & (column < len(cats))
        return np.where(inside, column, -1).astype(np.int32), ~inside
    codes = index_of(cats, column)
    return codes.astype(np.int32), (codes < 0) & ~is_missing(column)


def _unknown_report(
    schema: _SchemaView, f: int, column: np.ndarray, unknown: np.ndarray, handle_unknown: str
) -> str | None:
    """Raise for ``"error"``; otherwise a phrase naming the column's unknown values."""
    if not unknown.any():
        return None
    name = schema.feature_names[f]
    rows = np.flatnonzero(unknown)
    if handle_unknown == "error":
        value = to_python_scalar(column[rows[0]])
        raise SchemaError(
            f"column {name!r}, row {int(rows[0])}: value {value!r} is not a known category of "
            f"this feature (known: {preview(schema.categories[f])})"
        )
    return f"{name!r}: {rows.size} values such as {list(ordered_unique(column[rows])[:3])}"


def encode_features(
    schema: _SchemaView, features: FeatureInput, handle_unknown: str = "warn"
) -> np.ndarray:
    """Encode feature columns as integer codes, reporting unknown categories in the same pass.

    Parameters
    ----------
    schema : FeatureSchema
    features : DataFrame or ndarray of shape (n_rows, n_features)
        A DataFrame must have exactly the schema's feature columns (any order); an array's
        columns are the features in schema order.
    handle_unknown : {"warn", "error", "ignore"}
        A category not in the schema is treated as missing (code -1); ``"warn"`` counts such
        values and reports them in an :class:`~clusterednb.exceptions.UnknownCategoryWarning`,
        ``"error"`` raises :class:`~clusterednb.exceptions.SchemaError` naming the column, row
        and value.

    Returns
    -------
    ndarray of shape (n_rows, n_features), dtype int32
        Category codes, -1 where the value is missing or unknown.

    Examples
    --------
    >>> import pandas as pd
    >>> from clusterednb.examples import models as toy
    >>> encode_features(toy.colour_schema(), pd.DataFrame({"colour": ["red", "blue"]})).tolist()
    [[0], [1]]
    >>> encode_features(toy.colour_schema(), pd.DataFrame({"colour": ["green"]}), "error")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: ...'green'...
    """
    _check_handle_unknown(handle_unknown)
    schema.check_input(features)
    fast = _is_integer_range(schema, features)
    codes = np.empty((len(features), schema.n_features), dtype=np.int32)
    if fast and not integer_codes(np.ascontiguousarray(features), schema.n_values, codes):
        return codes
    report = []
    for f, name in enumerate(schema.feature_names):
        column = feature_column(features, f, name)
        if fast:
            unknown = codes[:, f] < 0
        else:
            codes[:, f], unknown = encode_column(schema, f, column)
        phrase = _unknown_report(schema, f, column, unknown, handle_unknown)
        if phrase:
            report.append(phrase)
    if report and handle_unknown == "warn":
        warn_at_caller(
            "categories never seen in training were treated as missing: " + "; ".join(report),
            UnknownCategoryWarning,
        )
    return codes


def encode_labels(
    schema: _SchemaView, labels: Sequence[Any] | np.ndarray, column: str = "label"
) -> np.ndarray:
    """Encode label values as class codes.

    Parameters
    ----------
    schema : FeatureSchema
    labels : array-like of shape (n_rows,)
        Label values; missing ones (None, NaN) mean "unlabelled".
    column : str
        Name used in error messages.

    Returns
    -------
    ndarray of shape (n_rows,), dtype int64
        Class codes, -1 for unlabelled rows.

    Raises
    ------
    SchemaError
        If a present label is not one of the schema's classes.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> encode_labels(toy.colour_schema(), [1, None, 0]).tolist()  # classes (0, 1)
    [1, -1, 0]
    """
    values = as_vector(labels)
    codes = index_of(schema.classes, values)
    unknown = (codes < 0) & ~is_missing(values)
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        value = to_python_scalar(values[row])
        raise SchemaError(
            f"{column} value {value!r} in row {row} is not one of the classes "
            f"{list(schema.classes)}"
        )
    return codes.astype(np.int64)
