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


def as_feature_frame(X: Any, feature_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Turn an estimator's ``X`` (DataFrame or 2-D array) into a DataFrame of features.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_rows, n_features)
    feature_names : sequence of str, optional
        Names for the columns of an array; default ``x0, x1, ...``.
    """
    if isinstance(X, pd.DataFrame):
        if all(isinstance(c, str) for c in X.columns):
            return X
        return X.rename(columns=str)
    array = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
    if array.ndim != 2:
        raise DataError(f"X must be 2-D (n_rows, n_features), got an array of shape {array.shape}")
    names = (
        list(feature_names)
        if feature_names is not None
        else [f"x{j}" for j in range(array.shape[1])]
    )
    if len(names) != array.shape[1]:
        raise DataError(f"X has {array.shape[1]} columns but the schema has {len(names)} features")
    return pd.DataFrame({name: array[:, j] for j, name in enumerate(names)}, copy=False)
