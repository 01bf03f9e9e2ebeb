"""Transductive selection among clusters, against evidence ratios computed by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from clusterednb.data.schema import FeatureSchema
from clusterednb.inference.select import select_log_proba
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts


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


def test_selection_among_clusters_of_documents_equals_evidence_ratios():
    """Multinomial documents: each weight is the CRP weight times the ratio of feature
    evidences of the task's own counts, times each unlabelled document's marginal — every
    term a ratio of Dirichlet-multinomial evidences computed here from the counts."""
    from scipy import sparse

    from clusterednb.models.document_events import MultinomialDirichletNB

    rng = np.random.default_rng(1)
    schema = FeatureSchema(("tokens",), (("w0", "w1", "w2", "w3"),), (0, 1))
    model = MultinomialDirichletNB(schema, alpha=1.0, beta=0.5)
    clusters = rng.integers(0, 8, size=(3, 2, 4)).astype(float)
    sizes = np.array([2, 1, 4])
    own_label = np.array([1.0, 2.0])
    own_value = rng.integers(0, 3, size=(2, 4)).astype(float)
    documents = sparse.csr_matrix(rng.integers(0, 3, size=(3, 4)))
    gamma, tau = 1.3, 0.5
    log_proba, log_weights = select_log_proba(
        model, clusters, sizes, gamma, own_label, own_value, documents, tau
    )

    def log_features(value):  # log DM evidence of the value counts (C, W)
        return float(model.log_marginal(Counts(np.zeros((1, 2)), value[None]))[0])

    def log_document(value, x):  # (C,): log P(y | own labels) + log P(x | y, value)
        out = []
        for y in (0, 1):
            extra = np.zeros((2, 4))
            extra[y] = x
            label_p = (1.0 + own_label[y]) / (2.0 + own_label.sum())
            out.append(np.log(label_p) + log_features(value + extra) - log_features(value))
        return np.array(out)

    all_clusters = np.concatenate([clusters, np.zeros((1, 2, 4))])
    expected = []
    for k in range(4):
        joined = all_clusters[k] + own_value
        rows = sum(logsumexp(log_document(joined, x)) for x in documents.toarray())
        expected.append(
            np.log(np.append(sizes, gamma)[k])
            + log_features(joined)
            - log_features(all_clusters[k])
            + tau * rows
        )
    expected = np.array(expected) - logsumexp(expected)
    np.testing.assert_allclose(log_weights, expected, atol=1e-10)
    first = np.array(
        [log_document(all_clusters[k] + own_value, documents.toarray()[0]) for k in range(4)]
    )
    conditional = first - logsumexp(first, axis=1, keepdims=True)
    np.testing.assert_allclose(log_proba[0], logsumexp(expected[:, None] + conditional, axis=0))


@pytest.mark.parametrize("inference", ["exact", "gibbs"])
def test_selected_coclustering_is_the_selection_weight_of_each_others_cluster(inference):
    """Row u0 of the selected co-clustering is Σ_k w_k [u in k] over the MAP clusters without
    u0 (w from the brute-force-checked selection); rows of the other tasks are kept."""
    from clusterednb import ClusteredNB
    from clusterednb.inference.select import select_log_weights
    from clusterednb.naive_bayes.transductive import transductive_coclustering

    frame, features, y, unlabelled = _target_with_unlabelled_rows()
    model = ClusteredNB(
        inference=inference, transductive="select", random_state=0, n_sweeps=40, burn_in=10
    ).fit(frame[features], y, frame["task"])
    together = transductive_coclustering(model)
    others = model.partition_[1:]
    labels = np.unique(others)
    value = model.counts_.value_counts
    log_weights = select_log_weights(
        model.observation_,
        np.stack([value[1:][others == k].sum(axis=0) for k in labels]),
        np.array([(others == k).sum() for k in labels]),
        model.gamma,
        model.counts_.label_counts[0],
        value[0],
        model.schema_.encode_features(frame[features])[unlabelled],
    )
    by_label = dict(zip(labels, np.exp(log_weights[:-1]), strict=True))
    np.testing.assert_allclose(together[0, 1:], [by_label[k] for k in others], atol=1e-12)
    assert together[0, 0] == 1.0
    np.testing.assert_array_equal(together[1:], model.coclustering_[1:])
    # The planted groups are u0-u2 and u3-u5: u0's unlabelled rows pick its own group.
    assert together[0, 1:3].min() > 0.9 > 0.1 > together[0, 3:].max()


@pytest.mark.parametrize("observation", ["multinomial", "bernoulli"])
def test_documents_kept_for_selection_survive_saving_and_a_second_chunk(observation, tmp_path):
    """Unlabelled documents are kept (as CSR counts) only for selection; a model file holds
    them as plain arrays, and a damaged one is refused."""
    from scipy import sparse

    from clusterednb import ClusteredNB, load
    from clusterednb.exceptions import CNBError

    X = sparse.csr_matrix([[3, 0, 1], [0, 2, 1], [2, 0, 0], [0, 3, 1], [2, 1, 0], [0, 0, 4]])
    y = np.array([1, 0, 1, 0, np.nan, np.nan])
    tasks = np.array(["a", "a", "b", "b", "c", "c"])
    params = {"inference": "exact", "observation": observation}
    plain = ClusteredNB(**params).fit(X, y, tasks)
    assert plain.unlabelled_X_.shape[0] == 0  # not selecting: unlabelled documents unused
    model = ClusteredNB(transductive="select", **params).fit(X, y, tasks)
    assert sparse.issparse(model.unlabelled_X_) and model.unlabelled_X_.shape == (2, 3)
    proba = model.predict_proba(X[4:], tasks[4:])
    assert not np.allclose(proba, plain.predict_proba(X[4:], tasks[4:]))
    model.save(tmp_path / "docs.cnb")
    np.testing.assert_array_equal(
        load(tmp_path / "docs.cnb").predict_proba(X[4:], tasks[4:]), proba
    )
    chunked = ClusteredNB(transductive="select", **params).partial_fit(X[:3], y[:3], tasks[:3])
    chunked.partial_fit(X[3:], y[3:], tasks[3:])
    np.testing.assert_allclose(chunked.predict_proba(X[4:], tasks[4:]), proba)
    model.unlabelled_X_ = sparse.csr_matrix(
        (model.unlabelled_X_.data, model.unlabelled_X_.indices + 5, model.unlabelled_X_.indptr),
        shape=(2, 8),
    )  # words outside the vocabulary: checksums are of what was saved, the content check refuses
    model.save(tmp_path / "bad.cnb")
    with pytest.raises(CNBError, match="unlabelled documents"):
        load(tmp_path / "bad.cnb")
