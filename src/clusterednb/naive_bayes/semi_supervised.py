"""Using unlabelled training rows: EM for the MAP fit, or Gibbs sampling of their labels.

Both work for any grouping of tasks: ``label_group`` says which tasks share a label
distribution and ``feature_group`` which share feature tables (every task alone for
No-Sharing, one group for Complete-Sharing, a partition for Clustered NB), and
``predictive(counts, feature_group)`` turns completed counts into the estimator's
:class:`~clusterednb.inference.posterior.Posterior`. The evidence reported stays that of the
labelled rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from clusterednb.inference.em import fit_em
from clusterednb.inference.labels import LabelSampler, sweep_with_model
from clusterednb.inference.posterior import Posterior
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts

SEMI_SUPERVISED = (False, True, "gibbs", "em", "auto")
Predictive = Callable[[Counts, np.ndarray], Posterior]


@dataclass(frozen=True)
class Completed:
    """The fit with the unlabelled rows used.

    Attributes
    ----------
    posterior : Posterior
    unlabelled_proba : ndarray of shape (n_unlabelled, n_classes)
        EM responsibilities, or Gibbs marginals averaged over sweeps.
    em_objective : ndarray of shape (n_iterations + 1,) or None
        The EM log posterior density after each iteration.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> completed = complete_by_em(toy.colour_model(), toy.three_task_counts(),
    ...                            nb_toy.unlabelled_rows(), max_iter=50)
    >>> completed.unlabelled_proba.shape, bool(np.all(np.diff(completed.em_objective) >= 0))
    ((2, 2), True)
    """

    posterior: Posterior
    unlabelled_proba: np.ndarray
    em_objective: np.ndarray | None = None


@dataclass(frozen=True)
class Unlabelled:
    """The unlabelled rows and how the tasks are grouped.

    Attributes
    ----------
    rows : ndarray of shape (n_unlabelled, n_features)
        Feature codes (-1: missing).
    task : ndarray of shape (n_unlabelled,)
        Each row's task position.
    groups : (ndarray, ndarray) of shape (n_tasks,) each
        Label group and feature group of every task.
    predictive : callable
        ``predictive(counts, feature_group)`` → the estimator's Posterior.

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> unlabelled = toy.unlabelled_rows()  # red in task 0, blue in task 2
    >>> unlabelled.rows.shape, unlabelled.groups[1].tolist()
    ((2, 1), [0, 1, 2])
    """

    rows: np.ndarray
    task: np.ndarray
    groups: tuple[np.ndarray, np.ndarray]
    predictive: Predictive


def mode(semi_supervised: bool | str, n_unlabelled: int) -> str | None:
    """``"gibbs"``, ``"em"`` or None (unlabelled rows unused, or none there).

    Examples
    --------
    >>> mode("auto", 10), mode("em", 10), mode(True, 0), mode(False, 10)
    ('gibbs', 'em', None, None)
    """
    if semi_supervised is False or n_unlabelled == 0:
        return None
    return "em" if semi_supervised == "em" else "gibbs"


def complete_by_em(
    model: DirichletNB, counts: Counts, unlabelled: Unlabelled, max_iter: int
) -> Completed:
    """MAP fit by expectation–maximisation over the missing labels.

    Examples
    --------
    Task 0 saw red labelled 0 twice, task 2 blue labelled 1 twice; their unlabelled red and
    blue rows are imputed accordingly:

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> completed = complete_by_em(toy.colour_model(), toy.three_task_counts(),
    ...                            nb_toy.unlabelled_rows(), max_iter=50)
    >>> completed.unlabelled_proba.argmax(axis=1).tolist()
    [0, 1]
    """
    label_group, feature_group = unlabelled.groups
    result = fit_em(
        model,
        counts,
        unlabelled.rows,
        unlabelled.task,
        label_group,
        feature_group,
        max_iter=max_iter,
    )
    return Completed(
        unlabelled.predictive(result.counts, feature_group),
        result.responsibilities,
        result.objective,
    )


def complete_by_gibbs(
    rng: np.random.Generator,
    model: DirichletNB,
    counts: Counts,
    unlabelled: Unlabelled,
    n_iter: int,
) -> Completed:
    """Average the predictive over ``n_iter`` Gibbs sweeps of the missing labels (after
    ``n_iter // 4`` burn-in sweeps).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> completed = complete_by_gibbs(np.random.default_rng(0), toy.colour_model(),
    ...                               toy.three_task_counts(), nb_toy.unlabelled_rows(), n_iter=200)
    >>> completed.unlabelled_proba.argmax(axis=1).tolist(), completed.em_objective
    ([0, 1], None)
    """
    label_group, feature_group = unlabelled.groups
    rows, task, predictive = unlabelled.rows, unlabelled.task, unlabelled.predictive
    sampler = LabelSampler.start(counts, model.offsets, rows, task, label_group, feature_group)
    members = []
    burn_in = n_iter // 4
    for sweep in range(burn_in + n_iter):
        if sweep == burn_in:
            sampler.marginals[:] = 0.0
        sweep_with_model(rng, sampler, model)
        if sweep >= burn_in:
            members.append(predictive(sampler.task_counts(counts, task), feature_group))
    return Completed(Posterior.average(members), sampler.marginals / n_iter)


class UsesUnlabelledRows:
    """The estimators' side of semi-supervision (a mixin of
    :class:`~clusterednb.naive_bayes.estimator.TaskNaiveBayes`): how tasks are grouped, how
    completed
    counts become a Posterior, and the EM or Gibbs fit with the unlabelled rows.

    A subclass sets the grouping (:meth:`_groups`) and the predictive of completed counts
    (:meth:`_grouped_posterior`); the default is every task alone.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> model = NoSharingNB(semi_supervised="em").fit(
    ...     [[0], [0], [1], [0]], [0.0, 0.0, 1.0, np.nan], ["u", "u", "u", "u"])
    >>> isinstance(model, UsesUnlabelledRows), model.unlabelled_proba_.shape
    (True, (1, 2))
    """

    unlabelled_X_: np.ndarray
    unlabelled_task_: np.ndarray
    n_iter: int

    def _groups(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        """Label group and feature group of each task (default: every task alone)."""
        alone = np.arange(counts.n_groups)
        return alone, alone

    def _grouped_posterior(
        self, model: DirichletNB, counts: Counts, feature_group: np.ndarray
    ) -> Posterior:
        """The predictive of per-task counts (labelled plus imputed or expected)."""
        return self._infer(model, counts)[0]

    def _infer_em(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        """MAP fit by EM over the missing labels; the evidence is the labelled rows'."""
        return self._complete(model, counts, "em")

    def _infer_gibbs(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        """Average the predictive over Gibbs samples of the missing labels."""
        return self._complete(model, counts, "gibbs")

    def _complete(self, model: DirichletNB, counts: Counts, how: str) -> tuple[Posterior, float]:
        log_evidence = self._infer(model, counts)[1]  # first: it may set the grouping
        unlabelled = Unlabelled(
            self.unlabelled_X_,
            self.unlabelled_task_,
            self._groups(counts),
            lambda c, g: self._grouped_posterior(model, c, g),
        )
        if how == "em":
            completed = complete_by_em(model, counts, unlabelled, self.n_iter)
        else:
            completed = complete_by_gibbs(self._rng(), model, counts, unlabelled, self.n_iter)
        self.unlabelled_proba_ = completed.unlabelled_proba
        if completed.em_objective is not None:
            self.em_objective_ = completed.em_objective
        return completed.posterior, log_evidence
