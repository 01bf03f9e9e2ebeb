"""The prototype model: posterior coverage, the known weakness, predictions, persistence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clusterednb
from clusterednb import PrototypeNB


def simulate_prototype(rng, n_tasks=25, rows=60, n_features=3, n_values=4, strength=5.0):
    """Rows drawn from the prototype model itself, with every K[y, f] = ``strength``."""
    prototype = rng.dirichlet(np.ones(n_values), size=(2, n_features))  # (C, F, V)
    frames = []
    for task in range(n_tasks):
        theta = np.array(
            [
                [rng.dirichlet(strength * prototype[c, f]) for f in range(n_features)]
                for c in range(2)
            ]
        )
        y = rng.integers(0, 2, size=rows)
        X = np.array(
            [[rng.choice(n_values, p=theta[label, f]) for f in range(n_features)] for label in y]
        )
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])
        frame.insert(0, "label", y)
        frame.insert(0, "task", f"t{task}")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.mark.slow  # 16 s; the empirical-Bayes mode inside the MCMC posterior stays by default
def test_posterior_of_strength_covers_the_true_value():
    frame = simulate_prototype(np.random.default_rng(0))
    features = ["f0", "f1", "f2"]
    model = PrototypeNB(n_samples=150, burn_in=50, random_state=1, classes=[0, 1])
    model.fit(frame[features], frame["label"], frame["task"])
    low, high = np.quantile(model.strength_samples_, [0.025, 0.975], axis=0)
    covered = (low <= 5.0) & (5.0 <= high)
    assert covered.mean() >= 0.8  # 6 pairs; a 95 % interval may miss one


def _mean_strength(two_groups: bool, seed: int) -> float:
    """Mean posterior K on 16 tasks that share one parameter set, or split into two halves
    whose value distributions differ for every pair: the second half puts 85 % of its mass
    on the value the first half finds least likely."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(4, 0.3), size=(2, 3))  # (C, F, V)
    contrast = np.full_like(theta, 0.05)
    np.put_along_axis(contrast, theta.argmin(axis=2)[:, :, None], 0.85, axis=2)
    frames = []
    for task in range(16):
        own = contrast if two_groups and task >= 8 else theta
        y = rng.integers(0, 2, size=40)
        X = np.array([[rng.choice(4, p=own[label, f]) for f in range(3)] for label in y])
        frame = pd.DataFrame(X, columns=["f0", "f1", "f2"])
        frame.insert(0, "label", y)
        frame.insert(0, "task", f"t{task}")
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    model = PrototypeNB(n_samples=80, burn_in=30, random_state=seed)
    model.fit(frame[["f0", "f1", "f2"]], frame["label"], frame["task"])
    return float(model.strength_samples_.mean())


@pytest.mark.parametrize("seed", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_two_very_different_groups_make_the_strength_collapse(seed):
    assert _mean_strength(True, seed) * 5 < _mean_strength(False, seed)


def test_predictions_are_probabilities_and_survive_save_load(tmp_path):
    frame = simulate_prototype(np.random.default_rng(4), n_tasks=6, rows=20)
    features = ["f0", "f1", "f2"]
    model = PrototypeNB(n_samples=20, burn_in=5, random_state=0).fit(
        frame[features], frame["label"], frame["task"]
    )
    proba = model.predict_proba(frame[features], frame["task"])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    cold = model.predict_proba(frame[features].iloc[:3], ["new"] * 3)
    np.testing.assert_allclose(cold.sum(axis=1), 1.0)
    model.save(tmp_path / "p.cnb")
    loaded = clusterednb.load(tmp_path / "p.cnb")
    np.testing.assert_array_equal(loaded.predict_proba(frame[features], frame["task"]), proba)
    assert np.isnan(loaded.log_evidence_) and loaded.evidence_kind_ == "not_computed"


def test_bad_prior():
    with pytest.raises(ValueError, match="k_shape"):
        PrototypeNB(k_shape=0).fit([[0], [1]], [0, 1], ["a", "a"])


def test_empirical_bayes_mode_sits_inside_the_mcmc_posterior():
    frame = simulate_prototype(np.random.default_rng(0))
    features = ["f0", "f1", "f2"]
    mcmc = PrototypeNB(n_samples=150, burn_in=50, random_state=1).fit(
        frame[features], frame["label"], frame["task"]
    )
    mode = PrototypeNB(inference="empirical-bayes").fit(
        frame[features], frame["label"], frame["task"]
    )
    assert mode.strength_samples_.shape == (1, 2, 3)
    low, high = np.quantile(mcmc.strength_samples_, [0.01, 0.99], axis=0)
    assert ((low <= mode.strength_samples_[0]) & (mode.strength_samples_[0] <= high)).all()
    np.testing.assert_allclose(
        mode.prototype_samples_[0], mcmc.prototype_samples_.mean(axis=0), atol=0.05
    )
