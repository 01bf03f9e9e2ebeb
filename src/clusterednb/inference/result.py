"""The engines' contract: what a clustering engine is given, what it returns, what it needs.

An engine is a function ``engine(model, counts, gamma, ...) -> ClusteringResult``: ``model``
an observation model (:class:`~clusterednb.observation.ObservationModel`), ``counts`` one
group of additive statistics per task (labelled rows), ``gamma`` the Dirichlet-process
concentration. The collapsed engines (exact enumeration, BHC, Gibbs, search, sharded Gibbs)
need closed-form marginal likelihoods of count statistics; :func:`require_conjugate` lets
each refuse, by name, an observation model without them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError
from clusterednb.inference.posterior import Posterior


def require_conjugate(model: Any, engine: str) -> None:
    """Raise :class:`CNBError` unless ``model`` has closed-form count marginals.

    Parameters
    ----------
    model : ObservationModel
    engine : str
        The engine's name, for the message.

    Examples
    --------
    >>> from clusterednb import toy
    >>> require_conjugate(toy.colour_model(), "bhc")  # Dirichlet–NB: counts have marginals
    >>> require_conjugate(object(), "bhc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: the 'bhc' engine sums closed-form marginal likelihoods ...
    """
    if not getattr(model, "conjugate", False):
        raise CNBError(
            f"the {engine!r} engine sums closed-form marginal likelihoods of count statistics; "
            f"the observation model {type(model).__name__} has none (it is not conjugate)"
        )


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

    Examples
    --------
    >>> from clusterednb import toy
    >>> from clusterednb.inference.exact import fit_exact
    >>> result = fit_exact(toy.colour_model(), toy.three_task_counts(), 1.0)
    >>> result.partition.tolist(), result.n_clusters_probability.round(4).tolist()
    ([0, 0, 0], [0.0, 0.4286, 0.4524, 0.119])
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
        """Posterior probability that two tasks share a cluster, shape (n_tasks, n_tasks).

        Examples
        --------
        Two partitions, weights 3/4 and 1/4; tasks 0 and 1 together only in the first:

        >>> from clusterednb import toy
        >>> result = ClusteringResult(toy.three_task_posterior(), 0.0, "exact", np.array([0, 0, 1]),
        ...                           np.zeros(4), np.array([[0, 0, 1], [0, 1, 1]]),
        ...                           np.array([0.75, 0.25]))
        >>> result.coclustering().tolist()
        [[1.0, 0.75, 0.0], [0.75, 1.0, 0.25], [0.0, 0.25, 1.0]]
        """
        if "coclustering" in self.extras:
            return self.extras["coclustering"]
        same = self.partitions[:, :, None] == self.partitions[:, None, :]
        return np.tensordot(self.partition_weights, same, axes=1)
