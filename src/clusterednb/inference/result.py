"""What a clustering engine returns besides the Posterior."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from clusterednb.inference.posterior import Posterior


@dataclass
class ClusteringResult:
    """The output of one clustering engine run.

    Attributes
    ----------
    posterior : Posterior
        What prediction reads.
    log_evidence : float
        ``log P(D | CNB)`` of the labelled rows, or a lower bound on it, or an estimate.
    evidence_kind : {"exact", "lower_bound", "estimate"}
    partition : ndarray of shape (n_tasks,)
        The MAP partition in canonical labels (clusters numbered by first appearance).
    n_clusters_probability : ndarray of shape (n_tasks + 1,)
        Posterior probability of each number of clusters (index = number of clusters).
    partitions : ndarray of shape (n_partitions, n_tasks)
        Distinct partitions (canonical labels) with posterior weight.
    partition_weights : ndarray of shape (n_partitions,)
        Their posterior probabilities (sample frequencies for Gibbs).
    extras : dict
        Engine-specific records (for BHC: ``tree``, ``node_log_r``; for Gibbs:
        ``gamma_samples``, ``acceptance``, ``unlabelled_proba``).
    """

    posterior: Posterior
    log_evidence: float
    evidence_kind: str
    partition: np.ndarray
    n_clusters_probability: np.ndarray
    partitions: np.ndarray
    partition_weights: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)

    def coclustering(self) -> np.ndarray:
        """Posterior probability that two tasks share a cluster, shape (n_tasks, n_tasks)."""
        if "coclustering" in self.extras:
            return self.extras["coclustering"]
        same = self.partitions[:, :, None] == self.partitions[:, None, :]
        return np.tensordot(self.partition_weights, same, axes=1)
