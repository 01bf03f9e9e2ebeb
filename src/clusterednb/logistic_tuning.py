"""Choosing ``temperature`` and ``floor`` of :class:`~clusterednb.ClusteredLogisticRegression`
on the training tasks alone.

Every task with at least :data:`MIN_ROWS` labelled rows lends half of them (drawn at random)
as validation rows: their labels are hidden, their features stay (as in any fit with
unlabelled rows). For each temperature of the grid the partition posterior is computed once;
for each floor the regressions are fitted; the setting with the least mean log-loss on the
validation rows wins. ``floor = 1`` (every row weighs 1: the pooled regression) is in the
grid, so where clustering does not help, the model falls back to pooled regression.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

from clusterednb.logistic_fit import AUTO, FitSettings, JointData, assemble, partition_posterior

EFFECTIVE_ROWS = (np.inf, 30.0, 10.0, 3.0, 1.0)
FLOORS = (0.05, 0.2, 0.5, 1.0)
MIN_ROWS = 4
DEFAULT_TEMPERATURE = 0.01
DEFAULT_FLOOR = 0.2


def validation_rows(data: JointData, rng: np.random.Generator) -> np.ndarray:
    """Half of the labelled rows of every task with at least ``MIN_ROWS`` of them."""
    chosen = []
    for task in range(data.n_tasks):
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        if rows.size >= MIN_ROWS:
            chosen.append(rng.choice(rows, size=rows.size // 2, replace=False))
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


def temperature_grid(data: JointData) -> tuple[float, ...]:
    """``min(1, n / n̄)`` for each ``n`` of :data:`EFFECTIVE_ROWS`, distinct, largest first."""
    mean_rows = data.codes.shape[0] / max(data.n_tasks, 1)
    return tuple(sorted({float(min(1.0, n / mean_rows)) for n in EFFECTIVE_ROWS}, reverse=True))


def choose_settings(
    data: JointData, settings: FitSettings, rng: np.random.Generator
) -> tuple[FitSettings, pd.DataFrame]:
    """Settings with ``temperature`` and ``floor`` fixed, and the table of what was tried.

    A setting given as a number is kept; "auto" is chosen by validation (see the module).
    With no task to lend validation rows, or labels of one class only among them, "auto"
    becomes the defaults (temperature 0.01, floor 0.2).
    """
    if AUTO not in (settings.temperature, settings.floor):
        return settings, pd.DataFrame()
    temperatures = (
        temperature_grid(data) if settings.temperature == AUTO else (settings.temperature,)
    )
    floors = FLOORS if settings.floor == AUTO else (settings.floor,)
    held = validation_rows(data, rng)
    if held.size == 0 or np.unique(data.y[held]).size < 2:
        return settings.with_chosen(
            DEFAULT_TEMPERATURE if settings.temperature == AUTO else settings.temperature,
            DEFAULT_FLOOR if settings.floor == AUTO else settings.floor,
        ), pd.DataFrame()
    train = data.without_labels(held)
    truth = data.y[held]
    tried = []
    for temperature in temperatures:
        clustering = partition_posterior(train, settings.with_chosen(temperature, 0.0), rng)
        for floor in floors:
            clusters = assemble(train, clustering, settings.with_chosen(temperature, floor))
            mixture = clusters.membership[data.task[held]]
            p1 = clusters.proba(data.codes[held], data.task[held], mixture, data.offsets)
            loss = log_loss(truth, np.column_stack([1 - p1, p1]), labels=[0, 1])
            tried.append(
                {
                    "temperature": temperature,
                    "floor": floor,
                    "n_clusters": int(clustering.partition.max()) + 1,
                    "log_loss": float(loss),
                }
            )
    table = pd.DataFrame(tried)
    best = table.loc[table["log_loss"].idxmin()]
    return settings.with_chosen(float(best["temperature"]), float(best["floor"])), table
