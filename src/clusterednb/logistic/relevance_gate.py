"""``relevance="auto"`` (the default): judge the columns only where a column looks irrelevant.

Judging every column's relevance (``relevance=True``: :mod:`~clusterednb.logistic.
clustering.feature_relevance`, :mod:`~clusterednb.logistic.clustering.label_relevance`)
costs about twice a fit, and where every column matters it changes little. A column whose
values are alike in every task, though, tells the joint clustering nothing and blurs it: a
few noise columns drag the plain fit below pooled logistic regression (issue 49's
population: 0.80 clean, 0.64 with one noise column), and there the signal columns too are
drawn alike in every task (only the label's dependence on them differs). So the default asks
first, cheaply (random deals of each column's values to the tasks, the naive Bayes screen's
first test: :func:`columns_alike`). If the columns whose values do not differ between tasks
beyond chance hold :data:`ALIKE_SHARE` of the features' likelihood (:func:`likelihood_shares`),
the fit judges the columns as ``relevance=True`` does, to the last digit. If every column
differs (landmine's fields, 30–700 standard deviations), is designed (a survey of the same
products), or the alike ones hold less (MovieLens' rare genre flags: judging cost 2.3 times
the fit there, for about 0.01 AUC at k = 16, 1.9 standard errors over 62 splits), it fits as
``relevance=False`` does, to the last digit: the deals draw from a copy of the generator
(:func:`~clusterednb.seeding.detached_stream`), so the fit's own draws are untouched, and
they stop once the columns still undecided could not reach the share.

Documents (word counts) have no columns to judge: ``"auto"`` fits them as ``False``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.exceptions import CNBError
from clusterednb.inference.relevance_screen import MAX_SCREENED_TASKS, heterogeneity
from clusterednb.logistic.documents import task_value_counts
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.settings import AUTO, FitSettings
from clusterednb.seeding import detached_stream
from clusterednb.stats.column_tests import designed

ALIKE_Z = 3.0
"""Standard deviations above random deals at or below which a column's values are alike in
every task, so that ``"auto"`` judges every column. Naive Bayes's screen holds a column below
4 (:data:`~clusterednb.inference.relevance_screen.SCREEN_Z`), since a column it passes is read
as relevant; a column that passes here is still judged with the others."""


ALIKE_SHARE = 0.05
"""The share of the features' likelihood (:func:`likelihood_shares`) that the columns alike
in every task must hold together for ``"auto"`` to judge. Fewer cannot drag the partition:
MovieLens' genre flags alike in every user (one never set, one set on 1.9 % of the rows; on
some draws a third) hold 1.3–2.2 % beside nineteen columns that differ by 4–235 standard
deviations; a noise column among issue 49's population's five holds a fifth."""


def likelihood_shares(by_task: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each column's share of the features' log-likelihood under one categorical per column:
    ``n_f H_f / Σ_g n_g H_g``, ``n_f`` the column's counted values and ``H_f`` the entropy of
    their frequencies (nats). The joint score's feature side weighs a column by about this
    much (the Wade et al. pull, :mod:`~clusterednb.logistic.clustering.feature_relevance`);
    a column of one value, by nothing. Zeros when every column holds one value.

    Parameters
    ----------
    by_task : ndarray of shape (n_tasks, n_values_total)
        Each task's counts of each value.
    offsets : ndarray of shape (n_features + 1,)

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> by_task = np.array([[1, 1, 2, 0], [0, 2, 2, 0]])  # column 0: 1 and 3; column 1: one value
    >>> likelihood_shares(by_task, np.array([0, 2, 4])).tolist()
    [1.0, 0.0]
    """
    counts = np.asarray(by_task, dtype=np.float64).sum(axis=0)
    feature = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    totals = np.bincount(feature, counts, offsets.size - 1)[feature]
    frequency = np.divide(counts, totals, out=np.ones_like(counts), where=counts > 0)
    information = np.bincount(feature, -counts * np.log(frequency), offsets.size - 1) + 0.0
    whole = information.sum()
    return information / whole if whole > 0 else np.zeros_like(information)


def columns_alike(
    data: JointData, rng: np.random.Generator, beta: float = 1.0, min_share: float = 0.0
) -> np.ndarray:
    """The columns whose values do not differ between ``data``'s tasks beyond chance and are
    not designed (:func:`~clusterednb.inference.relevance_screen.heterogeneity` at most
    :data:`ALIKE_Z` standard deviations above random deals,
    :func:`~clusterednb.stats.column_tests.designed` not), bool of shape (n_features,): read
    by the clusters' feature side, such a column can only blur the partition. Every row
    counts (the clusters read the unlabelled ones too); at most
    :data:`~clusterednb.inference.relevance_screen.MAX_SCREENED_TASKS` tasks, drawn from
    ``rng`` when there are more. None for documents or fewer than two tasks; none either
    when together they hold less than ``min_share`` of the features' likelihood
    (:func:`likelihood_shares`). The deals then stop as soon as the columns they have not
    yet told apart from chance hold less than that: the answer is the one all the deals
    would give (a column they tell apart is never alike).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(20), 10)
    >>> differs = (task % 2) * 2 + rng.integers(0, 2, 200)  # values 0–1 or 2–3 by task
    >>> codes = np.column_stack([differs, rng.integers(0, 3, 200)])  # and a noise column
    >>> data = JointData.from_codes(codes, rng.integers(0, 2, 200), task, 20,
    ...                             np.array([0, 4, 7]))
    >>> columns_alike(data, np.random.default_rng(1)).tolist()
    [False, True]
    """
    alike = np.zeros(data.offsets.size - 1, dtype=bool)
    if data.documents or data.n_tasks < 2:
        return alike
    if data.n_tasks <= MAX_SCREENED_TASKS:
        by_task = data.value_counts
    else:  # only the drawn tasks' rows are counted: no table of every task
        tasks = np.sort(rng.choice(data.n_tasks, MAX_SCREENED_TASKS, replace=False))
        rows = np.isin(data.task, tasks)
        position = np.searchsorted(tasks, data.task[rows])
        by_task = task_value_counts(data.codes[rows], position, tasks.size, data.offsets)
    by_task = np.asarray(by_task)
    shares = likelihood_shares(by_task, data.offsets)
    give_up = None if min_share <= 0 else lambda undecided: shares[undecided].sum() < min_share
    spread = heterogeneity(by_task[:, None, :], data.offsets, rng, beta, give_up)
    alike = (spread <= ALIKE_Z) & ~designed(spread)  # a column given up on (NaN): not alike
    return alike if shares[alike].sum() >= min_share else np.zeros_like(alike)


def resolved_relevance(
    settings: FitSettings, data: JointData, rng: np.random.Generator
) -> FitSettings:
    """``settings`` with ``relevance="auto"`` made True where :func:`columns_alike` finds
    columns of ``data`` holding :data:`ALIKE_SHARE` of its features' likelihood (drawn from a
    detached copy of ``rng``), else False; other values kept (True refused for documents).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(20), 10)
    >>> differs = ((task % 2) * 2 + rng.integers(0, 2, 200))[:, None]  # 0–1 or 2–3 by task
    >>> data = JointData.from_codes(differs, rng.integers(0, 2, 200), task, 20, np.array([0, 4]))
    >>> resolved_relevance(FitSettings(relevance="auto"), data, rng).relevance
    False
    """
    if settings.relevance is True and data.documents:
        raise CNBError("relevance=True judges a table's columns; documents have none")
    if settings.relevance != AUTO:
        return settings
    alike = columns_alike(data, detached_stream(rng), settings.beta, ALIKE_SHARE)
    return replace(settings, relevance=bool(alike.any()))
