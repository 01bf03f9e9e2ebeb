"""Choosing effective_rows and floor: the walk on the grids, the tasks it is chosen on, and the
table of what was tried (:mod:`clusterednb.logistic.tuning`)."""

from __future__ import annotations

import numpy as np
import pytest

import clusterednb as cnb
from clusterednb.data.synthetic import make_logistic_population
from clusterednb.logistic import tuning
from clusterednb.logistic.fit import FitSettings, JointData
from clusterednb.logistic.grid_walk import tuning_chain, walk_grid
from clusterednb.logistic.tuning import tuning_tasks


def _unimodal(rng: np.random.Generator, n_rows: int, n_floors: int) -> np.ndarray:
    """A loss table falling to one minimum along the rows (at every floor) and, at that row,
    along the floors."""
    best_row, best_floor = rng.integers(n_rows), rng.integers(n_floors)
    rows = np.abs(np.arange(n_rows) - best_row)[:, None] * rng.uniform(0.5, 2.0)
    floors = np.abs(np.arange(n_floors) - best_floor)[None, :] * rng.uniform(0.1, 0.4)
    return rows + floors + rng.uniform(0, 1e-3, size=(n_rows, n_floors))


@pytest.mark.parametrize("seed", range(20))
def test_on_a_unimodal_grid_the_walk_ends_at_its_minimum_trying_fewer_settings(seed):
    rng = np.random.default_rng(seed)
    table = _unimodal(rng, 6, 4)
    tried = []

    def loss(rows, floor):
        tried.append((rows, floor))
        return table[rows, floor]

    found = walk_grid(loss, 6, 4, start=3)
    assert found == np.unravel_index(np.argmin(table), table.shape)
    assert len(set(tried)) == len(tried) < table.size  # nothing asked twice, not the whole grid
    assert (found[0], 3) in tried  # the highest floor (the pooled regression) always


def test_the_walk_tries_the_highest_floor_even_when_the_second_is_worse():
    table = np.array([[1.0, 2.0, 3.0, 0.5]])  # floors worsen, then the pooled one wins
    assert walk_grid(lambda rows, floor: table[rows, floor], 1, 4, start=0) == (0, 3)


def test_one_setting_given_is_the_only_one_tried():
    assert walk_grid(lambda rows, floor: 1.0, 1, 1, start=0) == (0, 0)


def _data(n_tasks: int, fewest: int, seed: int = 0) -> JointData:
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(n_tasks), 6)
    y = rng.integers(0, 2, size=task.size)
    y[task == 5] = -1  # task 5 keeps `fewest` labels
    y[np.flatnonzero(task == 5)[:fewest]] = 1
    codes = rng.integers(0, 2, size=(task.size, 1))
    return JointData.from_codes(codes, y, task, n_tasks, np.array([0, 2]))


def test_the_settings_are_chosen_on_a_core_that_keeps_the_task_with_the_fewest_labels(
    monkeypatch,
):
    monkeypatch.setattr(tuning, "MAX_TUNING_TASKS", 10)
    for seed in range(5):
        chosen = tuning_tasks(_data(40, fewest=1, seed=seed), np.random.default_rng(seed))
        assert chosen.size == 10 and 5 in chosen
        assert np.all(np.diff(chosen) > 0)  # sorted, distinct
    assert tuning_tasks(_data(8, fewest=1), np.random.default_rng(0)).tolist() == list(range(8))


def test_the_walks_chains_take_half_the_sweeps():
    settings = FitSettings(n_sweeps=30, burn_in=10)
    assert (tuning_chain(settings).n_sweeps, tuning_chain(settings).burn_in) == (15, 5)
    tuning_chain(FitSettings(n_sweeps=3, burn_in=2)).check()  # still a valid chain


def test_the_table_holds_each_setting_tried_once_and_the_fit_uses_the_least_loss():
    planted = make_logistic_population(
        np.random.default_rng(4), group_sizes=(6, 6), rows_per_task=40, n_features=4
    )
    frame = planted.frame
    model = cnb.ClusteredLogisticRegression(random_state=0, inference="gibbs")
    model.fit(frame[planted.feature_names], frame["label"], frame["task"])
    table = model.tuning_
    settings = list(zip(table["effective_rows"], table["floor"], strict=True))
    assert len(settings) == len(set(settings)) < len(tuning.EFFECTIVE_ROWS) * len(tuning.FLOORS)
    best = table.loc[table["log_loss"].idxmin()]
    assert (model.effective_rows_, model.floor_) == (best["effective_rows"], best["floor"])
    assert (tuning.START_EFFECTIVE_ROWS, tuning.FLOORS[0]) in settings
    assert any(floor == tuning.FLOORS[-1] for _, floor in settings)


def test_regressions_no_held_task_leans_on_are_not_fitted_and_change_no_prediction():
    from clusterednb.inference.blocks.engine import BlockClustering
    from clusterednb.logistic.clusters import assemble

    rng = np.random.default_rng(2)
    task = np.repeat(np.arange(4), 30)
    codes = rng.integers(0, 3, size=(task.size, 2))
    y = (rng.random(task.size) < 0.2 + 0.2 * (task % 2) + 0.2 * (codes[:, 0] == 1)).astype(int)
    data = JointData.from_codes(codes, y, task, 4, np.array([0, 3, 6]))
    clustering = BlockClustering(
        partition=np.array([0, 0, 1, 2]),
        log_joint=0.0,
        coclustering=np.array([[1, 0.5, 0, 0], [0.5, 1, 0, 0], [0, 0, 1, 0.3], [0, 0, 0.3, 1.0]]),
        n_clusters_probability=np.zeros(5),
    )
    settings = FitSettings(effective_rows=10.0, floor=0.2)
    every = assemble(data, clustering, settings)
    some = assemble(data, clustering, settings, for_tasks=np.array([0]))
    # task 0 leans on cluster 0 only: clusters 1 and 2 hold the pooled regression, unfitted
    np.testing.assert_array_equal(some.coef[1], some.coef[-1])
    np.testing.assert_array_equal(some.coef[2], some.coef[-1])
    assert not np.allclose(every.coef[1], every.coef[-1])
    rows = np.flatnonzero(data.task == 0)
    design, mixture = data.design(rows), every.membership[data.task[rows]]
    np.testing.assert_allclose(some.proba(design, mixture), every.proba(design, mixture))


@pytest.mark.parametrize("validation", ["like-fewest", "half"])
def test_the_held_out_rows_are_named_as_rows_of_x_with_their_probabilities(validation, tmp_path):
    """Rows given in any order, some unlabelled: ``validation_rows_`` are labelled rows of
    ``X`` (as given), and ``validation_proba_`` scored against their labels gives back the
    chosen setting's held-out log-loss (a wrong row would not)."""
    planted = make_logistic_population(
        np.random.default_rng(5), group_sizes=(5, 5), rows_per_task=30, n_features=3
    )
    frame = planted.frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    labels = frame["label"].to_numpy(dtype=float, copy=True)
    labels[::7] = np.nan  # unlabelled rows stay in the fit, out of the held ones
    model = cnb.ClusteredLogisticRegression(random_state=0, validation=validation)
    model.fit(frame[planted.feature_names], labels, frame["task"])
    held = model.validation_rows_
    assert held.size > 0 and not np.isnan(labels[held]).any()
    positive = (labels[held] == model.classes_[1]).astype(int)
    loss = tuning.mean_log_loss(positive, model.validation_proba_)
    assert loss == pytest.approx(model.validation_log_loss_, abs=1e-12)
    assert model.validation_log_loss_ == pytest.approx(model.tuning_["log_loss"].min())
    model.save(tmp_path / "m.cnb")
    loaded = cnb.load(tmp_path / "m.cnb")  # a file keeps the model, not its tuning's rows
    assert len(loaded.validation_rows_) == 0 and np.isnan(loaded.validation_log_loss_)
