"""The rules a feature schema's parts obey, checked in one place with errors that name the part.

:class:`clusterednb.data.schema.FeatureSchema` calls :func:`check_schema_parts` when it is
built and :func:`check_same_columns` when data arrive, so a schema that exists is valid and
data that reach the encoder have exactly its columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from clusterednb.exceptions import SchemaError


def check_schema_parts(
    feature_names: tuple[str, ...],
    categories: tuple[tuple[Any, ...], ...],
    classes: tuple[Any, ...],
    bin_edges: Mapping[str, tuple[float, ...]],
) -> None:
    """Raise :class:`SchemaError` unless the parts make a schema.

    The rules: at least one feature and one class; one category list per feature name; no
    duplicate names, categories or classes; no empty category list; bin edges only for
    known features, increasing, one fewer than the feature's bins.

    Parameters
    ----------
    feature_names : tuple of str, length n_features
    categories : tuple of tuples, length n_features
    classes : tuple, length n_classes
    bin_edges : mapping of str to tuple of float

    Examples
    --------
    >>> check_schema_parts(("size",), ((1, 2, 3),), ("no", "yes"), {})
    >>> check_schema_parts(("size",), ((1, 2, 3),), ("no", "yes"), {"size": (2.5, 1.5)})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: feature 'size': 3 bins need 2 increasing edges, got ...
    """
    if len(feature_names) != len(categories):
        raise SchemaError(
            f"{len(feature_names)} feature names but {len(categories)} category lists"
        )
    _require_distinct_and_some(
        feature_names, "duplicate feature names", "a schema needs at least one feature"
    )
    _require_distinct_and_some(classes, "duplicate classes", "a schema needs at least one class")
    for name, cats in zip(feature_names, categories, strict=True):
        _require_distinct_and_some(
            cats,
            f"feature {name!r} has duplicate categories",
            f"feature {name!r} has no categories (is the column entirely missing?)",
        )
    for name, edges in bin_edges.items():
        if name not in feature_names:
            raise SchemaError(f"bin edges given for unknown feature {name!r}")
        n_bins = len(categories[feature_names.index(name)])
        if len(edges) != n_bins - 1 or any(np.diff(edges) <= 0):
            raise SchemaError(
                f"feature {name!r}: {n_bins} bins need {n_bins - 1} increasing edges, got {edges}"
            )


def _require_distinct_and_some(
    values: tuple[Any, ...], when_repeated: str, when_empty: str
) -> None:
    """Raise :class:`SchemaError` with ``when_empty`` if ``values`` is empty, or with
    ``when_repeated`` (followed by the values) if it holds a value twice.

    Examples
    --------
    >>> _require_distinct_and_some(("no", "no"), "duplicate classes", "no class")
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: duplicate classes ('no', 'no')
    """
    if not values:
        raise SchemaError(when_empty)
    if len(set(values)) != len(values):
        raise SchemaError(f"{when_repeated} {values}")


def check_same_columns(feature_names: tuple[str, ...], columns: Iterable[Any]) -> None:
    """Raise :class:`SchemaError` unless ``columns`` are exactly ``feature_names`` (any order).

    Examples
    --------
    >>> check_same_columns(("colour", "size"), ["size", "colour"])
    >>> check_same_columns(("colour", "size"), ["colour", "weight"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: ... missing feature columns ['size']; unexpected ...
    """
    given = [str(c) for c in columns]
    missing = [n for n in feature_names if n not in given]
    extra = [c for c in given if c not in feature_names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing feature columns {missing}")
        if extra:
            parts.append(f"unexpected columns {extra}")
        raise SchemaError(
            "data do not match the schema: "
            + "; ".join(parts)
            + f" (the schema's features are {list(feature_names)})"
        )


def check_feature_input(feature_names: tuple[str, ...], features: Any) -> None:
    """Raise :class:`SchemaError` unless ``features`` has exactly the features
    ``feature_names``: an array with one column per feature (schema order), or a DataFrame
    with those columns (any order).

    Examples
    --------
    >>> check_feature_input(("colour", "size"), np.zeros((4, 2), dtype=int))
    >>> check_feature_input(("colour", "size"), np.zeros((4, 3), dtype=int))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.SchemaError: X has shape (4, 3) but the schema has 2 features ...
    """
    if isinstance(features, np.ndarray):
        if features.ndim != 2 or features.shape[1] != len(feature_names):
            raise SchemaError(
                f"X has shape {features.shape} but the schema has {len(feature_names)} "
                f"features {list(feature_names)}"
            )
        return
    check_same_columns(feature_names, features.columns)
