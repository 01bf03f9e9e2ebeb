"""Choosing the tempering ``τ`` of transductive selection on the training tasks alone
(``ClusteredNB(transductive="select", transductive_temperature="auto")``).

Naive Bayes counts correlated features several times, so a task's hundreds of unlabelled rows
can outvote its labelled ones when they choose a cluster; ``τ < 1`` tempers their likelihood.
Which ``τ`` is right depends on the data, and the rows it will be used for — a target's test
rows — must not choose it. So the situation is rehearsed on the training tasks: a third of
the tasks with at least :data:`MIN_LENDER_ROWS` labelled rows (at most
:data:`MAX_PSEUDO_TARGETS`) become pseudo-targets, each keeping as many labelled rows as the
real targets have (the fewest labelled rows of a task with unlabelled rows, at most half of
its own) and hiding the labels of the rest. One extra fit sees those rows unlabelled (the real
targets' unlabelled rows are left out of it); each ``τ`` of :data:`TEMPERATURES` then
predicts the hidden rows by selection — no refit, selection happens at prediction — and the
``τ`` with the least log-loss of the hidden labels wins (ties go to the larger ``τ``).

The pseudo-targets' hidden labels were not in the extra fit's partition, so nothing they
predict has seen them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import log_loss

from clusterednb.naive_bayes.calibration import take_rows

TEMPERATURES = (1.0, 0.5, 0.25, 0.1, 0.05, 0.02)
MIN_LENDER_ROWS = 8
MAX_PSEUDO_TARGETS = 20
FALLBACK_TEMPERATURE = 1.0


def pseudo_target_rows(
    tasks: np.ndarray, labelled: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Rows whose labels are hidden: those a pseudo-target does not keep (see the module).

    Parameters
    ----------
    tasks : ndarray of shape (n_rows,)
    labelled : ndarray of shape (n_rows,), bool
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int
        Positions of the hidden rows, sorted.

    Examples
    --------
    Task ``t`` has one labelled row and an unlabelled one (a real target); ``a`` and ``b``
    have ten labelled rows each. One pseudo-target keeps one labelled row and hides nine:

    >>> tasks = np.array(["t", "t"] + ["a"] * 10 + ["b"] * 10)
    >>> labelled = np.array([True, False] + [True] * 20)
    >>> hidden = pseudo_target_rows(tasks, labelled, np.random.default_rng(0))
    >>> hidden.size, np.unique(tasks[hidden]).size
    (9, 1)
    """
    frame = pd.DataFrame({"task": tasks, "labelled": labelled})
    n_labelled = frame.groupby("task", sort=True)["labelled"].sum()
    targets = frame.loc[~frame["labelled"], "task"].unique()
    keep = int(n_labelled[targets].min()) if targets.size else int(n_labelled.min())
    lenders = n_labelled.index[(n_labelled >= MIN_LENDER_ROWS) & ~n_labelled.index.isin(targets)]
    if lenders.size == 0:
        return np.zeros(0, dtype=np.int64)
    count = min(MAX_PSEUDO_TARGETS, max(1, lenders.size // 3))
    chosen = rng.choice(lenders.to_numpy(dtype=object), size=count, replace=False)
    hidden = []
    for task in chosen:
        rows = rng.permutation(np.flatnonzero((tasks == task) & labelled))
        hidden.append(rows[min(keep, rows.size // 2) :])
    return np.sort(np.concatenate(hidden))


def choose_temperature(
    estimator: Any, X: Any, y: Any, tasks: np.ndarray, rng: np.random.Generator
) -> tuple[float, pd.DataFrame]:
    """``τ`` for ``estimator``'s transductive selection, and the table of what was tried.

    Parameters
    ----------
    estimator : fitted ClusteredNB
        Its settings and ``schema_`` are copied into the extra fit.
    X : DataFrame, ndarray or sparse matrix of shape (n_rows, ...)
    y : array-like of shape (n_rows,)
        Labels; missing (NaN/None) for an unlabelled row.
    tasks : ndarray of shape (n_rows,)
    rng : numpy.random.Generator

    Returns
    -------
    temperature : float
        :data:`FALLBACK_TEMPERATURE` when no task can lend rows or the hidden labels are all
        of one class.
    table : DataFrame
        Columns ``temperature`` and ``log_loss`` (empty with the fallback).

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.data.synthetic import make_planted_population
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(3, 3),
    ...                                      rows_per_task=20, n_features=3)
    >>> frame = population.frame
    >>> X, tasks = frame[population.feature_names], frame["task"].to_numpy()
    >>> model = ClusteredNB(inference="exact", transductive="select").fit(X, frame["label"], tasks)
    >>> tau, table = choose_temperature(model, X, frame["label"], tasks, np.random.default_rng(0))
    >>> tau in table["temperature"].tolist(), len(table)
    (True, 6)
    """
    labels = pd.Series(np.asarray(y, dtype=object))
    labelled = labels.notna().to_numpy()
    tasks = np.asarray(tasks)
    hidden = pseudo_target_rows(tasks, labelled, rng)
    truth = labels.iloc[hidden].to_numpy()
    if hidden.size == 0 or pd.unique(truth).size < 2:
        return FALLBACK_TEMPERATURE, pd.DataFrame(columns=["temperature", "log_loss"])
    seen = np.flatnonzero(labelled)  # every labelled row; the hidden ones lose their labels
    fit_labels = labels.iloc[seen].copy()
    fit_labels[np.isin(seen, hidden)] = None
    part = clone(estimator).set_params(
        transductive="select",
        transductive_temperature=1.0,
        calibration=None,
        schema=estimator.schema_,
        task_column=None,
        progress=False,
    )
    part.fit(take_rows(X, seen), fit_labels.to_numpy(), tasks[seen])
    classes = list(part.classes_)
    tried = []
    for temperature in TEMPERATURES:
        part.set_params(transductive_temperature=temperature)
        proba = part.predict_proba(take_rows(X, hidden), tasks[hidden])
        loss = log_loss(truth.astype(type(classes[0])), proba, labels=classes)
        tried.append({"temperature": temperature, "log_loss": float(loss)})
    table = pd.DataFrame(tried)
    return float(table.loc[table["log_loss"].idxmin(), "temperature"]), table
