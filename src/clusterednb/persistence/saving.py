"""The ``save`` method every fitted estimator of the package shares, and its registry entry.

A class that inherits :class:`SavesAsPlainData` is entered in
:data:`clusterednb.persistence.model_file.ESTIMATORS` by its name when it is defined, so
:func:`clusterednb.load` finds it without :mod:`clusterednb.persistence.model_file` importing any
estimator. The class itself says what its file holds (``_state``) and how it is restored
from one (``_restore``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from clusterednb.persistence.model_file import register_estimator, save_model
from clusterednb.persistence.state import ModelRecord


class SavesAsPlainData:
    """``save(path)`` for an estimator with ``_state()`` and ``_restore(record)``.

    Examples
    --------
    >>> from clusterednb.persistence.model_file import ESTIMATORS
    >>> class Remembered(SavesAsPlainData):
    ...     pass
    >>> ESTIMATORS["Remembered"] is Remembered  # registered when defined
    True
    >>> del ESTIMATORS["Remembered"]
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_estimator(cls)

    def save(self, path: str | Path) -> None:
        """Save the fitted model as a zip of JSON metadata and NPZ arrays (no pickle).

        Examples
        --------
        >>> from clusterednb import NoSharingNB, load
        >>> from clusterednb.examples import naive_bayes as toy
        >>> from clusterednb.examples import models as data_toy
        >>> X, y, tasks = toy.colour_rows()
        >>> model = NoSharingNB().fit(X, y, tasks)
        >>> path = data_toy.scratch_file("colours.cnb")
        >>> model.save(path)
        >>> bool(np.array_equal(load(path).predict_proba(X, tasks), model.predict_proba(X, tasks)))
        True
        """
        save_model(self, path)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """JSON metadata and arrays that restore the fitted state."""
        raise NotImplementedError

    def _restore(self, record: ModelRecord) -> None:
        """Set the fitted state from a model file's record, checking that its parts fit."""
        raise NotImplementedError
