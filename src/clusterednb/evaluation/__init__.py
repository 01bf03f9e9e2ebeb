"""Evaluation protocols (see ``../shared/docs/protocols.md``), data-set adapters and report."""

from clusterednb.evaluation.datasets import EvalDataset, load_dataset
from clusterednb.evaluation.report import write_report
from clusterednb.evaluation.structure import run_evidence, run_partitions
from clusterednb.evaluation.sweeps import run_learning_curves, run_loss_sweep
from clusterednb.evaluation.transfer import TransferSettings, run_transfer, summarise_transfer

__all__ = [
    "EvalDataset",
    "TransferSettings",
    "load_dataset",
    "run_evidence",
    "run_learning_curves",
    "run_loss_sweep",
    "run_partitions",
    "run_transfer",
    "summarise_transfer",
    "write_report",
]
