"""Choosing ``effective_rows`` and ``floor`` of :class:`~clusterednb.ClusteredLogisticRegression`
on the training tasks alone.

Validation rows are labelled rows whose labels are hidden from the fit, in one of two ways
(``validation``):

- "half": every task with at least :data:`MIN_ROWS` labelled rows lends half of them (drawn
  at random); their features stay in the fit, as those of any unlabelled row.
- "like-fewest": a third of those tasks (at least one, drawn at random) are made to look like
  the task with the fewest labelled rows, ``m``: each keeps ``min(m, half)`` of its labelled
  rows and lends the rest. If that task has unlabelled rows the lent rows' features stay in
  the fit; if not, the lent rows leave it. The other tasks keep all their labels, as the
  tasks beside a new user with few labels do.

For each value of :data:`EFFECTIVE_ROWS` the partition posterior is
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


def like_fewest_rows(data: JointData, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Validation rows of pseudo-tasks cut to look like the task with the fewest labels, and
    whether their features stay in the fit (see the module).

    Examples
    --------
    >>> from clusterednb.logistic_fit import JointData
    >>> codes = np.zeros((11, 1), dtype=np.int64)
    >>> y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])  # tasks of 1, 4 and 6 labelled rows
    >>> task = np.array([0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
    >>> data = JointData.from_codes(codes, y, task, 3, np.array([0, 1]))
    >>> held, keep_features = like_fewest_rows(data, np.random.default_rng(0))
    >>> np.unique(data.task[held]).size, held.size in (3, 5), keep_features  # one pseudo-task
    (1, True, False)
    """
    counts = np.diff(data.task_starts)
    lenders = np.flatnonzero(counts >= MIN_ROWS)
    if not np.any(counts > 0) or lenders.size == 0:
        return np.zeros(0, dtype=np.int64), True
    fewest = int(counts[counts > 0].min())
    few_tasks = np.flatnonzero(counts == fewest)
    keep_features = bool(np.any(data.rows_per_task[few_tasks] > fewest))
    pseudo = np.sort(rng.choice(lenders, size=max(1, lenders.size // 3), replace=False))
    held = []
    for task in pseudo:
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        kept = min(fewest, rows.size // 2)
        held.append(rng.permutation(rows)[kept:])
    return np.sort(np.concatenate(held)), keep_features


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
    if settings.validation == "like-fewest":
        held, keep_features = like_fewest_rows(data, rng)
    else:
        held, keep_features = validation_rows(data, rng), True
    if held.size == 0 or np.unique(data.y[held]).size < 2:
        return settings.with_chosen(
            DEFAULT_EFFECTIVE_ROWS if settings.effective_rows == AUTO else settings.effective_rows,
            DEFAULT_FLOOR if settings.floor == AUTO else settings.floor,
        ), pd.DataFrame()
    train = data.without_labels(held) if keep_features else data.without_rows(held)
    truth = data.y[held]
    regression = labelled_regression(train, settings)  # one design and pooled fit for all
    tried = []
    seen: list[np.ndarray] = []
    for rows in grid:
        weights = task_tempering(train.rows_per_task, float(rows))
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
