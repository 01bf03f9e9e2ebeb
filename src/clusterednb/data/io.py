"""Reading tables (CSV, Parquet) and turning estimator inputs into DataFrames."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from clusterednb.exceptions import DataError, require_extra


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

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "likes.csv.gz"
    >>> pd.DataFrame({"user": ["ann"], "liked": ["yes"]}).to_csv(path, index=False)
    >>> read_table(path).to_dict("list")
    {'user': ['ann'], 'liked': ['yes']}
    >>> read_table(path.with_suffix(".xlsx"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: no such file: ...likes.csv.xlsx
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"no such file: {path}")
    suffixes = "".join(path.suffixes).lower()
    try:
        if suffixes.endswith((".parquet", ".pq")):
            require_extra("parquet", f"reading {path.name}")
            return pd.read_parquet(path)
        if suffixes.endswith((".tsv", ".tsv.gz")):
            return pd.read_csv(path, sep="\t")
        if suffixes.endswith((".csv", ".csv.gz", ".txt")):
            return pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from exc
    raise DataError(f"unknown file type {path.name!r}: use .csv, .csv.gz, .tsv or .parquet")


def check_columns_exist(frame: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    """Raise :class:`DataError` naming any of ``columns`` absent from ``frame``.

    Examples
    --------
    >>> frame = pd.DataFrame({"user": ["ann"], "colour": ["red"]})
    >>> check_columns_exist(frame, ["user", "size"], "feature")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: feature column(s) ['size'] not found; the data have ...
    """
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise DataError(
            f"{role} column(s) {absent} not found; the data have columns {list(frame.columns)}"
        )
