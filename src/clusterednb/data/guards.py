"""Checks that catch data that would fit badly: huge count tables, identifiers, decimals.

Naive Bayes over categories keeps a dense count table of shape (tasks, classes, values).
A column with hundreds of thousands of distinct values makes that table gigabytes large; a
column whose value differs in every row (an identifier) or a column of decimals (one
category per distinct number) fits without error but learns nothing that carries over.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError, DataWarning, warn_at_caller

MAX_COUNT_BYTES = 2**31
"""Largest dense count table (int64 cells) a fit may allocate: 2 GiB."""
SPARSE_COUNT_BYTES = 2**28
"""Above this size of a dense count table (256 MiB), an estimator whose engine reads sparse
counts keeps them sparse (:class:`clusterednb.stats.sparse_counts.SparseCounts`)."""
IDENTIFIER_SHARE = 0.9
"""A column with a distinct value in at least this share of its rows looks like an id."""
MIN_ROWS_TO_JUDGE = 50
DECIMAL_CATEGORIES = 20
"""A decimal column with more distinct values than this is worth binning."""


def dense_count_bytes(schema: FeatureSchema, n_tasks: int) -> int:
    """Bytes of a dense (n_tasks, n_classes, n_values_total) table of int64 counts.

    Examples
    --------
    >>> schema = FeatureSchema(("a", "b"), ((0, 1, 2), (0, 1)), ("no", "yes"))
    >>> dense_count_bytes(schema, n_tasks=1_000_000)  # 10⁶ tasks × 2 classes × 5 values × 8
    80000000
    """
    return 8 * n_tasks * schema.n_classes * schema.n_values_total


def check_count_size(schema: FeatureSchema, n_tasks: int, max_bytes: int | None = None) -> None:
    """Refuse a schema whose count table would exceed ``max_bytes``, naming the widest column.

    Parameters
    ----------
    schema : FeatureSchema
    n_tasks : int
    max_bytes : int, optional
        Default :data:`MAX_COUNT_BYTES`.

    Raises
    ------
    DataError
        With the table's size, the column with the most values and its number of values.

    Examples
    --------
    >>> schema = FeatureSchema(("id",), (tuple(range(200_000)),), (0, 1))
    >>> check_count_size(schema, n_tasks=2_000)
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: counting needs a table of 2000 tasks x 2 classes x ...
    column 'id' has 200000 distinct values; drop it, bin it, or group its rare values
    """
    max_bytes = MAX_COUNT_BYTES if max_bytes is None else max_bytes
    n_bytes = dense_count_bytes(schema, n_tasks)
    if n_bytes <= max_bytes:
        return
    widths = np.diff(schema.offsets)
    widest = int(np.argmax(widths))
    raise DataError(
        f"counting needs a table of {n_tasks} tasks x {schema.n_classes} classes x "
        f"{schema.n_values_total} values ({n_bytes / 1e9:.1f} GB), more than the "
        f"{max_bytes / 1e9:.1f} GB allowed: column {schema.feature_names[widest]!r} has "
        f"{int(widths[widest])} distinct values; drop it, bin it, or group its rare values"
    )


def warn_suspicious_columns(frame: pd.DataFrame | np.ndarray, schema: FeatureSchema) -> None:
    """Warn (:class:`DataWarning`) about identifier-like and decimal columns.

    Uses the schema inferred from ``frame`` (its number of categories per feature), so an
    integer-coded array costs nothing; only float columns are scanned for decimals.

    Parameters
    ----------
    frame : DataFrame or ndarray of shape (n_rows, n_features)
        Raw feature values (an array's columns are named ``x0, x1, ...``).
    schema : FeatureSchema
        The schema inferred from ``frame``.

    Examples
    --------
    >>> import warnings
    >>> from clusterednb import FeatureSchema
    >>> frame = pd.DataFrame({"id": [f"r{i}" for i in range(60)], "colour": ["red", "blue"] * 30})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_suspicious_columns(frame, FeatureSchema.infer(frame, [0, 1] * 30))
    >>> any("'id'" in str(w.message) for w in caught)
    True
    """
    n_rows = len(frame)
    for f, name in enumerate(schema.feature_names):
        n_distinct = len(schema.categories[f])
        column = frame[name] if isinstance(frame, pd.DataFrame) else frame[:, f]
        decimal = (
            n_distinct > DECIMAL_CATEGORIES
            and np.asarray(column).dtype.kind == "f"
            and not np.all(np.mod(np.asarray(column, dtype=float)[~np.isnan(column)], 1) == 0)
        )
        if decimal:
            warn_at_caller(
                f"column {name!r} holds {n_distinct} distinct decimal values and each becomes "
                "its own category; bin it (clusterednb.discretize, or cnb fit --bins N)",
                DataWarning,
            )
        elif n_rows >= MIN_ROWS_TO_JUDGE and n_distinct >= IDENTIFIER_SHARE * n_rows:
            warn_at_caller(
                f"column {name!r} has a distinct value in nearly every row ({n_distinct} of "
                f"{n_rows}): an identifier used as a feature learns nothing that carries "
                "over to new rows; drop it",
                DataWarning,
            )


def warn_numeric_identifiers(frame: pd.DataFrame, names: tuple[str, ...]) -> None:
    """Warn (:class:`DataWarning`) about a column read as a number that holds a distinct
    whole number in nearly every row: a row number or an identifier, which as a number
    orders the rows rather than describing them.

    Examples
    --------
    >>> import warnings
    >>> frame = pd.DataFrame({"id": range(60), "hour": [9.5, 13.25] * 30})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_numeric_identifiers(frame, ("id", "hour"))
    >>> [str(w.message).split(":")[0] for w in caught]
    ["column 'id' has a distinct whole number in nearly every row (60 of 60)"]
    """
    n_rows = len(frame)
    if n_rows < MIN_ROWS_TO_JUDGE:
        return
    for name in names:
        values = pd.to_numeric(frame[name], errors="coerce").dropna().to_numpy(dtype=float)
        n_distinct = np.unique(values).size
        if n_distinct >= IDENTIFIER_SHARE * n_rows and np.all(np.mod(values, 1) == 0):
            warn_at_caller(
                f"column {name!r} has a distinct whole number in nearly every row "
                f"({n_distinct} of {n_rows}): it looks like a row number or an identifier, "
                "which describes no example and carries nothing over to new rows; drop it",
                DataWarning,
            )


def check_label_values(classes: tuple, n_labelled: int) -> None:
    """Refuse labels that cannot be classes: decimals (a measurement chosen as the label) or
    a distinct class in nearly every labelled row.

    Examples
    --------
    >>> check_label_values(("no", "yes"), 100)
    >>> check_label_values(tuple(np.linspace(0.1, 9.9, 99)), 100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: the label column holds 99 distinct decimal values (0.1, ...
    """
    n_classes = len(classes)
    if n_classes <= 2:
        return
    numbers = pd.to_numeric(pd.Series(list(classes), dtype=object), errors="coerce")
    decimal = bool(numbers.notna().all()) and not bool(np.all(np.mod(numbers, 1) == 0))
    if decimal:
        shown = ", ".join(f"{v:g}" for v in numbers.iloc[:3])
        raise DataError(
            f"the label column holds {n_classes} distinct decimal values ({shown}, ...): a "
            "classifier's labels are classes; choose the label column again, or cut the "
            "values into a few classes first"
        )
    if n_labelled >= MIN_ROWS_TO_JUDGE and n_classes >= IDENTIFIER_SHARE * n_labelled:
        raise DataError(
            f"the label column has {n_classes} distinct values in {n_labelled} labelled rows: "
            "nearly every row its own class leaves nothing to learn; choose the label column "
            "again"
        )
