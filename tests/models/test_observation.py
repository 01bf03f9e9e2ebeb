"""The Dirichlet–naive-Bayes formulas against hand computations and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from clusterednb import CompleteSharingNB, Counts, DirichletNB, NoSharingNB
from clusterednb.exceptions import CNBError
from clusterednb.stats.special import log_dirichlet_multinomial
from conftest import random_frame, schema_for

# Two users, one feature with values {0, 1}, classes {0, 1}.
# User A: (x=0, y=0), (x=0, y=1), (x=1, y=1); user B: (x=1, y=0).
TOY_X = np.array([[0], [0], [1], [1]])
TOY_Y = np.array([0, 1, 1, 0])
TOY_TASKS = np.array(["A", "A", "A", "B"])


def test_log_marginal_golden_numbers_two_users():
    # By hand with α = β = 1 (sequence probabilities, no multinomial coefficients):
    # A labels 0,1,1: 1/2·1/3·2/4 = 1/12; A features: class 0 sees x=0 (1/2), class 1 sees
    # x=0, x=1 (1/2·1/3 = 1/6): A = 1/12 · 1/12 = 1/144. B: label 1/2, feature 1/2: 1/4.
    # No-Sharing: 1/576. Pooled labels 0,1,1,0: 1/2·1/3·2/4·2/5 = 1/30; pooled features:
    # class 0 sees 0,1 (1/6), class 1 sees 0,1 (1/6): Complete-Sharing 1/1080.
    schema = schema_for(1, 2, 2)
    ns = NoSharingNB(schema=schema).fit(TOY_X, TOY_Y, TOY_TASKS)
    cs = CompleteSharingNB(schema=schema).fit(TOY_X, TOY_Y, TOY_TASKS)
    per_user = ns.observation_.log_marginal(ns.counts_)
    np.testing.assert_allclose(per_user, np.log([1 / 144, 1 / 4]), rtol=0, atol=1e-13)
    assert ns.log_evidence_ == pytest.approx(-np.log(576), abs=1e-13)
    assert cs.log_evidence_ == pytest.approx(-np.log(1080), abs=1e-13)


def test_log_marginal_golden_number_with_hyperparameters():
    # α = (2, 1), β = 0.5; one user, rows (x=1, y=0), (x=1, y=0), (x=0, y=1), x has 2 values.
    # labels: 2/3 · 3/4 · 1/5 = 1/10. class 0 sees x=1 twice: 0.5/1 · 1.5/2 = 3/8.
    # class 1 sees x=0 once: 1/2. Total 3/160.
    schema = schema_for(1, 2, 2)
    model = NoSharingNB(schema=schema, alpha=[2.0, 1.0], beta=0.5)
    model.fit(np.array([[1], [1], [0]]), np.array([0, 0, 1]), ["u"] * 3)
    assert model.log_evidence_ == pytest.approx(np.log(3 / 160), abs=1e-13)


def test_evidence_is_product_of_sequential_predictives(rng):
    frame = random_frame(rng, n_rows=12, n_tasks=1, missing=0.2)
    features = ["f0", "f1", "f2"]
    schema = schema_for(3, 3, 2)
    full = NoSharingNB(schema=schema).fit(frame[features], frame["label"], frame["task"])
    model = DirichletNB(schema)
    data = full.schema_.encode_features(frame[features])
    y = frame["label"].to_numpy()
    total = 0.0
    for i in range(len(frame)):
        counts = Counts.from_codes(
            data[:i],
            y[:i],
            np.zeros(i, dtype=np.int64),
            n_tasks=1,
            n_classes=2,
            offsets=schema.offsets,
        )
        log_joint = model.log_joint(
            data[i : i + 1],
            model.log_label_prior(counts.label_counts),
            model.log_feature_table(counts.value_counts),
            np.zeros(1, dtype=np.int64),
        )
        total += log_joint[0, y[i]]
    assert full.log_evidence_ == pytest.approx(total, abs=1e-11)


@pytest.mark.parametrize("estimator", [NoSharingNB, CompleteSharingNB])
@pytest.mark.parametrize("seed", range(5))
def test_predictive_equals_ratio_of_evidences(estimator, seed):
    rng = np.random.default_rng(seed)
    n_classes = 2 + seed % 2
    frame = random_frame(rng, n_rows=15, n_tasks=3, n_classes=n_classes, missing=0.15)
    features = ["f0", "f1", "f2"]
    schema = schema_for(3, 3, n_classes)
    params = {"schema": schema, "alpha": rng.uniform(0.5, 2), "beta": rng.uniform(0.3, 2)}
    model = estimator(**params).fit(frame[features], frame["label"], frame["task"])
    x_new = frame[features].iloc[[4]].copy()
    x_new.iloc[0, 1] = None  # one missing feature in the query
    task = frame["task"].iloc[4]
    proba = model.predict_proba(x_new, [task])[0]
    log_evidence = []
    for label in range(n_classes):
        extended = frame.copy()
        extended.loc[len(extended)] = [task, label, *x_new.iloc[0].tolist()]
        log_evidence.append(
            estimator(**params)
            .fit(extended[features], extended["label"], extended["task"])
            .log_evidence_
        )
    expected = np.exp(np.array(log_evidence) - logsumexp(log_evidence))
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-12)


def test_evidence_sums_to_one_over_all_data_sets():
    # 2 features × 2 values × 2 labels, 3 rows (2 of user u, 1 of user v): 8**3 data sets.
    schema = schema_for(2, 2, 2)
    model = DirichletNB(schema, alpha=0.7, beta=1.3)
    rows = list(itertools.product(range(2), range(2), range(2)))  # (x0, x1, y)
    tasks = np.array([0, 0, 1])
    total_ns, total_cs = [], []
    for data in itertools.product(rows, repeat=3):
        array = np.array(data)
        counts = Counts.from_codes(
            array[:, :2], array[:, 2], tasks, n_tasks=2, n_classes=2, offsets=schema.offsets
        )
        total_ns.append(model.log_marginal(counts).sum())
        total_cs.append(model.log_marginal(counts.total())[0])
    assert logsumexp(total_ns) == pytest.approx(0.0, abs=1e-12)
    assert logsumexp(total_cs) == pytest.approx(0.0, abs=1e-12)


def test_log_dirichlet_multinomial_matches_direct_formula(rng):
    counts = rng.integers(0, 20, size=7)
    prior = rng.uniform(0.1, 3, size=7)
    offsets = np.array([0, 3, 7])
    expected = 0.0
    for a, b in ((0, 3), (3, 7)):
        c, p = counts[a:b], prior[a:b]
        # Sequential predictive: product over each draw of (p_i + seen_i) / (Σp + seen).
        seen = np.zeros_like(p)
        for i in np.repeat(np.arange(b - a), c):
            expected += np.log((p[i] + seen[i]) / (p.sum() + seen.sum()))
            seen[i] += 1
    assert log_dirichlet_multinomial(counts, prior, offsets) == pytest.approx(expected, abs=1e-10)


def test_beta_shapes_are_resolved():
    schema = schema_for(2, 3, 2)
    per_feature = DirichletNB(schema, beta=[0.5, 2.0]).beta
    np.testing.assert_array_equal(per_feature[0], [0.5, 0.5, 0.5, 2, 2, 2])
    full = np.arange(1, 13, dtype=float).reshape(2, 6)
    np.testing.assert_array_equal(DirichletNB(schema, beta=full).beta, full)
    with pytest.raises(CNBError, match="beta must be"):
        DirichletNB(schema, beta=[1.0, 2.0, 3.0])
    with pytest.raises(CNBError, match="positive"):
        DirichletNB(schema, beta=0.0)
    with pytest.raises(CNBError, match="alpha"):
        DirichletNB(schema, alpha=[1.0, np.nan])


def test_log_predictive_matches_hand_computation():
    schema = schema_for(1, 2, 2)
    model = DirichletNB(schema)
    counts = Counts(np.array([[1, 2]]), np.array([[[1, 0], [1, 1]]]))
    # P(y=0, x=0) ∝ (1+1)/(2+3) · (1+1)/(2+1) = 4/15; P(y=1, x=0) ∝ 3/5 · 2/4 = 3/10.
    proba = np.exp(model.log_predictive(np.array([[0], [-1]]), counts))
    np.testing.assert_allclose(proba[0], np.array([4 / 15, 3 / 10]) / (4 / 15 + 3 / 10))
    np.testing.assert_allclose(proba[1], [2 / 5, 3 / 5])  # missing feature: label prior only
