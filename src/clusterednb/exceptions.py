"""The library's own exceptions and warnings.

Every user mistake raises a subclass of :class:`CNBError` (itself a ``ValueError``) with a
message that names the offending column, row or value.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def check_choice(
    name: str, value: Any, allowed: Sequence[Any], error: type[Exception] = CNBError
) -> None:
    """Raise ``error`` naming ``name`` when ``value`` is not one of ``allowed``: the package's
    one check of a setting with a fixed set of values.

    Examples
    --------
    >>> check_choice("handle_unknown", "warn", ("warn", "error", "ignore"))
    >>> check_choice("handle_unknown", "drop", ("warn", "ignore"))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: handle_unknown must be one of ('warn', 'ignore'), got 'drop'
    """
    if not any(_same(value, option) for option in allowed):
        raise error(f"{name} must be one of {tuple(allowed)}, got {value!r}")


def _same(value: Any, option: Any) -> bool:
    """``value`` is the setting ``option`` (a string only equals a string; 1 is not True)."""
    if isinstance(option, str):
        return isinstance(value, str) and value == option
    return value is option or (type(value) is type(option) and value == option)


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


class CNBWarning(UserWarning):
    """Base class of every warning the library gives.

    Examples
    --------
    >>> issubclass(DataWarning, CNBWarning) and issubclass(UnknownCategoryWarning, CNBWarning)
    True
    """


class UnknownCategoryWarning(CNBWarning):
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


class DataWarning(CNBWarning):
    """Data that will fit but probably not as meant (an identifier or a decimal column).

    Examples
    --------
    >>> issubclass(DataWarning, UserWarning)
    True
    """


OPTIONAL_EXTRAS = {
    "matplotlib": "report",
    "pyarrow": "parquet",
    "fastapi": "service",
    "starlette": "service",
    "uvicorn": "service",
    "jinja2": "service",
    "multipart": "service",
    "python_multipart": "service",
    "caldav": "caldav",
    "dask": "dask",
    "distributed": "dask",
    "pyspark": "spark",
    "lightgbm": "trees",
}
"""The top-level module of each optional dependency, and the extra of ``pyproject.toml`` that
installs it."""


class MissingExtraError(CNBError, ImportError):
    """An optional extra that a feature needs is not installed; the message names it.

    Examples
    --------
    >>> print(MissingExtraError("reading Parquet", "parquet", "pyarrow"))
    reading Parquet needs the optional extra [parquet] (module 'pyarrow' is not installed): ...
    """

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            f"{what} needs the optional extra [{extra}] (module {module!r} is not installed): "
            f'pip install "clusterednb[{extra}]"'
        )
        self.extra, self.name = extra, module


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` if ``extra`` is not installed.

    Examples
    --------
    >>> require_extra("service", "the web service") if absent_extras(("service",)) else None
    """
    for _, module in absent_extras((extra,)):
        raise MissingExtraError(what, extra, module)


def absent_extras(extras: tuple[str, ...]) -> list[tuple[str, str]]:
    """The (extra, module) pairs among ``extras`` whose module cannot be imported here.

    Examples
    --------
    >>> absent_extras(())
    []
    """
    absent = []
    for extra in extras:
        for module in sorted(m for m, e in OPTIONAL_EXTRAS.items() if e == extra):
            if module in ("starlette", "python_multipart", "distributed"):
                continue  # installed with another module of the same extra
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):  # None in sys.modules: blocked
                found = False
            if not found:
                absent.append((extra, module))
                break
    return absent


def missing_extra(error: ImportError) -> str | None:
    """The optional extra whose absence raised ``error``, or None if it is not one of them.

    Examples
    --------
    >>> missing_extra(ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn"))
    'service'
    >>> missing_extra(ModuleNotFoundError("...", name="matplotlib.pyplot"))
    'report'
    >>> missing_extra(ModuleNotFoundError("...", name="numpy")) is None  # a core dependency
    True
    """
    name = (getattr(error, "name", None) or "").split(".")[0]
    return OPTIONAL_EXTRAS.get(name)


def _not_fitted_error() -> type:
    """``NotFittedError``, built on first use: it is also scikit-learn's ``NotFittedError``,
    and importing scikit-learn (about a second) only to define it would slow every command
    that never fits (``cnb users list``)."""
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(CNBError, SklearnNotFittedError):
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

    NotFittedError.__module__ = __name__
    NotFittedError.__qualname__ = "NotFittedError"
    return NotFittedError


def __getattr__(name: str) -> type:
    """``NotFittedError`` on first use (see :func:`_not_fitted_error`)."""
    if name == "NotFittedError":
        globals()[name] = cls = _not_fitted_error()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
