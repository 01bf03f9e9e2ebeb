"""Feature schema: names, ordered categories, ordered classes and the flat value axis.

Every feature ``f`` takes one of ``V_f`` categories. All features share one *flat value axis*
of length ``V = Σ_f V_f``: category ``j`` of feature ``f`` sits at ``offsets[f] + j``. Counts,
priors and log-probability tables are indexed along this axis, so no per-feature ragged lists
are needed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from clusterednb.data.io import FeatureInput, feature_column, feature_names_of
from clusterednb.exceptions import DataError, SchemaError, UnknownCategoryWarning
from clusterednb.kernels import integer_codes, integer_presence

_INTEGER_FAST_LIMIT = 4096
HandleUnknown = Literal["warn", "error", "ignore"]
_HANDLE_UNKNOWN = ("warn", "error", "ignore")


def to_python_scalar(value: Any) -> Any:
    """Return a plain Python scalar for a numpy scalar; leave anything else unchanged.

    Integral floats become ``int`` so that a column read with NaNs (float) and one read
    without (int) give the same categories.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_vector(values: Any) -> np.ndarray:
    """A 1-D array of ``values`` in their own dtype; tuples and other containers stay elements.

    Numeric input keeps its numeric dtype (fast hashing and missing-value checks).
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
    """Boolean mask of missing entries (``None``, ``NaN``, ``pd.NA``, ``NaT``)."""
    return np.asarray(pd.isna(values), dtype=bool)


def ordered_unique(values: Iterable[Hashable]) -> tuple[Any, ...]:
    """Distinct non-missing values as Python scalars, sorted when they are comparable.

    Values of mixed, incomparable types keep their order of first appearance.
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


def _check_handle_unknown(handle_unknown: str) -> None:
    if handle_unknown not in _HANDLE_UNKNOWN:
        raise SchemaError(
            f"handle_unknown must be one of {_HANDLE_UNKNOWN}, got {handle_unknown!r}"
        )


@dataclass(frozen=True)
class FeatureSchema:
    """Names and ordered categories of the features, and the ordered label values.

    Parameters
    ----------
    feature_names : tuple of str, length n_features
        Column names of the features.
    categories : tuple of tuples, length n_features
        The ordered categories of each feature. Feature ``f``'s code ``j`` means
        ``categories[f][j]``.
    classes : tuple, length n_classes
        The ordered label values; label code ``c`` means ``classes[c]``.
    bin_edges : mapping of str to tuple of float, optional
        For features discretised by :func:`clusterednb.data.discretize`, the inner bin
        edges (length ``V_f - 1``). Raw numbers are binned with them when encoding.

    Examples
    --------
    >>> schema = FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2, 3)), (0, 1))
    >>> schema.offsets.tolist(), schema.n_values_total
    ([0, 2, 5], 5)
    """

    feature_names: tuple[str, ...]
    categories: tuple[tuple[Any, ...], ...]
    classes: tuple[Any, ...]
    bin_edges: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "feature_names", tuple(str(n) for n in self.feature_names))
        object.__setattr__(
            self,
            "categories",
            tuple(tuple(to_python_scalar(c) for c in cs) for cs in self.categories),
        )
        object.__setattr__(self, "classes", tuple(to_python_scalar(c) for c in self.classes))
        object.__setattr__(
            self,
            "bin_edges",
            {str(k): tuple(float(e) for e in v) for k, v in self.bin_edges.items()},
        )
        if len(self.feature_names) != len(self.categories):
            raise SchemaError(
                f"{len(self.feature_names)} feature names but {len(self.categories)} category lists"
            )
        if len(set(self.feature_names)) != len(self.feature_names):
            raise SchemaError(f"duplicate feature names in {self.feature_names}")
        if not self.feature_names:
            raise SchemaError("a schema needs at least one feature")
        for name, cats in zip(self.feature_names, self.categories, strict=True):
            if not cats:
                raise SchemaError(
                    f"feature {name!r} has no categories (is the column entirely missing?)"
                )
            if len(set(cats)) != len(cats):
                raise SchemaError(f"feature {name!r} has duplicate categories {cats}")
        if not self.classes:
            raise SchemaError("a schema needs at least one class")
        if len(set(self.classes)) != len(self.classes):
            raise SchemaError(f"duplicate classes {self.classes}")
        for name, edges in self.bin_edges.items():
            if name not in self.feature_names:
                raise SchemaError(f"bin edges given for unknown feature {name!r}")
            n_bins = len(self.categories[self.feature_names.index(name)])
            if len(edges) != n_bins - 1 or any(np.diff(edges) <= 0):
                raise SchemaError(
                    f"feature {name!r}: {n_bins} bins need {n_bins - 1} increasing edges, "
                    f"got {edges}"
                )

    # ------------------------------------------------------------------ shape facts
    @property
    def n_features(self) -> int:
        """Number of features ``F``."""
        return len(self.feature_names)

    @property
    def n_classes(self) -> int:
        """Number of label values ``C``."""
        return len(self.classes)

    @property
    def n_values(self) -> np.ndarray:
        """ndarray of shape (n_features,): the number of categories ``V_f`` of each feature."""
        return np.array([len(c) for c in self.categories], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """ndarray of shape (n_features + 1,): start of each feature on the flat value axis."""
        return np.concatenate([[0], np.cumsum(self.n_values)]).astype(np.int64)

    @property
    def n_values_total(self) -> int:
        """Length ``V = Σ_f V_f`` of the flat value axis."""
        return int(self.n_values.sum())

    @property
    def value_feature(self) -> np.ndarray:
        """ndarray of shape (n_values_total,): the feature index of each flat value."""
        return np.repeat(np.arange(self.n_features), self.n_values)

    # ------------------------------------------------------------------ construction
    @classmethod
    def infer(
        cls,
        features: FeatureInput,
        labels: Sequence[Any] | np.ndarray | None = None,
        *,
        classes: Sequence[Any] | None = None,
    ) -> FeatureSchema:
        """Infer the schema from training data.

        Parameters
        ----------
        features : DataFrame or ndarray of shape (n_rows, n_features)
            Feature columns (an array's are named ``x0, x1, ...``); missing values are
            ignored.
        labels : array-like of shape (n_rows,), optional
            Label values; missing values are ignored.
        classes : sequence, optional
            Declared label values (overrides ``labels``); use it when some class has no
            example yet.
        """
        names = feature_names_of(features)
        categories = _integer_array_categories(features)
        if categories is None:
            categories = tuple(
                ordered_unique(feature_column(features, j, name)) for j, name in enumerate(names)
            )
        for name, cats in zip(names, categories, strict=True):
            if not cats:
                raise SchemaError(f"feature column {name!r} has no non-missing value")
        if classes is not None:
            inferred_classes = tuple(to_python_scalar(c) for c in classes)
        elif labels is not None:
            inferred_classes = ordered_unique(as_vector(labels))
            if not inferred_classes:
                raise SchemaError("every label is missing: there is nothing to learn from")
        else:
            raise SchemaError("labels or classes are needed to infer a schema")
        return cls(tuple(names), categories, inferred_classes)

    def extended(
        self,
        features: FeatureInput,
        labels: Sequence[Any] | np.ndarray | None = None,
        *,
        classes: Sequence[Any] | None = None,
    ) -> FeatureSchema:
        """This schema with the new categories and classes found in more training data.

        New values are merged in sorted order when all are comparable, so fitting in chunks
        gives the same schema as fitting at once. Discretised features keep their bins.

        Parameters
        ----------
        features : DataFrame or ndarray of shape (n_rows, n_features)
            The schema's feature columns (an array's in schema order).
        labels : array-like of shape (n_rows,), optional
        classes : sequence, optional
            Declared label values; when given, ``labels`` adds no class.
        """
        if isinstance(features, pd.DataFrame):
            self.check_columns(features.columns)
        categories = tuple(
            cats
            if name in self.bin_edges
            else _merge_ordered(cats, ordered_unique(feature_column(features, f, name)))
            for f, (name, cats) in enumerate(zip(self.feature_names, self.categories, strict=True))
        )
        if classes is not None:  # declared classes are fixed, as in :meth:`infer`
            new_classes = _merge_ordered(self.classes, tuple(to_python_scalar(c) for c in classes))
        elif labels is not None:
            new_classes = _merge_ordered(self.classes, ordered_unique(as_vector(labels)))
        else:
            new_classes = self.classes
        return FeatureSchema(self.feature_names, categories, new_classes, self.bin_edges)

    def index_maps(self, old: FeatureSchema) -> tuple[np.ndarray, np.ndarray]:
        """Where each class and flat value of ``old`` sits in ``self``.

        Returns
        -------
        class_map : ndarray of shape (old.n_classes,)
        value_map : ndarray of shape (old.n_values_total,)
        """
        if old.feature_names != self.feature_names:
            raise SchemaError(f"features differ: {old.feature_names} versus {self.feature_names}")
        class_pos = {c: i for i, c in enumerate(self.classes)}
        class_map = np.array([class_pos[c] for c in old.classes], dtype=np.int64)
        value_map = []
        for f, (old_cats, new_cats) in enumerate(zip(old.categories, self.categories, strict=True)):
            pos = {c: i for i, c in enumerate(new_cats)}
            value_map.extend(int(self.offsets[f]) + pos[c] for c in old_cats)
        return class_map, np.array(value_map, dtype=np.int64)

    # ------------------------------------------------------------------ encoding
    def encode_features(
        self, features: FeatureInput, handle_unknown: HandleUnknown = "warn"
    ) -> np.ndarray:
        """Encode feature columns as integer codes.

        Parameters
        ----------
        features : DataFrame or ndarray of shape (n_rows, n_features)
            A DataFrame must have exactly the schema's feature columns (any order); an
            array's columns are the features in schema order.
        handle_unknown : {"warn", "error", "ignore"}
            A category not in the schema is treated as missing (code -1); ``"warn"`` counts
            such values and reports them in an :class:`UnknownCategoryWarning`, ``"error"``
            raises :class:`SchemaError` naming the column, row and value.

        Returns
        -------
        ndarray of shape (n_rows, n_features), dtype int32
            Category codes, -1 where the value is missing or unknown.
        """
        _check_handle_unknown(handle_unknown)
        self.check_input(features)
        if self._is_integer_range(features):
            codes = np.empty(features.shape, dtype=np.int32)
            n_unknown = integer_codes(np.ascontiguousarray(features), self.n_values, codes)
            unknown_cells = codes < 0 if n_unknown else None
        else:
            codes = np.empty((len(features), self.n_features), dtype=np.int32)
            unknown_cells = np.zeros(codes.shape, dtype=bool)
            for f, name in enumerate(self.feature_names):
                codes[:, f], unknown_cells[:, f] = self._encode_column(
                    f, feature_column(features, f, name)
                )
        if unknown_cells is not None and unknown_cells.any():
            self._report_unknown(features, unknown_cells, handle_unknown)
        return codes

    def _is_integer_range(self, features: FeatureInput) -> bool:
        """Whether ``features`` is an integer array whose categories are ``0 .. V_f - 1``."""
        return (
            isinstance(features, np.ndarray)
            and features.dtype.kind in "iu"
            and not self.bin_edges
            and all(cats == tuple(range(len(cats))) for cats in self.categories)
        )

    def _report_unknown(
        self, features: FeatureInput, unknown_cells: np.ndarray, handle_unknown: HandleUnknown
    ) -> None:
        unknown_report: list[str] = []
        for f, name in enumerate(self.feature_names):
            unknown = unknown_cells[:, f]
            column = feature_column(features, f, name)
            if unknown.any():
                rows = np.flatnonzero(unknown)
                examples = ordered_unique(column[rows])[:3]
                if handle_unknown == "error":
                    value = to_python_scalar(column[rows[0]])
                    raise SchemaError(
                        f"column {name!r}, row {int(rows[0])}: value {value!r} is not a "
                        f"known category of this feature (known: {_preview(self.categories[f])})"
                    )
                unknown_report.append(f"{name!r}: {rows.size} values such as {list(examples)}")
        if unknown_report and handle_unknown == "warn":
            warnings.warn(
                "categories never seen in training were treated as missing: "
                + "; ".join(unknown_report),
                UnknownCategoryWarning,
                stacklevel=4,
            )

    def _encode_column(self, f: int, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Codes of one column and the mask of values that are present but unknown."""
        name = self.feature_names[f]
        cats = self.categories[f]
        if name in self.bin_edges:
            numbers = pd.to_numeric(pd.Series(column), errors="coerce").to_numpy(dtype=float)
            bad = np.isnan(numbers) & ~is_missing(column)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                value = to_python_scalar(column[row])
                raise SchemaError(
                    f"column {name!r}, row {row}: value {value!r} is not a number "
                    "(this feature is discretised)"
                )
            codes = np.searchsorted(np.asarray(self.bin_edges[name]), numbers, side="right")
            codes = np.where(np.isnan(numbers), -1, codes).astype(np.int32)
            return codes, np.zeros(column.shape, dtype=bool)
        if column.dtype.kind in "iu" and cats == tuple(range(len(cats))):
            inside = (column >= 0) & (column < len(cats))
            return np.where(inside, column, -1).astype(np.int32), ~inside
        codes = _index_of(cats, column)
        missing = is_missing(column)
        return codes.astype(np.int32), (codes < 0) & ~missing

    def encode_labels(
        self, labels: Sequence[Any] | np.ndarray, column: str = "label"
    ) -> np.ndarray:
        """Encode label values as class codes.

        Parameters
        ----------
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
        """
        values = as_vector(labels)
        if values.ndim != 1:
            raise SchemaError(f"{column} must be 1-D, got shape {values.shape}")
        codes = _index_of(self.classes, values)
        unknown = (codes < 0) & ~is_missing(values)
        if unknown.any():
            row = int(np.flatnonzero(unknown)[0])
            value = to_python_scalar(values[row])
            raise SchemaError(
                f"{column} value {value!r} in row {row} is not one of the classes "
                f"{list(self.classes)}"
            )
        return codes.astype(np.int64)

    def check_input(self, features: FeatureInput) -> None:
        """Raise unless ``features`` has exactly the schema's feature columns."""
        if isinstance(features, np.ndarray):
            if features.ndim != 2 or features.shape[1] != self.n_features:
                raise SchemaError(
                    f"X has shape {features.shape} but the schema has {self.n_features} "
                    f"features {list(self.feature_names)}"
                )
            return
        self.check_columns(features.columns)

    def check_columns(self, columns: Iterable[Any]) -> None:
        """Raise :class:`SchemaError` unless ``columns`` are exactly the schema's features."""
        given = [str(c) for c in columns]
        missing = [n for n in self.feature_names if n not in given]
        extra = [c for c in given if c not in self.feature_names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing feature columns {missing}")
            if extra:
                parts.append(f"unexpected columns {extra}")
            raise SchemaError(
                "data do not match the schema: "
                + "; ".join(parts)
                + f" (the schema's features are {list(self.feature_names)})"
            )

    # ------------------------------------------------------------------ plain data
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready representation; see :meth:`from_dict`."""
        for name, cats in zip(self.feature_names, self.categories, strict=True):
            _check_json_scalars(cats, f"categories of feature {name!r}")
        _check_json_scalars(self.classes, "classes")
        return {
            "feature_names": list(self.feature_names),
            "categories": [list(c) for c in self.categories],
            "classes": list(self.classes),
            "bin_edges": {k: list(v) for k, v in self.bin_edges.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FeatureSchema:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(
                tuple(data["feature_names"]),
                tuple(tuple(c) for c in data["categories"]),
                tuple(data["classes"]),
                dict(data.get("bin_edges", {})),
            )
        except (KeyError, TypeError) as exc:
            raise SchemaError(f"malformed schema record: {exc}") from exc


def _integer_array_categories(features: FeatureInput) -> tuple[tuple[int, ...], ...] | None:
    """Categories of every column of a small non-negative integer array in one pass, or None."""
    if not isinstance(features, np.ndarray) or features.dtype.kind not in "iu" or not features.size:
        return None
    presence, in_range = integer_presence(np.ascontiguousarray(features), _INTEGER_FAST_LIMIT)
    if not in_range:
        return None
    return tuple(tuple(int(v) for v in np.flatnonzero(row)) for row in presence)


def _index_of(known: Sequence[Any], values: np.ndarray) -> np.ndarray:
    """Position of each value in ``known`` (-1 where absent); dtypes are inferred by pandas."""
    index = pd.Index(list(known)) if known else pd.Index([], dtype=object)
    if values.dtype == object:
        return index.get_indexer(pd.Index(values, dtype=object))
    return index.get_indexer(values)


def _merge_ordered(first: tuple[Any, ...], second: tuple[Any, ...]) -> tuple[Any, ...]:
    known = set(first)
    merged = list(first) + [c for c in second if c not in known]
    if len(merged) == len(first):
        return first
    try:
        return tuple(sorted(merged))
    except TypeError:
        return tuple(merged)


def _preview(values: Sequence[Any], limit: int = 8) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


def _check_json_scalars(values: Iterable[Any], what: str) -> None:
    for value in values:
        if isinstance(value, float) and not math.isfinite(value):
            raise SchemaError(f"{what}: {value!r} cannot be saved")
        if not isinstance(value, str | int | float | bool):
            raise SchemaError(
                f"{what}: value {value!r} of type {type(value).__name__} cannot be saved as "
                "plain data; use strings, integers, floats or booleans"
            )
