"""Feature schema: names, ordered categories, ordered classes and the flat value axis.

Every feature ``f`` takes one of ``V_f`` categories. All features share one *flat value axis*
of length ``V = Σ_f V_f``: category ``j`` of feature ``f`` sits at ``offsets[f] + j``. Counts,
priors and log-probability tables are indexed along this axis, so no per-feature ragged lists
are needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from clusterednb.data import encode
from clusterednb.data.kernels import integer_presence
from clusterednb.data.schema_rules import (
    check_feature_input,
    check_same_columns,
    check_schema_parts,
)
from clusterednb.data.values import (
    FeatureInput,
    as_vector,
    check_json_scalars,
    feature_column,
    feature_names_of,
    merge_ordered,
    ordered_unique,
    to_python_scalar,
)
from clusterednb.exceptions import SchemaError

_INTEGER_FAST_LIMIT = 4096
HandleUnknown = Literal["warn", "error", "ignore"]


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
        check_schema_parts(self.feature_names, self.categories, self.classes, self.bin_edges)

    @property
    def n_features(self) -> int:
        """Number of features ``F``.

        Examples
        --------
        >>> FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2, 3)), (0, 1)).n_features
        2
        """
        return len(self.feature_names)

    @property
    def n_classes(self) -> int:
        """Number of label values ``C``.

        Examples
        --------
        >>> FeatureSchema(("colour",), (("red", "blue"),), ("no", "maybe", "yes")).n_classes
        3
        """
        return len(self.classes)

    @property
    def n_values(self) -> np.ndarray:
        """ndarray of shape (n_features,): the number of categories ``V_f`` of each feature.

        Examples
        --------
        >>> schema = FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2, 3)), (0, 1))
        >>> schema.n_values.tolist(), schema.n_values_total
        ([2, 3], 5)
        """
        return np.array([len(c) for c in self.categories], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """ndarray of shape (n_features + 1,): start of each feature on the flat value axis.

        Examples
        --------
        >>> schema = FeatureSchema(("a", "b"), ((0, 1), ("x", "y", "z")), ("no", "yes"))
        >>> schema.offsets.tolist(), schema.n_values_total, schema.value_feature.tolist()
        ([0, 2, 5], 5, [0, 0, 1, 1, 1])
        """
        return np.concatenate([[0], np.cumsum(self.n_values)]).astype(np.int64)

    @property
    def n_values_total(self) -> int:
        """Length ``V = Σ_f V_f`` of the flat value axis (examples: :attr:`n_values`).

        Examples
        --------
        >>> FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2, 3)), (0, 1)).n_values_total
        5
        """
        return int(self.n_values.sum())

    @property
    def value_feature(self) -> np.ndarray:
        """ndarray of shape (n_values_total,): the feature index of each flat value.

        Examples
        --------
        >>> FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2)), (0, 1)).value_feature
        array([0, 0, 1, 1])
        """
        return np.repeat(np.arange(self.n_features), self.n_values)

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

        Examples
        --------
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"colour": ["red", "blue", None], "size": [3, 1, 3]})
        >>> schema = FeatureSchema.infer(rows, ["yes", None, "no"])
        >>> schema.categories, schema.classes  # sorted; missing values are not categories
        ((('blue', 'red'), (1, 3)), ('no', 'yes'))
        """
        names = feature_names_of(features)
        categories = _observed_categories(features, names)
        found = _class_values(labels, classes)
        if found is None:
            raise SchemaError("labels or classes are needed to infer a schema")
        if not found:
            raise SchemaError("every label is missing: there is nothing to learn from")
        return cls(tuple(names), categories, found)

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

        Examples
        --------
        >>> import pandas as pd
        >>> schema = FeatureSchema(("colour",), (("blue", "red"),), ("no", "yes"))
        >>> schema.extended(pd.DataFrame({"colour": ["green"]}), ["maybe"]).categories
        (('blue', 'green', 'red'),)
        """
        if isinstance(features, pd.DataFrame):
            self.check_columns(features.columns)
        categories = tuple(
            cats
            if name in self.bin_edges
            else merge_ordered(cats, ordered_unique(feature_column(features, f, name)))
            for f, (name, cats) in enumerate(zip(self.feature_names, self.categories, strict=True))
        )
        new_classes = merge_ordered(self.classes, _class_values(labels, classes) or ())
        return FeatureSchema(self.feature_names, categories, new_classes, self.bin_edges)

    def index_maps(self, old: FeatureSchema) -> tuple[np.ndarray, np.ndarray]:
        """Where each class and flat value of ``old`` sits in ``self``.

        Returns
        -------
        class_map : ndarray of shape (old.n_classes,)
        value_map : ndarray of shape (old.n_values_total,)

        Examples
        --------
        >>> old = FeatureSchema(("colour",), (("blue", "red"),), ("no", "yes"))
        >>> new = FeatureSchema(("colour",), (("blue", "green", "red"),), ("maybe", "no", "yes"))
        >>> [m.tolist() for m in new.index_maps(old)]
        [[1, 2], [0, 2]]
        """
        return _index_maps(old, self)

    def encode_features(
        self, features: FeatureInput, handle_unknown: HandleUnknown = "warn"
    ) -> np.ndarray:
        """Integer codes of feature columns, shape (n_rows, n_features), int32; -1 where a
        value is missing or unknown (see :func:`clusterednb.data.encode.encode_features`).

        Examples
        --------
        >>> import pandas as pd
        >>> schema = FeatureSchema(("a", "b"), ((0, 1), ("x", "y", "z")), ("no", "yes"))
        >>> rows = pd.DataFrame({"a": [1, None], "b": ["z", "w"]})  # "w" was never seen
        >>> schema.encode_features(rows, handle_unknown="ignore").tolist()
        [[1, 2], [-1, -1]]
        """
        return encode.encode_features(self, features, handle_unknown)

    def encode_labels(
        self, labels: Sequence[Any] | np.ndarray, column: str = "label"
    ) -> np.ndarray:
        """Class codes of labels, shape (n_rows,), int64; -1 for unlabelled rows (see
        :func:`clusterednb.data.encode.encode_labels`).

        Examples
        --------
        >>> schema = FeatureSchema(("a", "b"), ((0, 1), ("x", "y", "z")), ("no", "yes"))
        >>> schema.encode_labels(["yes", None]).tolist()
        [1, -1]
        """
        return encode.encode_labels(self, labels, column)

    def check_input(self, features: FeatureInput) -> None:
        """Raise :class:`SchemaError` unless ``features`` has exactly the schema's columns.

        Examples
        --------
        >>> import numpy as np
        >>> schema = FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2)), (0, 1))
        >>> schema.check_input(np.zeros((4, 2), dtype=int))  # two columns: accepted
        >>> schema.check_input(np.zeros((4, 3), dtype=int))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        clusterednb.exceptions.SchemaError: X has shape (4, 3) but the schema has 2 features ...
        """
        check_feature_input(self.feature_names, features)

    def check_columns(self, columns: Iterable[Any]) -> None:
        """Raise :class:`SchemaError` unless ``columns`` are exactly the schema's features.

        Examples
        --------
        >>> schema = FeatureSchema(("colour", "size"), (("red", "blue"), (1, 2)), (0, 1))
        >>> schema.check_columns(["size", "colour"])  # any order
        """
        check_same_columns(self.feature_names, columns)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready representation; see :meth:`from_dict`.

        Examples
        --------
        >>> schema = FeatureSchema(("a", "b"), ((0, 1), ("x", "y", "z")), ("no", "yes"))
        >>> schema.to_dict()["categories"], FeatureSchema.from_dict(schema.to_dict()) == schema
        ([[0, 1], ['x', 'y', 'z']], True)
        """
        for name, cats in zip(self.feature_names, self.categories, strict=True):
            check_json_scalars(cats, f"categories of feature {name!r}")
        check_json_scalars(self.classes, "classes")
        return {
            "feature_names": list(self.feature_names),
            "categories": [list(c) for c in self.categories],
            "classes": list(self.classes),
            "bin_edges": {k: list(v) for k, v in self.bin_edges.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FeatureSchema:
        """Inverse of :meth:`to_dict`; a malformed record raises :class:`SchemaError`.

        Examples
        --------
        >>> FeatureSchema.from_dict({"feature_names": ["colour"], "classes": [0, 1]})
        Traceback (most recent call last):
        ...
        clusterednb.exceptions.SchemaError: malformed schema record: 'categories'
        """
        try:
            return cls(
                tuple(data["feature_names"]),
                tuple(tuple(c) for c in data["categories"]),
                tuple(data["classes"]),
                dict(data.get("bin_edges", {})),
            )
        except (KeyError, TypeError) as exc:
            raise SchemaError(f"malformed schema record: {exc}") from exc


def _observed_categories(features: FeatureInput, names: list[str]) -> tuple[tuple[Any, ...], ...]:
    """The sorted non-missing values of each feature column; an empty column raises."""
    categories = _integer_array_categories(features)
    if categories is None:
        categories = tuple(
            ordered_unique(feature_column(features, j, name)) for j, name in enumerate(names)
        )
    for name, cats in zip(names, categories, strict=True):
        if not cats:
            raise SchemaError(f"feature column {name!r} has no non-missing value")
    return categories


def _class_values(labels: Any, classes: Sequence[Any] | None) -> tuple[Any, ...] | None:
    """Declared ``classes`` if given (they fix the classes), else the labels' sorted values."""
    if classes is not None:
        return tuple(to_python_scalar(c) for c in classes)
    if labels is not None:
        return ordered_unique(as_vector(labels))
    return None


def _index_maps(old: FeatureSchema, new: FeatureSchema) -> tuple[np.ndarray, np.ndarray]:
    """Where each class and flat value of ``old`` sits in ``new`` (same features)."""
    if old.feature_names != new.feature_names:
        raise SchemaError(f"features differ: {old.feature_names} versus {new.feature_names}")
    class_pos = {c: i for i, c in enumerate(new.classes)}
    class_map = np.array([class_pos[c] for c in old.classes], dtype=np.int64)
    value_map = []
    for f, (old_cats, new_cats) in enumerate(zip(old.categories, new.categories, strict=True)):
        pos = {c: i for i, c in enumerate(new_cats)}
        value_map.extend(int(new.offsets[f]) + pos[c] for c in old_cats)
    return class_map, np.array(value_map, dtype=np.int64)


def _integer_array_categories(features: FeatureInput) -> tuple[tuple[int, ...], ...] | None:
    """Categories of every column of a small non-negative integer array in one pass, or None."""
    if not isinstance(features, np.ndarray) or features.dtype.kind not in "iu" or not features.size:
        return None
    presence, in_range = integer_presence(np.ascontiguousarray(features), _INTEGER_FAST_LIMIT)
    if not in_range:
        return None
    return tuple(tuple(int(v) for v in np.flatnonzero(row)) for row in presence)
