"""The length of the partition's Gibbs chains in ClusteredLogisticRegression: "auto" sweeps
four times as long where the median task has few labelled rows (BENCHMARKS.md, issue 49,
nineteenth part), and a number given is used as it is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusterednb import ClusteredLogisticRegression
from clusterednb.exceptions import CNBError
from clusterednb.logistic import partition
from clusterednb.logistic.settings import (
    AUTO,
    DEFAULT_SWEEPS,
    FEW_ROWS,
    FEW_ROWS_CHAIN,
    FitSettings,
    resolved_chain,
)

AUTO_CHAIN = FitSettings(n_sweeps=AUTO, burn_in=AUTO)


@pytest.mark.parametrize(
    ("labelled", "sweeps"),
    [
        ([FEW_ROWS] * 5, DEFAULT_SWEEPS),
        ([FEW_ROWS - 1] * 5, FEW_ROWS_CHAIN * DEFAULT_SWEEPS),
        ([2, 2, 50, 50, 50], DEFAULT_SWEEPS),  # the median task, not the fewest
        ([0, 0, 0, 6, 6], FEW_ROWS_CHAIN * DEFAULT_SWEEPS),  # tasks without labels not counted
        ([0, 0, 0], DEFAULT_SWEEPS),  # no labels at all: the default
    ],
)
def test_an_auto_chain_is_longer_where_the_median_task_has_few_labels(labelled, sweeps):
    chain = resolved_chain(AUTO_CHAIN, np.array(labelled))
    assert (chain.n_sweeps, chain.burn_in) == (sweeps, sweeps // 3)
    chain.check()


def test_a_chain_given_as_numbers_is_kept_and_unknown_rows_give_the_default():
    few = np.full(10, 3)
    given = resolved_chain(FitSettings(n_sweeps=12, burn_in=2), few)
    assert (given.n_sweeps, given.burn_in) == (12, 2)
    assert resolved_chain(FitSettings(n_sweeps=AUTO, burn_in=5), few).burn_in == 5
    assert resolved_chain(FitSettings(n_sweeps=9, burn_in=AUTO), few).burn_in == 3
    default = resolved_chain(AUTO_CHAIN)
    assert (default.n_sweeps, default.burn_in) == (DEFAULT_SWEEPS, DEFAULT_SWEEPS // 3)


@pytest.mark.parametrize(
    ("chain", "message"),
    [
        ({"n_sweeps": "many"}, "n_sweeps must be a non-negative integer or 'auto'"),
        ({"burn_in": -1}, "burn_in must be a non-negative integer or 'auto'"),
        ({"n_sweeps": 0, "burn_in": AUTO}, "n_sweeps must be at least 1"),
        ({"n_sweeps": 5, "burn_in": 5}, "burn_in (5) must be below n_sweeps (5)"),
        ({"burn_in": 50}, "burn_in (50) must be below n_sweeps (30)"),  # ten rows: 30 sweeps
    ],
)
def test_a_chain_outside_its_values_is_refused_by_name(chain, message):
    with pytest.raises(CNBError) as error:
        ClusteredLogisticRegression(**chain).fit(*_table(rows_per_task=10))
    assert message in str(error.value)


def _table(rows_per_task: int, n_tasks: int = 12):
    """Two groups of tasks with opposite colour preferences."""
    rng = np.random.default_rng(0)
    task = np.repeat(np.arange(n_tasks), rows_per_task)
    colour = rng.choice(["red", "blue"], task.size)
    likes_red = task % 2 == 0
    y = ((colour == "red") == likes_red) ^ (rng.random(task.size) < 0.1)
    return pd.DataFrame({"colour": colour}), y.astype(int), task


def _chains_run(monkeypatch, model, rows_per_task: int) -> list[tuple[int, int]]:
    """The (sweeps, burn-in) of every partition chain a fit samples."""
    run, original = [], partition.gibbs_joint_blocks

    def recording(blocks, gamma, rng, n_sweeps, burn_in):
        run.append((n_sweeps, burn_in))
        return original(blocks, gamma, rng, n_sweeps, burn_in)

    monkeypatch.setattr(partition, "gibbs_joint_blocks", recording)
    model.fit(*_table(rows_per_task))
    return run


@pytest.mark.parametrize(
    ("rows_per_task", "fit_chain"),
    [(10, (30, 10)), (6, (120, 40))],
)
def test_the_fit_and_its_tuning_sweep_as_the_rows_ask(monkeypatch, rows_per_task, fit_chain):
    """The tuning's chains are half the fit's (:func:`tuning_chain`); the fit's own chain
    last. A partial_fit with a new task samples a quarter of the fit's chain."""
    model = ClusteredLogisticRegression(inference="gibbs", random_state=0)
    run = _chains_run(monkeypatch, model, rows_per_task)
    assert run[-1] == fit_chain
    tuning = (fit_chain[0] // 2, fit_chain[1] // 2)
    assert run[:-1] and set(run[:-1]) == {tuning}, run
    assert model.get_params()["n_sweeps"] == AUTO  # the parameter stays as given
    run.clear()
    X, y, _ = _table(rows_per_task, n_tasks=1)
    model.partial_fit(X, y, ["someone new"] * len(y))
    assert run == [(fit_chain[0] // 4, fit_chain[1] // 4)]


def test_numbers_given_are_the_fits_chain_whatever_the_rows(monkeypatch):
    model = ClusteredLogisticRegression(inference="gibbs", n_sweeps=20, burn_in=4, random_state=0)
    assert _chains_run(monkeypatch, model, rows_per_task=6)[-1] == (20, 4)
