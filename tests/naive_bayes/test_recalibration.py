"""``ClusteredNB(calibration="sigmoid")``: Platt's map learnt on out-of-fold log-odds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn.metrics import log_loss, roc_auc_score

import clusterednb
from clusterednb import ClusteredNB
from clusterednb.exceptions import CNBError
from clusterednb.naive_bayes.calibration import platt_coefficients, task_folds


def copied_features(n_tasks: int = 6, rows: int = 60, copies: int = 4, seed: int = 0):
    """Two groups of tasks; one informative feature copied ``copies`` times (naive Bayes
    counts it ``copies`` times: over-confident) and one noise feature."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in range(n_tasks):
        y = (rng.random(rows) < 0.3).astype(int)
        flip = rng.random(rows) < 0.25
        signal = np.where(flip, 1 - y, y) if task % 2 == 0 else np.where(flip, y, 1 - y)
        frame = pd.DataFrame({f"s{c}": signal.astype(str) for c in range(copies)})
        frame["noise"] = rng.integers(0, 3, rows).astype(str)
        frame["label"] = y
        frame["task"] = f"t{task}"
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


FEATURES = ["s0", "s1", "s2", "s3", "noise"]


def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    test = frame.groupby("task").tail(20)
    return frame.drop(test.index), test


def fit(frame: pd.DataFrame, calibration: str | None) -> ClusteredNB:
    model = ClusteredNB(inference="exact", calibration=calibration, random_state=0)
    return model.fit(frame[FEATURES], frame["label"], frame["task"])


def test_the_map_is_platt_on_log_odds_of_fits_that_did_not_see_the_rows():
    train, _ = split(copied_features())
    model = fit(train, "sigmoid")
    # The same folds by hand: one fit per fold, predictions of the other fold, then Platt.
    folds = task_folds(train["task"].to_numpy(), np.ones(len(train), bool), model._rng())
    log_odds = np.empty(len(train))
    for fold in (0, 1):
        held = folds == fold
        part = ClusteredNB(inference="exact", schema=model.schema_, random_state=0)
        part.fit(train[FEATURES][~held], train["label"][~held], train["task"][~held])
        log_proba = part.predict_log_proba(train[FEATURES][held], train["task"][held])
        log_odds[held] = log_proba[:, 1] - log_proba[:, 0]
    expected = platt_coefficients(log_odds, train["label"].to_numpy() == 1)
    np.testing.assert_allclose(model.calibration_, expected, rtol=1e-9)


def test_platt_coefficients_minimise_the_smoothed_cross_entropy():
    rng = np.random.default_rng(3)
    z = rng.normal(scale=3.0, size=200)
    truth = rng.random(200) < expit(0.4 * z - 1.0)
    n_pos, n_neg = truth.sum(), (~truth).sum()
    target = np.where(truth, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def cross_entropy(ab: np.ndarray) -> float:
        margin = ab[0] * z + ab[1]
        return -float(np.sum(target * log_expit(margin) + (1 - target) * log_expit(-margin)))

    direct = minimize(
        cross_entropy, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12}
    )
    # The library's fit carries a tiny L2 penalty (C = 1e4) on the slope only.
    np.testing.assert_allclose(platt_coefficients(z, truth), direct.x, atol=2e-3)


def test_it_shrinks_over_confident_log_odds_and_keeps_each_task_s_ranking():
    train, test = split(copied_features())
    plain, calibrated = fit(train, None), fit(train, "sigmoid")
    slope, _ = calibrated.calibration_
    assert 0 < slope < 0.6  # the signal is counted four times
    p_plain = plain.predict_proba(test[FEATURES], test["task"])[:, 1]
    p_cal = calibrated.predict_proba(test[FEATURES], test["task"])[:, 1]
    assert log_loss(test["label"], p_cal) < log_loss(test["label"], p_plain) - 0.05
    # the held noise column is label-free: rows that differ only in it tie, up to the last
    # bits of the sums, so ties are compared as ties
    tied_cal, tied_plain = np.round(p_cal, 10), np.round(p_plain, 10)
    for _, rows in test.groupby("task").indices.items():
        y = test["label"].iloc[rows]
        assert roc_auc_score(y, tied_cal[rows]) == pytest.approx(roc_auc_score(y, tied_plain[rows]))
    np.testing.assert_allclose(calibrated.predict_proba(test[FEATURES], test["task"]).sum(1), 1)


def test_the_map_is_saved_as_plain_data_and_refit_by_fit_only(tmp_path):
    train, test = split(copied_features())
    model = fit(train, "sigmoid")
    model.save(tmp_path / "model.cnb")
    again = clusterednb.load(tmp_path / "model.cnb")
    np.testing.assert_array_equal(again.calibration_, model.calibration_)
    np.testing.assert_array_equal(
        again.predict_proba(test[FEATURES], test["task"]),
        model.predict_proba(test[FEATURES], test["task"]),
    )
    assert not hasattr(fit(train, None), "calibration_")


def test_bad_calibration_settings_are_refused_by_name():
    train, _ = split(copied_features(n_tasks=2))
    with pytest.raises(CNBError, match="calibration"):
        fit(train, "isotonic")
    three = train.assign(label=train["label"] + (train["noise"] == "2"))
    with pytest.raises(CNBError, match="two classes"):
        ClusteredNB(inference="exact", calibration="sigmoid").fit(
            three[FEATURES], three["label"], three["task"]
        )


def test_a_handful_of_labels_of_one_class_keeps_the_identity_map():
    """Two parameters are not learnt from four answers of one class: the map stays (1, 0)
    and the model predicts as the uncalibrated one; five of each class are enough."""
    train, test = split(copied_features())
    positives = np.flatnonzero(train["label"].to_numpy() == 1)
    for kept, learnt in ((4, False), (5, True)):
        few = train.drop(train.index[positives[kept:]])
        model = fit(few, "sigmoid")
        assert (model.calibration_.tolist() != [1.0, 0.0]) == learnt
        if not learnt:
            plain = fit(few, None)
            np.testing.assert_allclose(
                model.predict_proba(test[FEATURES], test["task"]),
                plain.predict_proba(test[FEATURES], test["task"]),
                rtol=1e-12,
            )
