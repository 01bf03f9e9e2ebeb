"""Semi-supervised learning for every model: Gibbs over missing labels and EM (MAP)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logsumexp

from clusterednb import ClusteredNB, CompleteSharingNB, NoSharingNB, PrototypeNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.exceptions import CNBError
from clusterednb.loading import load


def _population(seed: int = 0, hidden_share: float = 0.4):
    population = make_planted_population(
        np.random.default_rng(seed), group_sizes=(3, 3), rows_per_task=12
    )
    frame = population.frame
    y = frame["label"].astype(object).copy()
    hidden = np.random.default_rng(seed + 1).random(len(y)) < hidden_share
    y[hidden] = None
    return frame[population.feature_names], y, frame["task"], hidden, frame["label"]


MODELS = [
    (NoSharingNB, {}),
    (CompleteSharingNB, {}),
    (ClusteredNB, {"inference": "exact"}),
    (ClusteredNB, {"inference": "gibbs", "n_sweeps": 30, "burn_in": 5, "progress": False}),
]


@pytest.mark.parametrize(("cls", "settings"), MODELS)
def test_em_never_decreases_its_objective(cls, settings):
    X, y, tasks, _, _ = _population()
    model = cls(semi_supervised="em", random_state=0, **settings).fit(X, y, tasks)
    steps = np.diff(model.em_objective_)
    assert model.em_objective_.size >= 3
    assert (steps >= -1e-9 * np.abs(model.em_objective_[1:])).all()
    np.testing.assert_allclose(model.unlabelled_proba_.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("cls", "settings"),
    [
        *MODELS,
        (PrototypeNB, {"inference": "empirical-bayes"}),
        (PrototypeNB, {"n_samples": 10, "burn_in": 2}),
    ],
)
@pytest.mark.parametrize("mode", ["em", "gibbs"])
def test_with_every_label_present_semi_supervised_equals_supervised(cls, settings, mode):
    X, _, tasks, _, labels = _population()
    supervised = cls(random_state=3, **settings).fit(X, labels, tasks)
    semi = cls(semi_supervised=mode, random_state=3, **settings).fit(X, labels, tasks)
    np.testing.assert_array_equal(semi.predict_proba(X, tasks), supervised.predict_proba(X, tasks))
    assert semi.log_evidence_ == supervised.log_evidence_ or np.isnan(supervised.log_evidence_)


def _em_objective_by_hand(phi: float, theta: np.ndarray, rows: np.ndarray, labels: np.ndarray):
    """J for one task, one binary feature, two classes; phi = P(y=1), theta[y] = P(x=1|y)."""
    log_phi = np.log([1 - phi, phi])
    log_theta = np.log(np.stack([1 - theta, theta], axis=1))  # [y, x]
    value = 0.0
    for x, y in zip(rows, labels, strict=True):
        if y >= 0:
            value += log_phi[y] + log_theta[y, x]
        else:
            value += logsumexp(log_phi + log_theta[:, x])
    # Dirichlet(α + 1) and Dirichlet(β + 1) priors with α = β = 1: Σ log of every parameter.
    return value + log_phi.sum() + log_theta.sum()


def test_em_finds_the_maximum_of_the_map_objective():
    rows = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    labels = np.array([1, 0, 1, -1, -1, -1, -1, 0])
    frame = pd.DataFrame({"f": rows})
    y = pd.Series(labels).astype(object).where(labels >= 0, None)
    model = NoSharingNB(semi_supervised="em", n_iter=5000).fit(frame, y, ["u"] * rows.size)
    counts = model.posterior_.component_counts[0] + 1.0  # (C, V) pseudo-counts β = 1
    label_counts = model.posterior_.task_label_counts[0] + 1.0
    phi, theta = label_counts[1] / label_counts.sum(), counts[:, 1] / counts.sum(axis=1)

    def negative(z: np.ndarray) -> float:
        return -_em_objective_by_hand(expit(z[0]), expit(z[1:]), rows, labels)

    best = minimize(negative, np.zeros(3), method="Nelder-Mead", options={"xatol": 1e-10})
    best = minimize(negative, best.x, method="BFGS")
    assert -best.fun == pytest.approx(_em_objective_by_hand(phi, theta, rows, labels), abs=1e-7)
    np.testing.assert_allclose([phi, *theta], expit(best.x), atol=1e-4)
    assert model.em_objective_[-1] == pytest.approx(
        _em_objective_by_hand(phi, theta, rows, labels), abs=1e-9
    )


@pytest.mark.parametrize("cls", [NoSharingNB, CompleteSharingNB])
def test_gibbs_label_marginals_and_predictive_match_enumeration(cls):
    X, y, tasks, _, _ = _population(seed=4, hidden_share=0.0)
    keep = tasks.isin(["u0", "u3"]).to_numpy()  # one task from each planted group
    X, y = X[keep].reset_index(drop=True), y[keep].reset_index(drop=True)
    tasks = tasks[keep].reset_index(drop=True)
    hidden = [0, 5, 13, 20]
    y = y.copy()
    y.iloc[hidden] = None
    schema = cls().fit(X, y, tasks).schema_
    log_evidence, predictive = [], []
    query = X.iloc[[1, 14]]
    query_tasks = tasks.iloc[[1, 14]]
    for labels in itertools.product(schema.classes, repeat=len(hidden)):
        filled = y.copy()
        filled.iloc[hidden] = labels
        fitted = cls(schema=schema).fit(X, filled, tasks)
        log_evidence.append(fitted.log_evidence_)
        predictive.append(fitted.predict_proba(query, query_tasks))
    weights = np.exp(np.array(log_evidence) - logsumexp(log_evidence))
    combos = np.array(list(itertools.product(range(2), repeat=len(hidden))))
    exact_marginal = weights @ combos
    exact_predictive = np.tensordot(weights, np.array(predictive), axes=1)
    gibbs = cls(schema=schema, semi_supervised="gibbs", n_iter=4000, random_state=0).fit(
        X, y, tasks
    )
    np.testing.assert_allclose(gibbs.unlabelled_proba_[:, 1], exact_marginal, atol=0.02)
    np.testing.assert_allclose(gibbs.predict_proba(query, query_tasks), exact_predictive, atol=0.02)


@pytest.mark.slow  # 60 s on 2 cores: make test-all
def test_prototype_semi_supervised_modes():
    X, y, tasks, hidden, truth = _population(seed=5)
    gibbs = PrototypeNB(n_samples=30, burn_in=5, semi_supervised="gibbs", random_state=1)
    gibbs.fit(X, y, tasks)
    assert gibbs.label_samples_.shape == (30, hidden.sum())
    assert (gibbs.unlabelled_proba_.argmax(axis=1) == truth[hidden].to_numpy()).mean() > 0.8
    again = PrototypeNB(n_samples=30, burn_in=5, semi_supervised="gibbs", random_state=1)
    np.testing.assert_array_equal(
        again.fit(X, y, tasks).predict_proba(X, tasks), gibbs.predict_proba(X, tasks)
    )
    em = PrototypeNB(inference="empirical-bayes", semi_supervised="em").fit(X, y, tasks)
    assert (em.unlabelled_proba_.argmax(axis=1) == truth[hidden].to_numpy()).mean() > 0.8
    with pytest.raises(CNBError, match="empirical-bayes"):
        PrototypeNB(semi_supervised="em").fit(X, y, tasks)
    with pytest.raises(CNBError, match="mcmc"):
        PrototypeNB(inference="empirical-bayes", semi_supervised="gibbs").fit(X, y, tasks)


def test_bad_settings_are_refused():
    X, y, tasks, _, _ = _population()
    with pytest.raises(CNBError, match="semi_supervised must be one of"):
        NoSharingNB(semi_supervised="yes").fit(X, y, tasks)
    with pytest.raises(CNBError, match="n_iter"):
        NoSharingNB(semi_supervised="em", n_iter=0).fit(X, y, tasks)
    with pytest.raises(CNBError, match="needs inference='gibbs'"):
        ClusteredNB(inference="bhc", semi_supervised="gibbs").fit(X, y, tasks)
    # "auto" with a non-sampling engine leaves the unlabelled rows out, as before.
    assert not hasattr(ClusteredNB(inference="bhc").fit(X, y, tasks), "unlabelled_proba_")


@pytest.mark.parametrize("mode", ["em", "gibbs"])
def test_semi_supervised_models_round_trip(tmp_path, mode):
    X, y, tasks, _, _ = _population()
    model = CompleteSharingNB(semi_supervised=mode, n_iter=20, random_state=0).fit(X, y, tasks)
    model.save(tmp_path / "m.cnb")
    loaded = load(tmp_path / "m.cnb")
    np.testing.assert_array_equal(loaded.predict_proba(X, tasks), model.predict_proba(X, tasks))
    np.testing.assert_array_equal(loaded.unlabelled_proba_, model.unlabelled_proba_)
