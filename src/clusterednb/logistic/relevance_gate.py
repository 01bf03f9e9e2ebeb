"""``relevance="auto"`` (the default): judge the columns only where a column looks irrelevant.

Judging every column's relevance (``relevance=True``: :mod:`~clusterednb.logistic.
clustering.feature_relevance`, :mod:`~clusterednb.logistic.clustering.label_relevance`)
costs about twice a fit, and where every column matters it changes little. A column whose
values are alike in every task, though, tells the joint clustering nothing and blurs it: a
few noise columns drag the plain fit below pooled logistic regression (issue 49's
population: 0.80 clean, 0.64 with one noise column), and there the signal columns too are
drawn alike in every task (only the label's dependence on them differs). So the default asks
first, cheaply (random deals of each column's values to the tasks, the naive Bayes screen's
first test: :func:`columns_alike`). If a column's values do not differ between tasks beyond
chance, the fit judges the columns as ``relevance=True`` does, to the last digit; if every
column differs (landmine's fields, 30–700 standard deviations) or is designed (a survey of
the same products), it fits as ``relevance=False`` does, to the last digit: the deals draw
from a copy of the generator (:func:`~clusterednb.seeding.detached_stream`), so the fit's
own draws are untouched.

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


def columns_alike(data: JointData, rng: np.random.Generator, beta: float = 1.0) -> np.ndarray:
    """The columns whose values do not differ between ``data``'s tasks beyond chance and are
    not designed (:func:`~clusterednb.inference.relevance_screen.heterogeneity` at most
    :data:`ALIKE_Z` standard deviations above random deals,
    :func:`~clusterednb.stats.column_tests.designed` not), bool of shape (n_features,): read
    by the clusters' feature side, such a column can only blur the partition. Every row
    counts (the clusters read the unlabelled ones too); at most
    :data:`~clusterednb.inference.relevance_screen.MAX_SCREENED_TASKS` tasks, drawn from
    ``rng`` when there are more. None for documents or fewer than two tasks.

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
    spread = heterogeneity(np.asarray(by_task)[:, None, :], data.offsets, rng, beta)
    return (spread <= ALIKE_Z) & ~designed(spread)


def resolved_relevance(
    settings: FitSettings, data: JointData, rng: np.random.Generator
) -> FitSettings:
    """``settings`` with ``relevance="auto"`` made True where :func:`columns_alike` finds a
    column of ``data`` (drawn from a detached copy of ``rng``), else False; other values kept
    (True refused for documents).

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
    alike = columns_alike(data, detached_stream(rng), settings.beta)
    return replace(settings, relevance=bool(alike.any()))
