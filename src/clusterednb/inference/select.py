"""Transductive prediction that *selects* a cluster: a task's unlabelled rows choose among
clusters fitted on labelled data, without refitting them.

Refitting a mixture with a task's many unlabelled rows lets them form a cluster of their own,
whose "label" becomes an unsupervised component. Selecting keeps the clusters as the labelled
data made them and only asks which of them the task belongs to — what the cold-start
predictive already does for a new user. For a task ``t`` with labelled counts ``n_t`` and
unlabelled rows ``U``, and clusters ``k`` (their counts ``n_k`` from the other tasks; one more,
empty, for a new cluster) with CRP weights ``c_k`` (the number of tasks, ``γ`` for the new):

    w_k ∝ c_k · P(n_t | n_k) · Π_{x ∈ U} P(x | n_k + n_t)^τ

where ``P(n_t | n_k)`` is the ratio of feature evidences (the label part is the task's own and
cancels) and ``P(x | ·) = Σ_y P(y | t) P(x | y, ·)``; ``τ ≤ 1`` tempers naive Bayes'
over-counting of correlated features. Each row of ``U`` is then predicted by
``Σ_k w_k P(y | x, n_k + n_t)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.kernels import log_normalize_rows


def select_log_weights(
    model: ConjugateModel,
    cluster_counts: np.ndarray,
    cluster_sizes: np.ndarray,
    gamma: float,
    own_label_counts: np.ndarray,
    own_value_counts: np.ndarray,
    X: Any,
    temperature: float = 1.0,
) -> np.ndarray:
    """The selection weights ``log w_k`` alone (see :func:`select_log_proba`).

    Returns
    -------
    ndarray of shape (K + 1,)
        Normalised; the last entry is a new, empty cluster.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> clusters = np.array([[[4, 0], [0, 0]], [[0, 0], [0, 4]]])
    >>> log_weights = select_log_weights(
    ...     toy.colour_model(), clusters, np.array([1, 1]), 1.0, np.zeros(2), np.zeros((2, 2)),
    ...     np.array([[0], [0], [0]]))
    >>> int(np.argmax(log_weights)), log_weights.shape
    (0, (3,))
    """
    selection = _Selection(
        model, cluster_counts, cluster_sizes, gamma, own_label_counts, own_value_counts
    )
    return selection.log_weights(selection.log_joint(X), temperature)


def select_log_proba(
    model: ConjugateModel,
    cluster_counts: np.ndarray,
    cluster_sizes: np.ndarray,
    gamma: float,
    own_label_counts: np.ndarray,
    own_value_counts: np.ndarray,
    X: Any,
    temperature: float = 1.0,
    query: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``log P(y | x)`` of a task's rows when its unlabelled rows select among clusters.

    Parameters
    ----------
    model : ConjugateModel
        Any observation model of the family (categorical codes, or documents as a sparse
        matrix for the Bernoulli and multinomial event models).
    cluster_counts : ndarray of shape (K, C, V)
        Value counts of the clusters of the other tasks.
    cluster_sizes : ndarray of shape (K,)
        Their numbers of tasks (the CRP weights; a new empty cluster gets ``gamma``).
    gamma : float
    own_label_counts : ndarray of shape (C,)
    own_value_counts : ndarray of shape (C, V)
        The task's labelled counts.
    X : ndarray of shape (n_rows, n_features), or sparse matrix of shape (n_rows, n_words)
        The task's unlabelled rows (codes, -1 missing; or documents): they choose.
    temperature : float, default=1.0
        ``τ`` in ``(0, 1]``.
    query : like ``X``, optional
        Rows to predict (default: ``X`` itself).

    Returns
    -------
    log_proba : ndarray of shape (n_query, C)
    log_weights : ndarray of shape (K + 1,)
        The normalised selection weights (the last: a new cluster).

    Examples
    --------
    Two clusters of four rows, red under "no" and blue under "yes"; the task's three red
    unlabelled rows choose the red one, and red then predicts "no":

    >>> from clusterednb.examples import models as toy
    >>> clusters = np.array([[[4, 0], [0, 0]], [[0, 0], [0, 4]]])
    >>> log_proba, log_weights = select_log_proba(
    ...     toy.colour_model(), clusters, np.array([1, 1]), 1.0, np.zeros(2), np.zeros((2, 2)),
    ...     np.array([[0], [0], [0]]))
    >>> int(np.argmax(log_weights)), bool(np.isclose(np.exp(log_weights).sum(), 1.0))
    (0, True)
    >>> bool(np.exp(log_proba[0, 0]) > 0.5)
    True
    """
    selection = _Selection(
        model, cluster_counts, cluster_sizes, gamma, own_label_counts, own_value_counts
    )
    log_joint = selection.log_joint(X)
    log_weights = selection.log_weights(log_joint, temperature)
    if query is not None:
        log_joint = selection.log_joint(query)
    log_conditional = log_joint - np.logaddexp.reduce(log_joint, axis=2, keepdims=True)
    log_proba = np.logaddexp.reduce(log_weights[None, :, None] + log_conditional, axis=1)
    return log_normalize_rows(log_proba), log_weights


class _Selection:
    """The clusters (plus a new, empty one) joined with a task's labelled counts: their
    feature tables, the task's label prior and the log prior weight of each choice."""

    def __init__(
        self,
        model: ConjugateModel,
        cluster_counts: np.ndarray,
        cluster_sizes: np.ndarray,
        gamma: float,
        own_label_counts: np.ndarray,
        own_value_counts: np.ndarray,
    ) -> None:
        shape = own_value_counts.shape
        clusters = np.concatenate([cluster_counts, np.zeros((1, *shape))], axis=0)
        log_crp = np.log(np.append(np.asarray(cluster_sizes, dtype=float), gamma))
        joined = clusters + own_value_counts
        log_own = model.log_marginal_features(joined) - model.log_marginal_features(clusters)
        self.model = model
        self.n_components = clusters.shape[0]
        self.log_prior_weights = log_crp + log_own  # (K + 1,)
        self.tables = model.log_feature_table(joined)  # (K + 1, C, V + 1)
        self.log_label_prior = model.log_label_prior(own_label_counts)  # (C,)

    def log_joint(self, rows: Any) -> np.ndarray:
        """``log P(y, x | cluster k)`` of shape (n_rows, K + 1, C)."""
        n_rows = rows.shape[0]
        repeated = np.repeat(np.arange(n_rows), self.n_components)
        table_of_row = np.tile(np.arange(self.n_components), n_rows)
        prior = np.broadcast_to(self.log_label_prior, (repeated.size, self.log_label_prior.size))
        joint = self.model.log_joint(rows[repeated], prior, self.tables, table_of_row)
        return joint.reshape(n_rows, self.n_components, -1)

    def log_weights(self, log_joint: np.ndarray, temperature: float) -> np.ndarray:
        """Normalised ``log w_k`` from the unlabelled rows' ``log_joint``."""
        log_marginal = np.logaddexp.reduce(log_joint, axis=2)  # (rows, K + 1)
        log_weights = self.log_prior_weights + temperature * log_marginal.sum(axis=0)
        return log_weights - np.logaddexp.reduce(log_weights)
