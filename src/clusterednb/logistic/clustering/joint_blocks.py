"""The joint cluster likelihood of :class:`~clusterednb.ClusteredLogisticRegression`.

A cluster ``S`` of tasks explains its rows twice over: its features by a Dirichlet–naive-Bayes
model (one categorical per feature, shared by the cluster's rows, labelled or not, with a
symmetric ``Dirichlet(β)`` prior: a closed-form Dirichlet–multinomial marginal), and its
labels given the features by one logistic regression with a ``N(0, λ⁻¹ I)`` prior on the
weights of the one-hot features (a numeric column: its standardised number, one slope;
:func:`~clusterednb.logistic.clustering.task_expansions.label_rows`) and an intercept. The
block score is the tempered sum

    log B(S) = log P(X_S; τ) + log P(y_S | X_S; τ)

in which each task's likelihood is raised to a power ``τ_u ≤ 1`` (its counts and its label
log-likelihood multiplied by ``τ_u``; the Dirichlet marginal of fractional counts is the
power-likelihood marginal). Hundreds of rows per task make naive Bayes' evidence split tasks
into many fine clusters (its features are counted as independent when they are not);
``τ_u = min(1, R / n_u)`` lets no task count as more than ``R`` rows while a task of a few
rows (a new user with four answers) keeps its full weight.

The label marginal is a Laplace approximation around one anchor for all clusters: each task's
log-likelihood is expanded to second order at the pooled MAP ``w₀`` of every labelled row,
``ℓ_u(w) ≈ ℓ_u + g_uᵀ δ − ½ δᵀ H_u δ`` (``δ = w − w₀``), so a cluster's statistics are sums
``(L, G, H)`` over its tasks and its Gaussian integral is closed-form:

    log P(y_S | X_S) ≈ L + ½ bᵀ A⁻¹ b − ½ λ |w₀|² + ½ d log λ − ½ log det A,
    A = H + λ I,  b = G − λ w₀.

At the set whose MAP is ``w₀`` it equals the usual Laplace approximation at the mode
(:func:`~clusterednb.logistic.solvers.laplace.fit_laplace`; tested), and elsewhere it costs
``O(d³)`` per cluster instead of a Newton fit over the cluster's rows (a Newton fit per
candidate cluster made one landmine fit take minutes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from clusterednb.logistic.clustering.task_expansions import TaskExpansions, one_hot_design
from clusterednb.stats.special import log_dirichlet_norm

__all__ = ["BlockSums", "JointLogisticBlocks", "TaskExpansions", "one_hot_design"]


@dataclass(frozen=True)
class BlockSums:
    """A set of tasks' summed sufficient statistics.

    Attributes
    ----------
    counts : ndarray of shape (n_values_total,)
        Tempered feature-value counts.
    value : float
        ``L``, the summed label log-likelihoods at the anchor.
    gradient : ndarray of shape (d,)
        ``G``.
    hessian : ndarray of shape (d, d)
        ``H``.

    Examples
    --------
    >>> sums = BlockSums(np.array([1.0, 1.0]), -1.4, np.zeros(3), np.eye(3))
    >>> sums.hessian.shape
    (3, 3)
    """

    counts: np.ndarray
    value: float
    gradient: np.ndarray
    hessian: np.ndarray


class JointLogisticBlocks:
    """Cached block scores ``log B(S)`` for sets of tasks.

    Parameters
    ----------
    value_counts : ndarray of shape (n_tasks, n_values_total)
        Each task's feature-value counts over all its rows (labelled or not).
    offsets : ndarray of shape (n_features + 1,)
    expansions : TaskExpansions
        Each task's untempered label log-likelihood expanded at the pooled MAP
        (:meth:`TaskExpansions.at_pooled_map`; it does not depend on the tempering, so one
        serves every setting tried).
    beta : float
        Symmetric Dirichlet pseudo-count of the feature model.
    precision : float
        ``λ``, the logistic weights' prior precision (the one the expansions were made with).
    task_weights : ndarray of shape (n_tasks,)
        ``τ_u`` in ``(0, 1]``.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> expansions = toy.task_expansions()  # two tasks; each saw both values once
    >>> blocks = JointLogisticBlocks(np.array([[1, 1], [1, 1]]), np.array([0, 2]), expansions)
    >>> pair = frozenset({0, 1})
    >>> bool(np.isclose(blocks.log_block(pair),
    ...                 blocks.log_features(np.array([2, 2])) + blocks.log_labels(pair)))
    True
    """

    def __init__(
        self,
        value_counts: np.ndarray,
        offsets: np.ndarray,
        expansions: TaskExpansions,
        beta: float = 1.0,
        precision: float = 1.0,
        task_weights: np.ndarray | None = None,
    ) -> None:
        weights = np.ones(value_counts.shape[0]) if task_weights is None else task_weights
        self.value_counts = value_counts * weights[:, None]
        self.offsets = offsets
        self.beta = beta
        self.precision = precision
        self.expansions = TaskExpansions(
            expansions.anchor,
            expansions.value * weights,
            expansions.gradient * weights[:, None],
            expansions.hessian.scaled(weights),
        )
        self._scores: dict[frozenset[int], float] = {}
        self._starts = offsets[:-1]
        self._log_norm_prior = float(
            log_dirichlet_norm(np.full(value_counts.shape[1], beta), offsets).sum()
        )

    @property
    def n_tasks(self) -> int:
        """The number of tasks.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> blocks.n_tasks
        2
        """
        return self.value_counts.shape[0]

    def subset(self, tasks: np.ndarray) -> JointLogisticBlocks:
        """These blocks restricted to ``tasks`` (positions; they are renumbered 0, 1, …), with
        the same anchor and tempering.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()
        >>> one = blocks.subset(np.array([1]))
        >>> one.n_tasks, bool(np.isclose(one.log_block(frozenset({0})),
        ...                             blocks.log_block(frozenset({1}))))
        (1, True)
        """
        own = self.expansions
        expansions = TaskExpansions(
            own.anchor, own.value[tasks], own.gradient[tasks], own.hessian.take(tasks)
        )
        return JointLogisticBlocks(
            self.value_counts[tasks], self.offsets, expansions, self.beta, self.precision
        )

    def packed(self) -> tuple[tuple, tuple]:
        """The arrays the compiled sampler reads (:mod:`clusterednb.inference.blocks.kernels`).

        Returns
        -------
        features : tuple
            ``(value_counts (n_tasks, n_values_total), beta, offsets, log_norm_prior)``.
        expansions : tuple
            ``(value (n_tasks,), gradient (n_tasks, d), hessian (n_tasks, d, d), anchor (d,),
            constant)`` with ``constant = −½ λ|w₀|² + ½ d log λ``.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> features, expansions = toy.joint_blocks().packed()  # the class's example
        >>> features[0].shape, expansions[2].shape
        ((2, 2), (2, 3, 3))
        """
        own, precision = self.expansions, self.precision
        constant = -0.5 * precision * float(own.anchor @ own.anchor) + 0.5 * own.anchor.size * (
            np.log(precision)
        )
        features = (
            np.ascontiguousarray(self.value_counts, dtype=np.float64),
            float(self.beta),
            np.ascontiguousarray(self.offsets, dtype=np.int64),
            self._log_norm_prior,
        )
        expansions = (
            np.ascontiguousarray(own.value, dtype=np.float64),
            np.ascontiguousarray(own.gradient, dtype=np.float64),
            np.ascontiguousarray(own.hessian[:], dtype=np.float64),
            np.ascontiguousarray(own.anchor, dtype=np.float64),
            float(constant),
        )
        return features, expansions

    def log_features(self, counts: np.ndarray) -> np.ndarray:
        """``log P(X)`` of feature-value counts, shape (..., n_values_total) -> (...).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> round(float(np.exp(blocks.log_features(np.array([1, 1])))), 12)  # 1/2 · 1/3
        0.166666666667
        """
        pseudo = counts + self.beta
        log_norm = gammaln(pseudo).sum(axis=-1) - gammaln(
            np.add.reduceat(pseudo, self._starts, axis=-1)
        ).sum(axis=-1)
        return log_norm - self._log_norm_prior

    def log_labels(self, members: frozenset[int]) -> float:
        """``log P(y_S | X_S)`` (the anchored Laplace approximation of the module).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> bool(blocks.log_labels(frozenset({0})) < 0)
        True
        """
        return self.expansions.log_marginal(sorted(members), self.precision)

    def log_block(self, members: frozenset[int]) -> float:
        """``log B(S)`` of a non-empty set of task positions (cached per set).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> first = blocks.log_block(frozenset({0}))
        >>> first == blocks.log_block(frozenset({0}))  # cached
        True
        """
        if members not in self._scores:
            self._scores[members] = self.log_score(self.of_members(members))
        return self._scores[members]

    # ------------------------------------------------ sums, for samplers that move one task
    def of_members(self, members) -> BlockSums:
        """The summed statistics of a set of task positions.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> blocks.of_members([0, 1]).counts.tolist()  # each task saw each value once
        [2.0, 2.0]
        """
        rows = sorted(members)
        return BlockSums(
            self.value_counts[rows].sum(axis=0),
            float(self.expansions.value[rows].sum()),
            self.expansions.gradient[rows].sum(axis=0),
            self.expansions.hessian.summed(rows),
        )

    def added(self, sums: BlockSums, task: int) -> BlockSums:
        """``sums`` with one more task's statistics (``O(d²)``, not ``O(|S| d²)``).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> both = blocks.added(blocks.of_members([0]), 1)
        >>> bool(np.allclose(both.hessian, blocks.of_members([0, 1]).hessian))
        True
        """
        return self._moved(sums, task, 1.0)

    def removed(self, sums: BlockSums, task: int) -> BlockSums:
        """``sums`` without one of its tasks' statistics.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> first = blocks.removed(blocks.of_members([0, 1]), 1)
        >>> bool(np.isclose(blocks.log_score(first), blocks.log_block(frozenset({0}))))
        True
        """
        return self._moved(sums, task, -1.0)

    def _moved(self, sums: BlockSums, task: int, sign: float) -> BlockSums:
        return BlockSums(
            sums.counts + sign * self.value_counts[task],
            sums.value + sign * float(self.expansions.value[task]),
            sums.gradient + sign * self.expansions.gradient[task],
            sums.hessian + sign * self.expansions.hessian[task],
        )

    def log_score(self, sums: BlockSums) -> float:
        """``log B(S)`` from the set's summed statistics.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> pair = blocks.of_members([0, 1])
        >>> bool(np.isclose(blocks.log_score(pair), blocks.log_block(frozenset({0, 1}))))
        True
        """
        return float(self.log_features(sums.counts)) + self.expansions.log_marginal_of_sums(
            sums.value, sums.gradient, sums.hessian, self.precision
        )

    def log_scores_added(
        self, sums: Sequence[BlockSums], task: int, also: BlockSums | None = None
    ) -> np.ndarray:
        """``log B(S ∪ {task})`` of many sets' sums at once, shape (len(sums),), then
        ``log B(also)`` if given.

        A Gibbs step scores every cluster with the moving task, and the cluster it left
        without it: one batched factorisation instead of one Python call per cluster.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> scores = blocks.log_scores_added([blocks.of_members([0]), blocks.of_members([])], 1)
        >>> bool(np.allclose(scores, [blocks.log_block(frozenset({0, 1})),
        ...                           blocks.log_block(frozenset({1}))]))
        True
        """
        if not sums and also is None:
            return np.zeros(0)
        own = self.expansions
        every = [*sums] if also is None else [*sums, also]
        n = len(sums)
        counts = np.stack([s.counts for s in every])
        value = np.array([s.value for s in every])
        gradient = np.stack([s.gradient for s in every])
        hessian = np.stack([s.hessian for s in every])
        counts[:n] += self.value_counts[task]
        value[:n] += own.value[task]
        gradient[:n] += own.gradient[task]
        hessian[:n] += own.hessian[task]
        return self.log_features(counts) + own.log_marginals_of_sums(
            value, gradient, hessian, self.precision
        )
