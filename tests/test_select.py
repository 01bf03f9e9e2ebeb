"""Transductive selection among clusters, against evidence ratios computed by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from clusterednb.data.schema import FeatureSchema
from clusterednb.inference.select import select_log_proba
from clusterednb.observation import DirichletNB
from clusterednb.stats import Counts


def _counts_of(rows, labels, schema):
    value = np.zeros((schema.n_classes, schema.n_values_total))
    label = np.zeros(schema.n_classes)
    for x, y in zip(rows, labels, strict=True):
        label[y] += 1
        for f, v in enumerate(x):
            value[y, schema.offsets[f] + v] += 1
    return label, value


def test_selection_weights_and_predictive_equal_evidence_ratios():
    rng = np.random.default_rng(0)
    schema = FeatureSchema(("a", "b"), ((0, 1, 2), (0, 1)), (0, 1))
    model = DirichletNB(schema, alpha=1.0, beta=0.7)
    clusters = rng.integers(0, 6, size=(2, 2, 5)).astype(float)
    sizes = np.array([3, 1])
    own_rows, own_labels = [(0, 1), (2, 0)], [1, 0]
    own_label, own_value = _counts_of(own_rows, own_labels, schema)
    unlabelled = np.array([[1, 1], [0, 0], [2, 1]])
    gamma, tau = 0.8, 0.6
    log_proba, log_weights = select_log_proba(
        model, clusters, sizes, gamma, own_label, own_value, unlabelled, tau
    )

    def log_features(value):  # the feature evidence of value counts (C, V)
        return float(model.log_marginal(Counts(np.zeros((1, 2)), value[None]))[0])

    def log_row(value, x):  # log P(x) = log Σ_y P(y | own labels) P(x | y, value)
        terms = []
        for y in (0, 1):
            label_p = (1.0 + own_label[y]) / (2.0 + own_label.sum())
            _, extra = _counts_of([tuple(x)], [y], schema)
            terms.append(np.log(label_p) + log_features(value + extra) - log_features(value))
        return np.array(terms)

    all_clusters = np.concatenate([clusters, np.zeros((1, 2, 5))])
    crp = np.log(np.append(sizes, gamma))
    expected = []
    for k in range(3):
        joined = all_clusters[k] + own_value
        own = log_features(joined) - log_features(all_clusters[k])
        rows = sum(logsumexp(log_row(joined, x)) for x in unlabelled)
        expected.append(crp[k] + own + tau * rows)
    expected = np.array(expected) - logsumexp(expected)
    np.testing.assert_allclose(log_weights, expected, atol=1e-10)
    for i, x in enumerate(unlabelled):
        per_cluster = np.array(
            [log_row(all_clusters[k] + own_value, x) for k in range(3)]
        )  # (K + 1, C): log P(y, x | cluster)
        conditional = per_cluster - logsumexp(per_cluster, axis=1, keepdims=True)
        predictive = logsumexp(expected[:, None] + conditional, axis=0)
        np.testing.assert_allclose(log_proba[i], predictive, atol=1e-10)
    np.testing.assert_allclose(np.exp(log_proba).sum(axis=1), 1.0)


def _target_with_unlabelled_rows():
    from clusterednb.data.synthetic import make_planted_population

    population = make_planted_population(
        np.random.default_rng(3), group_sizes=(3, 3), rows_per_task=30, n_features=4
    )
    frame = population.frame
    y = frame["label"].to_numpy(dtype=float).copy()
    target = np.flatnonzero(frame["task"] == "u0")
    y[target[3:]] = np.nan
    return frame, population.feature_names, y, target[3:]


@pytest.mark.parametrize("inference", ["exact", "bhc", "gibbs"])
def test_clustered_nb_select_is_selection_among_the_map_clusters(inference, tmp_path):
    from clusterednb import ClusteredNB, load

    frame, features, y, unlabelled = _target_with_unlabelled_rows()
    params = {"inference": inference, "random_state": 0, "n_sweeps": 40, "burn_in": 10}
    model = ClusteredNB(transductive="select", transductive_temperature=0.7, **params)
    model.fit(frame[features], y, frame["task"])
    proba = model.predict_proba(frame[features], frame["task"])
    # By hand: the MAP clusters without u0, u0's labelled counts, its unlabelled rows choose.
    others = model.partition_[1:]
    labels = np.unique(others)
    value = model.counts_.value_counts
    cluster_counts = np.stack([value[1:][others == k].sum(axis=0) for k in labels])
    sizes = np.array([(others == k).sum() for k in labels])
    codes = model.schema_.encode_features(frame[features])
    expected, _ = select_log_proba(
        model.observation_,
        cluster_counts,
        sizes,
        model.gamma,
        model.counts_.label_counts[0],
        value[0],
        codes[unlabelled],
        0.7,
    )
    np.testing.assert_allclose(np.log(proba[unlabelled]), expected, atol=1e-10)
    # Tasks without unlabelled rows keep the posterior predictive of the labelled fit.
    plain = ClusteredNB(semi_supervised=False, **params).fit(frame[features], y, frame["task"])
    rest = frame["task"].to_numpy() != "u0"
    np.testing.assert_allclose(
        proba[rest], plain.predict_proba(frame[features], frame["task"])[rest]
    )
    model.save(tmp_path / "select.cnb")
    np.testing.assert_array_equal(
        load(tmp_path / "select.cnb").predict_proba(frame[features], frame["task"]), proba
    )


def test_an_unknown_transductive_mode_is_refused():
    from clusterednb import ClusteredNB
    from clusterednb.exceptions import CNBError

    frame, features, y, _ = _target_with_unlabelled_rows()
    with pytest.raises(CNBError, match="transductive"):
        ClusteredNB(transductive="refit-ish").fit(frame[features], y, frame["task"])
