"""The variational engine's view of the counts (flat, sparse, with the (class, feature)
segments that every Dirichlet normaliser sums over) and the engine's settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import digamma, gammaln

from clusterednb.models.observation import ConjugateModel


class VariationalProblem:
    """The flat, sparse view of the counts that the variational updates read.

    Parameters
    ----------
    model : ConjugateModel
        The observation model (its ``β`` and the features' value offsets).
    task_counts : scipy.sparse matrix of shape (n_tasks, n_classes * n_values_total)
        Each task's value counts, flattened class-major.
    label_counts : ndarray of shape (n_tasks, n_classes)

    Examples
    --------
    >>> from scipy import sparse
    >>> from clusterednb.examples import models as toy
    >>> counts = toy.three_task_counts()
    >>> n_tasks = counts.value_counts.shape[0]
    >>> flat = sparse.csr_matrix(counts.value_counts.reshape(n_tasks, -1))
    >>> problem = VariationalProblem(toy.colour_model(), flat, counts.label_counts)
    >>> problem.shape, problem.segment_starts.tolist()  # (classes, values); one segment per class
    ((2, 2), [0, 2])
    """

    def __init__(
        self, model: ConjugateModel, task_counts: sparse.csr_matrix, label_counts: np.ndarray
    ) -> None:
        n_tasks = task_counts.shape[0]
        n_classes = label_counts.shape[1]
        n_values = task_counts.shape[1] // n_classes
        self.n_tasks = n_tasks
        self.shape = (n_classes, n_values)
        self.task_counts = sparse.csr_matrix(task_counts, dtype=np.float64)
        self.beta = np.asarray(model.beta, dtype=np.float64).reshape(-1)
        # Segment (class, feature) of each flat (class, value) cell, and segment starts.
        offsets = np.asarray(model.offsets)
        starts = (np.arange(n_classes)[:, None] * n_values + offsets[None, :-1]).reshape(-1)
        self.segment_starts = starts
        self.segment_of = np.repeat(
            np.arange(starts.size), np.diff(np.append(starts, n_values * n_classes))
        )
        self.log_beta_norm = self.log_norm(self.beta[None, :])[0]
        self.log_labels = float(model.log_marginal_labels(label_counts).sum())

    def log_norm(self, pseudo: np.ndarray) -> np.ndarray:
        """``Σ_{y,f} log B(pseudo[y, f])`` per row of pseudo-counts, shape (K, CV) -> (K,).

        Examples
        --------
        >>> import numpy as np
        >>> from clusterednb.examples import inference as toy
        >>> problem = toy.variational_problem()
        >>> problem.log_norm(np.ones((1, 4))).round(6).tolist()  # B(1, 1) = 1 per segment
        [0.0]
        """
        totals = np.add.reduceat(pseudo, self.segment_starts, axis=1)
        return gammaln(pseudo).sum(axis=1) - gammaln(totals).sum(axis=1)

    def expected_log_theta(self, cluster_counts: np.ndarray) -> np.ndarray:
        """``E[log θ_kyv]`` of ``θ ~ Dir(β + cluster_counts)``, shape (K, CV) -> (K, CV).

        Examples
        --------
        >>> import numpy as np
        >>> from clusterednb.examples import inference as toy
        >>> problem = toy.variational_problem()
        >>> problem.expected_log_theta(np.zeros((1, 4))).round(4).tolist()  # ψ(1) − ψ(2) = −1
        [[-1.0, -1.0, -1.0, -1.0]]
        """
        pseudo = self.beta + cluster_counts
        totals = np.add.reduceat(pseudo, self.segment_starts, axis=1)
        return digamma(pseudo) - digamma(totals)[:, self.segment_of]

    def log_features(self, cluster_counts: np.ndarray) -> float:
        """``Σ_k Σ_{y,f} [log B(β + N_kyf) − log B(β)]``: the clusters' log marginal
        likelihood of the expected counts (K, CV).

        Examples
        --------
        >>> import numpy as np
        >>> from clusterednb.examples import inference as toy
        >>> problem = toy.variational_problem()
        >>> round(problem.log_features(np.array([[1.0, 0.0, 0.0, 0.0]])), 6)  # P(red | y=0)
        -0.693147
        """
        return float((self.log_norm(self.beta + cluster_counts) - self.log_beta_norm).sum())


@dataclass(frozen=True)
class VariationalSettings:
    """Settings of the variational engine.

    Attributes
    ----------
    n_components : int
        Truncation level ``K`` (capped at the number of tasks). Generous on purpose: with
        exactly as many components as planted groups some groups are merged for good (mean
        field cannot split them; 100 000 users in 50 groups: ARI 0.92 with K = 50, 1.00 with
        K = 80 or 100).
    max_iter : int
        Coordinate-ascent iterations per restart.
    tol : float
        Stop when the ELBO rises by less than ``tol · |ELBO|``.
    n_init : int
        Restarts; the highest ELBO wins.
    max_restart_tasks : int
        Above this many tasks only the first restart (every cluster seeded) runs: a large
        population fills its clusters, and each restart costs a whole fit.
    spare_components : int
        Components that hold no mass at all are dropped after each iteration except this
        many (kept in their stick order, so new clusters can still be born); the truncation
        shrinks as the fit settles and each iteration costs less.
    sequential_start_tasks : int
        Up to this many tasks a restart also starts from :func:`sequential_partition`
        (``O(U · K · nnz)`` Python-level steps, so left out above).
    n_jobs : int
        Threads for the assignment step (chunks of tasks; the compiled step releases the GIL).
    collapsed_passes : int
        Up to ``sequential_start_tasks`` tasks, the winning restart's responsibilities are
        finished by at most this many leave-one-out passes
        (:func:`~clusterednb.inference.variational.collapsed.collapsed_polish`), so that no
        task keeps a component of its own only because that component is made of it
        (0: off).
    refine_sweeps : int
        Up to ``sequential_start_tasks`` tasks, the predictive is averaged over this many
        collapsed Gibbs sweeps started at the polished mode, a quarter of them discarded
        (:func:`~clusterednb.inference.variational.collapsed.gibbs_refinement`; 0: off, the
        mode's responsibilities alone). A mode cannot stand for a posterior spread over many
        partitions (computer survey: one cluster of all 180 people in the mode, 59 % average
        co-clustering in Gibbs' samples); the bound reported stays the mode's ELBO.
    merge_pairs : int or None
        Merge moves per iteration on the pairs with the closest count profiles, kept when
        the ELBO rises (0: none). ``None``: 20 above ``max_restart_tasks`` tasks, none below
        (on landmine, 29 tasks, merging raised the ELBO but lowered the transfer AUC at
        k = 16 from 0.82 to 0.66: a better bound on the features is not a better predictor).

    Examples
    --------
    >>> settings = VariationalSettings(n_init=1)
    >>> settings.n_components, settings.collapsed_passes, settings.sequential_start_tasks
    (100, 20, 2000)
    """

    n_components: int = 100
    max_iter: int = 200
    tol: float = 1e-7
    n_init: int = 3
    max_restart_tasks: int = 20_000
    spare_components: int = 8
    sequential_start_tasks: int = 2000
    n_jobs: int = 1
    collapsed_passes: int = 20
    refine_sweeps: int = 40
    merge_pairs: int | None = None
