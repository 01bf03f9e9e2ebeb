"""Choosing the selection's tempering τ on the training tasks alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss

from clusterednb import ClusteredNB, load
from clusterednb.data.synthetic import make_planted_population
from clusterednb.naive_bayes.transductive_tuning import (
    MIN_LENDER_ROWS,
    TEMPERATURES,
    choose_temperature,
    pseudo_target_rows,
)


def _population_with_targets():
    population = make_planted_population(
        np.random.default_rng(5), group_sizes=(4, 4), rows_per_task=30, n_features=4
    )
    frame = population.frame.copy()
    labels = frame["label"].to_numpy(dtype=float).copy()
    for task in ("u0", "u4"):  # two real targets: 2 labelled rows, the rest unlabelled
        labels[np.flatnonzero(frame["task"] == task)[2:]] = np.nan
    return frame, population.feature_names, labels


def test_pseudo_targets_keep_as_many_labels_as_the_real_targets():
    frame, _, labels = _population_with_targets()
    tasks = frame["task"].to_numpy()
    labelled = ~np.isnan(labels)
    hidden = pseudo_target_rows(tasks, labelled, np.random.default_rng(0))
    lenders = set(tasks[hidden])
    assert lenders.isdisjoint({"u0", "u4"}) and len(lenders) == 6 // 3
    assert labelled[hidden].all()
    for task in lenders:
        own = (tasks == task) & labelled
        assert own.sum() >= MIN_LENDER_ROWS
        assert own.sum() - np.isin(np.flatnonzero(own), hidden).sum() == 2  # as the targets


def test_the_choice_is_the_least_log_loss_of_the_hidden_labels_and_ignores_the_targets_rows():
    frame, features, labels = _population_with_targets()
    tasks = frame["task"].to_numpy()
    params = {"inference": "exact", "transductive": "select", "transductive_temperature": "auto"}
    model = ClusteredNB(random_state=0, **params).fit(frame[features], labels, tasks)
    table = model.temperature_tuning_
    assert table["temperature"].tolist() == list(TEMPERATURES)
    assert model.transductive_temperature_ == table.loc[table["log_loss"].idxmin(), "temperature"]
    # By hand: the same hidden rows, the extra fit, the log-loss of each τ.
    hidden = pseudo_target_rows(tasks, ~np.isnan(labels), np.random.default_rng(0))
    seen = np.flatnonzero(~np.isnan(labels))
    shown = labels[seen].copy()
    shown[np.isin(seen, hidden)] = np.nan
    for tau, loss in zip(table["temperature"], table["log_loss"], strict=True):
        by_hand = ClusteredNB(
            inference="exact", transductive="select", transductive_temperature=tau
        )
        by_hand.fit(frame[features].iloc[seen], shown, tasks[seen])
        proba = by_hand.predict_proba(frame[features].iloc[hidden], tasks[hidden])
        assert loss == pytest.approx(log_loss(labels[hidden], proba, labels=[0, 1]), abs=1e-12)
    # The targets' unlabelled rows (their test rows) take no part in the choice.
    scrambled = frame[features].copy()
    unlabelled = np.flatnonzero(np.isnan(labels))
    scrambled.iloc[unlabelled] = scrambled.iloc[unlabelled[::-1]].to_numpy()
    again = ClusteredNB(random_state=0, **params).fit(scrambled, labels, tasks)
    pd.testing.assert_frame_equal(again.temperature_tuning_, table)


def test_the_chosen_temperature_is_used_and_saved(tmp_path):
    frame, features, labels = _population_with_targets()
    tasks = frame["task"].to_numpy()
    model = ClusteredNB(
        inference="exact", transductive="select", transductive_temperature="auto", random_state=1
    ).fit(frame[features], labels, tasks)
    fixed = ClusteredNB(
        inference="exact",
        transductive="select",
        transductive_temperature=float(model.transductive_temperature_),
    ).fit(frame[features], labels, tasks)
    proba = model.predict_proba(frame[features], tasks)
    np.testing.assert_array_equal(proba, fixed.predict_proba(frame[features], tasks))
    model.save(tmp_path / "auto.cnb")
    restored = load(tmp_path / "auto.cnb")
    assert restored.selection_temperature() == model.selection_temperature()
    np.testing.assert_array_equal(restored.predict_proba(frame[features], tasks), proba)


def test_without_lenders_the_temperature_falls_back_to_one():
    frame, features, labels = _population_with_targets()
    few = frame.groupby("task").head(5).index.to_numpy()  # no task has MIN_LENDER_ROWS labels
    model = ClusteredNB(inference="exact", transductive="select")
    X, y, tasks = frame[features].iloc[few], labels[few], frame["task"].to_numpy()[few]
    model.fit(X, y, tasks)
    tau, table = choose_temperature(model, X, y, tasks, np.random.default_rng(0))
    assert tau == 1.0 and table.empty
