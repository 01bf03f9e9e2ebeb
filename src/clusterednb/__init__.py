"""Clustered Naive Bayes: Bayesian multi-task classification over discrete features."""

from clusterednb.averaging import ModelAveragingNB
from clusterednb.clustered import ClusteredNB
from clusterednb.data import FeatureSchema, TaskDataset, discretize
from clusterednb.decision import LossMatrix, bayes_decision, binary_threshold
from clusterednb.exceptions import (
    CNBError,
    DataError,
    ModelFileError,
    NotFittedError,
    SchemaError,
    UnknownCategoryWarning,
)
from clusterednb.models import CompleteSharingNB, NoSharingNB
from clusterednb.observation import DirichletNB
from clusterednb.persistence import load
from clusterednb.prototype import PrototypeNB
from clusterednb.stats import Counts

__version__ = "0.1.0"

__all__ = [
    "CNBError",
    "ClusteredNB",
    "CompleteSharingNB",
    "Counts",
    "DataError",
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
    "__version__",
    "bayes_decision",
    "binary_threshold",
    "discretize",
    "load",
]
