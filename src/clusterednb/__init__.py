"""Clustered Naive Bayes: Bayesian multi-task classification over discrete features.

The public names are imported on first use (PEP 562), so ``import clusterednb`` and
``cnb --help`` do not pay for scikit-learn, pandas or Numba until they are needed.
"""

import importlib as _importlib
import typing as _typing

from clusterednb.version import __version__

globals().pop("version", None)  # the submodule the line above bound: not a public name

_EXPORTS = {
    "ModelAveragingNB": "clusterednb.averaging",
    "ClusteredNB": "clusterednb.naive_bayes.clustered",
    "ClusteredLogisticRegression": "clusterednb.logistic.estimator",
    "ClusteredLearner": "clusterednb.learners.estimator",
    "ClusteredBoosting": "clusterednb.learners.boosted",
    "FeatureSchema": "clusterednb.data",
    "TaskDataset": "clusterednb.data",
    "discretize": "clusterednb.data",
    "LossMatrix": "clusterednb.decision",
    "bayes_decision": "clusterednb.decision",
    "binary_threshold": "clusterednb.decision",
    "CNBError": "clusterednb.exceptions",
    "DataError": "clusterednb.exceptions",
    "DataWarning": "clusterednb.exceptions",
    "ModelFileError": "clusterednb.exceptions",
    "NotFittedError": "clusterednb.exceptions",
    "SchemaError": "clusterednb.exceptions",
    "UnknownCategoryWarning": "clusterednb.exceptions",
    "CompleteSharingNB": "clusterednb.naive_bayes.sharing",
    "NoSharingNB": "clusterednb.naive_bayes.sharing",
    "WithinTaskKFold": "clusterednb.model_selection",
    "DirichletNB": "clusterednb.models.observation",
    "load": "clusterednb.loading",
    "PrototypeNB": "clusterednb.naive_bayes.prototype",
    "Counts": "clusterednb.stats.counts",
}

__all__ = [
    "CNBError",
    "ClusteredBoosting",
    "ClusteredLearner",
    "ClusteredLogisticRegression",
    "ClusteredNB",
    "CompleteSharingNB",
    "Counts",
    "DataError",
    "DataWarning",
    "DirichletNB",
    "FeatureSchema",
    "LossMatrix",
    "ModelAveragingNB",
    "ModelFileError",
    "NoSharingNB",
    "NotFittedError",
    "PrototypeNB",
    "SchemaError",
    "TaskDataset",
    "UnknownCategoryWarning",
    "WithinTaskKFold",
    "__version__",
    "bayes_decision",
    "binary_threshold",
    "discretize",
    "load",
]

if _typing.TYPE_CHECKING:
    from clusterednb.averaging import ModelAveragingNB
    from clusterednb.data import FeatureSchema, TaskDataset, discretize
    from clusterednb.decision import LossMatrix, bayes_decision, binary_threshold
    from clusterednb.exceptions import (
        CNBError,
        DataError,
        DataWarning,
        ModelFileError,
        NotFittedError,
        SchemaError,
        UnknownCategoryWarning,
    )
    from clusterednb.learners.boosted import ClusteredBoosting
    from clusterednb.learners.estimator import ClusteredLearner
    from clusterednb.loading import load
    from clusterednb.logistic.estimator import ClusteredLogisticRegression
    from clusterednb.model_selection import WithinTaskKFold
    from clusterednb.models.observation import DirichletNB
    from clusterednb.naive_bayes.clustered import ClusteredNB
    from clusterednb.naive_bayes.prototype import PrototypeNB
    from clusterednb.naive_bayes.sharing import CompleteSharingNB, NoSharingNB
    from clusterednb.stats.counts import Counts


def __getattr__(name: str) -> _typing.Any:
    """Import a public name (or a submodule) on first use."""
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    try:
        return _importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
