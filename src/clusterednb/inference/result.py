"""The engines' contract: what a clustering engine is given, what it returns, what it needs.

An engine is a function ``engine(model, counts, gamma, ...) -> ClusteringResult``: ``model``
an observation model (:class:`~clusterednb.models.observation.ObservationModel`), ``counts`` one
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
    >>> from clusterednb.examples import models as toy
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
    >>> from clusterednb.examples import models as toy
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

        >>> from clusterednb.examples import inference as toy
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

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The result's arrays for a model file (the posterior and evidence are saved apart).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> sorted(toy.exact_clustering().result_.to_arrays())[:2]
        ['result_n_clusters_probability', 'result_partition']
        """
        arrays = {
            "result_partition": self.partition,
            "result_n_clusters_probability": self.n_clusters_probability,
            "result_partitions": self.partitions,
            "result_partition_weights": self.partition_weights,
        }
        arrays.update({f"extra_{k}": np.asarray(v) for k, v in self.extras.items()})
        return arrays

    @classmethod
    def from_arrays(
        cls,
        arrays: dict[str, np.ndarray],
        posterior: Posterior,
        log_evidence: float,
        evidence_kind: str,
        n_tasks: int,
    ) -> ClusteringResult:
        """The result saved by :meth:`to_arrays`, its partition checked against ``n_tasks``.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> saved = toy.exact_clustering().result_
        >>> again = ClusteringResult.from_arrays(saved.to_arrays(), saved.posterior,
        ...                                      saved.log_evidence, "exact", n_tasks=3)
        >>> again.partition.tolist() == saved.partition.tolist()
        True
        """
        partition = arrays["result_partition"]
        if partition.shape != (n_tasks,):
            raise CNBError(
                f"array result_partition has shape {partition.shape}, expected ({n_tasks},) "
                "for the task ids"
            )
        return cls(
            posterior=posterior,
            log_evidence=log_evidence,
            evidence_kind=evidence_kind,
            partition=partition,
            n_clusters_probability=arrays["result_n_clusters_probability"],
            partitions=arrays["result_partitions"],
            partition_weights=arrays["result_partition_weights"],
            extras={k[len("extra_") :]: v for k, v in arrays.items() if k.startswith("extra_")},
        )
