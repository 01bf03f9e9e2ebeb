"""The joint cluster likelihood of :class:`~clusterednb.ClusteredLogisticRegression`.

A cluster ``S`` of tasks explains its rows twice over: its features by a Dirichlet–naive-Bayes
model (one categorical per feature, shared by the cluster's rows, labelled or not, with a
symmetric ``Dirichlet(β)`` prior: a closed-form Dirichlet–multinomial marginal), and its
labels given the features by one logistic regression with a ``N(0, λ⁻¹ I)`` prior on the
weights of the one-hot features and an intercept. The block score is the tempered sum

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
(:func:`~clusterednb.inference.laplace.fit_laplace`; tested), and elsewhere it costs
``O(d³)`` per cluster instead of a Newton fit over the cluster's rows (a Newton fit per
candidate cluster made one landmine fit take minutes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, gammaln, log_expit

from clusterednb.exceptions import CNBError
from clusterednb.inference.laplace import fit_laplace
from clusterednb.special import log_dirichlet_norm


def one_hot_design(codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Dense one-hot rows of feature codes with a trailing intercept column.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes per feature, -1 for a missing value (an all-zero block).
    offsets : ndarray of shape (n_features + 1,)

    Returns
    -------
    ndarray of shape (n_rows, offsets[-1] + 1)

    Examples
    --------
    >>> one_hot_design(np.array([[0, 1], [-1, 0]]), np.array([0, 2, 4])).tolist()
    [[1.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0, 1.0]]
    """
    design = np.zeros((codes.shape[0], int(offsets[-1]) + 1))
    rows = np.arange(codes.shape[0])
    for feature in range(codes.shape[1]):
        present = codes[:, feature] >= 0
        design[rows[present], offsets[feature] + codes[present, feature]] = 1.0
    design[:, -1] = 1.0
    return design


@dataclass(frozen=True)
class TaskExpansions:
    """Each task's label log-likelihood expanded to second order at one anchor.

    Attributes
    ----------
    anchor : ndarray of shape (d,)
        ``w₀``.
    value : ndarray of shape (n_tasks,)
        ``ℓ_u(w₀)``.
    gradient : ndarray of shape (n_tasks, d)
    hessian : ndarray of shape (n_tasks, d, d)
        Minus the second derivative (positive semi-definite).

    Examples
    --------
    >>> design = one_hot_design(np.array([[0], [1], [0], [1]]), np.array([0, 2]))
    >>> y = np.array([1.0, 0.0, 1.0, 1.0])
    >>> starts = np.array([0, 2, 4])  # task 0: rows 0-1, task 1: rows 2-3
    >>> expansions = TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)
    >>> expansions.value.shape, expansions.hessian.shape  # two tasks, 2 values + intercept
    ((2,), (2, 3, 3))
    """

    anchor: np.ndarray
    value: np.ndarray
    gradient: np.ndarray
    hessian: np.ndarray

    @classmethod
    def at_pooled_map(
        cls, design: np.ndarray, y: np.ndarray, task_starts: np.ndarray, precision: float
    ) -> TaskExpansions:
        """Expansions at the MAP of all rows together (one Newton fit).

        Examples
        --------
        >>> from clusterednb import toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> bool(np.allclose(expansions.gradient.sum(axis=0), 1.0 * expansions.anchor))
        True

        At the pooled MAP the tasks' summed gradient balances the prior's pull, ``Σ_u g_u = λ w₀``
        (every weight, the intercept too, has the prior ``N(0, λ⁻¹)``).
        """
        anchor = fit_laplace(design, y, precision=precision).coef
        margin = design @ anchor
        row_value = np.where(y > 0, log_expit(margin), log_expit(-margin))
        probability = expit(margin)
        row_gradient = design * (y - probability)[:, None]
        curvature = probability * (1.0 - probability)
        n_tasks = task_starts.size - 1
        d = design.shape[1]
        value, gradient = np.zeros(n_tasks), np.zeros((n_tasks, d))
        hessian = np.zeros((n_tasks, d, d))
        for task in range(n_tasks):
            rows = slice(task_starts[task], task_starts[task + 1])
            value[task] = row_value[rows].sum()
            gradient[task] = row_gradient[rows].sum(axis=0)
            hessian[task] = (design[rows].T * curvature[rows]) @ design[rows]
        return cls(anchor, value, gradient, hessian)

    def log_marginal(self, members: list[int], precision: float) -> float:
        """The closed-form Gaussian integral of the members' summed expansions.

        Examples
        --------
        >>> from clusterednb import toy
        >>> design, y, starts = toy.logistic_rows()  # the class's example
        >>> expansions = TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)
        >>> both = expansions.log_marginal([0, 1], precision=1.0)
        >>> from clusterednb.inference.laplace import fit_laplace
        >>> bool(np.isclose(both, fit_laplace(design, y, precision=1.0).log_marginal))
        True
        """
        return self.log_marginal_of_sums(
            float(self.value[members].sum()),
            self.gradient[members].sum(axis=0),
            self.hessian[members].sum(axis=0),
            precision,
        )

    def log_marginal_of_sums(
        self, value: float, gradient: np.ndarray, hessian: np.ndarray, precision: float
    ) -> float:
        """The Gaussian integral of summed expansions ``(L, G, H)``, G of shape (d,), H (d, d).

        Examples
        --------
        >>> from clusterednb import toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> sums = expansions.value[0], expansions.gradient[0], expansions.hessian[0]
        >>> bool(np.isclose(expansions.log_marginal_of_sums(*sums, precision=1.0),
        ...                 expansions.log_marginal([0], precision=1.0)))
        True
        """
        return float(
            self.log_marginals_of_sums(np.array([value]), gradient[None], hessian[None], precision)[
                0
            ]
        )

    def log_marginals_of_sums(
        self, value: np.ndarray, gradient: np.ndarray, hessian: np.ndarray, precision: float
    ) -> np.ndarray:
        """The Gaussian integrals of K sets' summed expansions at once.

        Parameters
        ----------
        value : ndarray of shape (K,)
        gradient : ndarray of shape (K, d)
        hessian : ndarray of shape (K, d, d)
        precision : float

        Returns
        -------
        ndarray of shape (K,)

        Examples
        --------
        >>> from clusterednb import toy
        >>> expansions = toy.task_expansions()  # the class's example
        >>> both = expansions.log_marginals_of_sums(
        ...     expansions.value, expansions.gradient, expansions.hessian, precision=1.0)
        >>> bool(np.allclose(both, [expansions.log_marginal([0], 1.0),
        ...                         expansions.log_marginal([1], 1.0)]))
        True
        """
        d = self.anchor.size
        b = gradient - precision * self.anchor
        # One batched Cholesky of [[A, b], [bᵀ, c]] for every set: its last row is (L⁻¹b, ·),
        # so bᵀA⁻¹b = |L⁻¹b|² needs no triangular solve (numpy has no batched one). The
        # first d entries of that row do not depend on c; c > bᵀA⁻¹b keeps the matrix
        # positive definite, and |b|²/λ + 1 is larger since A ⪰ λI.
        augmented = np.empty((b.shape[0], d + 1, d + 1))
        augmented[:, :d, :d] = hessian + precision * np.eye(d)
        augmented[:, d, :d] = b
        augmented[:, :d, d] = b
        augmented[:, d, d] = np.einsum("kd,kd->k", b, b) / precision + 1.0
        try:
            factor = np.linalg.cholesky(augmented)
        except np.linalg.LinAlgError as error:
            raise CNBError(
                f"a block's precision matrix is not positive definite ({error})"
            ) from error
        whitened = factor[:, d, :d]  # L⁻¹ b
        log_det = 2.0 * np.log(np.diagonal(factor[:, :d, :d], axis1=-2, axis2=-1)).sum(axis=-1)
        return (
            value
            + 0.5 * np.einsum("kd,kd->k", whitened, whitened)
            - 0.5 * precision * float(self.anchor @ self.anchor)
            + 0.5 * d * np.log(precision)
            - 0.5 * log_det
        )


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
    >>> from clusterednb import toy
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
            expansions.hessian * weights[:, None, None],
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
        >>> from clusterednb import toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> blocks.n_tasks
        2
        """
        return self.value_counts.shape[0]

    def log_features(self, counts: np.ndarray) -> np.ndarray:
        """``log P(X)`` of feature-value counts, shape (..., n_values_total) -> (...).

        Examples
        --------
        >>> from clusterednb import toy
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
        >>> from clusterednb import toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> bool(blocks.log_labels(frozenset({0})) < 0)
        True
        """
        return self.expansions.log_marginal(sorted(members), self.precision)

    def log_block(self, members: frozenset[int]) -> float:
        """``log B(S)`` of a non-empty set of task positions (cached per set).

        Examples
        --------
        >>> from clusterednb import toy
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
        >>> from clusterednb import toy
        >>> blocks = toy.joint_blocks()  # the class's example
        >>> blocks.of_members([0, 1]).counts.tolist()  # each task saw each value once
        [2.0, 2.0]
        """
        rows = sorted(members)
        return BlockSums(
            self.value_counts[rows].sum(axis=0),
            float(self.expansions.value[rows].sum()),
            self.expansions.gradient[rows].sum(axis=0),
            self.expansions.hessian[rows].sum(axis=0),
        )

    def added(self, sums: BlockSums, task: int) -> BlockSums:
        """``sums`` with one more task's statistics (``O(d²)``, not ``O(|S| d²)``).

        Examples
        --------
        >>> from clusterednb import toy
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
        >>> from clusterednb import toy
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
        >>> from clusterednb import toy
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
        >>> from clusterednb import toy
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
