"""The library's own exceptions and warnings.

Every user mistake raises a subclass of :class:`CNBError` (itself a ``ValueError``) with a
message that names the offending column, row or value.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn with the location of the first frame outside the package: the line of the
    caller's code that called the library, however deep inside the library the warning
    arose.

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_at_caller("a column looks like an identifier", DataWarning)
    >>> caught[0].filename.endswith("exceptions.py")  # the doctest's own frame is outside
    False
    """
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class CNBError(ValueError):
    """Base class of every error the library raises for bad input.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> try:
    ...     NoSharingNB().fit([[0]], [1], ["u"])
    ... except CNBError as error:
    ...     print(error)
    the labels have only one class [1]; declare the others with classes=[...]
    """


class SchemaError(CNBError):
    """Data do not match the feature schema (columns, categories, classes).

    Examples
    --------
    >>> import pandas as pd
    >>> from clusterednb import NoSharingNB
    >>> model = NoSharingNB().fit(pd.DataFrame({"a": [0, 1]}), [0, 1], ["u", "u"])
    >>> try:
    ...     model.predict_proba(pd.DataFrame({"b": [0]}), ["u"])
    ... except SchemaError:
    ...     print("refused: column 'a' is missing")
    refused: column 'a' is missing
    """


class DataError(CNBError):
    """Input data are malformed (empty, NaN where not allowed, wrong shape).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> try:
    ...     NoSharingNB().fit([[0], [1]], [0, 1], ["u"])
    ... except DataError:
    ...     print("refused: 2 rows but 1 task")
    refused: 2 rows but 1 task
    """


class ModelFileError(CNBError):
    """A saved model file is corrupted, truncated, or of an unknown format version.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from clusterednb import load
    >>> broken = pathlib.Path(tempfile.mkdtemp()) / "model.cnb"
    >>> _ = broken.write_bytes(b"not a model")
    >>> try:
    ...     load(broken)
    ... except ModelFileError:
    ...     print("refused")
    refused
    """


class NotFittedError(CNBError, _SklearnNotFittedError):
    """An estimator was used before ``fit`` (also scikit-learn's ``NotFittedError``).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> try:
    ...     NoSharingNB().predict([[0]], ["u"])
    ... except NotFittedError:
    ...     print("fit first")
    fit first
    """


class UnknownCategoryWarning(UserWarning):
    """Values never seen in training were treated as missing.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from clusterednb import NoSharingNB
    >>> model = NoSharingNB().fit(pd.DataFrame({"a": [0, 1]}), [0, 1], ["u", "u"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = model.predict_proba(pd.DataFrame({"a": [7]}), ["u"])
    >>> any(issubclass(w.category, UnknownCategoryWarning) for w in caught)
    True
    """


class DataWarning(UserWarning):
    """Data that will fit but probably not as meant (an identifier or a decimal column).

    Examples
    --------
    >>> issubclass(DataWarning, UserWarning)
    True
    """
