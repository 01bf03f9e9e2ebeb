"""Evaluation protocols (see ``../shared/docs/protocols.md``), data-set adapters and metrics."""

from clusterednb.evaluation.datasets import EvalDataset, load_dataset
from clusterednb.evaluation.transfer import TransferSettings, run_transfer, summarise_transfer

__all__ = ["EvalDataset", "TransferSettings", "load_dataset", "run_transfer", "summarise_transfer"]
