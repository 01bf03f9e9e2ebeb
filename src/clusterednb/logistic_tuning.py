"""Choosing ``effective_rows`` and ``floor`` of :class:`~clusterednb.ClusteredLogisticRegression`
on the training tasks alone.

Every task with at least :data:`MIN_ROWS` labelled rows lends half of them (drawn at random)
as validation rows: their labels are hidden, their features stay (as in any fit with
unlabelled rows). For each value of :data:`EFFECTIVE_ROWS` the partition posterior is
computed once; for each floor the regressions are fitted; the setting with the least mean
log-loss on the validation rows wins. ``floor = 1`` (every row weighs 1: the pooled
regression) is in the grid, so where clustering does not help, the model falls back to
pooled regression.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

from clusterednb.logistic_clusters import assemble, labelled_regression, partition_posterior
from clusterednb.logistic_fit import AUTO, FitSettings, JointData, task_tempering

EFFECTIVE_ROWS = (np.inf, 100.0, 50.0, 30.0, 15.0, 5.0)
FLOORS = (0.05, 0.2, 0.5, 1.0)
MIN_ROWS = 4
DEFAULT_EFFECTIVE_ROWS = 10.0
DEFAULT_FLOOR = 0.2


def validation_rows(data: JointData, rng: np.random.Generator) -> np.ndarray:
    """Half of the labelled rows of every task with at least ``MIN_ROWS`` of them.

    Examples
    --------
    >>> from clusterednb import toy
    >>> data = toy.joint_data()  # tasks of two rows: fewer than MIN_ROWS, none lends any
    >>> validation_rows(data, np.random.default_rng(0)).tolist()
    []
    """
    chosen = []
    for task in range(data.n_tasks):
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        if rows.size >= MIN_ROWS:
            chosen.append(rng.choice(rows, size=rows.size // 2, replace=False))
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


def choose_settings(
    data: JointData, settings: FitSettings, rng: np.random.Generator
) -> tuple[FitSettings, pd.DataFrame]:
    """Settings with ``effective_rows`` and ``floor`` fixed, and the table of what was tried.

    A setting given as a number is kept; "auto" is chosen by validation (see the module).
    With no task to lend validation rows, or labels of one class only among them, "auto"
    becomes the defaults (10 effective rows, floor 0.2).

    Examples
    --------
    >>> from clusterednb import toy
    >>> chosen, tried = choose_settings(toy.joint_data(), FitSettings(), np.random.default_rng(0))
    >>> chosen.effective_rows, chosen.floor, len(tried)  # no validation rows: the defaults
    (10.0, 0.2, 0)
    """
    if AUTO not in (settings.effective_rows, settings.floor):
        return settings, pd.DataFrame()
    grid = EFFECTIVE_ROWS if settings.effective_rows == AUTO else (settings.effective_rows,)
    floors = FLOORS if settings.floor == AUTO else (settings.floor,)
    held = validation_rows(data, rng)
    if held.size == 0 or np.unique(data.y[held]).size < 2:
        return settings.with_chosen(
            DEFAULT_EFFECTIVE_ROWS if settings.effective_rows == AUTO else settings.effective_rows,
            DEFAULT_FLOOR if settings.floor == AUTO else settings.floor,
        ), pd.DataFrame()
    train = data.without_labels(held)
    truth = data.y[held]
    regression = labelled_regression(train, settings)  # one design and pooled fit for all
    tried = []
    seen: list[np.ndarray] = []
    for rows in grid:
        weights = task_tempering(data.rows_per_task, float(rows))
        if any(np.array_equal(weights, earlier) for earlier in seen):
            continue  # the same weights for every task as a setting already tried
        seen.append(weights)
        clustering = partition_posterior(train, settings.with_chosen(rows, 0.0), rng)
        for floor in floors:
            clusters = assemble(train, clustering, settings.with_chosen(rows, floor), regression)
            mixture = clusters.membership[data.task[held]]
            p1 = clusters.proba(data.design(held), mixture)
            loss = log_loss(truth, np.column_stack([1 - p1, p1]), labels=[0, 1])
            tried.append(
                {
                    "effective_rows": rows,
                    "floor": floor,
                    "n_clusters": int(clustering.partition.max()) + 1,
                    "log_loss": float(loss),
                }
            )
    table = pd.DataFrame(tried)
    best = table.loc[table["log_loss"].idxmin()]
    return settings.with_chosen(float(best["effective_rows"]), float(best["floor"])), table
