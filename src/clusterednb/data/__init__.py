"""Data model: feature schema, multi-task data sets, readers and discretisation."""

from clusterednb.data.dataset import TaskDataset
from clusterednb.data.discretize import discretize
from clusterednb.data.schema import FeatureSchema

__all__ = ["FeatureSchema", "TaskDataset", "discretize"]
