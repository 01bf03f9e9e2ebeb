"""``clusterednb.load``: read a saved model of any estimator of the library.

It sits above the estimators: importing them here registers their classes with
:mod:`clusterednb.persistence.model_file`, which itself never imports an estimator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clusterednb.learners import boosted
from clusterednb.learners import estimator as clustered_learner
from clusterednb.logistic import estimator as clustered_logistic
from clusterednb.naive_bayes import clustered, prototype
from clusterednb.naive_bayes import sharing as models
from clusterednb.persistence.model_file import read_model

REGISTERED = (
    models.NoSharingNB,
    models.CompleteSharingNB,
    clustered.ClusteredNB,
    prototype.PrototypeNB,
    clustered_logistic.ClusteredLogisticRegression,
    clustered_learner.ClusteredLearner,
    boosted.ClusteredBoosting,
)
"""The estimators whose files :func:`load` reads."""


def load(path: str | Path) -> Any:
    """Load a model written by ``model.save`` (a zip of JSON and NPZ; nothing is unpickled).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    The fitted estimator.

    Raises
    ------
    ModelFileError
        If the file is missing, not a model file, truncated or corrupted (any changed byte),
        of an unknown format version, names an unknown estimator, or holds values that
        contradict each other or the estimator's constraints.

    Examples
    --------
    >>> import numpy as np
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import models as toy
    >>> model = NoSharingNB().fit([[0], [1], [1]], [0, 1, 1], ["u", "u", "v"])
    >>> path = toy.scratch_file("model.cnb")
    >>> model.save(path)
    >>> np.array_equal(load(path).predict_proba([[1]], ["u"]), model.predict_proba([[1]], ["u"]))
    True
    """
    return read_model(path)
