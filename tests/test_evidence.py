"""Evidence, conditional evidence (AIS), model comparison and model averaging."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln, logsumexp

from clusterednb import (
    ClusteredNB,
    CompleteSharingNB,
    Counts,
    DirichletNB,
    NoSharingNB,
    PrototypeNB,
)
from clusterednb.averaging import ModelAveragingNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.evidence import compare_models, conditional_evidence, marginal_evidence
from clusterednb.inference.exact import fit_exact
from clusterednb.inference.gibbs.ais import ais_log_features, ais_log_joint_clustered
from conftest import schema_for

GAMMA = 1.3
SCHEMA = schema_for(2, 3, 2)
MODEL = DirichletNB(SCHEMA, alpha=1.0, beta=0.7)
X = np.random.default_rng(0).integers(0, 3, size=(9, 2))
TASKS = np.repeat([0, 1, 2], 3)


def counts_of(y: np.ndarray) -> Counts:
    return Counts.from_codes(X, y, TASKS, n_tasks=3, n_classes=2, offsets=SCHEMA.offsets)


@pytest.fixture(scope="module")
def exact_log_px():
    """log P(X) by enumerating all 2^9 labellings (and all partitions for Clustered NB)."""
    terms = {"ns": [], "cs": [], "cnb": []}
    for labels in itertools.product((0, 1), repeat=X.shape[0]):
        counts = counts_of(np.array(labels))
        terms["ns"].append(MODEL.log_marginal(counts).sum())
        terms["cs"].append(MODEL.log_marginal(counts.total())[0])
        terms["cnb"].append(fit_exact(MODEL, counts, GAMMA).log_evidence)
    return {k: logsumexp(v) for k, v in terms.items()}


@pytest.mark.parametrize("structure", ["ns", "cs", "cnb"])
def test_ais_matches_enumeration_and_tightens_with_longer_schedules(structure, exact_log_px):
    short = ais_log_features(MODEL, X, TASKS, 3, structure, GAMMA, 10, 40, np.random.default_rng(1))
    long = ais_log_features(MODEL, X, TASKS, 3, structure, GAMMA, 300, 40, np.random.default_rng(2))
    truth = exact_log_px[structure]
    assert abs(long.log_z - truth) < 3 * long.stderr
    assert abs(short.log_z - truth) < 3 * short.stderr
    assert long.stderr < short.stderr


def test_ais_over_partitions_with_labels_fixed_matches_exact():
    y = np.array([0, 1, 1, 0, 0, 1, 1, 1, 0])
    truth = fit_exact(MODEL, counts_of(y), GAMMA).log_evidence
    estimate = ais_log_joint_clustered(
        MODEL, counts_of(y), GAMMA, 200, 40, np.random.default_rng(3)
    )
    assert abs(estimate.log_z - truth) < 3 * estimate.stderr


def test_conditional_evidence_of_no_sharing_against_enumeration(exact_log_px):
    y = np.array([0, 1, 1, 0, 0, 1, 1, 1, 0])
    frame = pd.DataFrame(X, columns=["f0", "f1"])
    model = NoSharingNB(alpha=1.0, beta=0.7, schema=SCHEMA)
    result = conditional_evidence(
        model, frame, y, TASKS, n_temperatures=300, n_runs=40, random_state=4
    )
    truth = MODEL.log_marginal(counts_of(y)).sum() - exact_log_px["ns"]
    assert result.kind == "estimate"
    assert abs(result.value - truth) < 3 * result.stderr
    assert result.value < 0  # a log probability of the labels


def test_marginal_evidence_kinds_and_unlabelled_rows_ignored():
    y = np.array([0, 1, 1, 0, 0, 1, 1, 1, 0], dtype=float)
    frame = pd.DataFrame(X, columns=["f0", "f1"])
    exact = marginal_evidence(
        ClusteredNB(inference="exact", gamma=GAMMA, beta=0.7, schema=SCHEMA), frame, y, TASKS
    )
    assert exact.kind == "exact"
    assert exact.value == pytest.approx(
        fit_exact(MODEL, counts_of(y.astype(int)), GAMMA).log_evidence
    )
    with_unlabelled = np.append(y, np.nan)
    more = pd.concat([frame, frame.iloc[:1]], ignore_index=True)
    again = marginal_evidence(
        ClusteredNB(inference="exact", gamma=GAMMA, beta=0.7, schema=SCHEMA),
        more,
        with_unlabelled,
        np.append(TASKS, 0),
    )
    assert again.value == pytest.approx(exact.value)
    bound = marginal_evidence(
        ClusteredNB(inference="bhc", gamma=GAMMA, beta=0.7, schema=SCHEMA), frame, y, TASKS
    )
    assert bound.kind == "lower_bound" and bound.value <= exact.value + 1e-9


@pytest.fixture(scope="module")
def planted():
    population = make_planted_population(
        np.random.default_rng(5), group_sizes=(5, 5, 5), rows_per_task=20, n_features=5
    )
    frame = population.frame
    return frame[population.feature_names], frame["label"], frame["task"]


def test_compare_models_ranks_clustered_first_on_planted_groups(planted):
    X_, y_, tasks_ = planted
    table = compare_models(
        X_,
        y_,
        tasks_,
        {
            "ns": NoSharingNB(),
            "cs": CompleteSharingNB(),
            "cnb": ClusteredNB(inference="bhc"),
        },
        conditional=True,
        n_temperatures=30,
        n_runs=4,
        random_state=0,
    )
    ranked = table.sort_values("log_evidence", ascending=False)["model"].tolist()
    assert ranked[0] == "cnb"
    assert table["posterior_probability"].sum() == pytest.approx(1.0)
    assert table.loc[table["model"] == "ns", "log_bf"].item() == 0.0
    cond = table.set_index("model")["log_conditional"]
    assert cond["cnb"] > cond["ns"] and cond["cnb"] > cond["cs"]


def test_model_averaging_is_the_weighted_mixture(planted):
    X_, y_, tasks_ = planted
    members = {"ns": NoSharingNB(), "cs": CompleteSharingNB(), "cnb": ClusteredNB(inference="bhc")}
    averaged = ModelAveragingNB(members).fit(X_, y_, tasks_)
    weights = np.exp(np.array(list(averaged.log_weights_.values())))
    assert weights.sum() == pytest.approx(1.0)
    expected = sum(
        np.exp(averaged.log_weights_[name]) * member.predict_proba(X_, tasks_)
        for name, member in averaged.members_.items()
    )
    np.testing.assert_allclose(averaged.predict_proba(X_, tasks_), expected, atol=1e-12)
    flat = ModelAveragingNB(members, prior={"ns": 1e-300, "cs": 1e-300, "cnb": 1.0})
    only_cnb = flat.fit(X_, y_, tasks_)
    np.testing.assert_allclose(
        only_cnb.predict_proba(X_, tasks_),
        only_cnb.members_["cnb"].predict_proba(X_, tasks_),
        atol=1e-9,
    )


# ---------------------------------------------------------------------------- prototype
@functools.cache
def _log_pair_integral_cached(counts: tuple, shape: float, rate: float) -> float:
    return _log_pair_integral(np.array(counts), shape, rate)


def _log_pair_integral(counts: np.ndarray, shape: float, rate: float) -> float:
    """``log ∫∫ Beta(θ̄; 1, 1) Gamma(K) Π_u DM(n_u; K θ̄, K (1 − θ̄))`` by Gauss–Legendre.

    ``counts`` has shape (n_tasks, 2); the integral over ``log K`` runs on [−15, 12].
    """
    theta_nodes, theta_weights = np.polynomial.legendre.leggauss(400)
    theta, theta_w = (theta_nodes + 1) / 2, theta_weights / 2
    s_nodes, s_weights = np.polynomial.legendre.leggauss(600)
    log_k, s_w = (s_nodes + 1) / 2 * 27 - 15, s_weights * 27 / 2
    k = np.exp(log_k)[:, None]
    a, b = k * theta[None, :], k * (1 - theta[None, :])
    log_like = np.zeros(a.shape)
    for n1, n2 in counts:
        log_like += (
            gammaln(a + n1)
            - gammaln(a)
            + gammaln(b + n2)
            - gammaln(b)
            - gammaln(k + n1 + n2)
            + gammaln(k)
        )
    log_gamma = shape * np.log(rate) - gammaln(shape) + shape * log_k - rate * np.exp(log_k)
    log_terms = log_like + log_gamma[:, None] + np.log(s_w)[:, None] + np.log(theta_w)[None, :]
    return float(logsumexp(log_terms))


PROTOTYPE_ROWS = pd.DataFrame({"f": [0, 0, 1, 1, 1, 0, 1, 1]})
PROTOTYPE_LABELS = np.array([0, 0, 1, 1, 0, 1, 1, 1])
PROTOTYPE_TASKS = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])


def _prototype_log_joint(labels: np.ndarray, shape: float, rate: float) -> float:
    """Exact ``log P(X, Y)`` of the rows above under the Prototype model (α = β = 1)."""
    x = PROTOTYPE_ROWS["f"].to_numpy()
    total = 0.0
    for task in ("a", "b"):
        m = np.bincount(labels[PROTOTYPE_TASKS == task], minlength=2)
        total += gammaln(m + 1).sum() - gammaln(m.sum() + 2)  # DM(m; 1, 1) = Π m_y! / (M+1)!
    for c in (0, 1):
        counts = np.array(
            [np.bincount(x[(PROTOTYPE_TASKS == t) & (labels == c)], minlength=2) for t in "ab"]
        )
        total += _log_pair_integral_cached(tuple(map(tuple, counts)), shape, rate)
    return total


@pytest.mark.slow  # 32 s on 2 cores: make test-all (the conditional one stays)
def test_prototype_marginal_evidence_by_ais_matches_quadrature():
    # Measured (seed 1, 16 runs): error −0.07 ± 0.12 at 25 temperatures, 0.04 ± 0.04 at 200.
    model = PrototypeNB(inference="empirical-bayes", k_shape=2.0, k_rate=0.5)
    exact = _prototype_log_joint(PROTOTYPE_LABELS, 2.0, 0.5)
    stderr = []
    for n_temperatures in (25, 200):
        estimate = marginal_evidence(
            model,
            PROTOTYPE_ROWS,
            PROTOTYPE_LABELS,
            PROTOTYPE_TASKS,
            n_temperatures=n_temperatures,
            n_runs=16,
            random_state=1,
        )
        assert estimate.kind == "estimate"
        assert abs(estimate.value - exact) < 3 * estimate.stderr + 0.01
        stderr.append(estimate.stderr)
    assert stderr[1] < stderr[0] / 2


@pytest.mark.slow  # 80 s; the cnb model's AIS against enumeration stays in the default suite
def test_prototype_conditional_evidence_matches_enumeration():
    # Measured: error 0.09 ± 0.11 (exact −5.97), 100 temperatures × 16 runs.
    shape, rate = 2.0, 0.5
    log_px = logsumexp(
        [
            _prototype_log_joint(np.array(labels), shape, rate)
            for labels in itertools.product((0, 1), repeat=PROTOTYPE_LABELS.size)
        ]
    )
    exact = _prototype_log_joint(PROTOTYPE_LABELS, shape, rate) - log_px
    estimate = conditional_evidence(
        PrototypeNB(k_shape=shape, k_rate=rate),
        PROTOTYPE_ROWS,
        PROTOTYPE_LABELS,
        PROTOTYPE_TASKS,
        n_temperatures=100,
        n_runs=16,
        random_state=2,
    )
    assert abs(estimate.value - exact) < 3 * estimate.stderr + 0.01
    assert estimate.stderr < 0.2
