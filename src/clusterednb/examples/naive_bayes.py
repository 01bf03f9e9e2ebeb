"""Tiny ready-made rows and fitted naive-Bayes models for the estimators' examples.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.examples.models import colour_schema, scratch_file, three_task_counts
from clusterednb.inference.posterior import Posterior
from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.semi_supervised import Unlabelled
from clusterednb.stats.counts import Counts


def own_tables(counts: Counts, feature_group: np.ndarray) -> Posterior:
    """The predictive in which every task keeps its own counts (No-Sharing's), for
    :func:`unlabelled_rows`; ``feature_group`` is unused.

    Examples
    --------
    >>> own_tables(three_task_counts(), np.arange(3)).components.tolist()
    [0, 1, 2]
    """
    n_tasks = counts.n_groups
    return Posterior.single(
        counts.value_counts, counts.label_counts, np.arange(n_tasks), np.zeros(2), 0
    )


def unlabelled_rows() -> Unlabelled:
    """Two unlabelled rows for :func:`three_task_counts`: ``red`` in task 0, ``blue`` in
    task 2; every task its own label and feature group; predictive :func:`own_tables`.

    Examples
    --------
    >>> unlabelled_rows().rows.tolist(), unlabelled_rows().task.tolist()
    ([[0], [1]], [0, 2])
    """
    alone = np.arange(3)
    return Unlabelled(np.array([[0], [1]]), np.array([0, 2]), (alone, alone), own_tables)


def colour_rows() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Nine labelled rows of three users: ``ann`` and ``bob`` like red, ``cy`` likes blue.

    Returns
    -------
    X : DataFrame of shape (9, 1)
        The column ``colour``.
    y : ndarray of shape (9,)
        ``"yes"`` or ``"no"``.
    tasks : ndarray of shape (9,)
        The user of each row.

    Examples
    --------
    >>> X, y, tasks = colour_rows()
    >>> tasks[:3].tolist(), X["colour"][:3].tolist(), y[:3].tolist()
    (['ann', 'ann', 'ann'], ['red', 'red', 'blue'], ['yes', 'yes', 'no'])
    """
    colour = ["red", "red", "blue", "red", "blue", "blue", "red", "blue", "blue"]
    y = ["yes", "yes", "no", "yes", "no", "no", "no", "yes", "yes"]
    tasks = ["ann"] * 3 + ["bob"] * 3 + ["cy"] * 3
    return pd.DataFrame({"colour": colour}), np.array(y), np.array(tasks)


def colour_csv() -> Path:
    """:func:`colour_rows` as a CSV file with the columns ``user``, ``colour`` and ``liked``
    (in a new scratch folder), for examples of the command line.

    Examples
    --------
    >>> colour_csv().read_text().splitlines()[:2]
    ['user,colour,liked', 'ann,red,yes']
    """
    X, y, tasks = colour_rows()
    path = scratch_file("colours.csv")
    X.assign(liked=y).rename_axis(None).assign(user=tasks)[["user", "colour", "liked"]].to_csv(
        path, index=False
    )
    return path


def exact_clustering() -> ClusteredNB:
    """Clustered NB fitted to :func:`three_task_counts` by enumerating every partition: the
    reference the approximate engines' examples compare with.

    Examples
    --------
    >>> model = exact_clustering()
    >>> model.evidence_kind_, round(float(model.coclustering_[0, 1]), 6)  # 9/14
    ('exact', 0.642857)
    """
    return ClusteredNB(inference="exact").fit_counts(
        three_task_counts(), ["a", "b", "c"], colour_schema()
    )
