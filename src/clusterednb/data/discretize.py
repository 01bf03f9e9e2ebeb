"""Quantile discretisation of continuous columns, fitted on training rows only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError


def quantile_edges(values: np.ndarray, n_bins: int) -> tuple[float, ...]:
    """Inner bin edges that split ``values`` into at most ``n_bins`` equally filled bins.

    Parameters
    ----------
    values : ndarray of shape (n_rows,)
        Training values; NaN is ignored.
    n_bins : int
        Requested number of bins (at least 2). Tied quantiles are merged, so fewer bins
        may result (at least one).

    Returns
    -------
    tuple of float, length n_bins_actual - 1
        Strictly increasing inner edges; value ``v`` falls in bin
        ``searchsorted(edges, v, side="right")``.

    Examples
    --------
    >>> quantile_edges(np.array([1.0, 2.0, 3.0, 4.0, np.nan]), 2)  # NaN ignored
    (2.5,)
    >>> quantile_edges(np.array([1.0, 1.0, 1.0, 5.0]), 4)  # quartiles 1, 1, 2: two edges
    (1.0, 2.0)
    """
    if n_bins < 2:
        raise DataError(f"n_bins must be at least 2, got {n_bins}")
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        raise DataError("cannot discretise a column with no non-missing value")
    inner = np.quantile(finite, np.linspace(0, 1, n_bins + 1)[1:-1])
    edges = np.unique(inner)
    # A bin must hold something: drop an edge equal to the maximum (its upper bin is empty).
    edges = edges[edges < finite.max()]
    return tuple(float(e) for e in edges)


def discretize(
    schema: FeatureSchema,
    train: pd.DataFrame,
    columns: Sequence[str],
    n_bins: int = 5,
) -> FeatureSchema:
    """Return ``schema`` with the given continuous columns binned by training quantiles.

    Parameters
    ----------
    schema : FeatureSchema
        A schema whose other features are kept as they are.
    train : DataFrame
        The TRAINING rows only; the edges are their quantiles, so no test row leaks in.
    columns : sequence of str
        Continuous feature columns to bin.
    n_bins : int, default=5
        Bins per column (fewer when quantiles tie).

    Returns
    -------
    FeatureSchema
        The categories of a binned feature are the bin numbers ``0 .. n_bins_actual - 1``
        and its edges are stored in ``bin_edges``; encoding raw numbers with the schema then
        bins them (values beyond the training range fall in the outer bins, NaN is missing).

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"size": [1.0, 2.0, 3.0, 4.0], "kind": ["a", "b", "a", "b"]})
    >>> base = FeatureSchema(("size", "kind"), ((0,), ("a", "b")), (0, 1))
    >>> binned = discretize(base, train, ["size"], n_bins=2)
    >>> binned.bin_edges["size"], binned.categories[0]
    ((2.5,), (0, 1))
    """
    categories = list(schema.categories)
    bin_edges = dict(schema.bin_edges)
    for name in columns:
        if name not in schema.feature_names:
            raise DataError(f"cannot discretise {name!r}: not a feature of the schema")
        if name not in train.columns:
            raise DataError(f"cannot discretise {name!r}: no such column in the training rows")
        numbers = pd.to_numeric(train[name], errors="coerce").to_numpy(dtype=float)
        non_numeric = np.isnan(numbers) & train[name].notna().to_numpy()
        if non_numeric.any():
            row = int(np.flatnonzero(non_numeric)[0])
            raise DataError(
                f"cannot discretise {name!r}: row {row} holds {train[name].iloc[row]!r}, "
                "not a number"
            )
        edges = quantile_edges(numbers, n_bins)
        categories[schema.feature_names.index(name)] = tuple(range(len(edges) + 1))
        bin_edges[name] = edges
    return FeatureSchema(schema.feature_names, tuple(categories), schema.classes, bin_edges)


def decimal_columns(X: pd.DataFrame) -> list[str]:
    """The columns of ``X`` that hold decimal (non-integer) numbers.

    Examples
    --------
    >>> decimal_columns(pd.DataFrame({"size": [0.5, 1.5], "count": [1.0, 2.0], "c": ["a", "b"]}))
    ['size']
    """
    return [
        name
        for name in X.columns
        if pd.api.types.is_float_dtype(X[name])
        and not np.all(np.mod(X[name].dropna().to_numpy(), 1) == 0)
    ]


def binned_schema_of(X: pd.DataFrame, y: np.ndarray, n_bins: int) -> FeatureSchema:
    """The schema inferred from ``X`` (n_rows, n_features) and labels ``y`` (n_rows,), with
    every column of decimal (non-integer) numbers cut into ``n_bins`` quantile bins.

    Examples
    --------
    >>> X = pd.DataFrame({"size": [0.5, 1.5, 2.5, 3.5], "colour": ["red", "blue", "red", "red"]})
    >>> schema = binned_schema_of(X, np.array([0, 1, 0, 1]), n_bins=2)
    >>> schema.bin_edges, schema.categories[1]
    ({'size': (2.0,)}, ('blue', 'red'))
    """
    if n_bins < 2:
        raise DataError(f"n_bins must be at least 2, got {n_bins}")
    continuous = decimal_columns(X)
    schema = FeatureSchema.infer(X, y)
    return discretize(schema, X, continuous, n_bins) if continuous else schema
