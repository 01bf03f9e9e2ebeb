"""No-Sharing and Complete-Sharing naive Bayes: every task alone, or all tasks as one."""

from __future__ import annotations

import numpy as np

from clusterednb.inference.posterior import Posterior
from clusterednb.models.observation import DirichletNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.stats.counts import Counts

__all__ = ["CompleteSharingNB", "NoSharingNB", "own_counts_posterior"]


def own_counts_posterior(counts: Counts) -> Posterior:
    """Every task predicts from its own counts; a new task from none (the prior).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> posterior = own_counts_posterior(toy.three_task_counts())
    >>> posterior.components.tolist(), posterior.component_counts.shape  # 3 tasks + the prior
    ([0, 1, 2], (4, 2, 2))
    """
    n_tasks = counts.n_groups
    empty = np.zeros((1, *counts.value_counts.shape[1:]), dtype=np.int64)
    return Posterior.single(
        component_counts=np.concatenate([counts.value_counts, empty]),
        task_label_counts=counts.label_counts,
        task_component=np.arange(n_tasks),
        cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
        cold_component=n_tasks,
    )


class NoSharingNB(TaskNaiveBayes):
    """One independent naive Bayes per task (No-Sharing).

    Each task ``u`` has its own ``φ_u ~ Dir(α)`` and ``θ[u, y, f] ~ Dir(β[y, f])``. A task
    never seen in training gets the prior predictive (no counts). Unlabelled rows are used
    as ``semi_supervised`` says (by default not at all). Parameters are those of
    :class:`TaskNaiveBayes`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    schema_ : FeatureSchema
    task_ids_ : ndarray of shape (n_tasks,)
    counts_ : Counts with n_tasks groups
    log_evidence_ : float
        Exact ``log P(D | NS) = Σ_u log P(D_u)`` of the labelled rows.
    unlabelled_proba_ : ndarray of shape (n_unlabelled, n_classes)
        With ``semi_supervised``: label probabilities of the unlabelled training rows (EM
        responsibilities, or Gibbs marginals averaged over sweeps).
    em_objective_ : ndarray of shape (n_iterations + 1,)
        With ``semi_supervised="em"``: the log posterior density after each iteration.

    Notes
    -----
    ``log P(D | NS) = Σ_u [log DM(m[u]; α) + Σ_{y,f} log DM(n[u, y, f]; β[y, f])]``.

    Examples
    --------
    >>> model = NoSharingNB().fit([["a"], ["b"], ["a"]], [1, 0, 1], tasks=["u", "u", "v"])
    >>> model.predict_proba([["a"]], tasks=["u"]).round(3).tolist()
    [[0.333, 0.667]]
    """

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        return own_counts_posterior(counts), float(model.log_marginal(counts).sum())


class CompleteSharingNB(TaskNaiveBayes):
    """One naive Bayes for every task (Complete-Sharing): the tasks' counts are pooled.

    The label marginal is pooled too. A task never seen in training is predicted like any
    other. Unlabelled rows are used as ``semi_supervised`` says (by default not at all).
    Parameters are those of :class:`TaskNaiveBayes`.

    Attributes
    ----------
    classes_, schema_, task_ids_, counts_
        As in :class:`NoSharingNB`.
    log_evidence_ : float
        Exact ``log P(D | CS)``: the evidence of the pooled counts of the labelled rows.
    unlabelled_proba_, em_objective_
        As in :class:`NoSharingNB`.
    feature_log_prob_ : list of ndarray of shape (n_classes, V_f)
        Predictive log P(x_f | y) per feature (as scikit-learn's ``CategoricalNB``).
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    Two users who answer alike share every count:

    >>> X = [["short"], ["long"], ["short"], ["long"]]
    >>> model = CompleteSharingNB().fit(X, ["yes", "no", "yes", "no"], ["ann", "ann", "bo", "bo"])
    >>> model.predict([["short"]], ["bo"]).tolist(), model.evidence_kind_
    (['yes'], 'exact')
    """

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        pooled = counts.total()
        posterior = Posterior.single(
            component_counts=pooled.value_counts,
            task_label_counts=np.repeat(pooled.label_counts, counts.n_groups, axis=0),
            task_component=np.zeros(counts.n_groups, dtype=np.int64),
            cold_label_counts=pooled.label_counts[0],
            cold_component=0,
        )
        return posterior, float(model.log_marginal(pooled)[0])

    def _groups(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        together = np.zeros(counts.n_groups, dtype=np.int64)
        return together, together

    @property
    def feature_log_prob_(self) -> list[np.ndarray]:
        """Predictive log P(x_f | y) per feature, each of shape (n_classes, V_f).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = CompleteSharingNB().fit(*toy.colour_rows())
        >>> model.schema_.categories[0], np.exp(model.feature_log_prob_[0]).round(3).tolist()
        (('blue', 'red'), [[0.667, 0.333], [0.429, 0.571]])

        Row "no": 3 of its 4 rows blue, so (3 + 1) / (4 + 2); row "yes": 2 of 5, (2 + 1) / (5 + 2).
        """
        table = self.observation_.log_feature_table(self.posterior_.component_counts[0])
        offsets = self.schema_.offsets
        return [table[:, offsets[f] : offsets[f + 1]] for f in range(self.schema_.n_features)]

    @property
    def class_log_prior_(self) -> np.ndarray:
        """Predictive log P(y) from the pooled label counts, shape (n_classes,).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = CompleteSharingNB().fit(*toy.colour_rows())
        >>> np.exp(model.class_log_prior_).round(4).tolist()  # (4 + 1) / 11, (5 + 1) / 11
        [0.4545, 0.5455]
        """
        return self.observation_.log_label_prior(self.posterior_.cold_label_counts)
