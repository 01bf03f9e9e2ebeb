"""Reading tables (CSV, Parquet) and turning estimator inputs into DataFrames."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.exceptions import DataError


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a long-format table from a CSV (optionally gzip-compressed) or Parquet file.

    Parameters
    ----------
    path : str or Path
        ``*.csv``, ``*.csv.gz``, ``*.tsv`` or ``*.parquet`` / ``*.pq``.

    Raises
    ------
    DataError
        If the file does not exist, has an unknown suffix, or cannot be parsed.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"no such file: {path}")
    suffixes = "".join(path.suffixes).lower()
    try:
        if suffixes.endswith((".parquet", ".pq")):
            return pd.read_parquet(path)
        if suffixes.endswith((".tsv", ".tsv.gz")):
            return pd.read_csv(path, sep="\t")
        if suffixes.endswith((".csv", ".csv.gz", ".txt")):
            return pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from exc
    raise DataError(f"unknown file type {path.name!r}: use .csv, .csv.gz, .tsv or .parquet")


def check_columns_exist(frame: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    """Raise :class:`DataError` naming any of ``columns`` absent from ``frame``."""
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise DataError(
            f"{role} column(s) {absent} not found; the data have columns {list(frame.columns)}"
        )


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
    """Column names of a DataFrame, or ``x0, x1, ...`` for an array."""
    if isinstance(features, pd.DataFrame):
        return [str(c) for c in features.columns]
    return [f"x{j}" for j in range(features.shape[1])]


def feature_column(features: FeatureInput, index: int, name: str) -> np.ndarray:
    """The values of one feature: column ``name`` of a DataFrame or column ``index`` of an array."""
    if isinstance(features, pd.DataFrame):
        return features[name].to_numpy()
    return features[:, index]
