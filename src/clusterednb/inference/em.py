"""Expectation–maximisation over missing labels for a MAP naive-Bayes fit (Nigam et al. 2000).

The tasks are grouped as in :mod:`clusterednb.inference.labels`: label distributions
``φ_l`` per label group, feature parameters ``θ_g`` per feature group. EM maximises the log
posterior density

``J(φ, θ) = Σ_labelled log φ_l(y) θ_g(x | y) + Σ_unlabelled log Σ_y φ_l(y) θ_g(x | y)
           + Σ_l Σ_y α_y log φ_l(y) + Σ_g Σ_{y,v} β[y, v] log θ_g(v | y)``

(up to a constant): a Dirichlet(α + 1) prior on each ``φ`` and Dirichlet(β + 1) on each
``θ``. That choice makes the M-step ``φ ∝ m + α``, ``θ ∝ n + β`` with ``m``, ``n`` the
labelled counts plus the unlabelled rows' expected counts: the same formula as the
collapsed posterior predictive, so the fitted model predicts through the usual
:class:`~clusterednb.inference.posterior.Posterior` of those expected counts. ``J`` never
decreases (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import Counts


@dataclass(frozen=True)
class EMResult:
    """Outcome of :func:`fit_em`.

    Attributes
    ----------
    counts : Counts with n_tasks groups (float64)
        Labelled counts plus the unlabelled rows' expected counts, per task.
    responsibilities : ndarray of shape (n_unlabelled, n_classes)
        ``P(y | x, φ̂, θ̂)`` of each unlabelled row at the fixed point.
    objective : ndarray of shape (n_iterations + 1,)
        ``J`` at the start and after each iteration.
    converged : bool

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> own = np.arange(3)
    >>> result = fit_em(toy.colour_model(), toy.three_task_counts(), np.array([[0]]),
    ...                 np.array([2]), own, own)
    >>> result.counts.label_counts.sum(axis=1).round(6).tolist()  # task 2 gained one row
    [2.0, 2.0, 3.0]
    >>> result.converged, result.responsibilities.shape
    (True, (1, 2))
    """

    counts: Counts
    responsibilities: np.ndarray
    objective: np.ndarray
    converged: bool


def expected_counts(
    X: np.ndarray,
    row_task: np.ndarray,
    responsibilities: np.ndarray,
    like: Counts,
    offsets: np.ndarray,
) -> Counts:
    """Per-task counts of rows weighted by their label probabilities (float64).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    row_task : ndarray of shape (n_rows,)
    responsibilities : ndarray of shape (n_rows, n_classes)
    like : Counts
        Gives the shapes (n_tasks, n_classes, n_values_total).
    offsets : ndarray of shape (n_features + 1,)

    Examples
    --------
    One red row of task 2, taken as "no" with probability 0.4:

    >>> from clusterednb.examples import models as toy
    >>> counts = expected_counts(np.array([[0]]), np.array([2]), np.array([[0.4, 0.6]]),
    ...                          toy.three_task_counts(), np.array([0, 2]))
    >>> counts.value_counts[2].tolist(), counts.label_counts[2].tolist()
    ([[0.4, 0.0], [0.6, 0.0]], [0.4, 0.6])
    """
    label_counts = np.zeros(like.label_counts.shape)
    value_counts = np.zeros(like.value_counts.shape)
    np.add.at(label_counts, row_task, responsibilities)
    classes = np.arange(responsibilities.shape[1])
    for f in range(X.shape[1]):
        seen = X[:, f] >= 0
        flat = X[seen, f] + offsets[f]
        np.add.at(
            value_counts,
            (row_task[seen][:, None], classes[None, :], flat[:, None]),
            responsibilities[seen],
        )
    return Counts(label_counts, value_counts)


def fit_em(
    model: ConjugateModel,
    labelled: Counts,
    X: np.ndarray,
    row_task: np.ndarray,
    label_group: np.ndarray,
    feature_group: np.ndarray,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> EMResult:
    """EM for the MAP parameters with the unlabelled rows' labels as missing data.

    Parameters
    ----------
    model : ConjugateModel
        Supplies ``α``, ``β``.
    labelled : Counts with n_tasks groups
        Counts of the labelled rows.
    X : ndarray of shape (n_unlabelled, n_features)
        Codes of the unlabelled rows.
    row_task : ndarray of shape (n_unlabelled,)
    label_group, feature_group : ndarray of shape (n_tasks,)
        Group of each task for the label distribution and for the feature parameters.
    max_iter : int
    tol : float
        Stop when ``J`` rises by less than ``tol · (1 + |J|)``.

    Returns
    -------
    EMResult

    Examples
    --------
    The objective never falls:

    >>> from clusterednb.examples import models as toy
    >>> own = np.arange(3)
    >>> result = fit_em(toy.colour_model(), toy.three_task_counts(), np.array([[0]]),
    ...                 np.array([2]), own, own)
    >>> bool(np.all(np.diff(result.objective) >= -1e-12))
    True
    """
    offsets = model.offsets
    n_label_groups = int(label_group.max()) + 1
    n_feature_groups = int(feature_group.max()) + 1
    labelled_by_label = labelled.group_by(label_group, n_label_groups).label_counts
    labelled_by_feature = labelled.group_by(feature_group, n_feature_groups).value_counts
    row_label, row_feature = label_group[row_task], feature_group[row_task]
    expected = Counts(np.zeros(labelled.label_counts.shape), np.zeros(labelled.value_counts.shape))
    objective: list[float] = []
    converged = False
    for iteration in range(max_iter + 1):
        total = Counts(
            labelled.label_counts + expected.label_counts,
            labelled.value_counts + expected.value_counts,
        )
        log_phi = model.log_label_prior(total.group_by(label_group, n_label_groups).label_counts)
        log_theta = model.log_feature_table(
            total.group_by(feature_group, n_feature_groups).value_counts
        )
        log_joint = model.log_joint(X, log_phi[row_label], log_theta, row_feature)
        log_evidence_rows = logsumexp(log_joint, axis=1)
        value = float(
            (labelled_by_label * log_phi).sum()
            + (labelled_by_feature * log_theta[..., :-1]).sum()
            + log_evidence_rows.sum()
            + (model.alpha * log_phi).sum()
            + (model.beta * log_theta[..., :-1]).sum()
        )
        converged = bool(objective) and value - objective[-1] < tol * (1.0 + abs(value))
        objective.append(value)
        if converged or iteration == max_iter:
            break
        responsibilities = np.exp(log_joint - log_evidence_rows[:, None])
        expected = expected_counts(X, row_task, responsibilities, labelled, offsets)
    responsibilities = np.exp(log_joint - log_evidence_rows[:, None])
    return EMResult(
        counts=Counts(
            labelled.label_counts + expected.label_counts,
            labelled.value_counts + expected.value_counts,
        ),
        responsibilities=responsibilities,
        objective=np.array(objective),
        converged=converged,
    )
