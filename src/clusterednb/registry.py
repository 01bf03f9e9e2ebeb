"""Estimator classes by name, for loading saved models."""

from __future__ import annotations

from clusterednb.clustered import ClusteredNB
from clusterednb.models import CompleteSharingNB, NoSharingNB, TaskNaiveBayes
from clusterednb.prototype import PrototypeNB

ESTIMATORS: dict[str, type[TaskNaiveBayes]] = {
    cls.__name__: cls for cls in (NoSharingNB, CompleteSharingNB, ClusteredNB, PrototypeNB)
}
