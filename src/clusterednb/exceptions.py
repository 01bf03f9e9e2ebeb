"""The library's own exceptions and warnings.

Every user mistake raises a subclass of :class:`CNBError` (itself a ``ValueError``) with a
message that names the offending column, row or value.
"""

from __future__ import annotations

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError


class CNBError(ValueError):
    """Base class of every error the library raises for bad input."""


class SchemaError(CNBError):
    """Data do not match the feature schema (columns, categories, classes)."""


class DataError(CNBError):
    """Input data are malformed (empty, NaN where not allowed, wrong shape)."""


class ModelFileError(CNBError):
    """A saved model file is corrupted, truncated, or of an unknown format version."""


class NotFittedError(CNBError, _SklearnNotFittedError):
    """An estimator was used before ``fit`` (also scikit-learn's ``NotFittedError``)."""


class UnknownCategoryWarning(UserWarning):
    """Values never seen in training were treated as missing."""


class DataWarning(UserWarning):
    """Data that will fit but probably not as meant (an identifier or a decimal column)."""
