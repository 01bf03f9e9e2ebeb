"""Cluster scores: the one interface every partition engine asks of a model.

A Dirichlet-process clustering of tasks needs one thing of a model: ``log B(S)``, the marginal
likelihood (possibly approximate and tempered) of the data of a set of tasks ``S``, with
statistics that follow one task's move cheaply. :class:`BlockAlgebra` is that interface.

- The Dirichlet–naive-Bayes models satisfy it through their counts
  (:meth:`~clusterednb.models.observation.DirichletNB.block_scores` gives a
  :class:`CountBlocks`): a cluster's statistics are the sum of its members' counts.
- The clustered logistic model's joint feature-and-label scores
  (:class:`~clusterednb.logistic.clustering.joint_blocks.JointLogisticBlocks`) satisfy it with
  sums of the tasks' Laplace expansions; :class:`PackedBlocks` adds the arrays the compiled
  sweep reads.

The block engine (:mod:`clusterednb.inference.blocks`: enumeration, Gibbs, the compiled sweep,
core-and-place) runs on any of them; the conjugate engines (exact, Gibbs, BHC, variational)
are faster paths for counts. A new observation model is one new file in this folder: a class
with the five methods of :class:`BlockAlgebra` (tests/models/test_block_scores.py runs a toy
one through the shared engines).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from clusterednb.stats.counts import Counts

BlockScore = Callable[[frozenset[int]], float]
"""``log_block(members: frozenset[int]) -> float``: the score of a set of tasks."""


class BlockAlgebra(Protocol):
    """Block scores from statistics that follow one task's move cheaply.

    A Gibbs step scores every cluster with the moving task added; with statistics that add
    (sums of counts, gradients and Hessians) that costs one addition per cluster instead of a
    pass over the cluster's members.
    :class:`CountBlocks` (a conjugate model's counts) is one, and so are the clustered logistic
    model's joint scores; :class:`SetAlgebra` makes one of any function of a set.

    Examples
    --------
    >>> algebra: BlockAlgebra = SetAlgebra(lambda members: -float(len(members)))
    >>> algebra.log_score(algebra.removed(algebra.of_members([0, 1, 2]), 1))
    -2.0
    """

    def of_members(self, members: Iterable[int]) -> Any:
        """The statistics of a set of task positions.

        Examples
        --------
        >>> sorted(SetAlgebra(len).of_members([2, 0]))
        [0, 2]
        """

    def added(self, stats: Any, task: int) -> Any:
        """``stats`` with ``task`` added.

        Examples
        --------
        >>> algebra = SetAlgebra(len)
        >>> sorted(algebra.added(algebra.of_members([0]), 3))
        [0, 3]
        """

    def removed(self, stats: Any, task: int) -> Any:
        """``stats`` with ``task`` removed.

        Examples
        --------
        >>> algebra = SetAlgebra(len)
        >>> sorted(algebra.removed(algebra.of_members([0, 3]), 3))
        [0]
        """

    def log_score(self, stats: Any) -> float:
        """``log B(S)``.

        Examples
        --------
        >>> algebra = SetAlgebra(lambda members: float(sum(members)))
        >>> algebra.log_score(algebra.of_members([1, 2]))
        3.0
        """

    def log_scores_added(self, stats: Sequence[Any], task: int, also: Any = None) -> np.ndarray:
        """``log B(S ∪ {task})`` of many sets at once, shape (len(stats),); with ``also``, one
        more entry at the end: ``log B(also)`` (a Gibbs step scores the cluster the task left
        in the same batch).

        Examples
        --------
        >>> algebra = SetAlgebra(lambda members: float(sum(members)))
        >>> algebra.log_scores_added([frozenset({1}), frozenset({2, 5})], 3).tolist()
        [4.0, 10.0]
        >>> algebra.log_scores_added([frozenset({1})], 3, also=frozenset({2})).tolist()
        [4.0, 2.0]
        """


class PackedBlocks(BlockAlgebra, Protocol):
    """Cluster scores whose statistics the compiled sweep
    (:mod:`clusterednb.inference.blocks.slot_chain`) holds as arrays: Dirichlet–multinomial
    feature counts plus Gaussian-integrated label expansions."""

    precision: float
    """``λ``, the prior precision of the label model's weights."""

    @property
    def n_tasks(self) -> int:
        """The number of tasks."""

    def subset(self, tasks: np.ndarray) -> PackedBlocks:
        """The scores restricted to ``tasks`` (renumbered 0, 1, …)."""

    def packed(self) -> tuple[tuple, tuple]:
        """``(value_counts, beta, offsets, log_norm_prior)`` and ``(value, gradient, hessian,
        anchor, constant)`` arrays (see the compiled sweep)."""


class SetAlgebra:
    """A :class:`BlockAlgebra` whose statistics are the member sets themselves.

    Parameters
    ----------
    log_block : callable
        :data:`BlockScore`; it is called once per distinct set (its scores are cached here).

    Examples
    --------
    >>> algebra = SetAlgebra(lambda members: float(len(members)))
    >>> pair = algebra.added(algebra.of_members([0]), 1)
    >>> sorted(pair), algebra.log_score(pair)
    ([0, 1], 2.0)
    """

    def __init__(self, log_block: BlockScore) -> None:
        self.log_block = log_block
        self._scores: dict[frozenset[int], float] = {}

    def of_members(self, members: Iterable[int]) -> frozenset[int]:
        """The set of the members.

        Examples
        --------
        >>> SetAlgebra(lambda members: 0.0).of_members([2, 0]) == frozenset({0, 2})
        True
        """
        return frozenset(members)

    def added(self, stats: frozenset[int], task: int) -> frozenset[int]:
        """The set with ``task``.

        Examples
        --------
        >>> sorted(SetAlgebra(lambda members: 0.0).added(frozenset({0}), 3))
        [0, 3]
        """
        return stats | {task}

    def removed(self, stats: frozenset[int], task: int) -> frozenset[int]:
        """The set without ``task``.

        Examples
        --------
        >>> sorted(SetAlgebra(lambda members: 0.0).removed(frozenset({0, 3}), 3))
        [0]
        """
        return stats - {task}

    def log_score(self, stats: frozenset[int]) -> float:
        """``log_block(stats)``, computed once per set.

        Examples
        --------
        >>> SetAlgebra(lambda members: -1.5).log_score(frozenset({4}))
        -1.5
        """
        if stats not in self._scores:
            self._scores[stats] = self.log_block(stats)
        return self._scores[stats]

    def log_scores_added(
        self, stats: Sequence[frozenset[int]], task: int, also: frozenset[int] | None = None
    ) -> np.ndarray:
        """The scores of each set with ``task`` added, shape (len(stats),), then that of
        ``also`` if given.

        Examples
        --------
        >>> SetAlgebra(len).log_scores_added([frozenset({0}), frozenset()], 3).tolist()
        [2.0, 1.0]
        """
        scores = [float(self.log_score(self.added(s, task))) for s in stats]
        if also is not None:
            scores.append(float(self.log_score(also)))
        return np.array(scores)


class CountBlocks:
    """A conjugate model's cluster scores: a set's statistics are its members' summed
    feature-value counts, its score the model's closed-form ``log_marginal_features`` of them
    (each task keeps its own label distribution, so the labels' own evidence does not depend
    on the partition and is left out, as in the conjugate engines).

    Parameters
    ----------
    model : ConjugateModel
        With ``log_marginal_features(value_counts (..., C, V)) -> (...)``.
    counts : Counts
        Per-task counts, one group per task.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> model, counts = toy.colour_model(), toy.three_task_counts()
    >>> blocks = CountBlocks(model, counts)
    >>> pair = blocks.of_members([0, 1])
    >>> together = counts.total([0, 1]).value_counts[0]
    >>> bool(np.isclose(blocks.log_score(pair), model.log_marginal_features(together)))
    True
    >>> bool(np.isclose(blocks.log_score(blocks.removed(pair, 1)),
    ...                 blocks.log_score(blocks.of_members([0]))))
    True
    """

    def __init__(self, model: Any, counts: Counts) -> None:
        self.model = model
        self.value_counts = counts.value_counts

    def of_members(self, members: Iterable[int]) -> np.ndarray:
        """The members' summed value counts, shape (C, V)."""
        return self.value_counts[sorted(members)].sum(axis=0)

    def added(self, stats: np.ndarray, task: int) -> np.ndarray:
        """``stats`` plus the task's counts."""
        return stats + self.value_counts[task]

    def removed(self, stats: np.ndarray, task: int) -> np.ndarray:
        """``stats`` less the task's counts."""
        return stats - self.value_counts[task]

    def log_score(self, stats: np.ndarray) -> float:
        """The closed-form log marginal of the summed counts."""
        return float(self.model.log_marginal_features(stats))

    def log_scores_added(
        self, stats: Sequence[np.ndarray], task: int, also: np.ndarray | None = None
    ) -> np.ndarray:
        """The scores of each set with ``task`` added, then that of ``also`` if given (one
        batched call)."""
        batch = [s + self.value_counts[task] for s in stats]
        if also is not None:
            batch.append(also)
        if not batch:
            return np.zeros(0)
        return np.asarray(self.model.log_marginal_features(np.stack(batch)), dtype=np.float64)
