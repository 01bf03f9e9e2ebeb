"""Collapsed Gibbs sampling of missing labels when the grouping of the tasks is fixed.

The tasks' label distributions are shared within *label groups* and their feature
parameters within *feature groups* (No-Sharing: every task alone in both; Complete-Sharing:
one group for both; a fixed partition of Clustered NB: tasks alone for labels, clusters for
features). With the parameters integrated out, one unlabelled row's label has the
conditional

``P(y_n = c | rest) ∝ (m[l, c] + α_c) Π_f (n[g, c, v_f] + β[c, v_f]) / (n[g, c, f] + B[c, f])``

where the counts exclude row ``n``, ``l`` and ``g`` are its task's groups and ``B[c, f]`` is
the sum of ``β`` over feature ``f``'s values. The same kernel serves the Prototype model,
whose per-task prior ``β = K θ̄`` changes between sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterednb.jit import njit
from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import Counts
from clusterednb.stats.special import segment_sum


@njit(cache=True, nogil=True)
def _sweep_labels(
    X,
    row_label_group,
    row_feature_group,
    offsets,
    labels,
    label_counts,
    value_counts,
    value_totals,
    alpha,
    beta,
    beta_totals,
    temperature,
    uniforms,
    marginals,
):  # pragma: no cover
    """One sweep over the rows; counts are updated in place, ``marginals`` accumulates.

    ``labels[n] < 0`` means row ``n`` has no current label (it is then only added).
    """
    n_rows, n_features = X.shape
    n_classes = label_counts.shape[1]
    score = np.empty(n_classes)
    for n in range(n_rows):
        lg = row_label_group[n]
        g = row_feature_group[n]
        old = labels[n]
        if old >= 0:
            label_counts[lg, old] -= 1
            for f in range(n_features):
                code = X[n, f]
                if code >= 0:
                    value_counts[g, old, offsets[f] + code] -= 1
                    value_totals[g, old, f] -= 1
        top = -np.inf
        for c in range(n_classes):
            total = np.log(label_counts[lg, c] + alpha[c])
            for f in range(n_features):
                code = X[n, f]
                if code >= 0:
                    v = offsets[f] + code
                    total += np.log(value_counts[g, c, v] + beta[c, v])
                    total -= np.log(value_totals[g, c, f] + beta_totals[c, f])
            score[c] = temperature * total
            top = max(top, score[c])
        norm = 0.0
        for c in range(n_classes):
            score[c] = np.exp(score[c] - top)
            norm += score[c]
        threshold = uniforms[n] * norm
        new = n_classes - 1
        running = 0.0
        for c in range(n_classes):
            marginals[n, c] += score[c] / norm
            running += score[c]
            if running >= threshold:
                new = c
                break
        for c in range(new + 1, n_classes):
            marginals[n, c] += score[c] / norm
        labels[n] = new
        label_counts[lg, new] += 1
        for f in range(n_features):
            code = X[n, f]
            if code >= 0:
                value_counts[g, new, offsets[f] + code] += 1
                value_totals[g, new, f] += 1


@dataclass
class LabelSampler:
    """Current labels of the unlabelled rows and the group counts that include them.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features)
        Category codes of the unlabelled rows (-1 missing).
    row_label_group, row_feature_group : ndarray of shape (n_rows,)
    labels : ndarray of shape (n_rows,)
        Current labels (-1 before the first sweep).
    label_counts : ndarray of shape (n_label_groups, n_classes)
    value_counts : ndarray of shape (n_feature_groups, n_classes, n_values_total)
    value_totals : ndarray of shape (n_feature_groups, n_classes, n_features)
    marginals : ndarray of shape (n_rows, n_classes)
        Sum over sweeps of each row's conditional label probabilities.

    Examples
    --------
    The tasks of :func:`clusterednb.examples.models.three_task_counts`, each its own group, and one
    unlabelled red row of task 2 (two blue "yes" rows): with ``α = β = 1``, "no" weighs
    ``1 · 1/2`` and "yes" ``3 · 1/4``, so ``P(no) = 0.4``:

    >>> from clusterednb.examples import models as toy
    >>> own = np.arange(3)
    >>> sampler = LabelSampler.start(toy.three_task_counts(), np.array([0, 2]),
    ...                              np.array([[0]]), np.array([2]), own, own)
    >>> sweep_with_model(np.random.default_rng(0), sampler, toy.colour_model())
    >>> sampler.marginals.round(6).tolist()
    [[0.4, 0.6]]
    """

    X: np.ndarray
    row_label_group: np.ndarray
    row_feature_group: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    label_counts: np.ndarray
    value_counts: np.ndarray
    value_totals: np.ndarray
    marginals: np.ndarray

    @classmethod
    def start(
        cls,
        labelled: Counts,
        offsets: np.ndarray,
        X: np.ndarray,
        row_task: np.ndarray,
        label_group: np.ndarray,
        feature_group: np.ndarray,
    ) -> LabelSampler:
        """Counts of the labelled rows by group; no unlabelled row labelled yet.

        Parameters
        ----------
        labelled : Counts with n_tasks groups
        offsets : ndarray of shape (n_features + 1,)
        X : ndarray of shape (n_rows, n_features)
        row_task : ndarray of shape (n_rows,)
        label_group, feature_group : ndarray of shape (n_tasks,)

        Examples
        --------
        Labels per task, features pooled in one group:

        >>> from clusterednb.examples import models as toy
        >>> sampler = LabelSampler.start(toy.three_task_counts(), np.array([0, 2]),
        ...                              np.array([[0]]), np.array([2]), np.arange(3),
        ...                              np.zeros(3, dtype=int))
        >>> sampler.labels.tolist(), sampler.label_counts.shape, sampler.value_counts.tolist()
        ([-1], (3, 2), [[[4, 0], [0, 2]]])
        """
        n_label_groups = int(label_group.max()) + 1
        n_feature_groups = int(feature_group.max()) + 1
        by_labels = labelled.group_by(label_group, n_label_groups)
        by_features = labelled.group_by(feature_group, n_feature_groups)
        value_counts = by_features.value_counts.astype(np.int64)
        return cls(
            X=np.ascontiguousarray(X, dtype=np.int64),
            row_label_group=label_group[row_task].astype(np.int64),
            row_feature_group=feature_group[row_task].astype(np.int64),
            offsets=np.asarray(offsets, dtype=np.int64),
            labels=np.full(X.shape[0], -1, dtype=np.int64),
            label_counts=by_labels.label_counts.astype(np.int64),
            value_counts=value_counts,
            value_totals=segment_sum(value_counts, offsets).astype(np.int64),
            marginals=np.zeros((X.shape[0], labelled.label_counts.shape[1])),
        )

    def sweep(
        self,
        rng: np.random.Generator,
        alpha: np.ndarray,
        beta: np.ndarray,
        beta_totals: np.ndarray,
        temperature: float = 1.0,
    ) -> None:
        """Resample every row's label once (likelihood raised to ``temperature``).

        Parameters
        ----------
        rng : numpy.random.Generator
        alpha : ndarray of shape (n_classes,)
        beta : ndarray of shape (n_classes, n_values_total)
        beta_totals : ndarray of shape (n_classes, n_features)
            Sum of ``beta`` over each feature's values.
        temperature : float

        Examples
        --------
        At temperature 0 every label is equally likely, whatever the counts:

        >>> from clusterednb.examples import models as toy
        >>> own = np.arange(3)
        >>> sampler = LabelSampler.start(toy.three_task_counts(), np.array([0, 2]),
        ...                              np.array([[0]]), np.array([2]), own, own)
        >>> sampler.sweep(np.random.default_rng(0), np.ones(2), np.ones((2, 2)),
        ...               np.full((2, 1), 2.0), temperature=0.0)
        >>> sampler.marginals.tolist()
        [[0.5, 0.5]]
        """
        _sweep_labels(
            self.X,
            self.row_label_group,
            self.row_feature_group,
            self.offsets,
            self.labels,
            self.label_counts,
            self.value_counts,
            self.value_totals,
            np.asarray(alpha, dtype=np.float64),
            np.ascontiguousarray(beta, dtype=np.float64),
            np.ascontiguousarray(beta_totals, dtype=np.float64),
            float(temperature),
            rng.random(self.X.shape[0]),
            self.marginals,
        )

    def task_counts(self, labelled: Counts, row_task: np.ndarray) -> Counts:
        """Per-task counts: the labelled rows plus the unlabelled rows' current labels.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> counts, own = toy.three_task_counts(), np.arange(3)
        >>> sampler = LabelSampler.start(counts, np.array([0, 2]), np.array([[0]]),
        ...                              np.array([2]), own, own)
        >>> sampler.labels[:] = 1  # the red row taken as a "yes"
        >>> sampler.task_counts(counts, np.array([2])).value_counts[2].tolist()
        [[0, 0], [1, 2]]
        """
        label_counts = labelled.label_counts.astype(np.int64)
        value_counts = labelled.value_counts.astype(np.int64)
        imputed = Counts.from_codes(
            self.X,
            self.labels,
            row_task,
            n_tasks=labelled.n_groups,
            n_classes=label_counts.shape[1],
            offsets=self.offsets,
        )
        return Counts(label_counts + imputed.label_counts, value_counts + imputed.value_counts)


def sweep_with_model(
    rng: np.random.Generator, sampler: LabelSampler, model: ConjugateModel, temperature: float = 1.0
) -> None:
    """A label sweep under the fixed priors ``α``, ``β`` of ``model``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> own = np.arange(3)
    >>> sampler = LabelSampler.start(toy.three_task_counts(), np.array([0, 2]),
    ...                              np.array([[0]]), np.array([2]), own, own)
    >>> for _ in range(2):
    ...     sweep_with_model(np.random.default_rng(0), sampler, toy.colour_model())
    >>> int(sampler.labels[0]) in (0, 1), float(sampler.marginals.sum())  # two sweeps' sums
    (True, 2.0)
    """
    sampler.sweep(
        rng,
        model.alpha,
        model.beta,
        segment_sum(model.beta, model.offsets),
        temperature,
    )
