"""The screen's held columns checked against the clusters the other columns find.

The screen (:mod:`~clusterednb.inference.relevance_screen`) holds a column shared when its
values neither differ between tasks nor follow the label within them by more than chance
allows. With few rows a test of that kind cannot tell "alike" from "too few rows to tell": on
planted populations of 7–10 tasks with 5 training rows each it held one or two of four
signal columns, and the fits lost 0.015–0.028 AUC against the plain model
(``benchmarks/bench_planted_screen.py``). So once the
engine has clustered the tasks on the columns it kept, each held column is weighed by its own
evidence on those clusters: it is released (read as relevant, and the tasks clustered again
with it) when its log evidence with a class-conditional distribution per cluster of the
fit's partition exceeds its log evidence when shared by every task
(:func:`~clusterednb.inference.relevance.shared_evidence`, label-free or not) by enough for
the held columns together: the released set is the most probable under the relevance model's
prior on the share of relevant columns (:func:`most_probable_switches`), so one of twenty held
columns needs a factor of about 20, and a lone held column one above 1. A noise column pays
the Occam factor of one distribution per cluster and stays held; a column that separates the
clusters earns it.

Judging many held columns at once needs the relevance model's own prior on how many are
relevant: ``π ~ Beta(a, b)`` and each column relevant with probability ``π``
(:mod:`~clusterednb.inference.relevance`). Summed over ``π``, a set of ``j`` columns of ``n``
has prior probability ``B(a + j, b + n − j) / B(a, b)``
(:func:`~clusterednb.inference.relevance.log_prior_count`), so one more among many costs prior
odds of about ``j / n``: the multiplicity correction of Scott and Berger (2010), which odds of
one for each column alone lack. Judged one at a time, one noise column in twenty with a
Bayes factor above 1 is taken (issue 49's population with 6 rows a task: a noise column
released at 0.5 nats, another predicted class by class at a factor of 1.5, costing 0.07 and
0.02 AUC on their seeds); judged together, twenty of which one scores 0.5 nats stay off,
and three of three that each score 1–3 nats all go on (:func:`most_probable_switches`; also
whether held columns are predicted class by class,
:func:`~clusterednb.inference.relevance_screen.with_held_columns`).
"""

from __future__ import annotations

import numpy as np

from clusterednb.inference.relevance import log_prior_count, shared_evidence
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts


def released_columns(
    model: DirichletNB,
    counts: Counts | SparseCounts,
    held: np.ndarray,
    partition: np.ndarray,
    prior: tuple[float, float] = (1.0, 1.0),
) -> np.ndarray:
    """The held columns whose evidence on ``partition``'s clusters beats their shared one,
    judged together (:func:`most_probable_switches`).

    Parameters
    ----------
    model : DirichletNB
        The model of every column.
    counts : Counts or SparseCounts
        Every task's counts, every column.
    held : ndarray of shape (n_features,)
        Bool: the columns the screen held.
    partition : ndarray of shape (n_tasks,)
        The clusters the engine found on the other columns (canonical labels).
    prior : (a, b), default=(1.0, 1.0)
        The Beta prior of the share of relevant columns (``relevance_prior``).

    Returns
    -------
    ndarray of shape (n_features,)
        Bool, within ``held``.

    Examples
    --------
    Two tasks that give one colour opposite meanings: as two clusters the colour explains
    the labels better than shared, so it is released.

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.stats.counts import Counts
    >>> model = toy.colour_model()
    >>> codes = np.array([[0]] * 6 + [[1]] * 6 + [[1]] * 6 + [[0]] * 6)
    >>> y = np.array([0] * 6 + [1] * 6 + [0] * 6 + [1] * 6)
    >>> task = np.repeat([0, 1], 12)
    >>> counts = Counts.from_codes(codes, y, task, n_tasks=2, n_classes=2,
    ...                            offsets=model.offsets)
    >>> released_columns(model, counts, np.array([True]), np.array([0, 1])).tolist()
    [True]
    >>> released_columns(model, counts, np.array([True]), np.array([0, 0])).tolist()
    [False]
    """
    released = np.zeros_like(held)
    gaps = evidence_gap(model, counts, partition)[held]
    released[held] = most_probable_switches(gaps, prior)
    return released


def evidence_gap(
    model: DirichletNB, counts: Counts | SparseCounts, partition: np.ndarray
) -> np.ndarray:
    """Each column's log evidence with one class-conditional distribution per cluster of
    ``partition`` (n_tasks,) minus its log evidence when shared by every task, shape
    (n_features,)."""
    n_clusters = int(partition.max()) + 1
    by_cluster = counts.group_by(partition, n_clusters).value_counts.astype(np.float64)
    relevant = model.log_marginal_each_feature(by_cluster).sum(axis=0)  # (F,)
    shared, _ = shared_evidence(model, by_cluster.sum(axis=0))
    return relevant - shared


def most_probable_switches(
    log_factors: np.ndarray, prior: tuple[float, float] = (1.0, 1.0)
) -> np.ndarray:
    """The switches on in the most probable set, bool of the same shape as ``log_factors``.

    A set ``S`` of the ``n`` switches scores ``Σ_{j ∈ S} log_factors[j] + log P(|S| on)``
    (:func:`~clusterednb.inference.relevance.log_prior_count`); for each size the best set
    holds the largest factors, so the sizes ``0 … n`` are compared in one pass. Ties go to
    the smaller set.

    Parameters
    ----------
    log_factors : ndarray of shape (n,)
        Each switch's log Bayes factor for on against off (``inf``: on for sure).
    prior : (a, b), default=(1.0, 1.0)
        The Beta prior of the share of switches on.

    Examples
    --------
    One switch of one is on where its factor passes 1; one of twenty needs about 20:

    >>> most_probable_switches(np.array([0.5])).tolist()
    [True]
    >>> most_probable_switches(np.r_[0.5, np.full(19, -8.0)]).any()
    np.False_
    >>> most_probable_switches(np.array([1.0, 2.0, 3.0])).tolist()
    [True, True, True]
    """
    log_factors = np.asarray(log_factors, dtype=np.float64)
    n = log_factors.size
    chosen = np.zeros(n, dtype=bool)
    if n == 0:
        return chosen
    order = np.argsort(-log_factors, kind="stable")
    gains = np.concatenate([[0.0], np.cumsum(log_factors[order])])  # the best set of each size
    with np.errstate(invalid="ignore"):  # a set holding an inf and a -inf factor: NaN, never best
        scores = gains + log_prior_count(prior, n)
    size = int(np.argmax(np.where(np.isnan(scores), -np.inf, scores)))
    chosen[order[:size]] = True
    return chosen
